"""Answer parsing: by sample id, tolerant to formatting noise, never raising."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xaimetrics.consim._parsing import parse_answers
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
        ('{"Sample_20": "prime", "reason": "clearly not Sci/Tech"}', 0),  # a JSON value is read alone
        ('{"Sample_20": "Sci\\u002fTech"}', 2),  # JSON escapes are decoded
        ('{"Sample_20": "\\u0053ci/Tech"}', 2),
        ("Sample_20: prime — no doubt", 0),  # a negation after the class does not negate it
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


# -- hedged and negated answers (issue #11, class 2) -----------------------------------------------------------
TOPICS = ["World News", "Sci/Tech", "Sports", "Business"]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("Sample_20: World News or Sci/Tech", "hedged"),
        ("Sample_20: World News / Sci/Tech", "hedged"),
        ("Sample_20: World News, Sports", "hedged"),
        ("Sample_20: Sports (maybe Business)", "hedged"),
        ('Sample_20: "World News" or "Sports"', "hedged"),
        ('{"Sample_20": "World News", "Sample_21": "Sports"}\nSample_20: Business', "conflict"),
        ("Sample_20: not World News", "negated"),
        ("Sample_20: NOT world news", "negated"),
        ("Sample_20: it isn't Sports", "negated"),
        ("Sample_20: definitely not Sci/Tech", "negated"),
        ("Sample_20: non-Business", "negated"),
        ("Sample_20: never Sports", "negated"),
        ("Sample_20: I don't know, maybe Sports", "negated"),
        ("Sample_20: Sports, not World News", "negated"),
        ("Sample_20: weather", "no_class"),
    ],
)
def test_hedged_and_negated_lines_are_not_answers(line: str, reason: str) -> None:
    parsed = parse_answers(line, ["20"], TOPICS)
    assert parsed.answers == {"20": None}
    if reason == "conflict":
        assert parsed.statuses == {"20": "conflict"}
        return
    assert parsed.statuses == {"20": "invalid"}
    assert parsed.reasons == {"20": reason}
    assert (parsed.n_hedged, parsed.n_negated) == (reason == "hedged", reason == "negated")


def test_a_class_name_holding_a_negation_is_not_negated() -> None:
    classes = ["prime", "not prime"]
    for line, expected in [("not prime", 1), ("is not prime", 1), ("definitely NOT PRIME", 1), ("prime", 0)]:
        assert parse_answers(f"Sample_1: {line}", ["1"], classes).answers == {"1": expected}, line
    assert parse_answers("Sample_1: not not prime", ["1"], classes).reasons == {"1": "negated"}


_NEGATIONS = ["not ", "NOT ", "Not: ", "isn't ", "is not ", "never ", "definitely not ", "non-", "no "]
_JOINERS = [" or ", " / ", "/", ", ", " | ", " and ", " vs ", " (or ", " - maybe "]


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    kinds=st.lists(st.sampled_from(["ok", "hedged", "negated"]), min_size=len(IDS), max_size=len(IDS)),
)
def test_property_hedged_and_negated_answers_are_never_credited(data, kinds) -> None:
    """Each id is answered with one class, two distinct classes, or a negated class; only the first counts."""
    lines, expected = [], {}
    for sample_id, kind in zip(IDS, kinds, strict=True):
        first = data.draw(st.integers(0, len(TOPICS) - 1))
        name = _case(TOPICS[first], data.draw(st.integers(0, 3)))
        if kind == "hedged":
            other = data.draw(st.sampled_from([i for i in range(len(TOPICS)) if i != first]))
            name += data.draw(st.sampled_from(_JOINERS)) + _case(TOPICS[other], data.draw(st.integers(0, 3)))
        elif kind == "negated":
            name = data.draw(st.sampled_from(_NEGATIONS)) + name
        bullet = data.draw(st.sampled_from(_BULLETS))
        sep = data.draw(st.sampled_from([": ", " - ", " -> ", " = ", ":\n"]))
        lines.append(f"{bullet}Sample_{sample_id}{sep}{name}")
        expected[sample_id] = (first, "ok", None) if kind == "ok" else (None, "invalid", kind)
    parsed = parse_answers("\n".join(data.draw(st.permutations(lines))), IDS, TOPICS)
    for sample_id, (label, status, reason) in expected.items():
        assert parsed.answers[sample_id] == label, parsed.raw[sample_id]
        assert parsed.statuses[sample_id] == status
        assert parsed.reasons.get(sample_id) == reason


# -- negative ids, JSON escapes (class 4) ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "mention",
    [
        "Sample_-{i}",
        "Sample -{i}",
        "sample_-{i}",
        "Sample #-{i}",
        "Sample−{i}",
        "Sample_−{i}",
        "**Sample_-{i}**",
    ],
)
def test_negative_ids_are_never_credited(mention: str) -> None:
    text = mention.format(i=21) + ": prime\n" + "Sample_20: Sci/Tech"
    parsed = parse_answers(text, ["20", "21"], CLASSES)
    assert parsed.statuses == {"20": "ok", "21": "missing"}
    assert parsed.unexpected_ids == ("-21",)


def test_negative_bare_ids_are_never_credited() -> None:
    parsed = parse_answers("-21: prime\n- 20: Sci/Tech", ["20", "21"], CLASSES)
    assert parsed.answers == {"20": 2, "21": None}
    assert parsed.unexpected_ids == ("-21",)


@settings(max_examples=150, deadline=None)
@given(
    ids=st.lists(st.integers(0, 10**6), min_size=1, max_size=8, unique=True),
    data=st.data(),
)
def test_property_a_minus_sign_never_moves_an_answer_to_another_id(ids, data) -> None:
    prefix = data.draw(st.sampled_from(["Sample_-", "Sample -", "sample−", "SAMPLE #-", "Sample_ -"]))
    text = "\n".join(f"{prefix}{i}: prime" for i in ids)
    parsed = parse_answers(text, [str(i) for i in ids], CLASSES)
    assert set(parsed.statuses.values()) == {"missing"}
    assert set(parsed.unexpected_ids) == {f"-{i}" for i in ids}


@settings(max_examples=150, deadline=None)
@given(
    assignment=st.lists(st.integers(0, len(CLASSES) - 1), min_size=len(IDS), max_size=len(IDS)),
    escape=st.lists(st.booleans(), min_size=len(IDS), max_size=len(IDS)),
)
def test_property_json_answers_with_unicode_escapes(assignment, escape) -> None:
    """``json.dumps`` (ASCII-escaped, as many servers emit it) of a mapping of answers is fully recovered."""
    answers = {}
    for sample_id, label, hide in zip(IDS, assignment, escape, strict=True):
        name = CLASSES[label]
        answers[f"Sample_{sample_id}"] = "".join(f"\\u{ord(c):04x}" for c in name) if hide else name
    text = "{" + ", ".join(f'"{k}": "{v}"' for k, v in answers.items()) + "}"
    parsed = parse_answers(text, IDS, CLASSES)
    assert parsed.answers == dict(zip(IDS, assignment, strict=True))


def test_json_escapes_decode_like_json() -> None:
    classes = ["Café", "Thé"]
    assert parse_answers('{"Sample_1": "Caf\\u00e9"}', ["1"], classes).answers == {"1": 0}
    assert parse_answers(json.dumps({"Sample_1": "Thé"}), ["1"], classes).answers == {"1": 1}
    # an escaped backslash is not the start of an escape
    assert parse_answers('{"Sample_1": "\\\\u0043af\\u00e9"}', ["1"], classes).statuses == {"1": "invalid"}


# -- Unicode case (classes 3 and the parser's matching) --------------------------------------------------------
UNICODE_CLASSES = ["Kırmızı", "Straße", "İstanbul", "ΣΟΦΙΑ", "ǅungla", "ﬁnance", "Ωmega", "Ærø"]
_CASES = [str, str.upper, str.lower, str.title, str.casefold, str.swapcase]


@settings(max_examples=200, deadline=None)
@given(
    assignment=st.lists(st.integers(0, len(UNICODE_CLASSES) - 1), min_size=len(IDS), max_size=len(IDS)),
    cases=st.lists(st.sampled_from(_CASES), min_size=len(IDS), max_size=len(IDS)),
    id_case=st.sampled_from(_CASES),
)
def test_property_every_case_variant_of_a_class_matches(assignment, cases, id_case) -> None:
    lines = [
        f"{id_case('Sample_')}{sample_id}: {case(UNICODE_CLASSES[label])}"
        for sample_id, label, case in zip(IDS, assignment, cases, strict=True)
    ]
    parsed = parse_answers("\n".join(lines), IDS, UNICODE_CLASSES)
    assert parsed.answers == dict(zip(IDS, assignment, strict=True)), parsed.raw


@settings(max_examples=150, deadline=None)
@given(
    # Title-casing ᾷ, ῇ, ῷ moves their perispomeni from the vowel to the iota: the only letters (checked
    # exhaustively, one at a time) whose case variants keep other base letters with a mark elsewhere.
    names=st.lists(
        st.text(
            st.characters(categories=["Lu", "Ll", "Lt"], exclude_characters="ᾷῇῷ"), min_size=1, max_size=6
        ),
        min_size=2,
        max_size=4,
        unique=True,
    ),
    data=st.data(),
)
def test_property_case_variants_of_arbitrary_letters(names, data) -> None:
    from xaimetrics.consim._parsing import ClassMatcher

    try:
        ClassMatcher(names)
    except InvalidParameterError:  # two names equal once folded: rejected, nothing to match
        return
    label = data.draw(st.integers(0, len(names) - 1))
    case = data.draw(st.sampled_from(_CASES))
    assert parse_answers(f"Sample_1: {case(names[label])}", ["1"], names).answers == {"1": label}


# -- reasoning blocks: positions from the text itself (class 3) ------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(prefix=st.text(alphabet="İıßẞΣςﬁ Ⅻ\u0307x", max_size=40), upper=st.booleans())
def test_property_think_tags_after_length_changing_characters(prefix: str, upper: bool) -> None:
    tag = "THINK" if upper else "think"
    block = f"{prefix}<{tag}>Sample_20 is prime?</{tag}>\nSample_20: Sci/Tech"
    assert parse_answers(block, ["20"], CLASSES).answers == {"20": 2}
    lone = f"{prefix} Sample_20: prime</{tag}>Sample_20: Class_10"
    assert parse_answers(lone, ["20"], CLASSES).answers == {"20": 4}
    cut = f"Sample_20: Class_1 {prefix}<{tag}>Sample_20: prime"
    assert parse_answers(cut, ["20"], CLASSES).answers == {"20": 3}


@pytest.mark.timeout(120)
def test_one_megabyte_worst_cases_parse_without_catastrophic_backtracking() -> None:
    """A hang guard, not a timing (timings belong to benchmarks/bench_parse_worst_case.py): the old quadratic
    ``<think>`` regex took about half an hour on 1 MB; a linear parser takes well under a second."""
    from adversarial_answers import CLASSES as BENCH_CLASSES
    from adversarial_answers import GENERATORS
    from adversarial_answers import IDS as BENCH_IDS

    for name, make in GENERATORS.items():
        text = make(1_000_000)
        parsed = parse_answers(text, BENCH_IDS, BENCH_CLASSES)
        assert set(parsed.answers) == set(BENCH_IDS), name
