"""A persistent SQLite response cache in front of any simulator.

The cache holds copies of answers, nothing else: it is checked when it is opened, and a file that cannot be
trusted is refused with a :class:`~xaimetrics.exceptions.StoreError` naming it and the way out (move it away,
or run without the cache) — a directory or another file at its path, a truncated or corrupted database
(``PRAGMA quick_check``), a ``responses`` table of another layout, a folder that cannot be written. It is
never deleted or "repaired" here: the answers in it were paid for. Should it fail *during* a run (a disk that
fills up, a file damaged by another program), the cache is bypassed for the rest of the run with one warning
naming the file: the calls go on, and their answers are simply not cached.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from xaimetrics._digest import json_digest
from xaimetrics._validation import invalid
from xaimetrics._writes import is_write_failure, write_failure_cause
from xaimetrics.exceptions import StoreError
from xaimetrics.simulators._base import AnswerSchema, BaseSimulator, ChatMessage, Simulator, SimulatorResponse

__all__ = ["CachedSimulator", "cache_key"]

_LOG = logging.getLogger("xaimetrics.simulators")
#: the columns of the ``responses`` table
_COLUMNS = ("key", "identity", "text", "model", "prompt_tokens", "completion_tokens", "latency_s", "cost_usd",
            "created_at", "probabilities")  # fmt: skip

_SCHEMA_VERSION = 1
_CREATE = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    identity TEXT NOT NULL,
    text TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    cost_usd REAL NOT NULL,
    created_at REAL NOT NULL,
    probabilities TEXT
)
"""


def _identity(simulator: object) -> dict[str, object]:
    identity = getattr(simulator, "cache_identity", None)
    if callable(identity):
        return dict(identity())
    return {"simulator": type(simulator).__name__, "name": str(getattr(simulator, "name", ""))}


def cache_key(
    identity: dict[str, object], messages: tuple[ChatMessage, ...], answer_schema: AnswerSchema | None
) -> str:
    """SHA-256 of the simulator identity (model and sampling parameters), the messages and the answer schema.

    Example:
        >>> key = cache_key({"model": "m", "temperature": 0.0}, (ChatMessage("user", "hi"),), None)
        >>> len(key), key == cache_key({"temperature": 0.0, "model": "m"}, (ChatMessage("user", "hi"),), None)
        (64, True)
    """
    payload = {
        "version": _SCHEMA_VERSION,
        "simulator": identity,
        "messages": [m.as_dict() for m in messages],
        "answer_schema": None if answer_schema is None else answer_schema.as_dict(),
    }
    return json_digest(payload)


class CachedSimulator(BaseSimulator):
    """Serve repeated prompts from a persistent SQLite cache; ask ``inner`` only on a miss.

    The key is :func:`cache_key` of the inner simulator's ``cache_identity()`` (model, base URL without
    credentials, sampling parameters), the messages and the answer schema: never an API key or a header.
    Failed responses are not stored. The database uses WAL journaling and one connection guarded by a lock,
    so threads and several processes can share it.

    Args:
        inner: any simulator (``generate(messages, *, answer_schema=None)``).
        path: the SQLite file (created with its parent folders).

    Example:
        >>> import tempfile, os
        >>> from xaimetrics.simulators import ScriptedSimulator
        >>> inner = ScriptedSimulator(lambda messages: "Sample_1: yes")
        >>> sim = CachedSimulator(inner, os.path.join(tempfile.mkdtemp(), "cache.sqlite"))
        >>> [sim.generate([ChatMessage("user", "Sample_1: ok?")]).cached for _ in range(2)]
        [False, True]
        >>> len(inner.calls)
        1
    """

    def __init__(self, inner: Simulator, path: str | os.PathLike[str]) -> None:
        if not callable(getattr(inner, "generate", None)):
            raise invalid(
                "inner", "CachedSimulator", "a simulator with a generate method", type(inner).__name__
            )
        self.inner = inner
        self.path = Path(path)
        self.name = f"cached:{getattr(inner, 'name', type(inner).__name__)}"
        self.max_concurrency = int(getattr(inner, "max_concurrency", 1) or 1)
        self.supports_probabilities = bool(getattr(inner, "supports_probabilities", False))
        self._lock = threading.Lock()
        self._broken = False  # set when the cache fails mid-run: bypassed from then on
        if self.path.exists() and not self.path.is_file():
            raise self._refuse("is not a file (a folder or a device is at its path)")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise self._refuse(f"cannot be created: {write_failure_cause(self.path, error)}") from error
        try:
            self._connection = sqlite3.connect(
                self.path, timeout=60.0, check_same_thread=False, isolation_level=None
            )
        except sqlite3.DatabaseError as error:
            raise self._refuse_error(error) from error
        try:
            with self._lock:
                self._open()
        except StoreError:
            self._connection.close()
            raise
        except sqlite3.DatabaseError as error:
            self._connection.close()
            raise self._refuse_error(error) from error

    def _open(self) -> None:
        """Check the file, then create the table (nothing is written to a file that fails).

        A table without every column of :data:`_COLUMNS` (e.g. a cache written before class probabilities were
        cached) is refused like any other layout, not migrated: the message names the file and the way out."""
        connection = self._connection
        check = connection.execute("PRAGMA quick_check(1)").fetchone()
        if check is None or check[0] != "ok":
            found = " ".join(str(check[0]).split()) if check else "no answer"  # one line
            raise self._refuse(f"is damaged (sqlite quick_check: {found[:200]})")
        columns = {row[1] for row in connection.execute("PRAGMA table_info(responses)")}
        if columns and not set(_COLUMNS) <= columns:
            raise self._refuse(
                f"has a 'responses' table of another layout (columns {sorted(columns)}): it was not written by "
                "this version of xaimetrics"
            )
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute(_CREATE)

    def _refuse(self, problem: str) -> StoreError:
        return StoreError(
            f"The response cache {self.path} {problem}. Nothing was written to it. Move it away (its answers are "
            "then asked again and cached in a new file), point XAIMETRICS_CACHE_DIR elsewhere, or run with "
            "--no-cache (CachedSimulator: another path)."
        )

    def _refuse_error(self, error: sqlite3.DatabaseError) -> StoreError:
        if is_write_failure(error):
            return StoreError(
                f"The response cache {self.path} cannot be written: {write_failure_cause(self.path, error)}. Or "
                f"run with --no-cache. (sqlite: {error})"
            )
        return self._refuse(
            f"cannot be read as a cache (sqlite: {error}): it is truncated, damaged or not SQLite"
        )

    def _bypass(self, error: sqlite3.DatabaseError) -> None:
        """A cache that fails mid-run is bypassed (the calls go on, uncached), with one warning."""
        if not self._broken:
            self._broken = True
            cause = write_failure_cause(self.path, error) if is_write_failure(error) else f"sqlite: {error}"
            _LOG.warning(
                "The response cache %s failed (%s); it is bypassed for the rest of this run: answers are asked "
                "and not cached. Check the file (move it away if it is damaged), or run with --no-cache.",
                self.path, cause,
            )  # fmt: skip

    def __repr__(self) -> str:
        return f"CachedSimulator({self.inner!r}, path={str(self.path)!r})"

    def cache_identity(self) -> dict[str, object]:
        return _identity(self.inner)

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._connection.close()

    def __len__(self) -> int:
        with self._lock:
            return int(self._connection.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def clear(self) -> None:
        """Delete every stored response."""
        with self._lock:
            self._connection.execute("DELETE FROM responses")

    # -- storage ---------------------------------------------------------------------------------------------
    def _lookup(
        self, messages: tuple[ChatMessage, ...], answer_schema: AnswerSchema | None
    ) -> tuple[str, dict[str, object], SimulatorResponse | None]:
        """The call's cache key and simulator identity, and its stored response (``None`` on a miss)."""
        started = time.perf_counter()
        identity = _identity(self.inner)
        key = cache_key(identity, messages, answer_schema)
        if self._broken:
            return key, identity, None
        try:
            with self._lock:
                row = self._connection.execute(
                    "SELECT text, model, prompt_tokens, completion_tokens, latency_s, cost_usd, probabilities "
                    "FROM responses WHERE key=?",
                    (key,),
                ).fetchone()
        except sqlite3.DatabaseError as error:
            self._bypass(error)
            return key, identity, None
        if row is None:
            return key, identity, None
        text, model, prompt_tokens, completion_tokens, latency_s, cost_usd, probabilities = row
        try:
            stored, unread = _read_probabilities(probabilities)
        except (ValueError, TypeError, AttributeError):
            stored, unread = None, []
            text = None  # a row another program wrote: a miss, overwritten by the fresh answer
        if not isinstance(text, str) or not isinstance(model, str):
            return key, identity, None
        hit = SimulatorResponse(
            text=text,
            model=model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=time.perf_counter() - started,
            cost_usd=0.0,
            cached=True,
            attempts=0,
            metadata={
                "original_latency_s": latency_s,
                "original_cost_usd": cost_usd,
                "cache_key": key,
                # the samples whose probabilities were filled in, not read: kept so a replay never reads them
                **({"probability_fallback_ids": unread} if unread else {}),
            },
            probabilities=stored,
        )
        return key, identity, hit

    def _store(self, key: str, identity: dict[str, object], response: SimulatorResponse) -> None:
        if response.error is not None or response.cached or self._broken:
            return
        try:
            self._insert(key, identity, response)
        except sqlite3.DatabaseError as error:
            self._bypass(error)

    def _insert(self, key: str, identity: dict[str, object], response: SimulatorResponse) -> None:
        with self._lock:
            self._connection.execute(
                "INSERT OR REPLACE INTO responses (key, identity, text, model, prompt_tokens, completion_tokens, "
                "latency_s, cost_usd, created_at, probabilities) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    json.dumps(identity, sort_keys=True, default=str),
                    response.text,
                    response.model,
                    int(response.prompt_tokens),
                    int(response.completion_tokens),
                    float(response.latency_s),
                    float(response.cost_usd),
                    time.time(),
                    _write_probabilities(response),
                ),
            )

    # -- generation ------------------------------------------------------------------------------------------
    def _generate(
        self, messages: tuple[ChatMessage, ...], answer_schema: AnswerSchema | None
    ) -> SimulatorResponse:
        key, identity, hit = self._lookup(messages, answer_schema)
        if hit is not None:
            _LOG.debug("response cache hit %s for %s (%s)", key[:12], self.name, self.path)
            return hit
        _LOG.debug("response cache miss %s for %s (%s)", key[:12], self.name, self.path)
        response = self.inner.generate(messages, answer_schema=answer_schema)
        self._store(key, identity, response)
        return response


def _write_probabilities(response: SimulatorResponse) -> str | None:
    """The probabilities column: ``{sample: [p, ...]}``, or ``{"probabilities": ..., "fallback_ids": [...]}``
    when some were filled in rather than read (``metadata["probability_fallback_ids"]``), so the flag survives."""
    if response.probabilities is None:
        return None
    values = {i: list(p) for i, p in response.probabilities.items()}
    flagged = (response.metadata or {}).get("probability_fallback_ids") or ()
    unread = [str(i) for i in cast("Sequence[object]", flagged)]
    return json.dumps({"probabilities": values, "fallback_ids": unread} if unread else values)


def _read_probabilities(text: str | None) -> tuple[dict[str, tuple[float, ...]] | None, list[str]]:
    """The probabilities and the filled-in sample ids of a stored column (both forms of :func:`_write_probabilities`).

    Example:
        >>> _read_probabilities('{"probabilities": {"1": [0.5, 0.5]}, "fallback_ids": ["1"]}')
        ({'1': (0.5, 0.5)}, ['1'])
        >>> _read_probabilities('{"1": [0.2, 0.8]}')
        ({'1': (0.2, 0.8)}, [])
    """
    if text is None:
        return None, []
    data = json.loads(text)
    if isinstance(data.get("probabilities"), dict):  # sample ids are digits: no clash with the keyword
        return {i: tuple(p) for i, p in data["probabilities"].items()}, [str(i) for i in data["fallback_ids"]]
    return {i: tuple(p) for i, p in data.items()}, []
