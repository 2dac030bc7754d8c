"""A user's own files: any column names, and every bad-data case ends in an error naming the file, the column or
the lines, and the fix (issue 23). Each test writes its own small file and reads it with the real loader."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from xaimetrics.data import check_dataset, load_dataset, read_table
from xaimetrics.exceptions import InvalidParameterError

TWEETS = "Content,Author\n" + "".join(
    f"tweet {i} about {'taxes' if i % 2 else 'rallies'},{'biden' if i % 2 else 'trump'}\n" for i in range(20)
)


def _write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_text(text, encoding=encoding)
    return path


def test_any_column_names_with_text_and_label_column(tmp_path: Path) -> None:
    path = _write(tmp_path / "tweets.csv", TWEETS)
    data = load_dataset(path, "all", text_column="Content", label_column="Author")
    assert data.class_names == ["biden", "trump"] and len(data) == 20
    assert data.texts[0] == "tweet 0 about rallies" and data.labels[0] == 1
    with pytest.raises(InvalidParameterError, match=r"'text_column'.*columns are Content, Author"):
        load_dataset(path)  # no usual column name: the error lists the file's columns
    with pytest.raises(
        InvalidParameterError, match=r"'text_column'.*Got content\. .*Did you mean 'Content'\?"
    ):
        load_dataset(path, text_column="content", label_column="Author")
    with pytest.raises(InvalidParameterError, match=r"'label_column'.*another column than the text column"):
        load_dataset(path, text_column="Content", label_column="Content")


def test_a_missing_file_says_file_not_found_with_its_path(tmp_path: Path) -> None:
    missing = tmp_path / "tweetz.csv"
    with pytest.raises(
        InvalidParameterError, match=rf"The data file '{missing}' was not found\. Check the path"
    ):
        load_dataset(missing)
    with pytest.raises(InvalidParameterError, match=rf"'{missing}' was not found"):
        check_dataset(str(missing))  # what a grid calls: not "must be among 'bbc_news', ..."
    with pytest.raises(
        InvalidParameterError, match=r"'datasets' parameter of Grid.*Did you mean 'bbc_news'\?"
    ):
        check_dataset("bbc_newz")
    txt = _write(tmp_path / "tweets.txt", TWEETS)
    with pytest.raises(InvalidParameterError, match=r"a data file ending in one of \.csv.*Rename the file"):
        check_dataset(str(txt))


def test_empty_and_header_only_files(tmp_path: Path) -> None:
    for name in ("empty.csv", "empty.jsonl"):
        path = _write(tmp_path / name, "")
        with pytest.raises(InvalidParameterError, match=rf"'{path}' is empty \(0 bytes\)"):
            load_dataset(path)
    header = _write(tmp_path / "header.csv", "Content,Author\n")
    with pytest.raises(
        InvalidParameterError, match=r"'.*header\.csv' has no data rows \(only a header: Content, Author\)"
    ):
        load_dataset(header, text_column="Content", label_column="Author")
    blank = _write(tmp_path / "blank.jsonl", "\n\n")
    with pytest.raises(InvalidParameterError, match=r"blank\.jsonl' holds no JSON records"):
        load_dataset(blank)


def test_non_utf8_files_name_the_byte_the_line_and_the_encoding_option(tmp_path: Path) -> None:
    text = "text,label\nun film réussi,pos\nun navet,neg\nune œuvre,pos\n"
    path = _write(tmp_path / "avis.csv", text.replace("œ", "oe"), encoding="latin-1")
    with pytest.raises(
        InvalidParameterError,
        match=r"'.*avis\.csv' is not utf-8 text \(byte 0xe9 on line 2\)\. Pass the file's encoding: encoding='latin-1'",
    ):
        load_dataset(path)
    data = load_dataset(path, "all", encoding="latin-1")
    assert "un film réussi" in data.texts
    jsonl = tmp_path / "avis.jsonl"
    jsonl.write_bytes('{"text": "ok", "label": 0}\n{"text": "caf\xe9", "label": 1}\n'.encode("latin-1"))
    with pytest.raises(
        InvalidParameterError, match=r"avis\.jsonl' is not utf-8 text \(byte 0xe9 on line 2\)"
    ):
        load_dataset(jsonl)
    assert load_dataset(jsonl, "all", encoding="latin-1").texts == ["ok", "café"]
    with pytest.raises(InvalidParameterError, match=r"'encoding' parameter of load_dataset.*Got utf-9"):
        load_dataset(path, encoding="utf-9")


def test_empty_text_cells_are_refused_with_their_lines_never_nan(tmp_path: Path) -> None:
    path = _write(tmp_path / "gaps.csv", "Content,Author\nhello,a\n,b\n   ,a\nbye,b\nagain,a\n")
    with pytest.raises(
        InvalidParameterError,
        match=r"gaps\.csv' has 2 empty text cells in column 'Content' \(lines 3, 4\)\. .*drop_empty_rows=True",
    ):
        load_dataset(path, text_column="Content", label_column="Author")
    with pytest.warns(UserWarning, match=r"gaps\.csv: dropped 2 of 5 rows with an empty text or label"):
        data = load_dataset(path, "all", text_column="Content", label_column="Author", drop_empty_rows=True)
    assert data.texts == ["hello", "bye", "again"] and "nan" not in data.texts
    assert data.info["empty_rows_dropped"] == 2
    labels = _write(tmp_path / "nolabel.csv", "text,label\na,x\nb,\nc,y\n")
    with pytest.raises(InvalidParameterError, match=r"has 1 empty label cell in column 'label' \(line 3\)"):
        load_dataset(labels)
    jsonl = tmp_path / "gaps.jsonl"
    jsonl.write_text(
        "\n".join(json.dumps(r) for r in [{"t": "a", "y": 0}, {"t": None, "y": 1}, {"t": "c", "y": 1}]),
        encoding="utf-8",
    )
    with pytest.raises(
        InvalidParameterError, match=r"gaps\.jsonl' has 1 empty text cell in column 't' \(line 2\)"
    ):
        load_dataset(jsonl, text_column="t", label_column="y")


def test_the_string_nan_and_na_stay_text(tmp_path: Path) -> None:
    path = _write(tmp_path / "words.csv", "text,label\nNA,a\nnan,b\nnull,a\nfine,b\n")
    assert load_dataset(path, "all").texts == ["NA", "nan", "null", "fine"]  # real words, not missing cells


def test_malformed_json_lines_name_their_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "bad.jsonl", '{"text": "a", "label": 0}\n{"text": "b", "label": 1\n')
    with pytest.raises(InvalidParameterError, match=r"bad\.jsonl' has invalid JSON on line 2 \(column \d+\)"):
        load_dataset(path)
    path = _write(tmp_path / "list.jsonl", '{"text": "a", "label": 0}\n["b", 1]\n')
    with pytest.raises(InvalidParameterError, match=r"holds a JSON list on line 2, not an object"):
        read_table(path)


def test_a_one_class_label_column_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "one.csv", "Content,Author\n" + "".join(f"tweet {i},trump\n" for i in range(10)))
    with pytest.raises(
        InvalidParameterError,
        match=r"The label column 'Author' of .*one\.csv holds one class \('trump'\) in 10 rows: a classifier needs "
        r"at least two.*label_column=",
    ):
        load_dataset(path, text_column="Content", label_column="Author")
    with pytest.raises(InvalidParameterError, match=r"holds one class \('trump'\)"):
        check_dataset(
            str(path), text_column="Content", label_column="Author"
        )  # a grid's check, before any run
    train, test = tmp_path / "train.csv", tmp_path / "test.csv"
    _write(train, "text,label\na,x\nb,x\n")
    _write(test, "text,label\nc,x\nd,y\n")
    with pytest.raises(
        InvalidParameterError, match=r"label column 'label' of .*train\.csv holds one class \('x'\)"
    ):
        load_dataset({"train": train, "test": test}, "test")


def test_check_dataset_reads_a_file_once_per_version(tmp_path: Path) -> None:
    path = _write(tmp_path / "tweets.csv", TWEETS)
    check_dataset(str(path), text_column="Content", label_column="Author")
    with pytest.raises(InvalidParameterError, match=r"'text_column'"):
        check_dataset(str(path))
    _write(path, TWEETS + ",trump\n")  # a new version of the file is read again
    with pytest.raises(InvalidParameterError, match=r"empty text cell in column 'Content' \(line 22\)"):
        check_dataset(str(path), text_column="Content", label_column="Author")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the check is silent; the run reports dropped rows
        check_dataset(str(path), text_column="Content", label_column="Author", drop_empty_rows=True)
