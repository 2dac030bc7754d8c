"""Where xaimetrics keeps what it computes once (fine-tuned models, assembled GGUF files, simulator caches)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir"]

CACHE_ENV_VAR = "XAIMETRICS_CACHE_DIR"


def cache_dir(subdir: str | None = None, root: str | os.PathLike[str] | None = None) -> Path:
    """The user cache directory (created if needed).

    Resolution order: ``root`` argument, the ``XAIMETRICS_CACHE_DIR`` environment variable, then the
    platform's user cache dir (``~/.cache/xaimetrics`` on Linux).

    Example:
        >>> cache_dir("models", root="/tmp/xm-doctest").as_posix()
        '/tmp/xm-doctest/models'
    """
    if root is None:
        root = os.environ.get(CACHE_ENV_VAR) or None  # an empty variable means "unset"
    if root is None:
        from platformdirs import user_cache_dir

        root = user_cache_dir("xaimetrics", appauthor=False)
    path = Path(root).expanduser()
    if subdir:
        path = path / subdir
    path.mkdir(parents=True, exist_ok=True)
    return path
