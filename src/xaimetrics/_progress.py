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

__all__ = ["bars_disabled", "show_bar", "silence_progress_bars"]

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
