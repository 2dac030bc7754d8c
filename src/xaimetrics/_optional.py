"""Lazy imports of optional dependencies with an error that names the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from xaimetrics.exceptions import MissingDependencyError

__all__ = ["import_optional"]


def import_optional(module: str, *, extra: str, caller: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` telling how to get it.

    Args:
        module: dotted module name, e.g. ``"llama_cpp"``.
        extra: the xaimetrics extra that installs it, e.g. ``"llama"``.
        caller: what needs it, shown to the user, e.g. ``"LlamaCppSimulator"``.

    Example:
        >>> import_optional("json", extra="none", caller="doctest").__name__
        'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingDependencyError(
            f"{caller} needs the optional package '{module.split('.')[0]}', which is not installed. "
            f"Install it with: pip install 'xaimetrics[{extra}]'"
        ) from error
