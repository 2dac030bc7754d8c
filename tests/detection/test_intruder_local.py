"""Intruder detection read from the offline GGUF model's log-probabilities (slow: run with --run-slow)."""

from __future__ import annotations

import numpy as np
import pytest

from xaimetrics.detection import Intruder
from xaimetrics.detection._intruder import ask_positions, build_intruder_prompts

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def local_simulator():
    pytest.importorskip("llama_cpp")
    from xaimetrics.simulators import default_simulator

    simulator = default_simulator(max_tokens=20)
    yield simulator
    simulator.close()  # its worker process would outlive the module


def test_the_local_model_gives_a_probability_for_every_position(local_simulator) -> None:
    shown = [["goal cup league", "a vote in parliament", "match goal striker"],
             ["laptop chip", "broadband internet chip", "cup final goal"]]  # fmt: skip
    prompts = build_intruder_prompts(shown, ["goal", "cup", "match"])
    answers = ask_positions(local_simulator, prompts)
    for p, pick, error in answers:
        assert error is None and p is not None and len(p) == 3
        assert sum(p) == pytest.approx(1.0, abs=1e-6) and all(0.0 <= v <= 1.0 for v in p)
        assert pick in (0, 1, 2)  # the answer text names a position too


def test_intruder_rows_of_the_local_model_carry_expected_accuracy(local_simulator, synthetic: dict) -> None:
    intruder = Intruder(local_simulator, describe=True, shuffled=False, n_top=4, n_quantile=0, n_random=3,
                        n_hard=0, seed=0)  # fmt: skip
    result = intruder.evaluate(
        synthetic["U"], synthetic["texts"], synthetic["interpretations"], concept_ids=[0]
    )
    assert not result.failed and len(result.rows) == 1
    (row,) = result.rows
    assert row["n_trials"] == 3 and row["chance"] == 0.2
    # P(intruder) read for every trial (never a fallback), and the mean of those is the expected accuracy
    p_true = [a["p_intruder"] for a in result.answers]
    assert all(p is not None for p in p_true)
    assert row["expected_accuracy"] == pytest.approx(float(np.mean(p_true)))
