"""One switch for every progress bar: ours (tqdm) and those of transformers and huggingface_hub.

``--no-progress`` / ``--quiet`` call :func:`silence_progress_bars`; the environment variable ``TQDM_DISABLE=1``
(tqdm's own switch) does the same, also for bars whose caller asked for one explicitly. transformers and
huggingface_hub draw their bars ("Loading weights", "Writing model shards", downloads) through their own tqdm
wrappers, which only their ``disable_progress_bar(s)`` functions (or ``HF_HUB_DISABLE_PROGRESS_BARS=1``, read
when they are imported) turn off; this module is the one place that knows it.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["bars_disabled", "no_progress_bars", "show_bar", "silence_progress_bars"]

_TRUE = ("1", "true", "yes", "on")


def bars_disabled() -> bool:
    """True when ``TQDM_DISABLE`` is set to a true value (``1``, ``true``, ``yes``, ``on``).

    Example:
        >>> os.environ["TQDM_DISABLE"] = "1"; bars_disabled()
        True
        >>> del os.environ["TQDM_DISABLE"]; bars_disabled()
        False
    """
    return os.environ.get("TQDM_DISABLE", "").strip().lower() in _TRUE


def show_bar(requested: bool) -> bool:
    """Whether to draw a bar the caller ``requested``: never while bars are disabled (``TQDM_DISABLE``)."""
    return bool(requested) and not bars_disabled()


def silence_progress_bars() -> None:
    """Turn off every progress bar of this process (and of the processes it starts).

    Sets ``TQDM_DISABLE=1`` and ``HF_HUB_DISABLE_PROGRESS_BARS=1`` (read by transformers and huggingface_hub
    when they are imported), and calls their switches if they are imported already.
    """
    os.environ["TQDM_DISABLE"] = "1"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    _apply_to_imported()


def _apply_to_imported() -> None:
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()


@contextmanager
def no_progress_bars() -> Iterator[None]:
    """:func:`silence_progress_bars` for the duration of a ``with`` block, then the previous state back (the
    environment variables and transformers' / huggingface_hub's switches), so that a command run in process
    leaves its caller's bars as they were.

    Example:
        >>> before = os.environ.get("TQDM_DISABLE")
        >>> with no_progress_bars():
        ...     bars_disabled()
        True
        >>> os.environ.get("TQDM_DISABLE") == before
        True
    """
    saved = {name: os.environ.get(name) for name in ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS")}
    hub = transformers = None
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils import are_progress_bars_disabled

        hub = not are_progress_bars_disabled()
    if "transformers" in sys.modules:
        from transformers.utils import logging as transformers_logging

        transformers = transformers_logging.is_progress_bar_enabled()
    silence_progress_bars()
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        # Only the packages imported before the block get their bars back: one imported during it read
        # HF_HUB_DISABLE_PROGRESS_BARS=1 once and for all (huggingface_hub warns if asked to enable them then).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if hub:
                from huggingface_hub.utils import enable_progress_bars

                enable_progress_bars()
            if transformers:
                from transformers.utils import logging as transformers_logging

                transformers_logging.enable_progress_bar()
