"""The GBNF answer grammar accepts exactly the valid ``Sample_{id}: {class}`` answers.

The grammar text is checked with a small independent GBNF interpreter written here for the subset it uses
(rules, alternatives, sequences, string literals with escapes, ``?``), and compiled by llama.cpp when
``llama_cpp`` is installed.
"""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import AnswerSchema
from xaimetrics.simulators._grammar import answer_grammar, gbnf_literal

_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}
_TOKEN = re.compile(r'\s*(?:(?P<lit>"(?:[^"\\]|\\.)*")|(?P<name>[A-Za-z0-9-]+)|(?P<op>[|?]))')


def _unescape(literal: str) -> str:
    body, out, i = literal[1:-1], [], 0
    while i < len(body):
        if body[i] == "\\":
            if body[i + 1] == "x":
                out.append(chr(int(body[i + 2 : i + 4], 16)))
                i += 4
                continue
            out.append(_ESCAPES[body[i + 1]])
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


def parse_gbnf(text: str) -> dict[str, list[list[tuple[str, str, bool]]]]:
    """rule -> alternatives -> items (kind 'lit' | 'ref', value, optional)."""
    rules: dict[str, list[list[tuple[str, str, bool]]]] = {}
    for line in text.splitlines():
        name, _, body = line.partition(" ::= ")
        assert name and body, line
        alternatives: list[list[tuple[str, str, bool]]] = [[]]
        position = 0
        while position < len(body):
            match = _TOKEN.match(body, position)
            assert match, body[position:]
            position = match.end()
            if match["lit"]:
                alternatives[-1].append(("lit", _unescape(match["lit"]), False))
            elif match["name"]:
                alternatives[-1].append(("ref", match["name"], False))
            elif match["op"] == "|":
                alternatives.append([])
            else:
                kind, value, _ = alternatives[-1][-1]
                alternatives[-1][-1] = (kind, value, True)
        rules[name] = alternatives
    return rules


def accepts(rules: dict[str, list[list[tuple[str, str, bool]]]], text: str) -> bool:
    def ends(symbol: str, start: int) -> set[int]:
        result: set[int] = set()
        for alternative in rules[symbol]:
            positions = {start}
            for kind, value, optional in alternative:
                after: set[int] = set(positions) if optional else set()
                for p in positions:
                    if kind == "lit":
                        if text.startswith(value, p):
                            after.add(p + len(value))
                    else:
                        after |= ends(value, p)
                positions = after
            result |= positions
        return result

    return len(text) in ends("root", 0)


SCHEMA = AnswerSchema(sample_ids=("12", "3", "40"), classes=("not prime", "prime", "Sci/Tech"))


def test_grammar_text_is_pinned() -> None:
    assert answer_grammar(SCHEMA) == (
        'root ::= line-0 "\\n" line-1 "\\n" line-2 "\\n"?\n'
        'line-0 ::= "Sample_12: " label\n'
        'line-1 ::= "Sample_3: " label\n'
        'line-2 ::= "Sample_40: " label\n'
        'label ::= "not prime" | "prime" | "Sci/Tech"'
    )


def test_grammar_accepts_every_valid_answer_and_only_those() -> None:
    rules = parse_gbnf(answer_grammar(SCHEMA))
    for labels in itertools.product(SCHEMA.classes, repeat=3):
        answer = "\n".join(SCHEMA.line(i, c) for i, c in zip(SCHEMA.sample_ids, labels, strict=True))
        assert accepts(rules, answer) and accepts(rules, answer + "\n")
    valid = "Sample_12: not prime\nSample_3: prime\nSample_40: Sci/Tech"
    invalid_answers = [
        "",
        "Sample_12: not prime\nSample_3: prime",  # a missing sample
        "Sample_3: prime\nSample_12: not prime\nSample_40: Sci/Tech",  # wrong order
        valid.replace("Sci/Tech", "sci/tech"),  # case matters
        valid.replace("Sci/Tech", "Business"),  # an invented label
        valid.replace("Sample_40", "Sample_41"),  # an invented id
        valid + "\nSample_40: prime",  # an extra line
        valid + "\n\n",
        " " + valid,
        valid.replace(": ", ":"),
        "Answer:\n" + valid,
    ]
    for answer in invalid_answers:
        assert not accepts(rules, answer), answer


@settings(max_examples=60, deadline=None)
@given(
    classes=st.lists(
        st.text(
            alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1
        ),
        min_size=1,
        max_size=4,
        unique=True,
    ).filter(lambda cs: all(c.strip() for c in cs)),
    ids=st.lists(st.integers(0, 999).map(str), min_size=1, max_size=4, unique=True),
    data=st.data(),
)
def test_grammar_round_trips_arbitrary_class_names(
    classes: list[str], ids: list[str], data: st.DataObject
) -> None:
    schema = AnswerSchema(tuple(ids), tuple(classes))
    rules = parse_gbnf(answer_grammar(schema))
    labels = data.draw(st.lists(st.sampled_from(classes), min_size=len(ids), max_size=len(ids)))
    answer = "\n".join(schema.line(i, c) for i, c in zip(ids, labels, strict=True))
    assert accepts(rules, answer)
    assert not accepts(rules, answer + "!") or any(c.endswith("!") for c in classes)


def test_literal_escaping() -> None:
    assert gbnf_literal('a "b" \\ c\t\x01') == '"a \\"b\\" \\\\ c\\t\\x01"'
    assert _unescape(gbnf_literal('a "b" \\ c\t\x01é')) == 'a "b" \\ c\t\x01é'


def test_llama_cpp_compiles_the_grammar() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    grammar = llama_cpp.LlamaGrammar.from_string(answer_grammar(SCHEMA), verbose=False)
    assert grammar is not None
    tricky = AnswerSchema(("1", "2"), ('say "hi"', "back\\slash", "naïve café"))
    assert llama_cpp.LlamaGrammar.from_string(answer_grammar(tricky), verbose=False) is not None


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sample_ids": (), "classes": ("a",)}, "'sample_ids' parameter of AnswerSchema must be a non-empty"),
        ({"sample_ids": ("1", "1"), "classes": ("a",)}, "'sample_ids' .* unique"),
        ({"sample_ids": ("1",), "classes": ("a", "a b\nc")}, "'classes' .* one-line"),
        ({"sample_ids": ("1 2",), "classes": ("a",)}, "ids without spaces"),
        ({"sample_ids": "12", "classes": ("a",)}, "'sample_ids' .* a tuple of strings"),
    ],
)
def test_answer_schema_validation(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        AnswerSchema(**kwargs)  # type: ignore[arg-type]


def test_answer_schema_accepts_integer_ids() -> None:
    assert AnswerSchema((3, 10), ("a", "b")).sample_ids == ("3", "10")  # type: ignore[arg-type]
