"""A results folder is data, never code: planted pickles never run, damaged artefacts are recomputed, and no
module of the library unpickles."""

from __future__ import annotations

import logging
import os
import pickle
import re
from pathlib import Path

from toy_grid import PROVIDER_KWARGS, toy_grid

from xaimetrics.benchmark import Providers, ResultsStore, run_grid

PROVIDERS = Providers(**PROVIDER_KWARGS)
SRC = Path(__file__).parents[2] / "src" / "xaimetrics"
VOLATILE = ["created_at", "latency_s"]


class _Payload:
    """Unpickling this creates ``marker``: proof that a pickle ran."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _grid():
    return toy_grid(methods=("PCA", "NMF", "NoExplanation"), seeds=(0, 1), prompt_types=("NE2", "E2", "E3"))


def _frame(path):
    with ResultsStore(path) as store:
        return store.to_frame().drop(columns=VOLATILE)


def test_planted_pickles_never_run_and_the_results_are_the_same(tmp_path, caplog):
    grid = _grid()
    artefacts = tmp_path / "artefacts"
    run_grid(grid, tmp_path / "first.sqlite", providers=PROVIDERS, artefact_dir=artefacts, progress=False)
    saved = sorted(p for p in artefacts.iterdir() if p.is_file())
    assert saved and not [p for p in saved if p.suffix == ".pkl"]
    marker = tmp_path / "PWNED"
    evil = pickle.dumps(_Payload(str(marker)))
    for (
        path
    ) in saved:  # every artefact replaced by a crafted pickle, and pickles where older versions read them
        path.write_bytes(evil)
        path.with_suffix(".pkl").write_bytes(evil)
    for kind in ("fit", "prompts"):
        (artefacts / f"{kind}-0123456789abcdef.pkl").write_bytes(evil)
    caplog.set_level(logging.WARNING, logger="xaimetrics")
    summary = run_grid(grid, tmp_path / "second.sqlite", providers=PROVIDERS, artefact_dir=artefacts,
                       progress=False)  # fmt: skip
    assert not marker.exists()
    assert summary.completed == len(grid.settings())
    assert _frame(tmp_path / "second.sqlite").equals(_frame(tmp_path / "first.sqlite"))
    assert "is recomputed" in caplog.text or "are rebuilt" in caplog.text
    # the recomputed artefacts replaced the planted ones
    assert all(path.read_bytes() != evil for path in saved)


def test_truncated_and_tampered_artefacts_are_recomputed(tmp_path, caplog):
    grid = _grid()
    artefacts = tmp_path / "artefacts"
    run_grid(grid, tmp_path / "first.sqlite", providers=PROVIDERS, artefact_dir=artefacts, progress=False)
    for path in artefacts.iterdir():
        data = path.read_bytes()
        if path.suffix == ".json":  # tampered: an answer target changed, the digest no longer matches
            path.write_text(
                re.sub(
                    r'"references": \[(\d)',
                    lambda m: f'"references": [{(int(m[1]) + 1) % 3}',
                    path.read_text(),
                )
            )
        else:  # truncated
            path.write_bytes(data[: len(data) // 2])
    caplog.set_level(logging.WARNING, logger="xaimetrics")
    run_grid(grid, tmp_path / "second.sqlite", providers=PROVIDERS, artefact_dir=artefacts, progress=False)
    assert _frame(tmp_path / "second.sqlite").equals(_frame(tmp_path / "first.sqlite"))
    assert "SHA-256" in caplog.text and "is recomputed" in caplog.text


def test_no_module_unpickles():
    unsafe = re.compile(
        r"pickle\.loads?\(|allow_pickle\s*=\s*True|weights_only\s*=\s*False|joblib\.load\(|dill\."
    )
    offenders = [
        f"{path.relative_to(SRC)}:{number}"
        for path in SRC.rglob("*.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if unsafe.search(line)
    ]
    assert offenders == []
