"""Which vocabulary tokens stand for the classes of a classifier by prompting, and the prompt around a text.

**Multi-token class names.** Each class answer (``" sports"``, ``" science and technology"``) is tokenised as
the continuation of the prompt. Tokens shared by *every* class at the start (``" very"`` in ``" very
positive"`` / ``" very negative"``) are appended to the prompt, so the model has already "said" them; the class
is then decided by the **next token**: the first token where the answers differ. Its logit is the class logit
(the probability of a whole multi-token answer is not needed to rank the classes once the first differing
token is fixed, and it keeps ``g`` a linear map — one row of the unembedding per class). Two classes whose
answers start with the same distinguishing token cannot be told apart by one token: that is an error naming
them, with the fix (``class_words=`` with distinct first words, or anonymised labels such as ``Class_0``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from xaimetrics._validation import invalid

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

__all__ = ["TEXT_FIELD", "ClassTokens", "PromptTemplate", "class_tokens"]

#: the placeholder of the text in a prompt template (``{classes}`` lists the class words)
TEXT_FIELD = "{text}"
_SENTINEL = "\u0000XAIMETRICS_TEXT\u0000"


@dataclass(frozen=True)
class PromptTemplate:
    """The prompt around each text: ``before + text + after``; the answer follows ``after``.

    Attributes:
        before, after: the fixed strings (the chat template applied when ``chat``).
        separator: put before each class answer (a space when ``after`` does not end in white space).
        special_tokens: add the tokenizer's special tokens (``False`` for chat-templated strings, which carry
            their own).
    """

    before: str
    after: str
    separator: str
    special_tokens: bool

    @classmethod
    def build(
        cls,
        tokenizer: PreTrainedTokenizerBase,
        template: str,
        class_words: Sequence[str],
        *,
        chat: bool,
        system: str | None,
    ) -> PromptTemplate:
        """Fill ``{classes}`` and split ``template`` at ``{text}`` (through the chat template when ``chat``)."""
        if not isinstance(template, str) or template.count(TEXT_FIELD) != 1:
            raise invalid(
                "template", "PromptClassifier", "a string with exactly one '{text}' placeholder", template,
                "For example: 'Text: {text}\\nTopic:'.",
            )  # fmt: skip
        filled = template.replace("{classes}", ", ".join(class_words)).replace(TEXT_FIELD, _SENTINEL)
        if chat:
            if not getattr(tokenizer, "chat_template", None):
                raise invalid(
                    "chat", "PromptClassifier", "False for a tokenizer without a chat template", True
                )
            messages = [{"role": "system", "content": system}] if system else []
            messages.append({"role": "user", "content": filled})
            # tokenize=False: the rendered text (the stub's return type covers every mode)
            filled = cast(
                str, tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            )
        before, after = filled.split(_SENTINEL)
        separator = "" if not after or after[-1].isspace() else " "
        return cls(before, after, separator, special_tokens=not chat)

    def render(self, text: str) -> tuple[str, tuple[int, int]]:
        """The prompt for ``text`` and the character range of the text inside it."""
        return self.before + text + self.after, (len(self.before), len(self.before) + len(text))


@dataclass(frozen=True)
class ClassTokens:
    """The answer tokens: ``prefix`` (shared by every class, appended to each prompt) and one id per class."""

    prefix: tuple[int, ...]
    ids: tuple[int, ...]


def _ids(tokenizer: PreTrainedTokenizerBase, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def class_tokens(
    tokenizer: PreTrainedTokenizerBase, template: PromptTemplate, class_words: Sequence[str]
) -> ClassTokens:
    """The shared answer prefix and the distinguishing token of each class (see the module docstring).

    Raises:
        InvalidParameterError: an empty answer, or two classes with the same distinguishing token.
    """
    context = _ids(tokenizer, template.after)
    answers = []
    for word in class_words:
        full = _ids(tokenizer, template.after + template.separator + word)
        if full[: len(context)] != context:  # the answer would change how the prompt itself is tokenised
            raise invalid(
                "template", "PromptClassifier", "a template whose last token does not merge with the answer",
                repr(template.after[-20:]),
                f"The answer {word!r} merges with the end of the prompt; end the template without a trailing "
                "space (e.g. 'Topic:'), the space is added before the answer.",
            )  # fmt: skip
        answer = full[len(context) :]
        if not answer:
            raise invalid("class_words", "PromptClassifier", "non-empty answers", repr(word))
        answers.append(answer)
    common = 0
    while all(len(a) > common for a in answers) and len({a[common] for a in answers}) == 1:
        common += 1
    firsts: dict[int, list[str]] = {}
    for word, answer in zip(class_words, answers, strict=True):
        if len(answer) <= common:
            raise invalid(
                "class_words", "PromptClassifier", "answers that are not the beginning of another answer",
                repr(word), "Use class words that differ in their first word.",
            )  # fmt: skip
        firsts.setdefault(answer[common], []).append(word)
    clashes = [words for words in firsts.values() if len(words) > 1]
    if clashes:
        pairs = "; ".join(" / ".join(map(repr, words)) for words in clashes)
        raise invalid(
            "class_words", "PromptClassifier", "class answers whose first differing token is unique", pairs,
            "The next token decides the class: pass class_words= with distinct first words (e.g. 'sport', "
            "'tech') or anonymised labels ('Class_0', 'Class_1', …).",
        )  # fmt: skip
    return ClassTokens(tuple(answers[0][:common]), tuple(answer[common] for answer in answers))
