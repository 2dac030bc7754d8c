"""The study web app (FastAPI, server-rendered Jinja templates with autoescaping, no model loaded).

Participants open their invite link ``/s/{token}``; the token goes into an HttpOnly cookie and every page
after that is ``/study/{screen}``. Each POST stores its answer in one committed transaction and only then
redirects to the next screen, so a restart loses nothing and ``/study`` resumes at the first unanswered
screen. A participant can only reach their own screens (the token picks the participant; the plan picks the
screens) and can go back to change an answer. Wrong, missing or revoked tokens get the same bare 403 page.

**Session fixation (login CSRF).** Invite links are opened from mail and chat, so a cross-site navigation to
``/s/{token}`` is the normal way in and cannot be refused. What a foreign page must not do is *replace* a
session: when the browser already holds another participant's valid cookie, ``/s/{token}`` only shows a
confirmation page, and the switch happens on a POST carrying a CSRF token bound to the *current* session (a
foreign page cannot read it, and the middleware refuses cross-site POSTs). A browser without a session joins
directly, as before.

Every number in a path or a form is parsed by :func:`~xaimetrics.studies._security.parse_number` (ASCII
digits, bounded length); a malformed one is a 400.

The admin (``/admin``, with the admin token as ``Authorization: Bearer`` or through ``/admin/login``) sees
the progress, creates invites, revokes a participant's link, downloads the exports and signs out.
"""

# No ``from __future__ import annotations`` here: FastAPI reads the route signatures at definition time, and
# ``fastapi.Request`` is imported lazily inside :func:`create_app` (the ``studies`` extra is optional).
from collections.abc import Sequence
from typing import Annotated, Any

from xaimetrics._optional import import_optional
from xaimetrics.studies._bundle import Study
from xaimetrics.studies._likert import LikertStudy
from xaimetrics.studies._plan import Screen
from xaimetrics.studies._security import (
    FormError,
    csrf_token,
    parse_number,
    read_form,
    security_middleware,
    verify_csrf,
)
from xaimetrics.studies._simulatability import SimulatabilityStudy
from xaimetrics.studies._store import Participant, StudyStore, hash_token
from xaimetrics.studies._views import explanation_view, question_view, rating_view

__all__ = ["DEFAULT_HOSTS", "create_app"]

#: host names the app answers by default (a server on 127.0.0.1)
DEFAULT_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "[::1]")
PARTICIPANT_COOKIE = "xm_participant"
ADMIN_COOKIE = "xm_admin"
_MAX_INVITES = 200


def create_app(
    study: Study,
    store: StudyStore,
    *,
    max_body_bytes: int = 16_384,
    allowed_hosts: Sequence[str] = DEFAULT_HOSTS,
    secure_cookies: bool = False,
) -> Any:
    """The ASGI app serving ``study`` from ``store``.

    Args:
        study: a :class:`SimulatabilityStudy` or :class:`LikertStudy`.
        store: its :class:`StudyStore` (the answers).
        max_body_bytes: the largest form body accepted (larger: 413).
        allowed_hosts: host names the app answers (others: 400); ``"*"`` for any.
        secure_cookies: mark cookies ``Secure`` (behind HTTPS).

    Returns:
        A :class:`fastapi.FastAPI` application (run it with uvicorn, see :func:`serve`).
    """
    fastapi = import_optional("fastapi", extra="studies", caller="create_app")
    jinja2 = import_optional("jinja2", extra="studies", caller="create_app")
    from starlette.exceptions import HTTPException
    from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response

    app = fastapi.FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.middleware("http")(security_middleware(allowed_hosts))
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("xaimetrics.studies", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    kind = study.kind
    secret = store.secret

    def page(request: Any, template: str, status: int = 200, **context: Any) -> Any:
        values = {"nonce": getattr(request.state, "nonce", ""), "study_title": study.title, "progress": None,
                  "kind": kind, **context}  # fmt: skip
        return HTMLResponse(env.get_template(template).render(**values), status_code=status)

    def denied(request: Any) -> Any:
        return page(request, "denied.html.jinja", 403)

    def redirect(url: str) -> Any:
        return RedirectResponse(url, status_code=303)

    def cookie(response: Any, name: str, value: str) -> Any:
        response.set_cookie(name, value, max_age=30 * 24 * 3600, httponly=True, samesite="lax",
                            secure=secure_cookies, path="/")  # fmt: skip
        return response

    async def form(request: fastapi.Request) -> dict[str, str]:
        return await read_form(request, max_body_bytes)

    @app.exception_handler(FormError)
    async def form_error(request: Any, error: FormError) -> Any:
        return PlainTextResponse(error.reason, status_code=error.status)

    @app.exception_handler(HTTPException)
    async def http_error(request: Any, error: Any) -> Any:
        return PlainTextResponse("Not found." if error.status_code == 404 else "Request refused.",
                                 status_code=error.status_code)  # fmt: skip

    def bad_request(reason: str) -> Any:
        return PlainTextResponse(f"Bad request: {reason}", status_code=400)

    # -- participants ----------------------------------------------------------------------------------------
    def participant_of(request: Any) -> tuple[Participant | None, str]:
        token = request.cookies.get(PARTICIPANT_COOKIE)
        return store.participant(token), hash_token(token or "")

    def progress(participant: Participant, screen: Screen | None) -> dict[str, Any]:
        sequence = store.screens(participant)
        answers = store.answers(participant)
        questions = [s for s in sequence if s.answered]
        if screen is None:
            text = "All done"
        elif screen.kind == "rate":
            text = f"Text {screen.number} of {screen.total}"
        elif screen.kind == "question":
            text = (
                f"Part {screen.block} of {len(participant.plan)}: question {screen.number} of {screen.total}"
            )
        elif screen.kind == "learn":
            text = f"Part {screen.block} of {len(participant.plan)}: learn"
        else:
            text = "Instructions"
        answered = sum(1 for s in questions if s.index in answers)
        return {"done": len(answers), "total": len(sequence), "text": text, "answered": answered,
                "questions": len(questions)}  # fmt: skip

    @app.get("/favicon.ico")
    def favicon() -> Any:
        return Response(status_code=204)

    @app.get("/")
    def home(request: fastapi.Request) -> Any:
        return page(request, "home.html.jinja")

    @app.get("/s/{token}")
    def invite(token: str, request: fastapi.Request) -> Any:
        joining = store.participant(token)
        if joining is None:
            return denied(request)
        current, subject = participant_of(request)
        if current is None or current.id == joining.id:
            return cookie(redirect("/study"), PARTICIPANT_COOKIE, token)
        # another participant's session is open in this browser: switch only on a same-origin POST
        return page(request, "switch.html.jinja", token=token, csrf=csrf_token(secret, subject, "switch"))

    @app.post("/s/{token}")
    def switch(
        token: str, request: fastapi.Request, fields: Annotated[dict[str, str], fastapi.Depends(form)]
    ) -> Any:
        joining = store.participant(token)
        if joining is None:
            return denied(request)
        current, subject = participant_of(request)
        if current is not None and not verify_csrf(fields.get("csrf"), secret, subject, "switch"):
            return denied(request)
        return cookie(redirect("/study"), PARTICIPANT_COOKIE, token)

    @app.get("/study")
    def resume(request: fastapi.Request) -> Any:
        participant, _ = participant_of(request)
        if participant is None:
            return denied(request)
        current = store.current_screen(participant)
        if current is None:
            return page(request, "done.html.jinja", progress=progress(participant, None))
        return redirect(f"/study/{current.index}")

    def screen_of(participant: Participant, index: int) -> Screen | None:
        sequence = store.screens(participant)
        return sequence[index] if index < len(sequence) else None

    def reachable(participant: Participant, screen: Screen) -> bool:
        current = store.current_screen(participant)
        return current is None or screen.index <= current.index

    def render_screen(request: Any, participant: Participant, screen: Screen, subject: str, status: int = 200,
                      error: str | None = None, given: dict[str, Any] | None = None) -> Any:  # fmt: skip
        answers = store.answers(participant).get(screen.index, {})
        context: dict[str, Any] = {
            "screen": screen, "csrf": csrf_token(secret, subject, "participant"), "error": error,
            "progress": progress(participant, screen), "back": screen.index - 1 if screen.index > 0 else None,
            "previous": answers if given is None else given,
        }  # fmt: skip
        if screen.kind == "instructions":
            context["parts"] = len(participant.plan)
            if isinstance(study, LikertStudy):
                context["view"] = {"dimensions": study.dimensions, "scale": study.scale, "n_items": len(participant.plan),
                                   "instructions": study.instructions}  # fmt: skip
            return page(request, f"instructions_{kind}.html.jinja", status, **context)
        if screen.kind == "learn" and isinstance(study, SimulatabilityStudy):
            arm = study.arm(str(screen.arm))
            context.update(view=explanation_view(study, arm), parts=len(participant.plan))
            return page(request, "learn.html.jinja", status, **context)
        if screen.kind == "question" and isinstance(study, SimulatabilityStudy):
            context.update(view=question_view(study, screen), parts=len(participant.plan))
            return page(request, "question.html.jinja", status, **context)
        if isinstance(study, LikertStudy):
            context.update(view=rating_view(study, screen))
            return page(request, "rate.html.jinja", status, **context)
        return denied(request)  # pragma: no cover (a plan always matches its study's kind)

    @app.get("/study/{index}")
    def show(index: str, request: fastapi.Request) -> Any:
        participant, subject = participant_of(request)
        if participant is None:
            return denied(request)
        number = parse_number(index)
        if number is None:
            return bad_request("the screen must be a number")
        screen = screen_of(participant, number)
        if screen is None:
            return redirect("/study")
        if not reachable(participant, screen):
            return redirect("/study")
        store.mark_seen(participant, screen.index)
        return render_screen(request, participant, screen, subject)

    @app.post("/study/{index}")
    def answer(
        index: str, request: fastapi.Request, fields: Annotated[dict[str, str], fastapi.Depends(form)]
    ) -> Any:
        participant, subject = participant_of(request)
        if participant is None or not verify_csrf(fields.get("csrf"), secret, subject, "participant"):
            return denied(request)
        number = parse_number(index)
        if number is None:
            return bad_request("the screen must be a number")
        screen = screen_of(participant, number)
        if screen is None or not reachable(participant, screen):
            return redirect("/study")
        values, error = _parse_answer(study, screen, fields)
        if error is not None:
            return render_screen(request, participant, screen, subject, 400, error, values)
        store.record(participant, screen.index, values)
        current = store.current_screen(participant)  # the next unanswered screen, also after a change
        return redirect("/study" if current is None else f"/study/{current.index}")

    # -- admin -----------------------------------------------------------------------------------------------
    def admin_token(request: Any) -> str | None:
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            token = header[7:].strip()
        else:
            token = request.cookies.get(ADMIN_COOKIE)
        return token if store.is_admin(token) else None

    @app.get("/admin/login")
    def login_form(request: fastapi.Request) -> Any:
        return page(request, "login.html.jinja")

    @app.post("/admin/login")
    def login(request: fastapi.Request, fields: Annotated[dict[str, str], fastapi.Depends(form)]) -> Any:
        token = fields.get("token", "").strip()
        if not store.is_admin(token):
            return denied(request)
        return cookie(redirect("/admin"), ADMIN_COOKIE, token)

    def admin_page(request: Any, token: str, invites: Sequence[Any] = (), notice: str | None = None) -> Any:
        rows = []
        revoked = store.revoked()
        for participant in store.participants():
            sequence = store.screens(participant)
            done = len(store.answers(participant))
            rows.append({"label": participant.label, "done": done, "total": len(sequence),
                         "finished": done >= len(sequence), "plan": ", ".join(participant.plan),
                         "revoked": participant.label in revoked})  # fmt: skip
        base = str(request.base_url).rstrip("/")
        exports = ["answers.csv", "answers.json"]
        exports += ["ratings.json", "ratings.csv"] if kind == "likert" else ["scores.csv"]
        return page(
            request, "admin.html.jinja", participants=rows, exports=exports,
            invites=[{"label": i.participant.label, "url": i.url(base)} for i in invites],
            csrf=csrf_token(secret, hash_token(token), "admin"),
            arms=[a.id for a in study.arms] if isinstance(study, SimulatabilityStudy) else [],
            planned=getattr(study, "n_annotators", None), notice=notice,
        )  # fmt: skip

    @app.get("/admin")
    def admin(request: fastapi.Request) -> Any:
        token = admin_token(request)
        return denied(request) if token is None else admin_page(request, token)

    @app.post("/admin/invite")
    def add_invites(
        request: fastapi.Request, fields: Annotated[dict[str, str], fastapi.Depends(form)]
    ) -> Any:
        token = admin_token(request)
        if token is None or not verify_csrf(fields.get("csrf"), secret, hash_token(token), "admin"):
            return denied(request)
        count = parse_number(fields.get("count", "1"))
        if count is None or not 1 <= count <= _MAX_INVITES:
            return bad_request(f"count must be a number from 1 to {_MAX_INVITES}")
        arms = [a.strip() for a in fields.get("arms", "").split(",") if a.strip()] or None
        try:
            invites = [store.invite(arms=arms) for _ in range(count)]
        except ValueError as error:
            return PlainTextResponse(str(error), status_code=400)
        return admin_page(request, token, invites)

    @app.post("/admin/revoke")
    def revoke(request: fastapi.Request, fields: Annotated[dict[str, str], fastapi.Depends(form)]) -> Any:
        token = admin_token(request)
        if token is None or not verify_csrf(fields.get("csrf"), secret, hash_token(token), "admin"):
            return denied(request)
        label = fields.get("participant", "")
        if label not in {p.label for p in store.participants()}:
            return bad_request("participant must be the label of a participant")
        store.revoke(label)
        return admin_page(request, token, notice=f"The link of {label} is revoked; their answers are kept.")

    @app.post("/admin/logout")
    def logout(request: fastapi.Request, fields: Annotated[dict[str, str], fastapi.Depends(form)]) -> Any:
        token = admin_token(request)
        if token is not None and not verify_csrf(fields.get("csrf"), secret, hash_token(token), "admin"):
            return denied(request)
        response = redirect("/admin/login")
        response.delete_cookie(ADMIN_COOKIE, path="/", httponly=True, samesite="lax", secure=secure_cookies)
        return response

    @app.get("/admin/export/{name}")
    def export(name: str, request: fastapi.Request) -> Any:
        if admin_token(request) is None:
            return denied(request)
        return _export(study, store, name, Response, JSONResponse)

    return app


def _parse_answer(
    study: Study, screen: Screen, fields: dict[str, str]
) -> tuple[dict[str, int | None], str | None]:
    """The values to store for a screen, or an error message for the participant."""
    if screen.kind in ("instructions", "learn"):
        return {"": None}, None
    if screen.kind == "question" and isinstance(study, SimulatabilityStudy):
        value = parse_number(fields.get("answer"))
        if value is None or value >= len(study.class_names):
            return {}, "Choose one of the answers."
        return {"": value}, None
    if isinstance(study, LikertStudy):
        values: dict[str, int | None] = {}
        missing = []
        for d, dimension in enumerate(study.dimensions):
            value = parse_number(fields.get(f"d{d}"))
            if value is not None and 1 <= value <= len(study.scale):
                values[str(d)] = value
            else:
                missing.append(dimension.name)
        if missing:
            return values, "Rate every dimension: " + ", ".join(missing) + "."
        return values, None
    return {}, "Unexpected answer."


def _export(study: Study, store: StudyStore, name: str, response: Any, json_response: Any) -> Any:
    from xaimetrics.studies._results import answers_frame, human_results, likert_ratings

    if name in ("answers.csv", "answers.json"):
        frame = answers_frame(study, store)
        if name.endswith(".csv"):
            return response(frame.to_csv(index=False), media_type="text/csv", headers=_attachment(name))
        records = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
        return json_response(records, headers=_attachment(name))
    if name in ("ratings.json", "ratings.csv") and isinstance(study, LikertStudy):
        ratings = likert_ratings(study, store)
        if name.endswith(".csv"):
            return response(
                ratings.frame().to_csv(index=False), media_type="text/csv", headers=_attachment(name)
            )
        return json_response(ratings.to_list(), headers=_attachment(name))
    if name == "scores.csv" and isinstance(study, SimulatabilityStudy):
        import pandas as pd

        rows = [{"participant": h.participant, "arm": h.arm, "score": h.result.accuracy,
                 "n_correct": h.result.n_correct, "n_samples": h.result.n_samples}
                for h in human_results(study, store)]  # fmt: skip
        frame = pd.DataFrame(rows, columns=["participant", "arm", "score", "n_correct", "n_samples"])
        return response(frame.to_csv(index=False), media_type="text/csv", headers=_attachment(name))
    return response("Not found.", status_code=404, media_type="text/plain")


def _attachment(name: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="{name}"'}
