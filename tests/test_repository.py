"""Library-wide contracts: the README's commands, CI parity, family exports, cheap import, no import cycle."""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import xaimetrics
from import_graph import cycles, import_graph

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_readme_has_exactly_two_setup_commands_installing_torch_first() -> None:
    setup = [c for c in _readme_commands() if c.startswith("pip install torch==")]
    assert len(setup) == 2, setup
    for command in setup:
        steps = command.split(" && ")
        assert steps[0] == "pip install torch==2.13.0"
        # llama.cpp built for any x86-64 CPU with AVX2, not only the one that built it (issue #20)
        assert steps[1].startswith('CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install -e ')


def test_ci_runs_exactly_the_readme_test_command() -> None:
    test_command = next(c for c in _readme_commands() if "pytest" in c)
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert test_command in ci_lines


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then CamelCase classes, then functions."""
    group = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return group, name


def _families() -> list[str]:
    return sorted(
        module.name
        for module in pkgutil.iter_modules(xaimetrics.__path__)
        if module.ispkg and not module.name.startswith("_")
    )


@pytest.mark.parametrize("family", _families())
def test_family_all_is_sorted_and_complete(family: str) -> None:
    module = importlib.import_module(f"xaimetrics.{family}")
    exported = list(module.__all__)
    assert exported == sorted(exported, key=_isort_key), f"xaimetrics.{family}.__all__ is not sorted"
    for name in exported:
        assert hasattr(module, name), f"xaimetrics.{family}.__all__ names a missing {name!r}"
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and getattr(value, "__module__", "").startswith(f"xaimetrics.{family}.")
    }
    assert public <= set(exported), f"public but not exported: {sorted(public - set(exported))}"


def test_import_is_cheap_and_side_effect_free() -> None:
    code = (
        "import sys, xaimetrics, xaimetrics.exceptions, xaimetrics.cli;"
        "heavy = [m for m in ('torch', 'transformers', 'sklearn', 'matplotlib', 'llama_cpp') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert result.stdout.strip() == ""


# -- no file-level import cycle in src/ ---------------------------------------------------------------------------
#: modules allowed to stand in a cycle: none
ALLOWED_IN_CYCLES: frozenset[str] = frozenset()


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d", "f"}, "f": {"e"}}
    assert sorted(map(sorted, cycles(graph))) == [["a", "b", "c"], ["e", "f"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_file_imports_itself_back() -> None:
    """No module of src/ reaches itself through its imports (the package root ``xaimetrics``, which re-exports
    and is imported for its version, is left out)."""
    graph = import_graph(ROOT / "src")
    assert (
        "xaimetrics.consim._consim" in graph
        and "xaimetrics.consim._scoring" in graph["xaimetrics.consim._consim"]
    )
    graph = {name: targets - {"xaimetrics"} for name, targets in graph.items() if name != "xaimetrics"}
    found = cycles(graph)
    outside = [sorted(c) for c in found if not c <= ALLOWED_IN_CYCLES]
    assert not outside, f"file-level import cycles: {outside}"
