"""Deprecated names keep working for one release and say what replaces them.

One message template, like :func:`xaimetrics._validation.invalid`: the old name, where it was used, the new
spelling, and when it goes away.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

__all__ = ["deprecated_attribute", "warn_deprecated"]


def warn_deprecated(old: str, owner: str, new: str, *, stacklevel: int = 2) -> None:
    """Emit the standard :class:`DeprecationWarning`: ``old`` of ``owner`` is deprecated, use ``new``.

    ``stacklevel`` is that of :func:`warnings.warn` as seen from the function calling this one: 2 names the
    line that called it (a public method warning about its own arguments), 3 one frame further up.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     warn_deprecated("'classes' parameter", "ConSim", "class_names=[...]")
        >>> print(caught[0].message)
        The 'classes' parameter of ConSim is deprecated and will be removed in the next release. Use class_names=[...] instead.
    """
    warnings.warn(
        f"The {old} of {owner} is deprecated and will be removed in the next release. Use {new} instead.",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )


def deprecated_attribute(module: str, name: str, aliases: Mapping[str, tuple[str, Any]]) -> Any:
    """The value of a deprecated module-level alias (for a module's ``__getattr__``), with the warning.

    ``aliases`` maps each old name to ``(new name, value)``; any other name raises :class:`AttributeError`
    as a module would.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     deprecated_attribute("m", "OLD", {"OLD": ("NEW", 3)})
        3
        >>> print(caught[0].message)
        The name OLD of m is deprecated and will be removed in the next release. Use NEW instead.
    """
    if name not in aliases:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    new, value = aliases[name]
    warn_deprecated(f"name {name}", module, new, stacklevel=3)
    return value
