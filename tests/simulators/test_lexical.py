"""The lexical reference simulator: parses every rendered prompt, uses the explanation, reads only the messages."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from xaimetrics.benchmark import ResultsStore, run_grid
from xaimetrics.benchmark._assessment import assess
from xaimetrics.consim import PROMPT_TYPES, PromptSetting, render_prompt
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import AnswerSchema, ChatMessage, LexicalSimulator, make_simulator
from xaimetrics.simulators._lexical import read_prompt

# toy_grid lives beside the benchmark tests (their conftest puts the folder on sys.path, as here)
sys.path.insert(0, str(Path(__file__).parents[1] / "benchmark"))
from toy_grid import PROVIDERS, toy_grid

GOLDEN = Path(__file__).parents[1] / "consim" / "golden"
LABELS = [PromptSetting(p, a).label for p in PROMPT_TYPES.values() for a in (False, True)]


def _golden(label: str) -> list[ChatMessage]:
    text = (GOLDEN / f"{label}.txt").read_text(encoding="utf-8")
    system, user = text.removeprefix("[system]\n").split("\n\n[user]\n")
    return [ChatMessage("system", system), ChatMessage("user", user.rstrip("\n"))]


@pytest.mark.parametrize("label", LABELS)
def test_every_golden_prompt_is_read(label: str) -> None:
    kind = PromptSetting.parse(label).kind
    read = read_prompt(_golden(label))
    expected = (
        ("Class_0", "Class_1", "Class_2") if label.endswith("-a") else ("not prime", "prime", "Sci/Tech")
    )
    assert read.classes == expected
    assert read.ep == {"4": "Eleven", "5": "Fifteen", "6": "Quantum computers"}
    if kind.content.global_explanations:
        assert read.concepts[2] == (("even", "pair", "double"), ("odd",))
        assert read.concepts[17] == (("divisible by three",), ())
        assert read.importances[expected[0]] == {2: "++", 5: "--", 17: "+"}
        assert read.importances[expected[2]] == {11: "++"}
    else:
        assert not read.concepts and not read.importances
    if kind.content.lp_predictions:
        assert read.lp == (
            ("Four is two times two.", expected[0]),
            ("Seven", expected[1]),
            ("A new laptop chip", expected[2]),
            ("Nine = 3 x 3", expected[1]),
        )
    else:
        assert read.lp == ()
    schema = AnswerSchema(("4", "5", "6"), expected, probabilities=True)
    response = LexicalSimulator().generate(_golden(label), answer_schema=schema)
    assert response.ok and len(response.text.splitlines()) == 3
    assert all(math.isclose(sum(p), 1.0) for p in response.probabilities.values())


def test_the_explanation_decides_where_the_prompt_without_it_cannot() -> None:
    schema = AnswerSchema(("4", "5", "6"), ("not prime", "prime", "Sci/Tech"), probabilities=True)
    sim = LexicalSimulator()
    with_explanation = sim.generate(_golden("E2"), answer_schema=schema).probabilities["4"]
    without = sim.generate(_golden("NE2"), answer_schema=schema).probabilities["4"]
    # "Eleven" is an aligned word of concept_5, '++' for prime and '--' for not prime; no LP text contains it
    assert int(np.argmax(with_explanation)) == 1 and with_explanation[1] > 0.8
    assert without == pytest.approx((1 / 3,) * 3)


def test_the_rule_by_hand() -> None:
    prompt = render_prompt(
        "E2", class_names=["sport", "tech"], lp_samples=["the coach and the team"], lp_predictions=[0],
        ep_samples=["a new chip for the team"], ep_predictions=[1],
        interpretation={0: {"aligned": ["chip"], "opposed": ["coach"]}, 1: {"label": "new laptop"}},
        global_importances=[[-0.02, 1.0], [0.9, -0.1]],
    )  # fmt: skip
    read = read_prompt(prompt.messages)
    scores = LexicalSimulator().scores(read, ("sport", "tech"), "a new chip for the team")
    # tech: concept_0 '++' · (chip) = 2, concept_1 '-' · ("new laptop" not all present) = 0; sport: concept_1 '++'
    # · 0 = 0, plus the LP word "team" (seen only in sport's examples; "the" is a stop word) = 1
    assert scores.tolist() == [1.0, 2.0]
    p = LexicalSimulator(temperature=2.0).probabilities(read, ("sport", "tech"), "a new chip for the team")
    assert p[1] == pytest.approx(1 / (1 + math.exp(-0.5)))


def test_it_reads_nothing_but_the_messages() -> None:
    common = dict(class_names=["a", "b"], ep_samples=["x y", "z"], interpretation={0: ["x"]},
                  global_importances=[[1.0], [-1.0]])  # fmt: skip
    one = render_prompt("E1", ep_predictions=[0, 1], **common)
    other = render_prompt("E1", ep_predictions=[1, 0], **common)  # another answer key, the same messages
    assert one.messages == other.messages and one.references != other.references
    schema = AnswerSchema(one.sample_ids, ("a", "b"), probabilities=True)
    sim = LexicalSimulator()
    assert not hasattr(sim, "register")  # the grid runner tells its prompts only to simulators with the hook
    first = sim.generate(one.messages, answer_schema=schema)
    second = sim.generate(other.messages, answer_schema=schema)
    assert (first.text, first.probabilities) == (second.text, second.probabilities)
    assert first.text.startswith("Sample_0: a\n")
    assert first.probabilities["1"] == (0.5, 0.5)  # sample 1 has no evidence: uniform


def test_ties_do_not_answer_a_fixed_class() -> None:
    """Issue #21 "m": a tie answered the first class, a fixed-class answer that eq. 5's accuracy rewards."""
    texts = [f"unseen text number {i}" for i in range(40)]
    prompt = render_prompt("NE1", class_names=["a", "b", "c"], ep_samples=texts, ep_predictions=[0] * 40)
    answers = [
        line.split(": ", 1)[1] for line in LexicalSimulator().generate(prompt.messages).text.splitlines()
    ]
    counts = {name: answers.count(name) for name in "abc"}
    assert all(5 <= count <= 25 for count in counts.values()), counts
    again = LexicalSimulator().generate(prompt.messages).text.splitlines()
    assert [line.split(": ", 1)[1] for line in again] == answers  # deterministic


def test_a_request_that_is_not_a_consim_prompt_is_an_error_response() -> None:
    response = LexicalSimulator().generate([ChatMessage("user", "Label these concepts.")])
    assert not response.ok and "not a ConSim prompt" in response.error


def test_registered_kind_and_bad_temperature() -> None:
    assert isinstance(make_simulator("lexical"), LexicalSimulator)
    assert make_simulator("lexical").supports_probabilities
    with pytest.raises(InvalidParameterError, match="temperature"):
        LexicalSimulator(temperature=0)


def test_on_the_toy_grid_the_positive_control_beats_no_explanation(tmp_path) -> None:
    grid = toy_grid(simulators=("lexical",), controls=True, scoring="probability",
                    methods=("NMF", "NoExplanation"), prompt_types=("NE2", "E2"), seeds=tuple(range(6)))  # fmt: skip
    summary = run_grid(grid, tmp_path / "r.sqlite", providers=PROVIDERS, progress=False)
    assert summary.failed == 0
    with ResultsStore(tmp_path / "r.sqlite") as store:
        result = assess(store.to_frame())
    assert result.metric == "expected_accuracy"
    positive = result.controls.loc["SurrogateWords"]
    assert positive["difference"] > 0.1 and positive["verdict"] == "pass"
    assert result.controls.loc["RandomWords", "verdict"] != "fail"
