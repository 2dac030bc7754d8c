"""Class probabilities from ``top_logprobs`` with OpenAICompatibleSimulator, against the fake server over HTTP."""

from __future__ import annotations

import math

import pytest

from fake_openai_server import (
    FakeOpenAIServer,
    certain_logprobs,
    constant_responder,
    perfect_consim_responder,
    token_script,
)
from xaimetrics.consim import ConSim
from xaimetrics.exceptions import InvalidParameterError, SimulatorError
from xaimetrics.simulators import AnswerSchema, CachedSimulator, ChatMessage, OpenAICompatibleSimulator
from xaimetrics.simulators._logprobs import TokenLogprob, read_class_probabilities

PROMPT = [
    ChatMessage("system", "Answer 'Sample_<id>: <class>'."),
    ChatMessage("user", "Sample_12: x\nSample_3: y"),
]
BINARY = AnswerSchema(("12", "3"), ("negative", "positive"), probabilities=True)


def make(server: FakeOpenAIServer, **kwargs: object) -> OpenAICompatibleSimulator:
    options: dict[str, object] = {"base_url": server.base_url, "api_key": "sk-x", "max_retries": 1}
    options.update(kwargs)
    return OpenAICompatibleSimulator("fake", **options)  # type: ignore[arg-type]


def binary_script() -> tuple[object, object]:
    return token_script(
        "Sample", "_", "1", "2", ":",
        # " positive" and "positive" both count for positive; " neutral" is no class and is dropped
        (" positive", {" positive": 0.6, " negative": 0.25, " neutral": 0.1, "positive": 0.05}),
        "\n", "Sample", "_", "3", ":",
        # letter case does not matter; " pos" can only start "positive"
        (" Negative", {" Negative": 0.5, " negative": 0.2, " pos": 0.1, "\n": 0.2}),
    )  # fmt: skip


def test_binary_probabilities_by_hand_and_request_body() -> None:
    respond, logprobs = binary_script()
    with FakeOpenAIServer(respond, logprobs=logprobs) as server:
        sim = make(server, top_logprobs=5)
        response = sim.generate(PROMPT, answer_schema=BINARY)
        text_only = sim.generate(PROMPT, answer_schema=AnswerSchema(("12", "3"), ("negative", "positive")))
    assert response.error is None
    assert response.text == "Sample_12: positive\nSample_3: Negative"  # the generated text, as written
    assert response.probabilities["12"] == pytest.approx((0.25 / 0.9, 0.65 / 0.9))
    assert response.probabilities["3"] == pytest.approx((0.7 / 0.8, 0.1 / 0.8))
    assert response.metadata["probability_fallback_ids"] == [] and response.metadata["top_logprobs"] == 5
    first, second = server.chat_requests
    assert first.body["logprobs"] is True and first.body["top_logprobs"] == 5
    assert "logprobs" not in second.body and "top_logprobs" not in second.body
    assert text_only.probabilities is None


def test_expected_accuracy_through_consim_by_hand() -> None:
    # ConSim's doctest setting: EP samples "2" and "3", f predicts positive for both
    respond, logprobs = token_script(
        "Sample", "_", "2", ":", (" positive", {" positive": 0.7, " negative": 0.2, " meh": 0.1}),
        "\n", "Sample", "_", "3", ":", (" negative", {" negative": 0.6, " positive": 0.3}),
    )  # fmt: skip
    with FakeOpenAIServer(respond, logprobs=logprobs) as server:
        consim = ConSim(None, make(server), class_names=["negative", "positive"], scoring="probability")
        result = consim.evaluate(["dull", "fun", "great", "meh"], [0, 1, 1, 1], prompt_type="NE2")
    p2, p3 = 0.7 / 0.9, 0.3 / 0.9
    assert result.score == 0.5  # eq. 5 on the generated text
    assert result.expected_accuracy == pytest.approx((p2 + p3) / 2)
    assert result.log_loss == pytest.approx(-(math.log(p2) + math.log(p3)) / 2)
    assert result.brier == pytest.approx((2 * (1 - p2) ** 2 + 2 * (1 - p3) ** 2) / 2)


def test_anonymised_classes_diverge_mid_token_and_absent_classes_share_the_rest() -> None:
    schema = AnswerSchema(("1", "2"), ("Class_0", "Class_1", "Class_2"), probabilities=True)
    respond, logprobs = token_script(
        "Sample", "_", "1", ":", " Class", "_", ("1", {"1": 0.9, "0": 0.06, "x": 0.01}),
        "\n", "Sample", "_", "2", ":", " Class", "_", ("1", {"1": 0.5, "0": 0.01}),
    )  # fmt: skip
    with FakeOpenAIServer(respond, logprobs=logprobs) as server:
        response = make(server, top_logprobs=2).generate(PROMPT, answer_schema=schema)
    # sample 1: the server lists 2 alternatives ("x" is cut): Class_2 gets the unlisted 1 - 0.96 = 0.04
    assert response.probabilities["1"] == pytest.approx((0.06, 0.9, 0.04))
    # sample 2: the unlisted mass 0.49 is capped at the smallest listed probability, 0.01
    assert response.probabilities["2"] == pytest.approx((0.01 / 0.52, 0.5 / 0.52, 0.01 / 0.52))


def test_ambiguous_token_is_followed_along_the_generated_path() -> None:
    schema = AnswerSchema(("7",), ("Class_1", "Class_10", "Class_2"), probabilities=True)
    tokens = [
        TokenLogprob("Sample_7:", 0.0),
        TokenLogprob(" Class_", 0.0),
        TokenLogprob("1", math.log(0.6), (("1", math.log(0.6)), ("2", math.log(0.3)))),
        TokenLogprob("0", math.log(0.75), (("0", math.log(0.75)), ("\n", math.log(0.25)))),
    ]
    probabilities, unread = read_class_probabilities(tokens, schema)
    assert unread == [] and probabilities["7"] == pytest.approx((0.15 / 0.9, 0.45 / 0.9, 0.3 / 0.9))
    # not the generated token: "1" fits Class_1 and Class_10, its mass is split evenly
    tokens[2] = TokenLogprob("2", math.log(0.3), (("2", math.log(0.3)), ("1", math.log(0.6))))
    probabilities, _ = read_class_probabilities(tokens[:3], schema)
    assert probabilities["7"] == pytest.approx((0.3 / 0.9, 0.3 / 0.9, 0.3 / 0.9))


def test_token_holding_the_space_and_the_whole_class() -> None:
    schema = AnswerSchema(("5",), ("Class_0", "Class_1"), probabilities=True)
    alternatives = ((" Class_0", math.log(0.2)), (" Class_1", math.log(0.7)), ("Class_0", math.log(0.1)))
    tokens = [TokenLogprob("Sample_5:", 0.0), TokenLogprob(" Class_1", math.log(0.7), alternatives)]
    probabilities, _ = read_class_probabilities(tokens, schema)
    assert probabilities["5"] == pytest.approx((0.3, 0.7))


def test_missing_line_falls_back_to_uniform_and_is_flagged() -> None:
    schema = AnswerSchema(("12", "3", "9"), ("negative", "positive"), probabilities=True)
    respond, logprobs = binary_script()
    with FakeOpenAIServer(respond, logprobs=logprobs) as server:
        response = make(server).generate(PROMPT, answer_schema=schema)
        strict = make(server, probability_fallback="error").generate(PROMPT, answer_schema=schema)
    assert response.error is None and response.probabilities["9"] == (0.5, 0.5)
    assert response.metadata["probability_fallback_ids"] == ["9"]
    assert response.probabilities["12"] == pytest.approx((0.25 / 0.9, 0.65 / 0.9))
    assert strict.text == "" and strict.probabilities is None
    assert strict.error is not None and "sample(s) 9 cannot be read" in strict.error
    assert strict.metadata["answer_text"].startswith("Sample_12: positive")
    assert strict.prompt_tokens > 0  # the call is still accounted for


def test_no_readable_sample_is_an_error_even_with_the_uniform_fallback() -> None:
    for answer in ("I cannot tell.", ""):
        with FakeOpenAIServer(constant_responder(answer), logprobs=certain_logprobs) as server:
            response = make(server).generate(PROMPT, answer_schema=BINARY)
        assert response.error is not None and "No sample could be read" in response.error
        assert response.probabilities is None


def test_server_without_logprobs_is_a_clear_error_not_retried() -> None:
    with FakeOpenAIServer(perfect_consim_responder({"12": "positive", "3": "negative"})) as server:
        sim = make(server, max_retries=3)
        response = sim.generate(PROMPT, answer_schema=BINARY)
        assert server.chat_request_count == 1
        with pytest.raises(SimulatorError, match=r"returned no token log-probabilities.*scoring='accuracy'"):
            make(server, raise_on_error=True).generate(PROMPT, answer_schema=BINARY)
    assert response.text == "" and response.probabilities is None
    assert response.error is not None and "honours 'logprobs' and 'top_logprobs'" in response.error
    assert sim.usage.summary().failed_calls == 1


def test_certain_answers_and_batch_and_cache(tmp_path) -> None:
    reference = {"12": "positive", "3": "negative"}
    with FakeOpenAIServer(perfect_consim_responder(reference), logprobs=certain_logprobs) as server:
        sim = make(server)
        batch = sim.generate_batch([PROMPT, PROMPT], answer_schemas=[BINARY, BINARY])
        cached = CachedSimulator(make(server), tmp_path / "cache.sqlite")
        first, again = (cached.generate(PROMPT, answer_schema=BINARY) for _ in range(2))
        text = cached.generate(PROMPT, answer_schema=AnswerSchema(("12", "3"), ("negative", "positive")))
    for response in [*batch, first, again]:
        assert response.error is None and response.probabilities == {"12": (0.0, 1.0), "3": (1.0, 0.0)}
    assert again.cached and not first.cached and not text.cached and text.probabilities is None
    assert cached.supports_probabilities and sim.supports_probabilities
    assert server.chat_request_count == 4


def test_options_are_checked_and_keep_the_default_cache_identity() -> None:
    sim = OpenAICompatibleSimulator("m", base_url="http://127.0.0.1:9/v1")
    assert "top_logprobs" not in sim.cache_identity()  # text answers keep their cache keys
    other = OpenAICompatibleSimulator("m", base_url="http://127.0.0.1:9/v1", top_logprobs=5)
    assert other.cache_identity()["top_logprobs"] == 5
    with pytest.raises(InvalidParameterError, match="'top_logprobs' parameter of OpenAICompatibleSimulator"):
        OpenAICompatibleSimulator("m", base_url="http://127.0.0.1:9/v1", top_logprobs=0)
    with pytest.raises(InvalidParameterError, match=r"'probability_fallback' .*'uniform' or 'error'"):
        OpenAICompatibleSimulator("m", base_url="http://127.0.0.1:9/v1", probability_fallback="zero")  # type: ignore[arg-type]


def test_a_cached_answer_keeps_the_flag_of_its_filled_in_probabilities(tmp_path) -> None:
    """A replay through the response cache read the uniform fill-in as a real probability (the flag was lost)."""
    from xaimetrics.simulators import CachedSimulator

    schema = AnswerSchema(("12", "3", "9"), ("negative", "positive"), probabilities=True)
    respond, logprobs = binary_script()
    with FakeOpenAIServer(respond, logprobs=logprobs) as server:
        cached = CachedSimulator(make(server), tmp_path / "cache.sqlite")
        first = cached.generate(PROMPT, answer_schema=schema)
        again = cached.generate(PROMPT, answer_schema=schema)
    assert first.metadata["probability_fallback_ids"] == ["9"] and not first.cached
    assert again.cached and again.metadata["probability_fallback_ids"] == ["9"]
    assert again.probabilities == first.probabilities
