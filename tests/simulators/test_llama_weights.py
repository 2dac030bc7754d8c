"""The llama.cpp weights policy (issue #20): portable weights on AMX CPUs, or as the user or environment says.

The policy tests assert the loader's decision on given CPUs, so they fail on any machine, with or without AMX.
"""

from __future__ import annotations

import os

import pytest

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators._cpu import CpuInfo
from xaimetrics.simulators._llama_weights import PORTABLE_ENV, WeightsPolicy, llama_weights, weights_policy

AMX = CpuInfo(
    "Intel(R) Xeon(R) Platinum 8480+", frozenset({"avx2", "avx512f", "amx_tile", "amx_int8", "amx_bf16"})
)
ZEN = CpuInfo("AMD EPYC 7B13", frozenset({"avx2", "fma", "sse4a"}))


def test_auto_policy_is_portable_exactly_on_amx_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PORTABLE_ENV, raising=False)
    on_amx, on_zen = weights_policy(None, AMX), weights_policy(None, ZEN)
    assert (on_amx.portable, on_amx.chosen, on_amx.label) == (True, False, "portable")
    assert (on_zen.portable, on_zen.chosen, on_zen.label) == (False, False, "accelerated")
    assert "AMX" in on_amx.reason and on_zen.reason == "auto: no AMX on this CPU"


@pytest.mark.parametrize(
    ("value", "portable"), [("1", True), ("TRUE", True), ("on", True), ("0", False), ("no", False)]
)
def test_the_environment_variable_chooses_on_any_cpu(monkeypatch, value: str, portable: bool) -> None:
    monkeypatch.setenv(PORTABLE_ENV, value)
    for cpu in (AMX, ZEN):
        policy = weights_policy(None, cpu)
        assert policy.portable is portable and policy.chosen
        assert policy.reason == f"{PORTABLE_ENV}={value.lower()}"


def test_the_argument_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PORTABLE_ENV, "1")
    assert weights_policy(False, AMX) == WeightsPolicy(False, "portable=False", chosen=True)
    monkeypatch.setenv(PORTABLE_ENV, "auto")
    assert weights_policy(None, AMX).portable and not weights_policy(None, ZEN).portable


def test_bad_values_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PORTABLE_ENV, "maybe")
    with pytest.raises(
        InvalidParameterError, match=f"'{PORTABLE_ENV}' parameter of the environment.*Got maybe"
    ):
        weights_policy(None, ZEN)
    monkeypatch.delenv(PORTABLE_ENV)
    with pytest.raises(InvalidParameterError, match="'portable' parameter of LlamaCppSimulator"):
        weights_policy("yes", ZEN)  # type: ignore[arg-type]


def test_the_portable_loader_turns_off_llama_cpps_extra_buffers() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    bindings = llama_cpp.llama_cpp
    assert bindings.llama_model_default_params().use_extra_bufts  # llama.cpp's default
    with llama_weights(llama_cpp, portable=True):
        assert not bindings.llama_model_default_params().use_extra_bufts
    assert bindings.llama_model_default_params().use_extra_bufts  # restored
    with llama_weights(llama_cpp, portable=False):
        assert bindings.llama_model_default_params().use_extra_bufts
    # Llama.__init__ reads the defaults through the module attribute that the loader replaces
    import inspect

    assert "llama_cpp.llama_model_default_params()" in inspect.getsource(llama_cpp.Llama.__init__)


def test_the_cli_flag_sets_the_policy_for_the_process_and_its_workers(monkeypatch, tmp_path) -> None:
    from xaimetrics import cli

    monkeypatch.delenv(PORTABLE_ENV, raising=False)
    for command in (
        ["consim"],
        ["demo"],
        ["benchmark", "run", "grid.toml"],
        ["study", "simulate", "s.toml", "--results-store", "r.sqlite"],
    ):
        args = cli.build_parser().parse_args([*command, "--portable-llm"])
        assert args.portable_llm, command
    # a real command: the flag is applied before the command runs (here it then fails on a missing grid file)
    assert cli.main(["benchmark", "run", str(tmp_path / "absent.toml"), "--portable-llm"]) == 1
    assert weights_policy(None, ZEN) == WeightsPolicy(True, f"{PORTABLE_ENV}=1", chosen=True)
    assert os.environ.pop(PORTABLE_ENV) == "1"
