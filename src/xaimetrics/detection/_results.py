"""The results folder of ``xaimetrics detection``: settings, one durable line per scored concept, every answer.

- ``responses.sqlite``: every reader answer, committed as it arrives (:class:`FolderAnswers`, the simulators'
  response cache in the folder, whatever ``--no-cache`` says): an interrupt loses at most the calls in flight,
  and a rerun reads the answers it already paid for instead of asking again. Answers whose class
  probabilities could not be read are not kept (a rerun asks again).
- ``rows.jsonl``: one JSON line per (setting, task, concept), ``"status": "ok"`` with its score rows, or
  ``"failed"`` with the reason (a failed call is never a score; a rerun scores the concept again). Each line is
  written whole, flushed and ``fsync``-ed; a last line cut by a crash is dropped (and scored again), and any other
  damaged line is refused with its number and the way out. ``rows.csv`` is an export, rewritten each run.
- ``settings.json``: what the rows were computed from, readers' servers included (URL without credentials,
  model, sampling); written with the first result, so that a refused run leaves nothing that blocks the folder.

JSON Lines rather than the grid's SQLite :class:`~xaimetrics.benchmark.ResultsStore`: detection rows have other
columns per scorer (intruder trials, embedding similarities), which that store's fixed row type does not hold.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xaimetrics.exceptions import StoreError
from xaimetrics.simulators import CachedSimulator

if TYPE_CHECKING:
    from xaimetrics.simulators import SimulatorResponse

__all__ = ["KEY", "DetectionFolder", "FolderAnswers"]

#: the fields that identify one stored line (a concept scored by one reader and task in one setting)
KEY = ("dataset", "method", "n_concepts", "seed", "reader", "task", "concept")
_TYPES: dict[str, type | tuple[type, ...]] = {"dataset": str, "method": str, "n_concepts": int, "seed": int,
                                              "reader": str, "task": str, "concept": int}  # fmt: skip
_FIX = "Restore the file, delete that line (its concept is scored again) or use another --output."


class FolderAnswers(CachedSimulator):
    """The folder's answer store: every answer committed as it arrives, except those whose class
    probabilities were filled in because they could not be read (``probability_fallback_ids``)."""

    def _store(self, key: str, identity: dict[str, object], response: SimulatorResponse) -> None:
        if (response.metadata or {}).get("probability_fallback_ids"):
            return
        super()._store(key, identity, response)


def _problem(record: object) -> str | None:
    if not isinstance(record, dict):
        return f"a JSON {type(record).__name__}, not an object"
    for name, kind in _TYPES.items():
        if name not in record:
            return f"no {name!r}"
        value = record[name]
        if not isinstance(value, kind) or isinstance(value, bool):
            return f"{name!r} is {value!r}, not {'an integer' if kind is int else 'a string'}"
    status = record.get("status")
    if status == "failed":
        return None if isinstance(record.get("reason"), str) else "a failed line without its reason"
    if status != "ok":
        return f"'status' is {status!r}, not 'ok' or 'failed'"
    rows = record.get("rows")
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        return "'rows' is not a list of score rows"
    for row in rows:
        value = row.get("value")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"a score 'value' of {value!r}, not a number"
        if not math.isnan(value) and not 0.0 <= value <= 1.0:
            return f"a score 'value' of {value!r}, outside [0, 1]"
    return None


def _fsync_append(path: Path, lines: Iterable[str]) -> None:
    """Append ``lines`` whole, after cutting a last line that a crash left without its newline."""
    text = "".join(line + "\n" for line in lines)
    with open(path, "a+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size:
            handle.seek(max(size - 65536, 0))
            tail = handle.read()
            if not tail.endswith(b"\n"):
                cut = tail.rfind(b"\n")
                handle.truncate(size - len(tail) + cut + 1 if cut >= 0 else (0 if size <= 65536 else size))
        handle.seek(0, os.SEEK_END)
        handle.write(text.encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())


class DetectionFolder:
    """``settings.json``, ``rows.jsonl`` and ``answers.jsonl`` of one output folder (module docstring)."""

    def __init__(self, output: Path, settings: Mapping[str, object]) -> None:
        self.output = output
        self.settings = dict(settings)
        self.readers: dict[str, object] = {}
        self.settings_path = output / "settings.json"
        self.rows_path = output / "rows.jsonl"
        self.answers_path = output / "answers.jsonl"
        self.notes: list[str] = []
        stored = self._stored_settings()
        if stored is not None:
            readers = stored.pop("readers", {})
            if stored != self.settings:
                changed = sorted(
                    k for k in {*stored, *self.settings} if stored.get(k) != self.settings.get(k)
                )
                raise StoreError(
                    f"{output} holds a detection run with other settings ({', '.join(changed)}: "
                    f"{ {k: stored.get(k) for k in changed} } there, { {k: self.settings.get(k) for k in changed} } "
                    "now). Its rows were computed from those inputs: use another --output, or move the folder away."
                )  # fmt: skip
            self.readers = dict(readers) if isinstance(readers, dict) else {}

    def _stored_settings(self) -> dict[str, Any] | None:
        path = self.settings_path
        if not path.exists():
            return None
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise StoreError(
                f"{path} cannot be read as the folder's settings ({type(error).__name__}: {error}). "
                "Restore it, or use another --output."
            ) from error
        if not isinstance(stored, dict) or not isinstance(stored.get("readers", {}), dict):
            raise StoreError(
                f"{path} is not a detection settings file (a JSON object). Restore it, or use another --output."
            )
        return stored

    def check_reader(self, spec: str, identity: Mapping[str, object]) -> None:
        """Refuse a reader ``spec`` whose stored rows were answered by another server, model or sampling."""
        identity = json.loads(json.dumps(dict(identity), default=str))
        stored = self.readers.get(spec)
        if stored is not None and stored != identity:
            raise StoreError(
                f"{self.output} holds rows of reader {spec!r} answered by {stored}; this run's {spec!r} is "
                f"{identity}. Those rows are not this reader's: use another --output, or move the folder away."
            )
        self.readers[spec] = identity
        if self.settings_path.exists():
            self._write_settings()

    def _write_settings(self) -> None:
        temporary = self.settings_path.with_suffix(".json.tmp")
        temporary.write_text(
            json.dumps({**self.settings, "readers": self.readers}, indent=1), encoding="utf-8"
        )
        os.replace(temporary, self.settings_path)

    def records(self) -> list[dict[str, Any]]:
        """The lines of ``rows.jsonl``, checked; a damaged line raises a :class:`StoreError` naming it."""
        path = self.rows_path
        if not path.exists():
            return []
        try:
            data = path.read_bytes()
        except OSError as error:
            raise StoreError(f"{path} cannot be read ({error}). {_FIX}") from error
        lines = data.split(b"\n")
        torn = lines.pop()  # b"" after a final newline; else a line a crash cut short
        if torn.strip():
            self.notes.append(
                f"the last line of {path.name} was cut by an interrupted write: its concept is scored again"
            )
        out = []
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as error:
                raise StoreError(f"{path}, line {number}, is not a JSON object ({error}). {_FIX}") from None
            problem = _problem(record)
            if problem is not None:
                raise StoreError(f"{path}, line {number}, is damaged: {problem}. {_FIX}")
            out.append(record)
        return out

    def _append(self, record: dict[str, object], answers: list[dict[str, object]]) -> None:
        if not self.settings_path.exists():
            self._write_settings()
        setting = {k: record[k] for k in KEY}
        if answers:
            _fsync_append(self.answers_path, (json.dumps({**setting, **a}, default=str) for a in answers))
        _fsync_append(self.rows_path, [json.dumps(record, default=str)])  # last: the resume mark

    def add(self, setting: Mapping[str, object], rows: list[dict[str, object]], answers: list[dict[str, object]],
            words: str = "") -> None:  # fmt: skip
        """Store one scored concept (``setting`` holds the fields of :data:`KEY`)."""
        self._append({**{k: setting[k] for k in KEY}, "status": "ok", "words": words, "rows": rows}, answers)

    def fail(self, setting: Mapping[str, object], reason: str, answers: list[dict[str, object]]) -> None:
        """Record one concept whose reader calls failed (never a score; a rerun tries it again)."""
        self._append({**{k: setting[k] for k in KEY}, "status": "failed", "reason": reason}, answers)


def key_of(record: Mapping[str, object]) -> tuple[str, ...]:
    """The identity of a stored line or a setting: its :data:`KEY` fields as strings."""
    return tuple(str(record[k]) for k in KEY)


def split_records(
    records: Iterable[dict[str, Any]],
) -> tuple[list[dict[str, Any]], dict[tuple[str, ...], str]]:
    """The flat score rows of the ``ok`` lines, and the reasons of the keys whose last line failed."""
    latest: dict[tuple[str, ...], dict[str, Any]] = {}
    for record in records:
        key = key_of(record)
        if record["status"] == "ok" or latest.get(key, {}).get("status") != "ok":
            latest[key] = record
    rows, failed = [], {}
    for key, record in latest.items():
        if record["status"] == "ok":
            base = {k: record[k] for k in KEY}
            rows += [{**base, **row, "words": record.get("words", "")} for row in record["rows"]]
        else:
            failed[key] = record["reason"]
    return rows, failed
