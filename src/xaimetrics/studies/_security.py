"""The web app's defences: CSRF tokens, request size limits, security headers and the Host check.

- **CSRF**: every form carries ``HMAC-SHA256(server secret, purpose:subject)`` where the subject is the
  hash of the participant's (or admin's) token: valid across restarts, useless for anyone else. POSTs with an
  ``Origin`` header from another site are refused as well.
- **Size limits**: form bodies above ``max_body_bytes`` get 413 before they are read in full; only
  ``application/x-www-form-urlencoded`` bodies are accepted, with a bounded number of fields.
- **Headers**: a Content-Security-Policy that allows only the page's own inline style and script (by a fresh
  nonce per response), no framing, no referrer to other sites, no caching, no MIME sniffing — so even a text that escaped
  escaping could not run.
- **Host check**: requests for another host name are refused with a 400 (DNS-rebinding of a server on
  127.0.0.1). Starlette's ``TrustedHostMiddleware`` does it (:func:`~xaimetrics.studies.create_app` installs
  it inside :func:`security_headers`, so its refusals carry the headers too).
- **Numbers**: every number read from a path, a form or a header goes through :func:`parse_number` (ASCII
  digits only, at most 9 of them): ``str.isdigit`` accepts ``²`` and ``int`` accepts ``٣`` and 5,000-digit
  strings, which crashed handlers with a 500.
- **Errors**: an exception in a handler becomes a plain 500 page that carries the same headers as every other
  response (Starlette's own error page is outside this middleware and would not).
- **Log lines**: a visitor chooses the path, headers and form values that end up in the server log (the
  researcher's terminal with ``-v``). :class:`EscapeLogFilter`, on the studies' logger, writes every control
  character of a record's message, arguments and traceback (NUL, ESC of terminal sequences, CR/LF that would
  forge another line, C1 controls, bidirectional overrides) as a visible escape such as ``\\x1b``.
"""

from __future__ import annotations

import hmac
import logging
import re
import secrets
import unicodedata
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

__all__ = [
    "EscapeLogFilter",
    "csrf_token",
    "loggable_path",
    "parse_number",
    "printable",
    "read_form",
    "same_origin_posts",
    "security_headers",
    "verify_csrf",
]

MAX_FIELDS = 64
_NUMBER = re.compile(r"[0-9]{1,9}")
_LOG = logging.getLogger("xaimetrics.studies")
_REFUSED = frozenset({400, 403, 405, 413, 415})
_Next = Callable[["Request"], Awaitable["Response"]]


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control or format character (Unicode categories Cc and Cf: NUL, ESC, CR, LF,
    C1 controls, bidirectional overrides…) written as a visible Python escape; the rest unchanged.

    Example:
        >>> printable("/a\\x00b\\x1b[31mred\\nforged\\u202e")
        '/a\\\\x00b\\\\x1b[31mred\\\\nforged\\\\u202e'
        >>> printable("line 1\\nline 2", keep_newlines=True)
        'line 1\\nline 2'
    """
    out = []
    for char in text:
        if (char == "\n" and keep_newlines) or unicodedata.category(char) not in ("Cc", "Cf"):
            out.append(char)
        else:
            out.append(repr(char)[1:-1] if char.isascii() or ord(char) < 0x100 else f"\\u{ord(char):04x}")
    return "".join(out)


class EscapeLogFilter(logging.Filter):
    """A logging filter that makes a record safe to print (see :func:`printable`): its message with its
    arguments, and its traceback (newlines kept there). Installed on the ``xaimetrics.studies`` logger.

    Example:
        >>> record = logging.LogRecord("x", logging.INFO, "", 0, "refused %s", ("/\\x1b]0;owned\\x07",), None)
        >>> EscapeLogFilter().filter(record), record.getMessage()
        (True, 'refused /\\\\x1b]0;owned\\\\x07')
    """

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = printable(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = printable(
                logging.Formatter().formatException(record.exc_info), keep_newlines=True
            )
        return True


_LOG.addFilter(EscapeLogFilter())


def parse_number(text: object) -> int | None:
    """The non-negative integer spelled by ``text`` in 1 to 9 ASCII digits, else ``None``.

    Example:
        >>> parse_number("42"), parse_number("²"), parse_number("٣"), parse_number("-1"), parse_number("9" * 5000)
        (42, None, None, None, None)
    """
    if not isinstance(text, str) or _NUMBER.fullmatch(text) is None:
        return None
    return int(text)


def csrf_token(secret: str, subject: str, purpose: str) -> str:
    """The form token of ``subject`` (a token hash) for ``purpose`` (``"participant"`` or ``"admin"``).

    Example:
        >>> token = csrf_token("s3cret", "abc", "participant")
        >>> verify_csrf(token, "s3cret", "abc", "participant"), verify_csrf(token, "s3cret", "abd", "participant")
        (True, False)
    """
    return hmac.new(secret.encode(), f"{purpose}:{subject}".encode(), "sha256").hexdigest()


def verify_csrf(token: object, secret: str, subject: str, purpose: str) -> bool:
    """Whether ``token`` is the form token of ``subject`` (constant-time comparison)."""
    if not isinstance(token, str) or len(token) != 64:
        return False
    return secrets.compare_digest(token, csrf_token(secret, subject, purpose))


class FormError(Exception):
    """A request body refused before it reaches a handler: the HTTP status and a short reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


async def read_form(request: Request, max_body_bytes: int) -> dict[str, str]:
    """The fields of a url-encoded form body (first value of each), reading at most ``max_body_bytes``."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/x-www-form-urlencoded":
        raise FormError(415, "forms only")
    declared = request.headers.get("content-length")
    if declared is not None:
        size = parse_number(declared)
        if size is None:
            raise FormError(400, "malformed Content-Length")
        if size > max_body_bytes:
            raise FormError(413, "request too large")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_body_bytes:
            raise FormError(413, "request too large")
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except (UnicodeDecodeError, ValueError) as error:
        raise FormError(400, "malformed form") from error
    return {name: values[0] for name, values in fields.items()}


def _same_origin(request: Request) -> bool:
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    host = request.headers.get("host", "")
    try:
        return urlsplit(origin).netloc == host
    except ValueError:  # "Invalid IPv6 URL" (an unmatched "[" in the header): not this site
        return False


async def same_origin_posts(request: Request, call_next: _Next) -> Response:
    """An HTTP middleware: a POST whose ``Origin`` names another site is refused (403)."""
    from starlette.responses import PlainTextResponse

    if request.method == "POST" and not _same_origin(request):
        _LOG.debug("a POST from another site (Origin %r)", request.headers.get("origin"))
        return PlainTextResponse("Access denied.", status_code=403)  # secured by security_headers
    return await call_next(request)


async def security_headers(request: Request, call_next: _Next) -> Response:
    """An HTTP middleware: a CSP nonce in ``request.state.nonce``, the security headers on every response,
    and a bare 500 (with the headers) when a handler fails.

    Every refused request (400, 403, 405, 413, 415: a wrong host, token, form or number) is logged at INFO as
    its method, path (without an invite token) and status; the routes log the reason at DEBUG.
    """
    from starlette.responses import PlainTextResponse

    nonce = secrets.token_urlsafe(16)
    request.state.nonce = nonce
    try:
        response = await call_next(request)
    except Exception:  # a bug in a handler: a bare 500 with the headers, the details only in the log
        _LOG.exception("the study app failed on %s %s", request.method, loggable_path(request.url.path))
        return _secure(PlainTextResponse("Server error.", status_code=500), "")
    if response.status_code in _REFUSED:
        _LOG.info("refused %s %s (%d)", request.method, loggable_path(request.url.path), response.status_code)
    return _secure(response, nonce)


def loggable_path(path: str) -> str:
    """``path`` without an invite token (``/s/{token}``): tokens never go to the log; control characters
    escaped (:func:`printable`).

    Example:
        >>> loggable_path("/s/Zm9vYmFy"), loggable_path("/study/3"), loggable_path("/a\\x1b[2J")
        ('/s/…', '/study/3', '/a\\\\x1b[2J')
    """
    return "/s/…" if path.startswith("/s/") else printable(path)


def _secure(response: Response, nonce: str) -> Response:
    source = f"'nonce-{nonce}'" if nonce else "'none'"
    response.headers["Content-Security-Policy"] = (
        f"default-src 'none'; style-src {source}; script-src {source}; img-src 'self'; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"
    )
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    # same-origin, not no-referrer: with no-referrer, browsers send "Origin: null" on form posts
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["Cache-Control"] = "no-store"
    response.headers["Cross-Origin-Opener-Policy"] = "same-origin"
    return response
