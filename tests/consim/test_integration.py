"""Real settings with the offline GGUF simulator (slow: run with --run-slow; CI does)."""

from __future__ import annotations

import time

import pytest

from xaimetrics.concepts import NMF, TopWords
from xaimetrics.consim import ConSim, Explanation

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def local_simulator():
    pytest.importorskip("llama_cpp")
    from xaimetrics.simulators import default_simulator

    simulator = default_simulator(max_tokens=400)
    yield simulator
    simulator.close()  # its worker process would outlive the module (and meet stop_workers' doctest later)


def test_one_setting_with_the_local_gguf_simulator(lexicon, toy, local_simulator) -> None:
    activations = lexicon.activations(toy[0])
    extractor = NMF(n_concepts=4, random_state=0).fit(activations)
    words = TopWords(lexicon, extractor, n_words=4, min_frequency=3).fit(toy[0])
    explanation = Explanation(extractor=extractor, interpretation=words, activations=activations)
    consim = ConSim(lexicon, local_simulator, explanation=explanation)
    samples = consim.select_examples(toy[2], toy[3], seed=0)
    started = time.perf_counter()
    baseline, explained = consim.evaluate_many(samples, prompt_types=["NE2", "E3"])
    elapsed = time.perf_counter() - started
    print(
        f"\nlocal GGUF, 2 prompts (NE2 + E3, 20 LP + 20 EP): {elapsed:.1f} s; "
        f"parse rates {baseline.parse_rate:.2f} / {explained.parse_rate:.2f}; "
        f"scores {baseline.score} / {explained.score}; tokens {baseline.prompt_tokens}+{baseline.completion_tokens}, "
        f"{explained.prompt_tokens}+{explained.completion_tokens}"
    )
    for result in (baseline, explained):
        assert result.error is None and result.answered
        assert result.parse_rate >= 0.9  # the grammar-constrained model follows the format
        assert 0.0 <= result.score <= 1.0


def test_cli_real_setting_with_the_demo_classifier(monkeypatch, capsys, local_simulator) -> None:
    """Rotten Tomatoes, the demo MiniLM+ classifier (trained once and cached), NMF, E3 vs NE2, local LLM."""
    from xaimetrics import cli

    monkeypatch.setattr(cli, "COMMAND_MODULES", ("xaimetrics.consim._command",))
    started = time.perf_counter()
    code = cli.main([
        "consim", "--dataset", "rotten_tomatoes", "--model", "demo", "--method", "nmf", "--n-concepts", "10",
        "--fit-samples", "500", "--prompt-type", "E3", "--baseline", "--seed", "0", "--simulator", "local",
        "--no-cache",
    ])  # fmt: skip
    out = capsys.readouterr().out
    print(
        f"\n{out}CLI wall time (model cached or trained, NMF, 2 prompts): {time.perf_counter() - started:.1f} s"
    )
    assert code == 0
    rows = [line.split() for line in out.splitlines()[1:3]]
    assert [row[0] for row in rows] == ["NE2", "E3"]
    for row in rows:  # setting, score, [low, high], parsed, ...
        low, high = float(row[2].strip("[,")), float(row[3].strip("]"))
        assert 0.0 <= low <= float(row[1]) <= high <= 1.0
        assert row[4] in {f"{n}/20" for n in range(18, 21)}
