"""Every fenced code block of README.md and docs/*.md runs as written, offline (issue #35).

How a block is treated is read from its language and from the HTML comments on the lines right before it:

- ```python blocks run in order in one fresh namespace per page, in a temporary working directory of the page;
- ```bash / ```console blocks run in ``bash -e`` in that directory, ``xaimetrics`` being the real command line
  (a new process of this interpreter, this checkout's ``src`` first); a ```console block is one ``$`` command
  and the exact output it prints;
- ```toml blocks are parsed; ``<!-- file: NAME -->`` before a block writes it to NAME in the page's directory
  (``<!-- file: NAME (appended) -->`` adds it to the end), so later blocks of the page can use it;
- ```text blocks are diagrams, listings or output: nothing to run;
- ``<!-- fixture: NAME -->`` writes the small documented file ``FIXTURES[NAME]`` (below) into the page's
  directory first (a data file the page names but does not show);
- ``<!-- not run: REASON -->`` skips a block that needs a network, an API key, a GPU, people or hours (the reason shows
  in the docs and in the test report); ``<!-- slow: REASON -->`` runs it only with ``--run-slow``.

A block with another (or no) language, a marker without its reason or name, or a failure fails its test
(other HTML comments, e.g. the metrics table's bounds, are not markers).
"""

from __future__ import annotations

import gc
import importlib
import os
import random
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
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
MARKER = re.compile(r"<!--\s*(not run|slow|file|fixture):\s*(.*?)\s*-->")
FENCE = re.compile(r"^```(\S*)\s*$")
CLI_TIMEOUT_S = 900


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository root
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    markers: dict[str, str]  # "not run", "slow": the reason; "file", "fixture": the file's name

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def _blocks(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    page = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
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
        markers: dict[str, str] = {}
        previous = index - 1
        while previous >= 0 and (not lines[previous].strip() or MARKER.fullmatch(lines[previous].strip())):
            marker = MARKER.fullmatch(lines[previous].strip())
            if marker is not None:
                markers[marker.group(1)] = marker.group(2)
            previous -= 1
        blocks.append(
            Block(
                page=page,
                line=index + 1,
                language=opening.group(1),
                code="\n".join(lines[index + 1 : end]) + "\n",
                markers=markers,
            )
        )
        index = end + 1
    return blocks


BLOCKS = [block for path in PAGES for block in _blocks(path)]


def _tweets(path: Path) -> None:
    """``tweets.csv`` (docs/data.md): 900 short texts by 3 authors, columns ``Content`` and ``Author``.

    Words are drawn from each author's words and a shared pool, and one label in three is drawn at random, so
    that a classifier errs on some texts of every class (ConSim's selection needs wrongly predicted texts).
    """
    topics = {
        "ada": ("engine", "loom", "numbers", "pattern", "card", "poetry"),
        "alan": ("machine", "think", "game", "code", "zebra", "morphogenesis"),
        "grace": ("compiler", "moth", "relay", "ship", "nanosecond", "cobol"),
    }
    shared = ("today", "again", "new", "idea", "work", "morning", "paper", "talk", "team", "letter")
    rng = random.Random(0)
    rows = ["Content,Author"]
    for author, words in topics.items():
        for _ in range(300):
            text = " ".join(rng.choice(words if rng.random() < 0.4 else shared) for _ in range(8))
            label = rng.choice(sorted(topics)) if rng.random() < 1 / 3 else author
            rows.append(f"{text},{label}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


# Files a page uses without showing them (``<!-- fixture: NAME -->`` before the first block that needs it).
FIXTURES: dict[str, Callable[[Path], None]] = {"tweets.csv": _tweets}


def _params() -> list[Any]:
    params = []
    for block in BLOCKS:
        marks = [pytest.mark.slow] if "slow" in block.markers else []
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
        for kind, argument in block.markers.items():
            assert argument, f"{block.id}: the '{kind}:' marker gives no reason or name"
        assert "fixture" not in block.markers or block.markers["fixture"] in FIXTURES, (
            f"{block.id}: no fixture named {block.markers.get('fixture')!r}; add it to FIXTURES"
        )
        if block.language == "text":
            assert set(block.markers) <= {"file"}, f"{block.id}: a text block is never run; drop its marker"


def test_markers_are_read_from_the_lines_above_a_block(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n<!-- fixture: tweets.csv -->\n<!-- slow: minutes -->\n\n```python\nx = 1\n```\n"
        "<!-- metrics-table:start -->\n```text\na\n```\nProse.\n```bash\nls\n```\n",
        encoding="utf-8",
    )
    first, second, third = _blocks(page)
    assert (first.line, first.language, first.code) == (6, "python", "x = 1\n")
    assert first.markers == {"fixture": "tweets.csv", "slow": "minutes"}
    assert (second.language, second.markers) == ("text", {})  # another comment is not a marker
    assert (third.language, third.code, third.markers) == ("bash", "ls\n", {})


@pytest.mark.parametrize("block", _params())
def test_block_runs(block: Block, pages: dict[str, dict[str, Any]], tmp_path_factory, monkeypatch) -> None:
    if "not run" in block.markers:
        pytest.skip(f"not run: {block.markers['not run']}")
    state = _page_state(pages, block, tmp_path_factory)
    cwd: Path = state["cwd"]
    if "fixture" in block.markers:
        name = block.markers["fixture"]
        if not (cwd / name).exists():
            FIXTURES[name](cwd / name)
    if "file" in block.markers:
        name, appended = re.subn(r"\s*\(appended\)$", "", block.markers["file"])
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
