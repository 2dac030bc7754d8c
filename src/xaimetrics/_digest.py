"""One way to name content: the SHA-256 of its canonical JSON (sorted keys, no spaces, UTF-8)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

__all__ = ["canonical_json", "json_digest", "update_with_texts"]


def canonical_json(value: object) -> str:
    """``value`` as canonical JSON: sorted keys, compact separators, non-ASCII kept, other objects as ``str``.

    Example:
        >>> canonical_json({"b": [1, 2.5], "a": "é"})
        '{"a":"é","b":[1,2.5]}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def json_digest(value: object, length: int | None = None) -> str:
    """The hexadecimal SHA-256 of :func:`canonical_json` (its first ``length`` characters when given).

    Equal content gives equal digests whatever the order of a mapping's keys.

    Example:
        >>> json_digest({"seed": 0, "method": "NMF"}) == json_digest({"method": "NMF", "seed": 0})
        True
        >>> len(json_digest([1, 2], length=16))
        16
    """
    digest = hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
    return digest if length is None else digest[:length]


def update_with_texts(digest: hashlib._Hash, texts: Iterable[object]) -> hashlib._Hash:
    """Feed ``texts`` to ``digest``, each length-prefixed (so ``["ab", "c"]`` and ``["a", "bc"]`` differ).

    Example:
        >>> a = update_with_texts(hashlib.sha256(), ["ab", "c"]).hexdigest()
        >>> a == update_with_texts(hashlib.sha256(), ["a", "bc"]).hexdigest()
        False
    """
    for text in texts:
        data = str(text).encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest
