"""The narrow ConSim façade: configuration once (one Explanation), data per call; evaluate_prompts is one path
for the method and the function."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from xaimetrics.concepts import NMF, TopWords
from xaimetrics.consim import ConSim, ConSimSamples, Explanation, evaluate_prompts, render_prompt
from xaimetrics.consim._pipeline import DEFAULT_PROMPT_TYPES
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import ScriptedSimulator, SimulatorResponse

CLASSES = ["World", "Sports", "Sci/Tech"]


@pytest.fixture
def explanation(lexicon, toy) -> Explanation:
    activations = lexicon.activations(toy[0])
    extractor = NMF(n_concepts=4, random_state=0).fit(activations)
    words = TopWords(lexicon, extractor, n_words=3, min_frequency=3).fit(toy[0])
    return Explanation(extractor=extractor, interpretation=words, activations=activations)


@pytest.fixture
def samples(lexicon, toy) -> ConSimSamples:
    return ConSim(lexicon).select_examples(toy[2], toy[3], n_lp=8, n_ep=8, seed=0)


def _texts(prompts) -> list[str]:
    return [p.text for p in prompts]


# -- the new API -------------------------------------------------------------------------------------------------
def test_one_consim_serves_many_sample_sets_without_changing_its_explanation(
    lexicon, toy, samples, explanation
) -> None:
    consim = ConSim(lexicon, explanation=explanation)
    other = ConSim(lexicon).select_examples(toy[2], toy[3], n_lp=8, n_ep=8, seed=1)
    first = consim.build_prompts(samples, prompt_types=["E3", "U1"])
    second = consim.build_prompts(other, prompt_types=["E3", "U1"])
    # the local importances of each call belong to its own samples: equal to a fresh ConSim's
    assert _texts(second) == _texts(
        ConSim(lexicon, explanation=explanation).build_prompts(other, prompt_types=["E3", "U1"])
    )
    assert _texts(first) != _texts(second)
    assert consim.explanation is explanation and explanation.lp_local_importances is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        explanation.global_importances = np.zeros((3, 4))  # type: ignore[misc]


def test_build_prompts_equals_one_build_prompt_per_type_and_computes_importances_once(
    lexicon, samples, explanation, monkeypatch
) -> None:
    consim = ConSim(lexicon, explanation=explanation)
    kinds = ["NE2", "E1", "E3", "E3-a", "U1"]
    one_by_one = [consim.build_prompt(samples, prompt_type=k) for k in kinds]
    calls: list[int] = []
    encode = explanation.extractor.encode
    monkeypatch.setattr(explanation.extractor, "encode", lambda a: calls.append(len(a)) or encode(a))
    together = consim.build_prompts(samples, prompt_types=kinds)
    assert _texts(together) == _texts(one_by_one)
    assert calls == [samples.n_lp, samples.n_ep]  # Φ is cached; LP and EP local importances once each


def test_default_prompt_types_with_and_without_the_anonymisation_flag(lexicon, samples, explanation) -> None:
    consim = ConSim(lexicon, explanation=explanation)
    assert [p.label for p in consim.build_prompts(samples)] == list(DEFAULT_PROMPT_TYPES)
    assert [p.label for p in consim.build_prompts(samples, anonymize_classes=True)] == [
        "NE1-a", "E1-a", "NE2-a", "E2-a", "E3-a",
    ]  # fmt: skip
    assert [p.label for p in consim.build_prompts(samples, anonymize_classes=False)] == [
        "NE1", "E1", "NE2", "E2", "E3",
    ]  # fmt: skip


def test_evaluate_many_anonymised_baselines(samples) -> None:
    simulator = ScriptedSimulator(lambda messages: "Sample_8: Class_0\nSample_9: Class_2")
    consim = ConSim(simulator=simulator, class_names=CLASSES)
    results = consim.evaluate_many(samples, prompt_types=["NE1", "NE2"], anonymize_classes=True)
    assert [r.label for r in results] == ["NE1-a", "NE2-a"]
    assert all(s.classes == ("Class_0", "Class_1", "Class_2") for s in simulator.answer_schemas)
    assert results[1].answers["8"] == "World" and results[1].answers["9"] == "Sci/Tech"  # mapped back
    plain = consim.evaluate_many(samples, prompt_types=["NE1"], anonymize_classes=False)
    assert plain[0].label == "NE1" and plain[0].n_invalid == 2  # Class_i names are not the shown classes
    with pytest.raises(InvalidParameterError, match="'anonymize_classes' parameter"):
        consim.evaluate_many(samples, prompt_types=["NE2-a"], anonymize_classes=False)


def test_configuration_errors(lexicon) -> None:
    with pytest.raises(
        InvalidParameterError, match="'explanation' parameter of ConSim must be an Explanation"
    ):
        ConSim(lexicon, explanation={"extractor": None})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unexpected keyword argument 'extracter'"):
        ConSim(lexicon, extracter=None)
    with pytest.raises(TypeError, match="unexpected keyword argument 'seeds'"):
        ConSim(lexicon).evaluate(["a", "b"], [0, 1], seeds=[0])
    with pytest.raises(InvalidParameterError, match="'class_names' parameter of ConSim must be given"):
        ConSim(object())
    with pytest.raises(InvalidParameterError, match="'interpretation' parameter of ConSim"):
        Explanation(interpretation=["not", "a", "mapping"])


# -- evaluate_prompts: one path for ConSim and the benchmark runner ---------------------------------------------
def _prompts() -> list:
    return [
        render_prompt(kind, class_names=["no", "yes"], lp_samples=["x"], lp_predictions=[0],
                      ep_samples=["a", "b"], ep_predictions=[1, 0])
        for kind in ("NE1", "NE2")
    ]  # fmt: skip


class _Batching(ScriptedSimulator):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.batches: list[int] = []

    def generate_batch(self, conversations, **kwargs):
        self.batches.append(len(conversations))
        return super().generate_batch(conversations, **kwargs)


def test_the_function_and_the_method_are_one_path() -> None:
    answer = "Sample_1: yes\nSample_2: yes"
    by_function = evaluate_prompts(_prompts(), _Batching([answer] * 2), seed=3)
    simulator = _Batching([answer] * 2)
    by_method = ConSim(simulator=simulator, class_names=["no", "yes"]).evaluate_prompts(_prompts(), seed=3)
    assert [r.to_dict() | {"latency_s": 0} for r in by_function] == [
        r.to_dict() | {"latency_s": 0} for r in by_method
    ]
    assert simulator.batches == [2] and [r.score for r in by_method] == [0.5, 0.5] and by_method[0].seed == 3
    assert [r.usage.calls for r in by_method] == [1, 1]


def test_a_plain_simulator_is_called_once_per_prompt_with_the_schema() -> None:
    class Plain:  # follows the Simulator protocol, has no generate_batch
        def __init__(self) -> None:
            self.schemas = []

        def generate(self, messages, *, answer_schema=None):
            self.schemas.append(answer_schema)
            return SimulatorResponse("Sample_1: no", attempts=2)

    plain = Plain()
    results = evaluate_prompts(_prompts(), plain)
    assert [s.sample_ids for s in plain.schemas] == [("1", "2"), ("1", "2")]
    assert [r.attempts for r in results] == [2, 2]


def test_a_raising_simulator_is_raised_or_recorded() -> None:
    class Broken:
        def generate(self, messages, *, answer_schema=None):
            raise ConnectionError("server gone")

    with pytest.raises(ConnectionError, match="server gone"):
        evaluate_prompts(_prompts(), Broken())
    recorded = evaluate_prompts(_prompts(), Broken(), errors="record")
    assert [r.error for r in recorded] == ["ConnectionError: server gone"] * 2
    assert all(r.score is None and r.usage.failed_calls == 1 for r in recorded)

    def gone(messages):
        raise ConnectionError("batch gone")

    batch = _Batching(gone)
    assert {r.error for r in evaluate_prompts(_prompts(), batch, errors="record")} == {
        "ConnectionError: batch gone"
    }
    with pytest.raises(InvalidParameterError, match="'errors' parameter of evaluate_prompts"):
        evaluate_prompts(_prompts(), Broken(), errors="ignore")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="'prompts' parameter of evaluate_prompts"):
        evaluate_prompts(["Sample_1: no"], None)
