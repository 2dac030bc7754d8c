"""The ``xaimetrics`` logger: silent unless configured; :func:`log_to_stderr` adds and removes one handler."""

from __future__ import annotations

import io
import logging

from fake_openai_server import FakeOpenAIServer, Fault
from xaimetrics._logging import level_from_options, log_to_stderr
from xaimetrics.simulators import ChatMessage, OpenAICompatibleSimulator


def test_a_library_retry_prints_nothing_by_default(capfd) -> None:
    with FakeOpenAIServer(lambda messages: "ok", faults=[Fault.rate_limit(retry_after=0.01)]) as server:
        sim = OpenAICompatibleSimulator("m", base_url=server.base_url, api_key="sk-x")
        assert sim.generate([ChatMessage("user", "hi")]).attempts == 2
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""


def test_log_to_stderr_shows_the_level_asked_and_restores_the_logger() -> None:
    logger = logging.getLogger("xaimetrics")
    before = (logger.level, list(logger.handlers))
    stream = io.StringIO()
    with log_to_stderr(logging.INFO, stream):
        logging.getLogger("xaimetrics.benchmark").info("shown")
        logging.getLogger("xaimetrics.benchmark").debug("hidden")
        logging.getLogger("other").warning("not ours")
    assert "INFO xaimetrics.benchmark: shown" in stream.getvalue()
    assert "hidden" not in stream.getvalue() and "not ours" not in stream.getvalue()
    assert (logger.level, list(logger.handlers)) == before


def test_levels_from_the_options() -> None:
    assert [level_from_options(v, None) for v in (0, 1, 2, 5)] == [30, 20, 10, 10]
    assert level_from_options(2, "ERROR") == logging.ERROR
