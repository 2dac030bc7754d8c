"""The study app's state and the helpers its routes share (pages, cookies, who is asking).

:func:`~xaimetrics.studies.create_app` stores one :class:`StudyApp` in ``app.state``; every route receives it
through the :func:`app_state` dependency, and the posted form through :func:`form_fields`. Nothing here knows
the kind of the study: screens are rendered through its :class:`~xaimetrics.studies._kinds.StudyKind`.

This module imports Starlette and Jinja at the top: it is imported only by :func:`create_app`, after the
``studies`` extra was checked.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import jinja2
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from xaimetrics.studies._bundle import Study
from xaimetrics.studies._kinds import StudyKind
from xaimetrics.studies._plan import Screen
from xaimetrics.studies._security import FormError, loggable_path, read_form
from xaimetrics.studies._store import Invite, Participant, StudyStore, hash_token

__all__ = [
    "ADMIN_COOKIE",
    "PARTICIPANT_COOKIE",
    "InviteBatches",
    "StudyApp",
    "app_state",
    "bad_request",
    "form_error",
    "form_fields",
    "http_error",
    "redirect",
]

PARTICIPANT_COOKIE = "xm_participant"
ADMIN_COOKIE = "xm_admin"
_COOKIE_SECONDS = 30 * 24 * 3600
_LOG = logging.getLogger("xaimetrics.studies")


class InviteBatches:
    """The invites made by each admin form, by the form's one-time batch id (in memory, the latest ``limit``).

    An invite form carries a fresh batch id; posting it twice (a reload, a double click, the browser's "resend")
    makes its invites once, and its links can be shown again to the signed-in admin (they are not stored
    anywhere else: the database keeps only their hashes).

    Example:
        >>> batches, calls = InviteBatches(), []
        >>> first = batches.create("b" * 22, lambda: calls.append("made") or [])
        >>> again = batches.create("b" * 22, lambda: calls.append("made") or [])
        >>> first, again, calls, batches.get("c" * 22)
        (((), True), ((), False), ['made'], None)
    """

    ID = re.compile(r"[A-Za-z0-9_-]{16,64}")

    def __init__(self, limit: int = 64) -> None:
        self.limit = limit
        self._batches: OrderedDict[str, tuple[Invite, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def create(self, batch: str, make: Callable[[], Sequence[Invite]]) -> tuple[tuple[Invite, ...], bool]:
        """The invites of ``batch``: made now by ``make()`` (``True``) or earlier (``False``)."""
        with self._lock:  # two posts of one form at once (a double click) make its invites once
            if batch in self._batches:
                return self._batches[batch], False
            made = tuple(make())
            self._batches[batch] = made
            while len(self._batches) > self.limit:
                self._batches.popitem(last=False)
            return made, True

    def get(self, batch: str | None) -> tuple[Invite, ...] | None:
        """The invites of ``batch``, ``None`` when unknown (or forgotten: a restart, older than ``limit``)."""
        with self._lock:
            return self._batches.get(batch) if batch else None


@dataclass(frozen=True)
class StudyApp:
    """Everything a route needs: the study, its kind, the answers, the templates and the app's options."""

    study: Study
    kind: StudyKind
    store: StudyStore
    templates: jinja2.Environment
    max_body_bytes: int
    secure_cookies: bool
    invite_batches: InviteBatches = field(default_factory=InviteBatches)

    @property
    def secret(self) -> str:
        """The server secret that signs the CSRF tokens (kept in the answer database)."""
        return self.store.secret

    # -- responses -------------------------------------------------------------------------------------------
    def page(self, request: Request, template: str, status: int = 200, **context: object) -> HTMLResponse:
        """``template`` rendered with the page's nonce, the study's title and ``context``."""
        values = {"nonce": getattr(request.state, "nonce", ""), "study_title": self.study.title,
                  "progress": None, "kind": self.kind.name, **context}  # fmt: skip
        return HTMLResponse(self.templates.get_template(template).render(**values), status_code=status)

    def denied(self, request: Request, why: str) -> HTMLResponse:
        """The bare 403 page (the same for a wrong, missing or revoked token); ``why`` goes to the log only."""
        _LOG.debug("403 on %s %s: %s", request.method, loggable_path(request.url.path), why)
        return self.page(request, "denied.html.jinja", 403)

    def cookie(self, response: Response, name: str, value: str) -> Response:
        """``response`` setting the HttpOnly, SameSite=Lax cookie ``name``."""
        response.set_cookie(name, value, max_age=_COOKIE_SECONDS, httponly=True, samesite="lax",
                            secure=self.secure_cookies, path="/")  # fmt: skip
        return response

    # -- who is asking ---------------------------------------------------------------------------------------
    def participant_of(self, request: Request) -> tuple[Participant | None, str]:
        """The participant of the request's cookie (``None``: no valid one) and the CSRF subject."""
        token = request.cookies.get(PARTICIPANT_COOKIE)
        return self.store.participant(token), hash_token(token or "")

    def admin_token(self, request: Request) -> str | None:
        """The valid admin token of the request (``Authorization: Bearer`` or the cookie), else ``None``."""
        header = request.headers.get("authorization", "")
        token = (
            header[7:].strip() if header.lower().startswith("bearer ") else request.cookies.get(ADMIN_COOKIE)
        )
        return token if self.store.is_admin(token) else None

    # -- the participant's sequence --------------------------------------------------------------------------
    def screen_of(self, participant: Participant, index: int) -> Screen | None:
        """Screen ``index`` of the participant's sequence (``None`` past its end)."""
        sequence = self.store.screens(participant)
        return sequence[index] if index < len(sequence) else None

    def reachable(self, participant: Participant, screen: Screen) -> bool:
        """Whether ``screen`` is at most the first unanswered one (no skipping ahead)."""
        current = self.store.current_screen(participant)
        return current is None or screen.index <= current.index

    def progress(self, participant: Participant, screen: Screen | None) -> dict[str, object]:
        """The progress line and counts shown on every screen of a participant."""
        sequence = self.store.screens(participant)
        answers = self.store.answers(participant)
        questions = [s for s in sequence if s.answered]
        parts = len(participant.plan)
        if screen is None:
            text = "All done"
        elif screen.kind == "rate":
            text = f"Text {screen.number} of {screen.total}"
        elif screen.kind == "question":
            text = f"Part {screen.block} of {parts}: question {screen.number} of {screen.total}"
        elif screen.kind == "learn":
            text = f"Part {screen.block} of {parts}: learn"
        else:
            text = "Instructions"
        answered = sum(1 for s in questions if s.index in answers)
        return {"done": len(answers), "total": len(sequence), "text": text, "answered": answered,
                "questions": len(questions)}  # fmt: skip


def redirect(url: str) -> RedirectResponse:
    """A 303 to ``url`` (after a POST the browser GETs it)."""
    return RedirectResponse(url, status_code=303)


def bad_request(reason: str) -> PlainTextResponse:
    """A 400 naming what was wrong."""
    return PlainTextResponse(f"Bad request: {reason}", status_code=400)


def app_state(request: Request) -> StudyApp:
    """The route dependency: the :class:`StudyApp` of the app serving ``request``."""
    state = request.app.state.study_app
    if not isinstance(state, StudyApp):  # pragma: no cover - create_app always sets it
        raise RuntimeError("The study app was not created by create_app.")
    return state


async def form_fields(request: Request) -> dict[str, str]:
    """The route dependency: the posted form's fields (size-limited, see :func:`read_form`)."""
    return await read_form(request, app_state(request).max_body_bytes)


async def form_error(request: Request, error: Exception) -> Response:
    """A refused body (:class:`FormError`): its status and reason, as plain text."""
    status, reason = (error.status, error.reason) if isinstance(error, FormError) else (400, "malformed form")
    _LOG.debug("%d on %s %s: %s", status, request.method, loggable_path(request.url.path), reason)
    return PlainTextResponse(reason, status_code=status)


async def http_error(request: Request, error: Exception) -> Response:
    """Starlette's errors (404, 405) as one short plain-text line (no framework page)."""
    status = error.status_code if isinstance(error, HTTPException) else 500
    return PlainTextResponse("Not found." if status == 404 else "Request refused.", status_code=status)
