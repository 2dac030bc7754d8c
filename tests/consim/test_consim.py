"""The ConSim façade end to end: real concept pipeline, simulators over real HTTP, failures, batching."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from fake_openai_server import Fault, perfect_consim_responder
from xaimetrics.concepts import NMF, TopWords, global_importance, local_importance
from xaimetrics.consim import (
    PROMPT_TYPES,
    ConSim,
    ConSimSamples,
    Explanation,
    PromptSetting,
    evaluate_prompts,
    render_prompt,
)
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import OpenAICompatibleSimulator, ScriptedSimulator


@pytest.fixture
def method(lexicon, toy):
    """A fitted concept explanation: NMF on the train activations, interpreted by its top words."""
    train_texts = toy[0]
    activations = lexicon.activations(train_texts)
    extractor = NMF(n_concepts=4, random_state=0).fit(activations)
    words = TopWords(lexicon, extractor, n_words=3, min_frequency=3).fit(train_texts)
    return extractor, words, activations


@pytest.fixture
def samples(lexicon, toy) -> ConSimSamples:
    return ConSim(lexicon).select_examples(toy[2], toy[3], seed=0)


def _responder(samples: ConSimSamples, consim: ConSim):
    """Perfect answers (f's EP predictions), with Class_i names when the prompt is anonymised."""
    names = consim.class_names
    ids = [str(samples.n_lp + i) for i in range(samples.n_ep)]
    plain = perfect_consim_responder({i: names[c] for i, c in zip(ids, samples.ep_predictions, strict=True)})
    anonymous = perfect_consim_responder(
        {i: f"Class_{c}" for i, c in zip(ids, samples.ep_predictions, strict=True)}
    )

    def respond(messages):
        return (anonymous if "The classes are: [Class_0" in messages[0]["content"] else plain)(messages)

    return respond


def _http(server, **kwargs) -> OpenAICompatibleSimulator:
    options = {"api_key": "sk-test", "max_retries": 0, "timeout": 5.0}
    options.update(kwargs)
    return OpenAICompatibleSimulator("fake-model", base_url=server.base_url, **options)


def test_selection_through_the_model(lexicon, toy, samples) -> None:
    np.testing.assert_array_equal(samples.predictions, lexicon.predict(samples.texts))
    np.testing.assert_array_equal(samples.labels, toy[3][samples.selection.indices])
    assert samples.n_lp == samples.n_ep == 20 and len(set(samples.texts)) == 40
    correct = samples.labels == samples.predictions
    assert correct.sum() == 20


def test_perfect_simulator_over_http_scores_one(lexicon, samples, method, fake_openai_server) -> None:
    # the fixture's two halves disagree: a scorer comparing EP answers with LP predictions would fail
    assert not np.array_equal(samples.lp_predictions, samples.ep_predictions)
    extractor, words, activations = method
    consim = ConSim(lexicon, explanation=Explanation(extractor, words, activations))
    server = fake_openai_server(_responder(samples, consim))
    consim.simulator = _http(server)
    result = consim.evaluate(samples, prompt_type="E3")
    assert result.score == 1.0 and result.n_parsed == 20 and result.seed == 0
    assert result.prompt_tokens > 0 and result.attempts == 1 and result.model == "fake-model"
    sent = server.chat_requests[0].messages
    assert sent[0]["role"] == "system" and "Concepts contributions for Sample_0" in sent[0]["content"]
    assert "Sample_20: " in sent[1]["content"] and "concept_" not in sent[1]["content"]


def test_many_prompt_types_in_one_batch(lexicon, samples, method, fake_openai_server) -> None:
    extractor, words, activations = method
    consim = ConSim(lexicon, explanation=Explanation(extractor, words, activations))
    server = fake_openai_server(_responder(samples, consim), latency_s=0.05)
    consim.simulator = _http(server, max_concurrency=4)
    results = consim.evaluate_many(
        samples,
        prompt_types=[*(PromptSetting(p, a).label for p in PROMPT_TYPES.values() for a in (False, True))],
    )
    assert [r.label for r in results] == [
        "NE1",
        "NE1-a",
        "E1",
        "E1-a",
        "NE2",
        "NE2-a",
        "E2",
        "E2-a",
        "E3",
        "E3-a",
        "U1",
        "U1-a",
    ]
    assert server.chat_request_count == 12 and 1 < server.max_in_flight <= 4
    for result in results:
        assert result.accuracy == 1.0
        assert (result.score is None) == result.is_upper_bound
    # the anonymised answers were mapped back to the real names
    anonymised = next(r for r in results if r.label == "E3-a")
    assert anonymised.answers == anonymised.references


def test_retries_on_429_500_timeout_and_garbage(lexicon, samples, fake_openai_server) -> None:
    consim = ConSim(lexicon)
    faults = [Fault.rate_limit(0.01), Fault.server_error(500), Fault.delay(1.5), Fault.garbage()]
    server = fake_openai_server(_responder(samples, consim), faults=faults)
    consim.simulator = _http(server, max_retries=4, timeout=0.5)
    result = consim.evaluate(samples, prompt_type="NE2")
    assert result.score == 1.0 and result.attempts == 5 and result.error is None
    assert server.chat_request_count == 5


def test_failures_are_counted_not_raised(lexicon, samples, fake_openai_server) -> None:
    consim = ConSim(lexicon)
    server = fake_openai_server(_responder(samples, consim), faults=[Fault.server_error(503)] * 2)
    consim.simulator = _http(server, max_retries=1)
    failed = consim.evaluate(samples, prompt_type="NE2")
    assert failed.score is None and not failed.answered and failed.attempts == 2 and "503" in failed.error
    assert failed.n_missing == 20 and failed.n_parsed == 0

    garbage = fake_openai_server(
        lambda messages: "I am unable to classify these.\nSample_20: unsure\nSample_21: Sports!!"
    )
    consim.simulator = _http(garbage)
    result = consim.evaluate(samples, prompt_type="NE2")
    expected = 1.0 / 20 if samples.ep_predictions[1] == 1 else 0.0
    assert (
        result.score == expected and result.n_invalid == 1 and result.n_missing == 18 and result.n_parsed == 1
    )


def test_importances_come_from_the_concept_pipeline(lexicon, samples, method) -> None:
    extractor, words, activations = method
    consim = ConSim(lexicon, explanation=Explanation(extractor, words, activations))
    prompt = consim.build_prompt(samples, prompt_type="U1")
    concepts = extractor.encode(activations)
    phi, f_co_predictions = local_importance(lexicon, concepts, extractor=extractor, return_predictions=True)
    expected_global = global_importance(phi, f_co_predictions, n_classes=3)
    lp_local = local_importance(
        lexicon,
        extractor.encode(lexicon.activations(list(samples.lp_texts))),
        samples.lp_predictions,
        extractor=extractor,
    )
    ep_local = local_importance(
        lexicon,
        extractor.encode(lexicon.activations(list(samples.ep_texts))),
        samples.ep_predictions,
        extractor=extractor,
    )
    by_hand = render_prompt(
        "U1",
        class_names=lexicon.class_names,
        lp_samples=list(samples.lp_texts),
        lp_predictions=samples.lp_predictions,
        ep_samples=list(samples.ep_texts),
        ep_predictions=samples.ep_predictions,
        interpretation=words.interpret(),
        global_importances=expected_global,
        lp_local_importances=lp_local,
        ep_local_importances=ep_local,
    )
    assert prompt.text == by_hand.text
    assert prompt.concept_ids and "Concepts contributions for Sample_20" in prompt.messages[1].content


def test_interpreto_style_inputs_and_dry_run(lexicon, samples) -> None:
    consim = ConSim(lexicon)  # no simulator: the prompt and the references come back
    result = consim.evaluate(samples.texts, samples.predictions, prompt_type="L2_baseline_with_lp")
    assert result.score is None and result.raw_answer is None
    assert result.sample_ids == tuple(str(i) for i in range(20, 40))
    assert list(result.references.values()) == [lexicon.class_names[c] for c in samples.ep_predictions]
    # predictions computed by the model when not given; n_lp explicit
    other = consim.evaluate(samples.texts, n_lp=30, prompt_type="NE1")
    assert other.sample_ids == tuple(str(i) for i in range(30, 40))


def test_scripted_simulator_gets_the_answer_schema(lexicon, samples) -> None:
    simulator = ScriptedSimulator(lambda messages: "Sample_20: Sports")
    result = ConSim(lexicon, simulator).evaluate(samples, prompt_type="NE1-a")
    schema = simulator.answer_schemas[0]
    assert schema.sample_ids == tuple(str(i) for i in range(20, 40)) and schema.classes == (
        "Class_0",
        "Class_1",
        "Class_2",
    )
    assert result.n_invalid == 1 and result.n_missing == 19  # real names are not valid anonymised answers


def test_a_simulator_must_take_the_answer_schema(samples) -> None:
    class Plain:  # not a Simulator: generate() does not take answer_schema
        def generate(self, messages):
            return "Sample_20: World"

    consim = ConSim(simulator=Plain(), class_names=["World", "Sports", "Sci/Tech"])
    with pytest.raises(TypeError, match="answer_schema"):
        consim.evaluate(samples, prompt_type="NE2")
    (recorded,) = evaluate_prompts(
        consim.build_prompts(samples, prompt_types=["NE2"]), Plain(), errors="record"
    )
    assert recorded.score is None and recorded.error is not None and "answer_schema" in recorded.error


def test_global_importances_are_computed_once(lexicon, samples, method, monkeypatch) -> None:
    extractor, words, activations = method
    consim = ConSim(lexicon, explanation=Explanation(extractor, words, activations))
    calls = []
    original = extractor.encode
    monkeypatch.setattr(extractor, "encode", lambda a: calls.append(len(a)) or original(a))
    consim.build_prompt(samples, prompt_type="E2")
    consim.build_prompt(samples, prompt_type="E1")
    assert calls == [len(activations)]


@pytest.mark.parametrize(
    ("prompt_type", "given", "message"),
    [
        ("E3", {}, "'activations' parameter of ConSim must be given to compute the global"),
        ("E3", {"global_importances": np.ones((3, 4))}, "'extractor' parameter of ConSim must be given"),
        ("E1", {"global_importances": np.ones((3, 4))}, "'interpretation' parameter of render_prompt"),
    ],
)
def test_missing_explanation_errors(lexicon, samples, prompt_type, given, message) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        ConSim(lexicon, explanation=Explanation(**given)).evaluate(samples, prompt_type=prompt_type)


def test_other_errors(lexicon, samples) -> None:
    with pytest.raises(InvalidParameterError, match="'simulator' parameter of ConSim"):
        ConSim(lexicon, simulator="gpt")
    with pytest.raises(InvalidParameterError, match="'predictions' parameter of ConSim"):
        ConSim(lexicon).evaluate(samples, samples.predictions)
    with pytest.raises(InvalidParameterError, match="'model' parameter of ConSim must be given"):
        ConSim(None, class_names=["a", "b"]).evaluate(["x", "y"])
    with pytest.raises(InvalidParameterError, match="'prompt_types' parameter"):
        ConSim(lexicon).evaluate_many(samples, prompt_types="E3")


# -- global importances are cached by content, not identity (issue #11, class 6) -------------------------------
def _refit(extractor, activations):
    extractor.fit(activations.flip(0) * torch.linspace(0.2, 3.0, activations.shape[1]))


def _scale_in_place(extractor, activations):
    activations[:, 0] *= 0.0  # the World topic disappears from the fit activations
    activations[:, 2] *= 4.0


def _rewrite_in_place(extractor, activations):
    activations[:] = activations.flip(0) * torch.tensor([3.0, 0.2, 1.0, 1.0, 1.0, 1.0])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("mutate", [_refit, _scale_in_place, _rewrite_in_place])
@pytest.mark.parametrize("kind", ["NMF", "PCA", "ICA"])
def test_global_importances_follow_the_content_of_the_extractor_and_activations(
    lexicon, toy, samples, mutate, kind
) -> None:
    from xaimetrics import concepts

    activations = lexicon.activations(toy[0])
    extractor = getattr(concepts, kind)(n_concepts=3, random_state=0).fit(activations)
    interpretation = {i: f"concept {i}" for i in range(3)}
    consim = ConSim(lexicon, explanation=Explanation(extractor, interpretation, activations))
    before = consim.build_prompt(samples, prompt_type="E1").text
    mutate(extractor, activations)
    after = consim.build_prompt(samples, prompt_type="E1").text
    fresh = ConSim(lexicon, explanation=Explanation(extractor, interpretation, activations.clone()))
    expected = fresh.build_prompt(samples, prompt_type="E1").text
    assert expected != before  # the mutation matters...
    assert after == expected  # ...and the cached importances follow it


def test_equal_content_is_a_cache_hit(lexicon, samples, method, monkeypatch) -> None:
    extractor, words, activations = method
    consim = ConSim(lexicon, explanation=Explanation(extractor, words, activations))
    calls = []
    original = extractor.encode
    monkeypatch.setattr(extractor, "encode", lambda a: calls.append(len(a)) or original(a))
    consim.build_prompt(samples, prompt_type="E1")
    consim.explanation = dataclasses.replace(consim.explanation, activations=activations.clone())
    consim.build_prompt(samples, prompt_type="E1")
    consim.explanation = dataclasses.replace(consim.explanation, activations=activations.numpy().copy())
    consim.build_prompt(samples, prompt_type="E1")
    assert len(calls) == 2  # a copy of the tensor hits the cache; a numpy array is other content
