"""Study bundles on disk: one JSON file holding everything a study shows, so the server loads no model.

The file is ``{"format": "xaimetrics-study", "version": 1, "kind": "simulatability" | "likert", ...}``.
Its *digest* (SHA-256 of the canonical JSON) is recorded in the answer database, so answers collected for
one bundle are never read against an edited one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from xaimetrics._digest import json_digest
from xaimetrics._validation import invalid
from xaimetrics.studies._kind_registry import STUDY_KINDS, Study

__all__ = ["FORMAT", "Study", "load_study", "save_study", "study_digest", "study_from_dict"]

FORMAT = "xaimetrics-study"
VERSION = 1


def _document(study: Study) -> dict[str, object]:
    return {"format": FORMAT, "version": VERSION, **study.to_dict()}


def study_digest(study: Study) -> str:
    """SHA-256 of the study's canonical JSON (what the answer database is bound to).

    Example:
        >>> from xaimetrics.studies import LikertStudy
        >>> from xaimetrics.studies._likert import Dimension, RatingItem
        >>> study = LikertStudy([Dimension("tone", "emotional tone")], [RatingItem("0", "a joy", (0.8,))])
        >>> len(study_digest(study))
        64
    """
    return json_digest(_document(study))


def save_study(study: Study, path: str | os.PathLike[str]) -> Path:
    """Write ``study`` as JSON (atomically: a crash never leaves half a bundle)."""
    types = [entry.study_type for entry in STUDY_KINDS.values()]
    if not isinstance(study, tuple(types)):
        raise invalid(
            "study", "save_study", "a " + " or ".join(t.__name__ for t in types), type(study).__name__
        )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(_document(study), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def study_from_dict(data: object, source: str = "study") -> Study:
    """Build a study from the bundle's data, checking its format, version and kind."""
    owner = "load_study"
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise invalid("path", owner, f"a study bundle (JSON with format '{FORMAT}')", f"{source}: another document",
                      "Create one with 'xaimetrics study create'.")  # fmt: skip
    if data.get("version") != VERSION:
        raise invalid(
            "path", owner, f"a version {VERSION} bundle", f"{source}: version {data.get('version')!r}"
        )
    kind = data.get("kind")
    entry = STUDY_KINDS.find(kind)
    if entry is None or kind not in STUDY_KINDS.names():
        raise invalid(
            "path",
            owner,
            "a bundle of kind " + " or ".join(map(repr, STUDY_KINDS.names())),
            f"{source}: {kind!r}",
        )
    body = {k: v for k, v in data.items() if k not in ("format", "version", "kind")}
    try:
        return entry.study_type.from_dict(body)
    except (KeyError, TypeError) as error:
        raise invalid(
            "path", owner, f"a complete {kind} bundle", f"{source}: {type(error).__name__} {error}"
        ) from error


def load_study(path: str | os.PathLike[str]) -> Study:
    """Read a study bundle written by :func:`save_study` (or ``xaimetrics study create``)."""
    path = Path(path)
    if not path.is_file():
        raise invalid("path", "load_study", "an existing study bundle (.json)", str(path))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise invalid("path", "load_study", "a JSON file", f"{path}: {error}") from error
    return study_from_dict(data, str(path))
