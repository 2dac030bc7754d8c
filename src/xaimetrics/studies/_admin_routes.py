"""The admin's routes: sign in and out, progress, invites, revoking a link, and the exports.

The admin token comes as ``Authorization: Bearer`` or as the cookie set by ``/admin/login``; every form carries
a CSRF token bound to it. The invite form also carries a one-time batch id: its POST makes the invites once and
redirects to ``/admin?invited=BATCH``, which shows their links; reloading either page invites nobody again
(:class:`~xaimetrics.studies._web.InviteBatches`). What the study offers (arms, planned annotators, downloads) comes from its
:class:`~xaimetrics.studies._kinds.StudyKind`.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from xaimetrics.studies._security import csrf_token, parse_number, verify_csrf
from xaimetrics.studies._store import Invite, hash_token
from xaimetrics.studies._web import (
    ADMIN_COOKIE,
    InviteBatches,
    StudyApp,
    app_state,
    bad_request,
    form_fields,
    redirect,
)

__all__ = ["MAX_INVITES", "router"]

#: the most invite links one request creates
MAX_INVITES = 200
_LOG = logging.getLogger("xaimetrics.studies")
router = APIRouter()
State = Annotated[StudyApp, Depends(app_state)]
Form = Annotated[dict[str, str], Depends(form_fields)]


@router.get("/admin/login")
def login_form(request: Request, state: State) -> Response:
    return state.page(request, "login.html.jinja")


@router.post("/admin/login")
def login(request: Request, state: State, fields: Form) -> Response:
    token = fields.get("token", "").strip()
    if not state.store.is_admin(token):
        return state.denied(request, "a wrong admin token")
    _LOG.info("the admin signed in")
    return state.cookie(redirect("/admin"), ADMIN_COOKIE, token)


@router.get("/admin")
def admin(request: Request, state: State) -> Response:
    token = state.admin_token(request)
    if token is None:
        return state.denied(request, "no admin token")
    batch = request.query_params.get("invited")
    invites = state.invite_batches.get(batch) if batch and InviteBatches.ID.fullmatch(batch) else None
    notice = None
    if batch and invites is None:
        notice = "These links are no longer shown (the server restarted or made many invites since)."
    return _admin_page(request, state, token, invites or (), notice=notice)


@router.post("/admin/invite")
def add_invites(request: Request, state: State, fields: Form) -> Response:
    token = _admin_form(request, state, fields)
    if token is None:
        return state.denied(request, "an admin form without the admin's token and CSRF token")
    count = parse_number(fields.get("count", "1"))
    if count is None or not 1 <= count <= MAX_INVITES:
        return bad_request(f"count must be a number from 1 to {MAX_INVITES}")
    batch = fields.get("batch", "")
    if not InviteBatches.ID.fullmatch(batch):
        return bad_request("the invite form must carry its batch id: reload the admin page and invite again")
    arms = [a.strip() for a in fields.get("arms", "").split(",") if a.strip()] or None
    try:
        invites, made = state.invite_batches.create(
            batch, lambda: [state.store.invite(arms=arms) for _ in range(count)]
        )
    except ValueError as error:
        return PlainTextResponse(str(error), status_code=400)
    if made:
        _LOG.info("the admin invited %s", ", ".join(i.participant.label for i in invites))
    else:
        _LOG.info("an invite form posted again: nobody new invited")
    return redirect(f"/admin?invited={batch}")


@router.post("/admin/revoke")
def revoke(request: Request, state: State, fields: Form) -> Response:
    token = _admin_form(request, state, fields)
    if token is None:
        return state.denied(request, "an admin form without the admin's token and CSRF token")
    label = fields.get("participant", "")
    if label not in {p.label for p in state.store.participants()}:
        return bad_request("participant must be the label of a participant")
    state.store.revoke(label)
    _LOG.info("the admin revoked the link of %s", label)
    notice = f"The link of {label} is revoked; their answers are kept."
    return _admin_page(request, state, token, notice=notice)


@router.post("/admin/logout")
def logout(request: Request, state: State, fields: Form) -> Response:
    token = state.admin_token(request)
    if token is not None and not verify_csrf(fields.get("csrf"), state.secret, hash_token(token), "admin"):
        return state.denied(request, "a sign-out without the admin's CSRF token")
    response = redirect("/admin/login")
    response.delete_cookie(ADMIN_COOKIE, path="/", httponly=True, samesite="lax", secure=state.secure_cookies)
    return response


@router.get("/admin/export/{name}")
def export(name: str, request: Request, state: State) -> Response:
    if state.admin_token(request) is None:
        return state.denied(request, "no admin token")
    download = state.kind.export(name, state.store) if name in state.kind.exports else None
    if download is None:
        return Response("Not found.", status_code=404, media_type="text/plain")
    headers = {"Content-Disposition": f'attachment; filename="{name}"'}
    if download.media_type == "application/json":
        return JSONResponse(download.content, headers=headers)
    return Response(download.content, media_type=download.media_type, headers=headers)


def _admin_form(request: Request, state: StudyApp, fields: dict[str, str]) -> str | None:
    """The admin token of a posted admin form whose CSRF token is valid, else ``None``."""
    token = state.admin_token(request)
    if token is None or not verify_csrf(fields.get("csrf"), state.secret, hash_token(token), "admin"):
        return None
    return token


def _admin_page(
    request: Request, state: StudyApp, token: str, invites: Sequence[Invite] = (), notice: str | None = None
) -> Response:
    """The admin page: every participant's progress, new invite links (shown once), the exports."""
    store = state.store
    revoked = store.revoked()
    rows = []
    for participant in store.participants():
        total = len(store.screens(participant))
        done = len(store.answers(participant))
        rows.append({"label": participant.label, "done": done, "total": total, "finished": done >= total,
                     "plan": ", ".join(participant.plan), "revoked": participant.label in revoked})  # fmt: skip
    base = str(request.base_url).rstrip("/")
    facts = state.kind.admin()
    return state.page(
        request, "admin.html.jinja", participants=rows, exports=list(state.kind.exports),
        invites=[{"label": i.participant.label, "url": i.url(base)} for i in invites],
        csrf=csrf_token(state.secret, hash_token(token), "admin"), notice=notice, arms=list(facts.arms),
        planned=facts.planned, batch=secrets.token_urlsafe(16),
    )  # fmt: skip
