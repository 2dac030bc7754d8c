"""The family's public surface: a sorted, complete ``__all__`` and a cheap import."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import xaimetrics.representation as family


def test_all_is_sorted_and_complete():
    assert family.__all__ == sorted(family.__all__, key=lambda name: (not name.isupper(), name))
    public = {
        name
        for name, value in vars(family).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert public == set(family.__all__)


def test_every_public_callable_has_a_docstring():
    for name in family.__all__:
        value = getattr(family, name)
        if callable(value):
            assert inspect.getdoc(value), name


def test_import_is_cheap():
    code = "import sys, xaimetrics.representation; print(sorted({'torch', 'transformers', 'gensim', 'jinja2', 'krippendorff', 'mlflow'} & set(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": str(Path(family.__file__).parents[2])}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout
    assert out.strip() == "[]"
