"""Answer parsing: by sample id, tolerant to formatting noise, never raising."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xaimetrics.consim import parse_answers
from xaimetrics.exceptions import InvalidParameterError

CLASSES = ["prime", "not prime", "Sci/Tech", "Class_1", "Class_10"]
IDS = [str(i) for i in range(20, 30)]


def test_basic_and_multi_word_classes() -> None:
    text = (
        "Sample_20: not prime\nSample_21: prime\nSample_22: Sci/Tech\nSample_23: Class_10\nSample_24: Class_1"
    )
    parsed = parse_answers(text, IDS[:5], CLASSES)
    assert parsed.answers == {"20": 1, "21": 0, "22": 2, "23": 4, "24": 3}
    assert parsed.n_parsed == 5


def test_order_does_not_matter_ids_do() -> None:
    text = "Sample_22: prime\nSample_20: Sci/Tech\nSample_21: not prime"
    assert parse_answers(text, ["20", "21", "22"], CLASSES).answers == {"20": 2, "21": 1, "22": 0}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("**Sample_20**: **Not Prime**", 1),
        ("- sample 20 - not-prime.", 1),
        ("* Sample-20 => 'prime'", 0),
        ('1. Sample #20: "sci / tech"', 2),
        ("Sample\\_20: class\\_10", 4),
        ("| Sample_20 | CLASS_1 |", 3),
        ('{"Sample_20": "Sci/Tech"}', 2),
        ("Sample_20:\n\n   prime", 0),
        ("SAMPLE_020 → NOT PRIME", 1),
        ("Sample_20 is not prime.", 1),
        ("Sample_20: The model predicts prime", 0),
        ("Sample_20: prime (clearly not Sci/Tech)", 0),  # a class starting the answer wins
        ("Ｓａｍｐｌｅ_20: ｐｒｉｍｅ", 0),  # full-width characters (NFKC)
    ],
)
def test_noisy_formats(line: str, expected: int) -> None:
    parsed = parse_answers(line, ["20"], CLASSES)
    assert parsed.answers == {"20": expected}, parsed.raw


def test_prefix_classes_are_not_confused() -> None:
    parsed = parse_answers(
        "Sample_20: Class_10\nSample_21: Class_1\nSample_22: prime", ["20", "21", "22"], CLASSES
    )
    assert parsed.answers == {"20": 4, "21": 3, "22": 0}
    # "not prime" contains "prime": the longest class at a position wins
    assert parse_answers("Sample_20: definitely not prime", ["20"], ["prime", "not prime"]).answers == {
        "20": 1
    }


def test_several_answers_on_one_line() -> None:
    parsed = parse_answers(
        "Sample_20: prime, Sample_21: not prime; Sample_22: Class_1", ["20", "21", "22"], CLASSES
    )
    assert parsed.answers == {"20": 0, "21": 1, "22": 3}


def test_missing_invalid_conflict_and_unexpected() -> None:
    text = "Sample_20: prime\nSample_21: composite\nSample_22: prime\nSample_22: not prime\nSample_99: prime\nSample_23: prime\nSample_23: prime"
    parsed = parse_answers(text, ["20", "21", "22", "23", "24"], CLASSES)
    assert parsed.statuses == {"20": "ok", "21": "invalid", "22": "conflict", "23": "ok", "24": "missing"}
    assert parsed.answers == {"20": 0, "21": None, "22": None, "23": 0, "24": None}
    assert parsed.unexpected_ids == ("99",)
    assert parsed.raw["21"] == "composite"
    assert (
        parsed.count("ok"),
        parsed.count("missing"),
        parsed.count("invalid"),
        parsed.count("conflict"),
    ) == (2, 1, 1, 1)


def test_ambiguous_answer_is_invalid() -> None:
    assert parse_answers("Sample_20: either prime or Sci/Tech", ["20"], CLASSES).statuses == {"20": "invalid"}


def test_reasoning_blocks_are_ignored() -> None:
    text = "<think>Sample_20 looks like prime... or Sci/Tech</think>\nSample_20: Sci/Tech"
    assert parse_answers(text, ["20"], CLASSES).answers == {"20": 2}
    assert parse_answers("Sample_20 maybe prime</think>Sample_20: Class_1", ["20"], CLASSES).answers == {
        "20": 3
    }
    assert parse_answers("<think>Sample_20: prime, but let me", ["20"], CLASSES).statuses == {"20": "missing"}


def test_bare_numbers_only_when_no_sample_mention() -> None:
    assert parse_answers("20: prime\n- 21. not prime", ["20", "21"], CLASSES).answers == {"20": 0, "21": 1}
    # with Sample_ mentions present, bare numbers are ignored
    assert parse_answers("Sample_20: prime\n21: prime", ["20", "21"], CLASSES).statuses == {
        "20": "ok",
        "21": "missing",
    }


def test_edge_inputs_do_not_raise() -> None:
    assert parse_answers(None, ["1"], CLASSES).statuses == {"1": "missing"}
    assert parse_answers("", ["1"], CLASSES).statuses == {"1": "missing"}
    huge = "Sample_" + "9" * 10000 + ": prime"
    assert parse_answers(huge, ["1"], CLASSES).unexpected_ids == ("9" * 10000,)
    # NFKC turns "²" into "2"; other scripts' digits are not sample ids
    assert parse_answers("Sample_²: prime\nSample_٣: prime", ["2", "3"], CLASSES).statuses == {
        "2": "ok",
        "3": "missing",
    }


def test_invalid_arguments_raise_clearly() -> None:
    with pytest.raises(InvalidParameterError, match="differ in their letters or digits"):
        parse_answers("x", ["1"], ["Sci/Tech", "sci-tech"])
    with pytest.raises(InvalidParameterError, match="letters or digits"):
        parse_answers("x", ["1"], ["+", "-"])
    with pytest.raises(InvalidParameterError, match="non-negative integer ids"):
        parse_answers("x", ["a"], CLASSES)
    with pytest.raises(InvalidParameterError, match="distinct ids"):
        parse_answers("x", ["1", "01"], CLASSES)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_property_never_raises(text: str) -> None:
    parsed = parse_answers(text, IDS, CLASSES)
    assert set(parsed.answers) == set(IDS)
    assert all(v is None or 0 <= v < len(CLASSES) for v in parsed.answers.values())


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "Sample_",
                "sample ",
                ": ",
                "\n",
                "prime",
                "not ",
                "Sci/Tech",
                "Class_1",
                "0",
                "2",
                "**",
                "<think>",
                "</think>",
                "|",
                "-",
                "{",
                '"',
            ]
        ),
        max_size=40,
    )
)
def test_property_never_raises_on_near_miss_tokens(parts: list[str]) -> None:
    parse_answers("".join(parts), IDS, CLASSES)


_SEPARATORS = [": ", ":", " - ", " = ", " -> ", " → ", " | ", ":\n", " is "]
_BULLETS = ["", "- ", "* ", "• ", "1. ", "  ", "> "]


def _case(text: str, mode: int) -> str:
    return [text, text.upper(), text.lower(), text.title()][mode]


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    assignment=st.lists(st.integers(0, len(CLASSES) - 1), min_size=len(IDS), max_size=len(IDS)),
    keep=st.lists(st.booleans(), min_size=len(IDS), max_size=len(IDS)),
    order=st.permutations(range(len(IDS))),
)
def test_property_recovers_noisy_answers(data, assignment, keep, order) -> None:
    lines = [data.draw(st.sampled_from(["Here are my predictions:", "", "Sure!"]))]
    for position in order:
        if not keep[position]:
            continue
        sample_id, label = IDS[position], CLASSES[assignment[position]]
        bullet = data.draw(st.sampled_from(_BULLETS))
        sep = data.draw(st.sampled_from(_SEPARATORS))
        bold_id, bold_label = data.draw(st.booleans()), data.draw(st.booleans())
        quote = data.draw(st.sampled_from(["", "'", '"', "`"]))
        name = _case(label, data.draw(st.integers(0, 3)))
        name = f"**{name}**" if bold_label else name
        id_text = _case(
            data.draw(st.sampled_from(["Sample_", "Sample ", "sample-", "Sample #"])),
            data.draw(st.integers(0, 3)),
        )
        id_text += sample_id
        id_text = f"**{id_text}**" if bold_id else id_text
        end = data.draw(st.sampled_from(["", ".", " ", ","]))
        lines.append(f"{bullet}{id_text}{sep}{quote}{name}{quote}{end}")
    lines.append(data.draw(st.sampled_from(["", "Hope this helps.", "Let me know."])))
    parsed = parse_answers("\n".join(lines), IDS, CLASSES)
    for position, sample_id in enumerate(IDS):
        if keep[position]:
            assert parsed.answers[sample_id] == assignment[position], (sample_id, parsed.raw[sample_id])
        else:
            assert parsed.statuses[sample_id] == "missing"
