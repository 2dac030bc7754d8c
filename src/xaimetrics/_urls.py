"""URLs that may be stored or printed: credentials, query and fragment removed.

A server URL can carry a credential (``http://user:KEY@host/v1``, ``...?api_key=KEY``). Everything that writes
a URL somewhere a person or a file may see — results stores, reports, ``repr``, error messages, cache keys —
goes through :func:`public_url`.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["public_url", "scrub_url", "split_credentials"]

_LOOSE = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)?(?P<authority>[^/]*)(?P<path>.*)", re.DOTALL)


def public_url(url: str) -> str:
    """The URL without user, password, query or fragment (and without a trailing slash).

    Text that does not parse as ``scheme://host/...`` loses everything before an ``@`` in its first part.

    Example:
        >>> public_url("http://user:sk-SECRET@127.0.0.1:8080/v1/?api_key=sk-SECRET#x")
        'http://127.0.0.1:8080/v1'
        >>> public_url("user:sk-SECRET@host/v1"), public_url("ftp://me:pw@host:bad/x")
        ('host/v1', 'ftp://host:bad/x')
    """
    text = str(url)
    try:
        parts = urlsplit(text)
        if parts.scheme and parts.netloc:
            host = parts.hostname or ""
            if parts.port is not None:
                host = f"{host}:{parts.port}"
            return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))
    except ValueError:  # e.g. a port that is not a number
        pass
    match = _LOOSE.match(text.split("#", 1)[0].split("?", 1)[0])
    if match is None:  # pragma: no cover - the pattern matches any string
        return ""
    return (match["scheme"] or "") + match["authority"].rsplit("@", 1)[-1] + match["path"].rstrip("/")


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """``(url without user and password, (user, password))``; ``(url, None)`` when it carries none.

    Example:
        >>> split_credentials("http://me:sk-SECRET@127.0.0.1:8080/v1")
        ('http://127.0.0.1:8080/v1', ('me', 'sk-SECRET'))
        >>> split_credentials("http://127.0.0.1:8080/v1")
        ('http://127.0.0.1:8080/v1', None)
    """
    from urllib.parse import unquote

    try:
        parts = urlsplit(str(url))
        if parts.username is None and parts.password is None:
            return str(url), None
        host = parts.hostname or ""
        if ":" in host:  # IPv6
            host = f"[{host}]"
        if parts.port is not None:
            host = f"{host}:{parts.port}"
    except ValueError:
        return str(url), None
    bare = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return bare, (unquote(parts.username or ""), unquote(parts.password or ""))


def scrub_url(text: str, url: str | None) -> str:
    """``text`` with the raw ``url`` and its credentials replaced (for error messages that may quote it).

    Example:
        >>> scrub_url("cannot reach http://u:pw123@h/v1 (pw123)", "http://u:pw123@h/v1")
        'cannot reach http://h/v1 (***)'
    """
    if not url:
        return text
    text = text.replace(str(url), public_url(url))
    try:
        parts = urlsplit(str(url))
        secrets = [parts.password, parts.username, *(v for _, _, v in _query_pairs(parts.query))]
    except ValueError:
        return text
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def _query_pairs(query: str) -> list[tuple[str, str, str]]:
    pairs = []
    for item in query.split("&"):
        key, _, value = item.partition("=")
        pairs.append((item, key, value))
    return pairs
