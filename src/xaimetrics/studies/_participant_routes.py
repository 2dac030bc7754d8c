"""The participant's routes: the invite link, resuming, showing and answering screens.

The invite link ``/s/{token}`` puts the token in an HttpOnly cookie; every page after that is
``/study/{screen}``. Each POST stores its answer in one committed transaction and only then redirects to the
next screen. When the browser already holds another participant's session, the invite link only shows a
confirmation page; the switch is a POST with a CSRF token bound to the current session (see
:mod:`xaimetrics.studies._app`).
"""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from xaimetrics.studies._plan import Screen
from xaimetrics.studies._security import csrf_token, parse_number, verify_csrf
from xaimetrics.studies._store import Participant
from xaimetrics.studies._web import (
    PARTICIPANT_COOKIE,
    StudyApp,
    app_state,
    bad_request,
    form_fields,
    redirect,
)

__all__ = ["router"]

_LOG = logging.getLogger("xaimetrics.studies")
router = APIRouter()
State = Annotated[StudyApp, Depends(app_state)]
Form = Annotated[dict[str, str], Depends(form_fields)]


@router.get("/favicon.ico")
def favicon() -> Response:
    return Response(status_code=204)


@router.get("/")
def home(request: Request, state: State) -> Response:
    return state.page(request, "home.html.jinja")


@router.get("/s/{token}")
def invite(token: str, request: Request, state: State) -> Response:
    joining = state.store.participant(token)
    if joining is None:
        return state.denied(request, "unknown or revoked invite token")
    current, subject = state.participant_of(request)
    if current is None or current.id == joining.id:
        return state.cookie(redirect("/study"), PARTICIPANT_COOKIE, token)
    # another participant's session is open in this browser: switch only on a same-origin POST
    csrf = csrf_token(state.secret, subject, "switch")
    return state.page(request, "switch.html.jinja", token=token, csrf=csrf)


@router.post("/s/{token}")
def switch(token: str, request: Request, state: State, fields: Form) -> Response:
    joining = state.store.participant(token)
    if joining is None:
        return state.denied(request, "unknown or revoked invite token")
    current, subject = state.participant_of(request)
    if current is not None and not verify_csrf(fields.get("csrf"), state.secret, subject, "switch"):
        return state.denied(request, "a session switch without the session's CSRF token")
    _LOG.debug("the browser of %s switches to %s", current.label if current else "nobody", joining.label)
    return state.cookie(redirect("/study"), PARTICIPANT_COOKIE, token)


@router.get("/study")
def resume(request: Request, state: State) -> Response:
    participant, _ = state.participant_of(request)
    if participant is None:
        return state.denied(request, "no valid participant session")
    current = state.store.current_screen(participant)
    if current is None:
        return state.page(request, "done.html.jinja", progress=state.progress(participant, None))
    return redirect(f"/study/{current.index}")


def _reachable_screen(state: StudyApp, participant: Participant, index: str) -> Screen | Response:
    """The screen ``index`` of the participant, or the response that refuses it (not a number: 400; past the
    end or skipping ahead: back to the current screen)."""
    number = parse_number(index)
    if number is None:
        return bad_request("the screen must be a number")
    screen = state.screen_of(participant, number)
    if screen is None or not state.reachable(participant, screen):
        return redirect("/study")
    return screen


@router.get("/study/{index}")
def show(index: str, request: Request, state: State) -> Response:
    participant, subject = state.participant_of(request)
    if participant is None:
        return state.denied(request, "no valid participant session")
    screen = _reachable_screen(state, participant, index)
    if isinstance(screen, Response):
        return screen
    state.store.mark_seen(participant, screen.index)
    return _render(request, state, participant, screen, subject)


@router.post("/study/{index}")
def answer(index: str, request: Request, state: State, fields: Form) -> Response:
    participant, subject = state.participant_of(request)
    if participant is None:
        return state.denied(request, "no valid participant session")
    if not verify_csrf(fields.get("csrf"), state.secret, subject, "participant"):
        return state.denied(request, f"an answer of {participant.label} without their CSRF token")
    screen = _reachable_screen(state, participant, index)
    if isinstance(screen, Response):
        return screen
    parsed = state.kind.parse(screen, fields)
    if parsed.error is not None:
        return _render(request, state, participant, screen, subject, 400, parsed.error, parsed.values)
    state.store.record(participant, screen.index, parsed.values)
    _LOG.debug("saved the answer of %s to screen %d (%s)", participant.label, screen.index, screen.kind)
    current = state.store.current_screen(participant)  # the next unanswered screen, also after a change
    return redirect("/study" if current is None else f"/study/{current.index}")


def _render(
    request: Request,
    state: StudyApp,
    participant: Participant,
    screen: Screen,
    subject: str,
    status: int = 200,
    error: str | None = None,
    given: dict[str, int | None] | None = None,
) -> Response:
    """``screen`` as its study kind shows it, with the form's token, progress, and previous (or given) values."""
    previous = state.store.answers(participant).get(screen.index, {}) if given is None else given
    shown = state.kind.view(screen, participant.plan)
    return state.page(
        request, shown.template, status, screen=screen, error=error, previous=previous,
        csrf=csrf_token(state.secret, subject, "participant"), progress=state.progress(participant, screen),
        back=screen.index - 1 if screen.index > 0 else None, **shown.context,
    )  # fmt: skip
