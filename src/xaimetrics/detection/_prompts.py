"""Detection and fuzzing prompts: one text per prompt, answered ``Sample_0: Yes`` or ``Sample_0: No``.

**One text per prompt.** Delphi and SAEBench put several texts in one prompt to save tokens. Each answer then
sees the other texts (and, when generated, the earlier answers): a reader can answer by *contrast* ("these
three look alike, the fourth does not") or by a base rate it infers from the batch, so a text's score
depends on its neighbours and the texts are no longer independent units for the AUROC's interval. Here every
text gets its own conversation; the instructions and the concept's description come first and are identical
for every text of a concept (a backend with prefix caching reads them once), the text comes last.

**The answer** reuses the simulators' answer format (:class:`~xaimetrics.simulators.AnswerSchema` with the
classes ``No`` and ``Yes``), so every simulator reads it the same way: the local models score the
continuations ``Sample_0: No`` / ``Sample_0: Yes`` of the prompt (``P(Yes)`` normalised over the two
answers, at the first answer token), OpenAI-compatible servers give ``P(Yes)`` from the ``top_logprobs`` of
the answer token, and text-only simulators give a Yes or No.

Prompt wordings (``PROMPTS``):

- ``"words"``: the concept is shown as the words that activate it most, and the reader is asked whether the
  text *contains such words or is about what they have in common* — the literal reading that the
  interpretation method (CMAW, top words) promises;
- ``"topic"``: the same words, but the reader is asked whether the text is *about the theme* the words
  suggest — the reading a person would give an NMF or SAE concept of a topic classifier.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Union

from xaimetrics._validation import check_choice, check_positive_int, invalid
from xaimetrics.simulators import AnswerSchema, ChatMessage

if TYPE_CHECKING:
    from xaimetrics.concepts import ConceptInterpretation

#: a concept's description: an interpretation (its aligned words and label), a list of words, or a label
Interpretation = Union["ConceptInterpretation", Sequence[str], str]

__all__ = [
    "ANSWERS",
    "PROMPTS",
    "DetectionPrompt",
    "Interpretation",
    "build_detection_prompts",
    "build_fuzzing_prompts",
    "describe",
    "read_detection_prompt",
]

#: the answer classes, in the order of the probabilities (P(Yes) is the second)
ANSWERS: tuple[str, str] = ("No", "Yes")
SAMPLE_ID = "0"
_ANSWER_RULE = "Answer 'Sample_0: Yes' or 'Sample_0: No'."

PromptName = Literal["words", "topic"]
PROMPTS: Mapping[str, str] = {
    "words": (
        "A feature of a text classifier is active on texts that use the words listed below, or words with "
        "the same meaning. Is it active on the text?"
    ),
    "topic": (
        "A feature of a text classifier is described by the words listed below; together they point to a "
        "theme. Is the text about that theme?"
    ),
}
FUZZING_PROMPT = (
    "A feature of a text classifier is active on the words listed below. In the text, some words are marked "
    "<<like this>>. Are the marked words the ones the feature is active on?"
)
_WORDS_LINE = "Feature words: "
_LABEL_LINE = "Feature: "
_MARK = re.compile(r"<<(.+?)>>")


@dataclass(frozen=True)
class DetectionPrompt:
    """One conversation asking about one text, and the answer it expects."""

    messages: tuple[ChatMessage, ...]
    schema: AnswerSchema


def describe(interpretation: Interpretation) -> tuple[tuple[str, ...], str | None]:
    """``(words, label)`` of a concept's interpretation: a :class:`~xaimetrics.concepts.ConceptInterpretation`
    (its aligned words and label), a list of words, or a label string.

    Example:
        >>> from xaimetrics.concepts import ConceptInterpretation
        >>> describe(ConceptInterpretation(aligned=("goal", "cup"))), describe(["chip"]), describe("football")
        ((('goal', 'cup'), None), (('chip',), None), ((), 'football'))
    """
    if isinstance(interpretation, str):
        if not interpretation.strip():
            raise invalid("interpretation", "describe", "a non-empty label", repr(interpretation))
        return (), interpretation.strip()
    aligned = getattr(interpretation, "aligned", None)
    if aligned is not None:
        label = getattr(interpretation, "label", None)
        words = tuple(str(w) for w in aligned)
        if not words and not label:
            raise invalid(
                "interpretation", "describe", "an interpretation with words or a label", interpretation,
                "This concept has no aligned word (nothing activates it): leave it out.",
            )  # fmt: skip
        return words, label
    if (
        isinstance(interpretation, Sequence)
        and interpretation
        and all(isinstance(w, str) for w in interpretation)
    ):
        return tuple(interpretation), None
    raise invalid(
        "interpretation",
        "describe",
        "a ConceptInterpretation, a list of words or a label",
        repr(interpretation),
    )


def _cut(text: str, max_chars: int) -> str:
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars].rsplit(" ", 1)[0] if " " in text[:max_chars] else text[:max_chars]
    return cut + " …"


def _system(template: str, words: Sequence[str], label: str | None) -> str:
    lines = [template, _ANSWER_RULE, ""]
    if label:
        lines.append(_LABEL_LINE + label)
    if words:
        lines.append(_WORDS_LINE + ", ".join(repr(w) for w in words))
    return "\n".join(lines)


def build_detection_prompts(
    interpretation: Interpretation,
    texts: Sequence[str],
    *,
    prompt: PromptName = "words",
    max_chars: int = 300,
    probabilities: bool = True,
) -> list[DetectionPrompt]:
    """One prompt per text asking whether the concept described by ``interpretation`` is active on it.

    Args:
        interpretation: the concept's description (see :func:`describe`).
        texts: the texts, one prompt each.
        prompt: a key of :data:`PROMPTS`.
        max_chars: each text is cut (at a word boundary) to this many characters.
        probabilities: ask the simulator for ``P(No), P(Yes)`` as well as the text answer.

    Example:
        >>> p = build_detection_prompts(["goal", "cup"], ["A late goal won the cup."])[0]
        >>> print(p.messages[0].content.splitlines()[-1]); print(p.messages[1].content)
        Feature words: 'goal', 'cup'
        Sample_0: A late goal won the cup.
        >>> p.schema.classes
        ('No', 'Yes')
    """
    owner = "build_detection_prompts"
    check_choice(prompt, "prompt", owner, tuple(PROMPTS))
    max_chars = check_positive_int(max_chars, "max_chars", owner, minimum=20)
    if (
        isinstance(texts, str)
        or not isinstance(texts, Sequence)
        or not all(isinstance(t, str) for t in texts)
    ):
        raise invalid("texts", owner, "a list of strings", type(texts).__name__)
    words, label = describe(interpretation)
    system = ChatMessage("system", _system(PROMPTS[prompt], words, label))
    schema = AnswerSchema((SAMPLE_ID,), ANSWERS, probabilities=bool(probabilities))
    return [
        DetectionPrompt((system, ChatMessage("user", f"Sample_{SAMPLE_ID}: {_cut(text, max_chars)}")), schema)
        for text in texts
    ]


def build_fuzzing_prompts(
    interpretation: Interpretation,
    marked_texts: Sequence[str],
    *,
    max_chars: int = 400,
    probabilities: bool = True,
) -> list[DetectionPrompt]:
    """One prompt per text whose words are marked ``<<like this>>``, asking whether the marks are right.

    Example:
        >>> p = build_fuzzing_prompts(["goal"], ["a late <<goal>> won"])[0]
        >>> p.messages[1].content
        'Sample_0: a late <<goal>> won'
    """
    owner = "build_fuzzing_prompts"
    max_chars = check_positive_int(max_chars, "max_chars", owner, minimum=20)
    words, label = describe(interpretation)
    system = ChatMessage("system", _system(FUZZING_PROMPT, words, label))
    schema = AnswerSchema((SAMPLE_ID,), ANSWERS, probabilities=bool(probabilities))
    return [
        DetectionPrompt((system, ChatMessage("user", f"Sample_{SAMPLE_ID}: {_cut(text, max_chars)}")), schema)
        for text in marked_texts
    ]


@dataclass(frozen=True)
class ReadDetectionPrompt:
    """What a literal reader finds in a detection or fuzzing prompt."""

    words: tuple[str, ...]
    label: str | None
    text: str
    marked: tuple[str, ...]
    fuzzing: bool


def read_detection_prompt(messages: Sequence[ChatMessage]) -> ReadDetectionPrompt | None:
    """Parse a prompt of :func:`build_detection_prompts` / :func:`build_fuzzing_prompts` (``None``: not one).

    Example:
        >>> read = read_detection_prompt(build_fuzzing_prompts(["goal", "cup"], ["a <<goal>> won"])[0].messages)
        >>> read.words, read.text, read.marked, read.fuzzing
        (('goal', 'cup'), 'a goal won', ('goal',), True)
    """
    system = "\n".join(m.content for m in messages if m.role == "system")
    user = "\n".join(m.content for m in messages if m.role == "user")
    words: tuple[str, ...] = ()
    label = None
    for line in system.splitlines():
        if line.startswith(_WORDS_LINE):
            try:
                value = ast.literal_eval("[" + line[len(_WORDS_LINE) :] + "]")
            except (ValueError, SyntaxError):
                return None
            words = tuple(str(v) for v in value)
        elif line.startswith(_LABEL_LINE):
            label = line[len(_LABEL_LINE) :]
    prefix = f"Sample_{SAMPLE_ID}: "
    if not (words or label) or not user.startswith(prefix):
        return None
    raw = user[len(prefix) :]
    return ReadDetectionPrompt(
        words, label, _MARK.sub(r"\1", raw), tuple(_MARK.findall(raw)), system.startswith(FUZZING_PROMPT)
    )
