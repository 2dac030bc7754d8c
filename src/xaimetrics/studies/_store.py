"""The answer database of a study (SQLite, WAL, ``synchronous=FULL``).

Every answer is one transaction, committed before the server sends the next screen, so a crash or a
restart loses nothing and a participant resumes at their first unanswered screen. Invite and admin tokens
are stored as SHA-256 hashes only (a copy of the database gives no access). The database is bound to one
study bundle by its digest: answers are never read against an edited bundle.

A participant's link can be revoked (:meth:`StudyStore.revoke`): the token stops working, the answers stay.
Sending the same answer again (a replayed or double-clicked POST) changes nothing: ``answered_at`` keeps the
time of the answer, so the per-screen times of the export do not shift.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xaimetrics._sqlite import SQLiteFile
from xaimetrics._validation import invalid
from xaimetrics.exceptions import StoreError
from xaimetrics.studies._bundle import Study, study_digest
from xaimetrics.studies._plan import Screen, make_plan, screens

__all__ = ["RESPONSE_COLUMNS", "Invite", "Participant", "StudyStore", "hash_token"]

#: the columns of :meth:`StudyStore.responses`
RESPONSE_COLUMNS: tuple[str, ...] = (
    "participant", "screen", "kind", "subject", "field", "value", "answered_at", "revisions", "first_seen",
)  # fmt: skip

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS participants (
    id INTEGER PRIMARY KEY,
    label TEXT UNIQUE NOT NULL,
    token_hash TEXT UNIQUE NOT NULL,
    plan TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS revoked (
    participant_id INTEGER PRIMARY KEY REFERENCES participants(id),
    revoked_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS views (
    participant_id INTEGER NOT NULL REFERENCES participants(id),
    screen INTEGER NOT NULL,
    first_seen REAL NOT NULL,
    PRIMARY KEY (participant_id, screen)
);
CREATE TABLE IF NOT EXISTS responses (
    participant_id INTEGER NOT NULL REFERENCES participants(id),
    screen INTEGER NOT NULL,
    field TEXT NOT NULL,
    kind TEXT NOT NULL,
    subject TEXT NOT NULL,
    value INTEGER,
    answered_at REAL NOT NULL,
    revisions INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (participant_id, screen, field)
);
"""


def hash_token(token: str) -> str:
    """The SHA-256 hex digest under which a token is stored.

    Example:
        >>> hash_token("abc")[:16]
        'ba7816bf8f01cfea'
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Participant:
    """A participant: database id, public label (``P1``…), plan (arm or text ids) and creation time."""

    id: int
    label: str
    plan: tuple[str, ...]
    created_at: float


@dataclass(frozen=True)
class Invite:
    """A new participant and their secret token (shown once: only its hash is stored)."""

    participant: Participant
    token: str

    def url(self, base_url: str) -> str:
        """The invite link, ``{base_url}/s/{token}``."""
        return f"{base_url.rstrip('/')}/s/{self.token}"


class StudyStore(SQLiteFile):
    """The answers of one study, in an SQLite file.

    Args:
        path: the database (created with its folder if needed).
        study: the study bundle the answers belong to; a database made for another bundle is refused.

    Example:
        >>> import os, tempfile
        >>> from xaimetrics.studies import LikertStudy
        >>> from xaimetrics.studies._likert import Dimension, RatingItem
        >>> study = LikertStudy([Dimension("tone", "emotional tone")], [RatingItem("0", "a joy", (0.8,))])
        >>> store = StudyStore(os.path.join(tempfile.mkdtemp(), "answers.sqlite"), study)
        >>> invite = store.invite()
        >>> store.participant(invite.token).label, store.current_screen(invite.participant).kind
        ('P1', 'instructions')
        >>> store.record(invite.participant, 0, {"": None}); store.record(invite.participant, 1, {"0": 4})
        >>> store.current_screen(invite.participant) is None  # everything answered
        True
        >>> store.revoke("P1")  # the link stops working, the answers are kept
        >>> store.participant(invite.token) is None, store.revoked()
        (True, {'P1'})
    """

    def __init__(self, path: str | Path, study: Study) -> None:
        self.path = Path(path)
        self.study = study
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._screens: dict[tuple[str, ...], list[Screen]] = {}
        with self._guard():
            self._connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute("PRAGMA synchronous=FULL")
            self._connection.execute("PRAGMA foreign_keys=ON")
            self._connection.execute("PRAGMA busy_timeout=10000")
            self._connection.executescript(_SCHEMA)
        digest = study_digest(study)
        with self._transaction() as db:
            row = db.execute("SELECT value FROM meta WHERE name = 'study_digest'").fetchone()
            if row is None:
                db.execute("INSERT INTO meta VALUES ('study_digest', ?)", (json.dumps(digest),))
                db.execute("INSERT INTO meta VALUES ('secret', ?)", (json.dumps(secrets.token_hex(32)),))
        if row is not None and json.loads(row[0]) != digest:
            self._connection.close()
            raise StoreError(
                f"The answer database {self.path} belongs to another version of the study bundle (its digest "
                "differs): its answers would be read against questions they were not given for. Serve the "
                "bundle it was made for, or use a new database file for the new bundle."
            )

    # -- plumbing --------------------------------------------------------------------------------------------
    def _error(self, error: sqlite3.DatabaseError) -> StoreError:
        return StoreError(
            f"The answer database {self.path} cannot be used (sqlite: {error}). Restore it from a backup, "
            "or move it away to start the study again."
        )

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._guard():
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                yield self._connection
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise
            self._connection.execute("COMMIT")

    def _query(self, sql: str, parameters: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self._lock, self._guard():
            return self._connection.execute(sql, parameters).fetchall()

    def _meta(self, name: str) -> object:
        rows = self._query("SELECT value FROM meta WHERE name = ?", (name,))
        return json.loads(rows[0][0]) if rows else None

    @property
    def secret(self) -> str:
        """The server secret that signs the forms' CSRF tokens (kept across restarts)."""
        return str(self._meta("secret"))

    # -- participants ----------------------------------------------------------------------------------------
    def invite(self, label: str | None = None, *, arms: Sequence[str] | None = None) -> Invite:
        """Add a participant with a fresh unguessable token (192 bits); the plan is fixed now.

        Args:
            label: a public label (default ``P<n>``); never the token.
            arms: the arm ids of a simulatability participant (default: the Latin square's next row).
        """
        token = secrets.token_urlsafe(24)
        with self._transaction() as db:
            number = int(db.execute("SELECT COUNT(*) FROM participants").fetchone()[0])
            plan = make_plan(self.study, number, arms)
            label = label if label is not None else f"P{number + 1}"
            if not isinstance(label, str) or not label.strip() or len(label) > 64:
                raise invalid(
                    "label", "StudyStore.invite", "a non-empty string of at most 64 characters", label
                )
            if db.execute("SELECT 1 FROM participants WHERE label = ?", (label,)).fetchone():
                raise invalid("label", "StudyStore.invite", "a label not used yet", label)
            created = time.time()
            cursor = db.execute(
                "INSERT INTO participants (label, token_hash, plan, created_at) VALUES (?, ?, ?, ?)",
                (label, hash_token(token), json.dumps(plan), created),
            )
        return Invite(Participant(int(cursor.lastrowid or 0), label, tuple(plan), created), token)

    def participant(self, token: str | None) -> Participant | None:
        """The participant whose token this is, or ``None`` (also when the link was revoked)."""
        if not token or len(token) > 256:
            return None
        rows = self._query(
            "SELECT id, label, plan, created_at FROM participants WHERE token_hash = ? "
            "AND id NOT IN (SELECT participant_id FROM revoked)",
            (hash_token(token),),
        )
        return _participant(rows[0]) if rows else None

    def participants(self) -> list[Participant]:
        return [
            _participant(r)
            for r in self._query("SELECT id, label, plan, created_at FROM participants ORDER BY id")
        ]

    def revoke(self, label: str) -> None:
        """Revoke the link of the participant ``label``: their token stops working, their answers are kept.

        The example of :class:`StudyStore` revokes a link.
        """
        with self._transaction() as db:
            row = db.execute("SELECT id FROM participants WHERE label = ?", (label,)).fetchone()
            if row is None:
                labels = [r[0] for r in db.execute("SELECT label FROM participants ORDER BY id LIMIT 10")]
                raise invalid("label", "StudyStore.revoke", "the label of a participant", label,
                              f"Participants: {', '.join(labels) or 'none yet'}.")  # fmt: skip
            db.execute("INSERT OR IGNORE INTO revoked VALUES (?, ?)", (int(row[0]), time.time()))

    def revoked(self) -> set[str]:
        """The labels of the participants whose link was revoked."""
        return {
            str(r[0])
            for r in self._query(
                "SELECT p.label FROM revoked r JOIN participants p ON p.id = r.participant_id"
            )
        }

    # -- admin -----------------------------------------------------------------------------------------------
    def new_admin_token(self) -> str:
        """Create (or replace) the admin token; only its hash is kept, so it is shown once."""
        token = secrets.token_urlsafe(24)
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('admin_token_hash', ?)", (json.dumps(hash_token(token)),)
            )
        return token

    @property
    def served_url(self) -> str | None:
        """The address ``xaimetrics study serve`` last served this study on (``None``: never served)."""
        value = self._meta("served_url")
        return None if value is None else str(value)

    def remember_url(self, url: str) -> None:
        """Record the address the study is served on (the links of ``study invite`` use it)."""
        with self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES ('served_url', ?)", (json.dumps(url),))

    @property
    def has_admin_token(self) -> bool:
        return self._meta("admin_token_hash") is not None

    def is_admin(self, token: str | None) -> bool:
        expected = self._meta("admin_token_hash")
        if not token or expected is None or len(token) > 256:
            return False
        return secrets.compare_digest(hash_token(token), str(expected))

    # -- screens and answers ---------------------------------------------------------------------------------
    def screens(self, participant: Participant) -> list[Screen]:
        """The participant's sequence of screens (from their stored plan)."""
        with self._lock:
            if participant.plan not in self._screens:
                self._screens[participant.plan] = screens(self.study, participant.plan)
            return self._screens[participant.plan]

    def answers(self, participant: Participant) -> dict[int, dict[str, int | None]]:
        """``{screen index: {field: value}}`` of everything the participant answered or acknowledged."""
        out: dict[int, dict[str, int | None]] = {}
        for screen, field, value in self._query(
            "SELECT screen, field, value FROM responses WHERE participant_id = ?", (participant.id,)
        ):
            out.setdefault(int(screen), {})[str(field)] = None if value is None else int(value)
        return out

    def current_screen(self, participant: Participant) -> Screen | None:
        """The first screen not answered yet (``None`` when the participant is done)."""
        done = self.answers(participant)
        return next((s for s in self.screens(participant) if s.index not in done), None)

    def mark_seen(self, participant: Participant, screen: int) -> None:
        """Remember when a screen was first shown (answer times are measured from it)."""
        with self._transaction() as db:
            db.execute("INSERT OR IGNORE INTO views VALUES (?, ?, ?)", (participant.id, screen, time.time()))

    def record(self, participant: Participant, screen: int, values: Mapping[str, int | None]) -> None:
        """Store the answers of one screen in one committed transaction.

        A changed value counts a revision and takes the new time; the same value again changes nothing.
        """
        sequence = self.screens(participant)
        if not 0 <= screen < len(sequence):
            raise invalid("screen", "StudyStore.record", f"a screen index in [0, {len(sequence)})", screen)
        shown = sequence[screen]
        subject = "/".join(x for x in (shown.arm, shown.sample, shown.item) if x)
        now = time.time()
        with self._transaction() as db:
            for field, value in values.items():
                db.execute(
                    "INSERT INTO responses (participant_id, screen, field, kind, subject, value, answered_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (participant_id, screen, field) DO UPDATE SET "
                    "revisions = revisions + (value IS NOT excluded.value), value = excluded.value, "
                    "answered_at = CASE WHEN value IS NOT excluded.value THEN excluded.answered_at "
                    "ELSE answered_at END",
                    (participant.id, screen, field, shown.kind, subject, value, now),
                )

    def responses(self) -> list[dict[str, object]]:
        """Every stored response with its participant and timing (the raw export)."""
        rows = self._query(
            "SELECT p.label, r.screen, r.kind, r.subject, r.field, r.value, r.answered_at, r.revisions, v.first_seen "
            "FROM responses r JOIN participants p ON p.id = r.participant_id "
            "LEFT JOIN views v ON v.participant_id = r.participant_id AND v.screen = r.screen "
            "ORDER BY p.id, r.screen, r.field"
        )
        return [dict(zip(RESPONSE_COLUMNS, row, strict=True)) for row in rows]


def _participant(row: tuple[Any, ...]) -> Participant:
    return Participant(int(row[0]), str(row[1]), tuple(json.loads(row[2])), float(row[3]))
