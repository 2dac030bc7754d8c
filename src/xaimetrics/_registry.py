"""One registry per concept of the library: names (and their aliases) mapped to what they stand for.

Prompt types, simulator kinds, concept extractors and classifiers each have one :class:`Registry`. The API,
the command line, the grid, the report and the figures all read it, so that adding an entry is a change in
one place: whatever lists the choices (``--help``, error messages, grid validation) sees the new name.

Names are matched case-insensitively; each entry has one canonical name (the spelling shown in tables and
stored in results) and any number of aliases.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Generic, TypeVar, overload

from xaimetrics._validation import invalid

__all__ = ["Registry", "RegistryEntry", "did_you_mean", "join_or"]

T = TypeVar("T")


def join_or(names: tuple[str, ...] | list[str]) -> str:
    """Names as a sentence for error messages.

    Example:
        >>> join_or(["E1", "E2", "E3"]), join_or(["NE1"])
        ('E1, E2 or E3', 'NE1')
    """
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


def did_you_mean(name: object, choices: Iterable[object]) -> str:
    """A sentence suggesting the closest of ``choices`` to a mistyped ``name`` (case-insensitive), or ``""``.

    Example:
        >>> did_you_mean("nfm", ["NMF", "PCA", "NoExplanation"]), did_you_mean("xyz", ["NMF"])
        ("Did you mean 'NMF'?", '')
    """
    if not isinstance(name, str) or not name:
        return ""
    spelled = {str(choice).lower(): str(choice) for choice in choices}
    close = difflib.get_close_matches(name.lower(), list(spelled), n=1, cutoff=0.6)
    return f"Did you mean {spelled[close[0]]!r}?" if close else ""


@dataclass(frozen=True)
class RegistryEntry(Generic[T]):
    """One registered name: its canonical spelling, aliases, a one-line description and the value."""

    name: str
    value: T
    aliases: tuple[str, ...] = ()
    description: str = ""
    builtin: bool = field(default=False, compare=False)


class Registry(Generic[T]):
    """Canonical names and aliases → values, for one kind of thing (``"prompt type"``, ``"extractor"``…).

    Args:
        kind: what the entries are, in words (used in error messages).
        argument: the name of the argument users give these names to (used in error messages).
        prepare: called as ``prepare(name, value)`` before an entry is stored; returns the value to store
            (e.g. with its name filled in) or raises to refuse it.

    Example:
        >>> colours = Registry[int]("colour", argument="colour")
        >>> _ = colours.register("red", 1, aliases=("rouge",), description="the first colour")
        >>> colours.get("ROUGE"), colours.canonical("rouge"), colours.names()
        (1, 'red', ('red',))
        >>> "Red" in colours, "blue" in colours
        (True, False)
        >>> colours.get("blue")
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'colour' parameter of colour registry must be one of red (alias: rouge). Got blue.
    """

    def __init__(self, kind: str, *, argument: str, prepare: Callable[[str, T], T] | None = None) -> None:
        self.kind = kind
        self.argument = argument
        self._prepare = prepare
        self._entries: dict[str, RegistryEntry[T]] = {}
        self._lookup: dict[str, str] = {}

    # -- writing ---------------------------------------------------------------------------------------------
    @overload
    def register(
        self, name: str, value: T, *, aliases: tuple[str, ...] = (), description: str = "",
        replace: bool = False, builtin: bool = False,
    ) -> T: ...  # fmt: skip

    @overload
    def register(
        self, name: str, value: None = None, *, aliases: tuple[str, ...] = (), description: str = "",
        replace: bool = False, builtin: bool = False,
    ) -> Callable[[T], T]: ...  # fmt: skip

    def register(
        self,
        name: str,
        value: T | None = None,
        *,
        aliases: tuple[str, ...] = (),
        description: str = "",
        replace: bool = False,
        builtin: bool = False,
    ) -> T | Callable[[T], T]:
        """Add ``name`` (and its ``aliases``) for ``value``; used bare or as a decorator.

        A name or alias already taken by another entry is an error unless ``replace=True``.
        """
        if value is None:

            def decorate(target: T) -> T:
                self.register(
                    name, target, aliases=aliases, description=description, replace=replace, builtin=builtin
                )
                return target

            return decorate
        owner = f"{self.kind} registry"
        if not isinstance(name, str) or not name.strip():
            raise invalid("name", owner, "a non-empty string", name)
        if isinstance(aliases, str):
            raise invalid("aliases", owner, "a tuple of strings", aliases, f"Write aliases=({aliases!r},).")
        keys = [name, *aliases]
        for key in keys:
            taken = self._lookup.get(key.lower())
            if taken is not None and taken != name and not replace:
                raise invalid(
                    "name", owner, f"a name not already used by the {self.kind} {taken!r}", key,
                    "Pick another name, or pass replace=True to override it.",
                )  # fmt: skip
        if name in self._entries and not replace:
            raise invalid(
                "name", owner, f"a {self.kind} name not registered yet", name,
                "Pass replace=True to override it, or unregister it first.",
            )  # fmt: skip
        if self._prepare is not None:
            value = self._prepare(name, value)
        if name in self._entries:
            self.unregister(name)
        for key in keys:
            previous = self._lookup.get(key.lower())
            if previous is not None and previous in self._entries:
                self.unregister(previous)
        self._entries[name] = RegistryEntry(name, value, tuple(aliases), description, builtin)
        for key in keys:
            self._lookup[key.lower()] = name
        return value

    def unregister(self, name: str) -> None:
        """Remove an entry (by canonical name or alias) and its aliases."""
        canonical = self.canonical(name)
        del self._entries[canonical]
        self._lookup = {key: target for key, target in self._lookup.items() if target != canonical}

    @contextmanager
    def temporarily(
        self,
        name: str,
        value: T,
        *,
        aliases: tuple[str, ...] = (),
        description: str = "",
        replace: bool = False,
    ) -> Iterator[T]:
        """Register ``name`` for the duration of a ``with`` block (tests, notebooks).

        On exit the registry is restored as it was, entries that ``replace=True`` displaced included.
        """
        entries, lookup = dict(self._entries), dict(self._lookup)
        self.register(name, value, aliases=aliases, description=description, replace=replace)
        try:
            yield self._entries[name].value
        finally:
            self._entries, self._lookup = entries, lookup

    # -- reading ---------------------------------------------------------------------------------------------
    def canonical(self, name: str, *, owner: str | None = None, argument: str | None = None) -> str:
        """The canonical spelling of ``name`` or of one of its aliases; raises naming the choices."""
        found = self._lookup.get(name.lower()) if isinstance(name, str) else None
        if found is None:
            raise invalid(
                argument or self.argument, owner or f"{self.kind} registry", f"one of {self.choices()}", name,
                did_you_mean(name, [k for e in self._entries.values() for k in (e.name, *e.aliases)]) or None,
            )  # fmt: skip
        return found

    def get(self, name: str, *, owner: str | None = None, argument: str | None = None) -> T:
        """The value registered under ``name`` (case-insensitive, aliases accepted)."""
        return self._entries[self.canonical(name, owner=owner, argument=argument)].value

    def find(self, name: object) -> T | None:
        """The value registered under ``name``, or ``None`` (never raises; for names read back from results)."""
        found = self._lookup.get(name.lower()) if isinstance(name, str) else None
        return None if found is None else self._entries[found].value

    def entry(self, name: str) -> RegistryEntry[T]:
        """The full :class:`RegistryEntry` of ``name``."""
        return self._entries[self.canonical(name)]

    def names(self) -> tuple[str, ...]:
        """Canonical names, in registration order."""
        return tuple(self._entries)

    def values(self) -> tuple[T, ...]:
        """Every value, in registration order."""
        return tuple(entry.value for entry in self._entries.values())

    def entries(self) -> tuple[RegistryEntry[T], ...]:
        """Every entry, in registration order."""
        return tuple(self._entries.values())

    def choices(self) -> str:
        """The names as a sentence for error messages and ``--help`` (aliases in brackets)."""
        parts = []
        for entry in self._entries.values():
            aliases = [a for a in entry.aliases if a.lower() != entry.name.lower()]
            parts.append(
                f"{entry.name} ({'aliases' if len(aliases) > 1 else 'alias'}: {', '.join(aliases)})"
                if aliases
                else entry.name
            )
        return ", ".join(parts) if parts else f"(no {self.kind} registered)"

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._lookup

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._entries)})"
