"""The prompt around a text and the token that decides each class, with the MiniLM WordPiece tokenizer."""

from __future__ import annotations

from typing import Any

import pytest

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.models._class_tokens import PromptTemplate, class_tokens


def _ids(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def test_the_template_splits_at_the_text_and_fills_the_classes(tokenizer: Any) -> None:
    template = PromptTemplate.build(
        tokenizer, "Topics: {classes}.\nText: {text}\nTopic:", ["sport", "tech"], chat=False, system=None
    )
    assert (template.before, template.after, template.separator) == (
        "Topics: sport, tech.\nText: ",
        "\nTopic:",
        " ",
    )
    prompt, span = template.render("A goal!")
    assert prompt[span[0] : span[1]] == "A goal!" and template.special_tokens
    assert PromptTemplate.build(tokenizer, "{text} Topic: ", ["a"], chat=False, system=None).separator == ""


def test_each_class_is_decided_by_its_first_differing_token(tokenizer: Any) -> None:
    template = PromptTemplate.build(tokenizer, "{text} Answer:", ["x"], chat=False, system=None)
    tokens = class_tokens(tokenizer, template, ["very good", "very bad"])
    assert tokens.prefix == tuple(_ids(tokenizer, "very"))  # shared by both answers, appended to each prompt
    assert tokens.ids == (_ids(tokenizer, "good")[0], _ids(tokenizer, "bad")[0])
    plain = class_tokens(tokenizer, template, ["sport", "tech", "world"])
    assert plain.prefix == () and plain.ids == tuple(
        _ids(tokenizer, w)[0] for w in ("sport", "tech", "world")
    )


@pytest.mark.parametrize(
    ("template", "words", "match"),
    [
        ("{text} and {text}", ["a", "b"], "exactly one '{text}' placeholder"),
        ("{text} Answer:", ["sport", "sport fan"], "not the beginning of another answer"),
        ("{text} Answer:", ["very good", "very bad", "neutral"], "'very good' / 'very bad'"),
    ],
)
def test_bad_templates_and_class_words_are_named(
    tokenizer: Any, template: str, words: list[str], match: str
) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        built = PromptTemplate.build(tokenizer, template, words, chat=False, system=None)
        class_tokens(tokenizer, built, words)


def test_a_tokenizer_without_a_chat_template_refuses_chat(tokenizer: Any) -> None:
    with pytest.raises(InvalidParameterError, match="'chat' parameter of PromptClassifier"):
        PromptTemplate.build(tokenizer, "{text}", ["a", "b"], chat=True, system=None)
