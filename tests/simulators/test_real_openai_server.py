"""OpenAICompatibleSimulator against a real OpenAI-compatible server: llama.cpp's, serving the offline GGUF.

The server (``python -m xaimetrics.simulators._llama_server``: llama.cpp's, under xaimetrics' weights policy;
extra ``server``) runs in a subprocess on 127.0.0.1 with a free
port, is waited for with a bounded readiness loop and is always terminated. Slow (a 0.5B model on CPU).
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from xaimetrics.consim._parsing import parse_answers
from xaimetrics.simulators import (
    AnswerSchema,
    ChatMessage,
    LlamaCppSimulator,
    OpenAICompatibleSimulator,
    load_default_gguf,
)
from xaimetrics.simulators._probabilities import check_probabilities

pytestmark = pytest.mark.slow

READY_TIMEOUT_S = 180.0
MESSAGES = [
    ChatMessage(
        "system",
        "Predict the sentiment a classifier gives each movie review. Classes: Class_0, Class_1. "
        "Answer with one line per sample: 'Sample_<id>: <class>'.",
    ),
    ChatMessage("user", "Sample_7: A dull, lifeless mess.\nSample_2: A joyous, moving film."),
]
SCHEMA = AnswerSchema(("7", "2"), ("Class_0", "Class_1"), probabilities=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_ready(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"llama.cpp's server exited ({process.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url + "/models", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"llama.cpp's server not ready after {READY_TIMEOUT_S:g} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("llama_cpp")
    for module in ("uvicorn", "fastapi", "sse_starlette", "starlette_context"):
        pytest.importorskip(module, reason="llama.cpp's server needs pip install 'xaimetrics[server]'")
    model = load_default_gguf()
    port = _free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [
        sys.executable, "-m", "xaimetrics.simulators._llama_server", "--model", str(model), "--host", "127.0.0.1",
        "--port", str(port), "--n_ctx", "2048", "--n_threads", "2", "--seed", "0",
        "--logits_all", "true",  # llama-cpp-python returns logprobs only with logits for every token
    ]  # fmt: skip
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}/v1"
        _wait_ready(process, url, log)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _simulator(url: str) -> OpenAICompatibleSimulator:
    return OpenAICompatibleSimulator(
        "qwen2.5-coder-0.5b", base_url=url, max_tokens=24, timeout=300, max_retries=1, top_logprobs=10
    )


def test_text_answer_from_the_real_server(llama_server: str) -> None:
    sim = _simulator(llama_server)
    response = sim.generate(MESSAGES, answer_schema=AnswerSchema(SCHEMA.sample_ids, SCHEMA.classes))
    print(f"\ntext answer: {response.text!r}")
    assert response.error is None and response.probabilities is None
    assert response.prompt_tokens > 50 and response.completion_tokens > 0
    assert re.search(r"Sample_7: Class_[01]", response.text)


def test_the_real_server_accepts_a_prompt_cache_key_and_answers_the_same(llama_server: str) -> None:
    """llama.cpp's server ignores the unknown field (so ``prompt_cache_key=True`` is safe there, and useless)."""
    from xaimetrics.simulators._openai import PromptCacheHint, prompt_cache_hint

    schema = AnswerSchema(SCHEMA.sample_ids, SCHEMA.classes)
    plain = _simulator(llama_server).generate(MESSAGES, answer_schema=schema)
    keyed = OpenAICompatibleSimulator(
        "qwen2.5-coder-0.5b", base_url=llama_server, max_tokens=24, timeout=300, max_retries=1,
        prompt_cache_key=True,
    )  # fmt: skip
    with prompt_cache_hint(PromptCacheHint("xaimetrics-seed-0")):
        assert "prompt_cache_key" in keyed.request_body(tuple(MESSAGES), schema)
        answer = keyed.generate(MESSAGES, answer_schema=schema)
    assert answer.error is None and answer.text == plain.text  # greedy and seeded: the same answer


def test_probabilities_from_the_real_server_agree_with_its_text(llama_server: str) -> None:
    sim = _simulator(llama_server)
    response = sim.generate(MESSAGES, answer_schema=SCHEMA)
    print(f"\nserver answer: {response.text!r}\nserver probabilities: {response.probabilities}")
    assert response.error is None, response.error
    assert response.metadata["probability_fallback_ids"] == []
    checked = check_probabilities(response.probabilities, SCHEMA, "test")
    parsed = parse_answers(response.text, SCHEMA.sample_ids, list(SCHEMA.classes))
    for sample_id in SCHEMA.sample_ids:
        argmax = max(range(len(SCHEMA.classes)), key=lambda k: checked[sample_id][k])
        assert parsed.answers[sample_id] == argmax  # greedy text = most probable class


def test_server_and_continuation_probabilities_are_both_valid(llama_server: str) -> None:
    # computed differently (free generation vs. one continuation per sample): printed, not compared
    server = _simulator(llama_server).generate(MESSAGES, answer_schema=SCHEMA)
    local = LlamaCppSimulator(load_default_gguf(), n_ctx=2048, n_threads=2).generate(
        MESSAGES, answer_schema=SCHEMA
    )
    print(
        f"\nserver (free generation): {server.probabilities}\nllama.cpp continuations: {local.probabilities}"
    )
    for response in (server, local):
        assert response.error is None
        check_probabilities(response.probabilities, SCHEMA, "test")


def test_detection_reads_p_yes_from_the_real_servers_logprobs(llama_server: str) -> None:
    """Issue #25: P(Yes) of a detection prompt, read by the simulator, equals the hand computation from the
    server's own top_logprobs at the answer token (asked directly over HTTP, greedy)."""
    import json
    import math

    from xaimetrics.detection._detection import ask
    from xaimetrics.detection._prompts import build_detection_prompts

    texts = [
        "The striker scored a late goal to win the cup final.",
        "The chip maker raised its profit forecast.",
    ]
    prompts = build_detection_prompts(["goal", "cup", "striker"], texts)

    def p_yes_by_hand(messages: list[dict[str, str]]) -> float:
        body = {
            "model": "qwen2.5-coder-0.5b", "messages": messages, "temperature": 0,
            "max_tokens": 8, "logprobs": True, "top_logprobs": 10, "seed": 0,
        }  # fmt: skip
        request = urllib.request.Request(
            llama_server + "/chat/completions",
            json.dumps(body).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=300) as response:
            tokens = json.load(response)["choices"][0]["logprobs"]["content"]
        read = ""
        for token in tokens:  # the answer's first word after "Sample_0:"
            if "Sample_0:" in read and token["token"].strip():
                break
            read += token["token"]
        mass = {"yes": 0.0, "no": 0.0}
        for alternative in token["top_logprobs"]:
            word = alternative["token"].strip().lower()
            if word in mass:
                mass[word] += math.exp(alternative["logprob"])
        return mass["yes"] / (mass["yes"] + mass["no"])

    for prompt in prompts:
        messages = [m.as_dict() for m in prompt.messages]
        # The server reuses its KV cache for a shared prefix, and the last token's logits differ in the last digits
        # with how much of the prompt is decoded in one batch: asking the same prompt first puts the simulator's
        # request and the hand request in the same cache state (the whole prompt cached, one token replayed).
        p_yes_by_hand(messages)
        (answer,) = ask(_simulator(llama_server), [prompt])
        by_hand = p_yes_by_hand(messages)
        print(f"\n{prompt.messages[-1].content[:60]!r}: P(Yes) {answer.p_yes} (by hand {by_hand:.6f})")
        assert answer.p_yes == pytest.approx(by_hand, abs=1e-6)
