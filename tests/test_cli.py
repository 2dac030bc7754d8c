"""The ``xaimetrics`` command's global options: ``-v``/``--verbose`` and ``--log-level`` show the ``xaimetrics``
log records on stderr (retries, cache hits); nothing of them by default; never the API key."""

from __future__ import annotations

import logging

import pytest

from fake_openai_server import FakeOpenAIServer, Fault
from xaimetrics import cli

SECRET = "sk-live-0f9e8d7c6b5a4f3e"


@pytest.fixture
def consim(monkeypatch, tmp_path, tiny_model_dir):
    """``xaimetrics [global options] consim ...`` against the fake server, with one 429 before the answer."""
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("xaimetrics.consim._command",))
    monkeypatch.setenv("XAIMETRICS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    server = FakeOpenAIServer(lambda messages: "Sample_6: positive").start()

    def run(*global_options: str, cache: bool = True) -> int:
        server.inject(Fault.rate_limit(retry_after=0.01))
        return cli.main([
            *global_options, "consim", "--model", str(tiny_model_dir), "--dataset", "rotten_tomatoes",
            "--device", "cpu", "--n-lp", "6", "--n-ep", "6", "--fit-samples", "150", "--pool-samples", "120",
            "--n-concepts", "3", "--min-frequency", "3", "--balance", "relaxed", "--prompt-type", "E2",
            "--simulator", "openai:m", "--base-url", server.base_url, "--no-progress",
            *(() if cache else ("--no-cache",)),
        ])  # fmt: skip

    yield run
    server.stop()


def test_retries_show_only_with_verbose(consim, capsys) -> None:
    consim(cache=False)
    quiet = capsys.readouterr().err
    assert "retry" not in quiet and "xaimetrics.simulators" not in quiet
    consim("-v", cache=False)
    verbose = capsys.readouterr().err
    assert "INFO xaimetrics.simulators: openai:m: retry 1 of 4 after HTTP 429; waited 0." in verbose
    assert "cache" not in verbose  # cache hits and misses are DEBUG
    assert logging.getLogger("xaimetrics").handlers[-1].__class__ is logging.NullHandler  # the CLI's is gone


def test_debug_shows_cache_lookups_and_never_the_key(consim, capsys) -> None:
    consim("--log-level", "debug")
    err = capsys.readouterr().err
    assert "DEBUG xaimetrics.simulators: response cache miss" in err and "retry 1 of 4" in err
    consim("-vv")  # the same prompt again: a hit
    err += capsys.readouterr().err
    assert "response cache hit" in err
    assert SECRET not in err and SECRET[-8:] not in err and "Authorization" not in err


def test_an_unknown_log_level_is_refused(capsys) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--log-level", "loud", "consim"])
    assert "--log-level: invalid choice: 'LOUD'" in capsys.readouterr().err
