"""Deprecated names keep working for one release and say what replaces them.

One message template, like :func:`xaimetrics._validation.invalid`: the old name, where it was used, the new
spelling, and when it goes away.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from xaimetrics._validation import invalid

__all__ = ["RenamedAttribute", "deprecated_attribute", "renamed_keyword", "warn_deprecated", "warn_renamed"]


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


def warn_renamed(old: str, new: str, owner: str, *, stacklevel: int = 3) -> None:
    """Warn that ``owner``'s ``old`` is now called ``new`` (``stacklevel`` 3: the caller of the caller)."""
    warn_deprecated(f"'{old}' name", owner, f"'{new}'", stacklevel=stacklevel)


class RenamedAttribute:
    """A class attribute that reads the attribute ``new`` under its old name, with a ``DeprecationWarning``.

    Example:
        >>> class Labels:
        ...     seed = RenamedAttribute("random_state")
        ...     def __init__(self) -> None:
        ...         self.random_state = 3
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     Labels().seed
        3
    """

    def __init__(self, new: str) -> None:
        self.new = new
        self.old = new

    def __set_name__(self, owner: type, name: str) -> None:
        self.old = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        warn_renamed(self.old, self.new, type(instance).__name__)
        return getattr(instance, self.new)


def renamed_keyword(
    options: dict[str, Any],
    *,
    old: str,
    new: str,
    value: Any,
    default: Any,
    owner: str,
    strict: bool = True,
) -> Any:
    """The value of keyword ``new`` of a call whose extra keywords ``options`` may hold its old name ``old``.

    Called at the top of ``owner(..., new=default, **options)``: ``old`` is taken out of ``options`` with a
    ``DeprecationWarning`` (given together with a non-default ``new``, it is an error). With ``strict``, any
    other keyword left in ``options`` is a ``TypeError``, as Python raises for an unknown keyword (leave it
    off when ``options`` also carries keywords passed on to another call).

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     renamed_keyword({"seed": 3}, old="seed", new="random_state", value=0, default=0, owner="LLMLabels")
        3
        >>> str(caught[0].message)
        "The 'seed' name of LLMLabels is deprecated and will be removed in the next release. Use 'random_state' instead."
    """
    if old in options:
        old_value = options.pop(old)
        if value is not default and value != default:
            raise invalid(
                old, owner, f"left out when '{new}' is given (it is the old name of '{new}')", old_value
            )
        warn_renamed(old, new, owner, stacklevel=4)
        value = old_value
    if strict and options:
        raise TypeError(f"{owner} got an unexpected keyword argument {next(iter(options))!r}")
    return value
