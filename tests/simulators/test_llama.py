"""LlamaCppSimulator: arguments, identity, errors; the slow test runs the real offline GGUF model."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from xaimetrics.exceptions import InvalidParameterError, MissingDependencyError
from xaimetrics.simulators import (
    AnswerSchema,
    CachedSimulator,
    ChatMessage,
    LlamaCppSimulator,
    default_simulator,
)
from xaimetrics.simulators._assets import DEFAULT_GGUF, GGUF_ASSETS


def test_default_simulator_is_the_pinned_model_and_loads_lazily() -> None:
    sim = default_simulator(max_tokens=64, n_ctx=2048)
    assert sim.name == f"llama.cpp:{DEFAULT_GGUF}" and sim.max_concurrency == 1
    identity = sim.cache_identity()
    assert identity["model"] == {"asset": DEFAULT_GGUF, "sha256": GGUF_ASSETS[DEFAULT_GGUF].sha256}
    assert (identity["max_tokens"], identity["temperature"], identity["seed"], identity["grammar"]) == (
        64,
        0.0,
        0,
        True,
    )
    assert sim._llama is None


def test_missing_model_file(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    sim = LlamaCppSimulator(tmp_path / "absent.gguf")
    with pytest.raises(
        InvalidParameterError, match="'model_path' parameter of LlamaCppSimulator must be an existing"
    ):
        sim.generate([ChatMessage("user", "hi")])


def test_missing_llama_cpp_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # as if llama-cpp-python were not installed
    sim = LlamaCppSimulator(tmp_path / "model.gguf")
    with pytest.raises(MissingDependencyError, match=re.escape("pip install 'xaimetrics[llama]'")):
        sim.generate([ChatMessage("user", "hi")])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"model_name": "gpt-5"}, "'model_name' parameter of LlamaCppSimulator must be one of"),
        ({"n_ctx": 10}, "'n_ctx' .* ≥ 64"),
        ({"temperature": -0.5}, "'temperature'"),
        ({"seed": -1}, "'seed'"),
    ],
)
def test_invalid_arguments(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        LlamaCppSimulator(**kwargs)  # type: ignore[arg-type]


@pytest.mark.slow
def test_real_default_model_answers_in_the_constrained_format(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    sim = default_simulator(n_ctx=1024, max_tokens=48)
    messages = [
        ChatMessage(
            "system",
            "Predict the sentiment a classifier gives each movie review. Classes: negative, positive. "
            "Answer with one line per sample: 'Sample_<id>: <class>'.",
        ),
        ChatMessage(
            "user",
            "Sample_7: A dull, lifeless mess with no redeeming moments.\n"
            "Sample_2: A joyous, moving film with wonderful performances.",
        ),
    ]
    schema = AnswerSchema(("7", "2"), ("negative", "positive"))
    cached = CachedSimulator(sim, tmp_path / "cache.sqlite")
    response = cached.generate(messages, answer_schema=schema)
    assert response.error is None and response.prompt_tokens > 30 and response.completion_tokens > 0
    assert re.fullmatch(r"Sample_7: (negative|positive)\nSample_2: (negative|positive)\n?", response.text)
    assert response.text.startswith("Sample_7: negative\nSample_2: positive")  # an easy pair for this model
    again = cached.generate(messages, answer_schema=schema)
    assert again.cached and again.text == response.text
    assert sim.usage.summary().calls == 1


@pytest.mark.slow
def test_a_prompt_longer_than_the_context_is_a_failed_answer_naming_the_fix() -> None:
    pytest.importorskip("llama_cpp")
    sim = default_simulator(n_ctx=256, max_tokens=48)
    text = "The central bank left its rates unchanged while markets rallied on strong earnings. " * 40
    messages = [ChatMessage("system", "Classes: a, b."), ChatMessage("user", f"Sample_1: {text}")]
    schema = AnswerSchema(("1",), ("a", "b"))
    for scoring in (
        {},
        {"probabilities": True},
    ):  # free text (llama.cpp raised a bare ValueError) and probabilities
        response = sim.generate(
            messages, answer_schema=AnswerSchema(schema.sample_ids, schema.classes, **scoring)
        )
        assert response.error is not None and response.text == ""
        assert "more than the context window n_ctx=256" in response.error
        assert "--max-sample-chars" in response.error and re.search(
            r"shrink to about \d+% of its length", response.error
        )
