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

The code: :func:`create_app` assembles the app from module-level routes (:mod:`._participant_routes`,
:mod:`._admin_routes`) over one :class:`~xaimetrics.studies._web.StudyApp` state; the study's kind
(:func:`~xaimetrics.studies._kinds.study_kind`) renders its screens, reads its answers and makes its exports,
so no route asks which kind of study it serves. Middleware, outermost first: the security headers (and the
bare 500), Starlette's ``TrustedHostMiddleware`` (the Host check: 400), the same-origin check of POSTs (403).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from xaimetrics._optional import import_optional
from xaimetrics.studies._bundle import Study
from xaimetrics.studies._store import StudyStore

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["DEFAULT_HOSTS", "create_app"]

#: host names the app answers by default (a server on 127.0.0.1)
DEFAULT_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "[::1]")


def create_app(
    study: Study,
    store: StudyStore,
    *,
    max_body_bytes: int = 16_384,
    allowed_hosts: Sequence[str] = DEFAULT_HOSTS,
    secure_cookies: bool = False,
) -> FastAPI:
    """The ASGI app serving ``study`` from ``store``.

    Args:
        study: a :class:`SimulatabilityStudy` or :class:`LikertStudy`.
        store: its :class:`StudyStore` (the answers).
        max_body_bytes: the largest form body accepted (larger: 413).
        allowed_hosts: host names the app answers (others: 400); ``"*"`` for any, ``"*.example.org"`` for the
            subdomains of a domain.
        secure_cookies: mark cookies ``Secure`` (behind HTTPS).

    Returns:
        A :class:`fastapi.FastAPI` application (run it with uvicorn, see :func:`serve`).
    """
    fastapi = import_optional("fastapi", extra="studies", caller="create_app")
    jinja2 = import_optional("jinja2", extra="studies", caller="create_app")
    from starlette.exceptions import HTTPException
    from starlette.middleware.base import BaseHTTPMiddleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware

    from xaimetrics.studies import _admin_routes, _participant_routes
    from xaimetrics.studies._kinds import study_kind
    from xaimetrics.studies._security import FormError, same_origin_posts, security_headers
    from xaimetrics.studies._web import StudyApp, form_error, http_error

    hosts = _host_patterns(allowed_hosts)
    templates = jinja2.Environment(
        loader=jinja2.PackageLoader("xaimetrics.studies", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    app: FastAPI = fastapi.FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.state.study_app = StudyApp(study, study_kind(study), store, templates, max_body_bytes, secure_cookies)
    # add_middleware wraps what is there: the last one added is the outermost
    app.add_middleware(BaseHTTPMiddleware, dispatch=same_origin_posts)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=hosts, www_redirect=False)
    app.add_middleware(BaseHTTPMiddleware, dispatch=security_headers)
    app.add_exception_handler(FormError, form_error)
    app.add_exception_handler(HTTPException, http_error)
    app.include_router(_participant_routes.router)
    app.include_router(_admin_routes.router)
    return app


def _host_patterns(allowed_hosts: Sequence[str]) -> list[str]:
    """The host names as ``TrustedHostMiddleware`` reads them, checked here (it would ``assert``).

    Example:
        >>> _host_patterns(["LocalHost", "*.example.org"])
        ['localhost', '*.example.org']
        >>> _host_patterns(["exa*mple.org"])
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'allowed_hosts' parameter of create_app must be host names, '*' (any) or '*.domain' (its subdomains). Got exa*mple.org.
    """
    from xaimetrics._validation import invalid

    expected = "host names, '*' (any) or '*.domain' (its subdomains)"
    if isinstance(allowed_hosts, str):  # a bare string would be read letter by letter
        raise invalid("allowed_hosts", "create_app", f"a list of {expected}", repr(allowed_hosts))
    hosts = []
    for host in allowed_hosts:
        name = str(host).strip().lower()
        wildcard = name.startswith("*.") or name == "*"
        if not name or ("*" in name and not (wildcard and "*" not in name[1:])):
            raise invalid("allowed_hosts", "create_app", expected, host)
        hosts.append(name)
    return hosts
