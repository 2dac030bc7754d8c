"""Every fenced code block of README.md and docs/*.md runs as written, offline (issue #35).

How a block is treated is read from its language and from one HTML comment on the line(s) right before it:

- ```python blocks run in order in one fresh namespace per page, in a temporary working directory of the page;
- ```bash / ```console blocks run in ``bash -e`` in that directory, ``xaimetrics`` being the real command line
  (a new process of this interpreter, this checkout's ``src`` first); a ```console block is one ``$`` command
  and the exact output it prints;
- ```toml blocks are parsed; ``<!-- file: NAME -->`` before a block writes it to NAME in the page's directory
  (``<!-- file: NAME (appended) -->`` adds it to the end), so later blocks of the page can use it;
- ```text blocks are diagrams, listings or output: nothing to run;
- ``<!-- not run: REASON -->`` skips a block that needs a network, an API key, a GPU or hours (the reason shows
  in the docs and in the test report); ``<!-- slow: REASON -->`` runs it only with ``--run-slow``.

A block with another (or no) language, an unknown or empty marker, or a failure fails its test.
"""

from __future__ import annotations

import gc
import importlib
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from xaimetrics._registry import Registry

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LANGUAGES = ("python", "bash", "console", "toml", "text")
MARKER = re.compile(r"<!--\s*(not run|slow|file):\s*(.*?)\s*-->")
FENCE = re.compile(r"^```(\S*)\s*$")
CLI_TIMEOUT_S = 900


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository root
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    marker: str | None  # "not run", "slow" or "file"
    argument: str  # the marker's reason or file name

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def _blocks(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    page = path.relative_to(ROOT).as_posix()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        previous = index - 1
        while previous >= 0 and not lines[previous].strip():
            previous -= 1
        marker = MARKER.fullmatch(lines[previous].strip()) if previous >= 0 else None
        blocks.append(
            Block(
                page=page,
                line=index + 1,
                language=opening.group(1),
                code="\n".join(lines[index + 1 : end]) + "\n",
                marker=marker.group(1) if marker else None,
                argument=marker.group(2) if marker else "",
            )
        )
        index = end + 1
    return blocks


BLOCKS = [block for path in PAGES for block in _blocks(path)]


def _params() -> list[Any]:
    params = []
    for block in BLOCKS:
        marks = [pytest.mark.slow] if block.marker == "slow" else []
        params.append(pytest.param(block, id=block.id, marks=marks))
    return params


@pytest.fixture(scope="module")
def pages() -> Iterator[dict[str, dict[str, Any]]]:
    """Per page: its working directory and the namespace its python blocks share, created on first use.

    What the pages register (a prompt type, an extractor…) is removed afterwards: the registries are restored.
    """
    for family in ("concepts", "consim", "simulators", "benchmark"):
        importlib.import_module(f"xaimetrics.{family}")
    registries = [obj for obj in gc.get_objects() if isinstance(obj, Registry)]
    saved = [(registry, dict(registry._entries), dict(registry._lookup)) for registry in registries]
    yield {}
    for registry, entries, lookup in saved:
        registry._entries, registry._lookup = entries, lookup


def _page_state(pages: dict[str, dict[str, Any]], block: Block, factory: Any) -> dict[str, Any]:
    if block.page not in pages:
        name = re.sub(r"\W", "_", block.page)
        pages[block.page] = {"cwd": factory.mktemp(name), "namespace": {"__name__": "__docs__"}}
    return pages[block.page]


def _bash(code: str, cwd: Path) -> str:
    """Runs ``code`` in ``bash -e``; ``xaimetrics`` is this interpreter's CLI with this checkout's ``src`` first.

    Returns its standard output.
    """
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), environment.get("PYTHONPATH", "")])
    environment.setdefault("HF_HUB_OFFLINE", "1")
    environment.setdefault("TRANSFORMERS_OFFLINE", "1")
    prelude = f'xaimetrics() {{ {shlex.quote(sys.executable)} -m xaimetrics.cli "$@"; }}\n'
    completed = subprocess.run(
        ["bash", "-e", "-c", prelude + code],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert completed.returncode == 0, (
        f"exit code {completed.returncode}\nstdout:\n{completed.stdout[-4000:]}\nstderr:\n{completed.stderr[-4000:]}"
    )
    return completed.stdout


def test_every_block_is_declared() -> None:
    """Each block has a known language, and a marker, when there is one, gives a reason or a file name."""
    assert len(BLOCKS) > 20, "the pages' code blocks were not found"
    for block in BLOCKS:
        assert block.language in LANGUAGES, (
            f"{block.id}: the block's language is {block.language!r}; use one of {LANGUAGES}"
        )
        assert block.marker is None or block.argument, (
            f"{block.id}: the '{block.marker}:' marker gives no reason"
        )
        if block.language == "text":
            assert block.marker is None, f"{block.id}: a text block is never run; drop its marker"


@pytest.mark.parametrize("block", _params())
def test_block_runs(block: Block, pages: dict[str, dict[str, Any]], tmp_path_factory, monkeypatch) -> None:
    if block.marker == "not run":
        pytest.skip(f"not run: {block.argument}")
    state = _page_state(pages, block, tmp_path_factory)
    cwd: Path = state["cwd"]
    if block.marker == "file":
        name, appended = re.subn(r"\s*\(appended\)$", "", block.argument)
        with open(cwd / name, "a" if appended else "w", encoding="utf-8") as handle:
            handle.write(block.code)
    if block.language == "text":
        return
    if block.language == "toml":
        tomllib.loads(block.code)
    elif block.language == "python":
        monkeypatch.chdir(cwd)
        exec(compile(block.code, block.id, "exec"), state["namespace"])
    elif block.language == "bash":
        _bash(block.code, cwd)
    elif block.language == "console":
        lines = block.code.splitlines()
        assert lines and lines[0].startswith("$ "), f"{block.id}: a console block starts with a '$ ' command"
        assert not any(line.startswith("$ ") for line in lines[1:]), (
            f"{block.id}: one command per console block"
        )
        printed = _bash(lines[0][2:], cwd)
        assert printed.rstrip().splitlines() == [line.rstrip() for line in lines[1:]], (
            f"{block.id}: the command now prints:\n{printed}"
        )
    else:
        pytest.fail(f"{block.id}: unknown language {block.language!r}")
