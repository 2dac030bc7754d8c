"""Checks at the public boundary, all raising :class:`InvalidParameterError` with one message template:
the argument, what was expected, what was given, and the fix.

Two ways to check, one message:

- **declared** (scikit-learn's ``_parameter_constraints`` idea, our own smaller code): a public callable
  declares, once, a mapping ``argument -> rule`` where a rule is a constraint (:class:`Interval`,
  :class:`Options`, :class:`Kind`, :class:`Check`), ``None`` (accepted as is) or a tuple of them (any one
  accepts). :func:`validate_params` (a decorator) or :func:`check_params` (a call at the top of ``fit`` or
  ``__init__``) checks them all and raises with the first failing argument, its value and the fix;
- **hand-written** for what depends on several arguments or on data (shapes, widths, model outputs), with
  :func:`invalid`. Inside a decorated callable, helpers name it with :func:`caller` instead of receiving an
  ``owner`` argument that exists only for the message.

scikit-learn's version (``sklearn/utils/_param_validation.py``) also generates invalid values for tests and
handles nested estimators; ours only checks and words the message in this library's template.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import numbers
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal, ParamSpec, TypeAlias, TypeVar, cast

from xaimetrics.exceptions import InvalidParameterError, NotFittedError

_Choice = TypeVar("_Choice", bound="str | None")
_P = ParamSpec("_P")
_R = TypeVar("_R")

__all__ = [
    "Check",
    "Interval",
    "Kind",
    "Options",
    "Rule",
    "caller",
    "check_choice",
    "check_in_range",
    "check_params",
    "check_positive_int",
    "check_same_length",
    "check_seed",
    "check_texts",
    "invalid",
    "owner_scope",
    "validate_params",
]


def invalid(
    name: str, owner: str, expected: str, got: object, fix: str | None = None
) -> InvalidParameterError:
    """Build the standard error: ``The 'name' parameter of owner must be expected. Got got. fix``.

    Example:
        >>> str(invalid("n_concepts", "NMF", "≤ 384 (the activation width)", 500, "Use a smaller value."))
        "The 'n_concepts' parameter of NMF must be ≤ 384 (the activation width). Got 500. Use a smaller value."
    """
    shown = got if isinstance(got, str) and len(got) < 80 else _short_repr(got)
    sentences = [f"The '{name}' parameter of {owner} must be {expected}.", f"Got {shown}."]
    if fix:
        sentences.append(fix)
    return InvalidParameterError(" ".join(sentences))


def _short_repr(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_texts(texts: object, name: str = "inputs", owner: str = "this function") -> list[str]:
    """Return ``texts`` as a non-empty list of strings, or raise naming the argument.

    Example:
        >>> check_texts(("a", "b"))
        ['a', 'b']
    """
    if isinstance(texts, str):
        raise invalid(name, owner, "a list of strings", "a single string", f"Wrap it in a list: [{name}].")
    if not isinstance(texts, Iterable):
        raise invalid(name, owner, "a list of strings", type(texts).__name__)
    texts = list(texts)
    if not texts:
        raise invalid(name, owner, "a non-empty list of strings", "an empty list", "Pass at least one text.")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise invalid(name, owner, "a list of strings", f"{type(text).__name__} at position {i}")
    return texts


def check_positive_int(value: object, name: str, owner: str, *, minimum: int = 1) -> int:
    """Return ``value`` if it is an integer ≥ ``minimum`` (bools are rejected)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise invalid(name, owner, f"an integer ≥ {minimum}", value)
    return int(value)


def check_seed(value: object, name: str, owner: str) -> int:
    """Return ``value`` as an ``int`` if it is a non-negative integer (numpy integers too; bools rejected).

    ``numpy.random.default_rng`` and ``torch.manual_seed`` reject negative seeds with messages that name no
    argument: check them here.

    Example:
        >>> check_seed(3, "seed", "select_examples")
        3
        >>> str(invalid("seed", "select_examples", "an integer ≥ 0", -1))
        "The 'seed' parameter of select_examples must be an integer ≥ 0. Got -1."
    """
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise invalid(name, owner, "an integer ≥ 0", value, "Seeds are non-negative integers (e.g. 0).")
    return int(value)


def check_in_range(value: object, name: str, owner: str, low: float, high: float) -> float:
    """Return ``value`` as a float if ``low <= value <= high``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise invalid(name, owner, f"a number in [{low}, {high}]", value)
    return float(value)


def check_positive_number(value: object, name: str, owner: str) -> float:
    """Return ``value`` as a float if it is a number > 0 (bools are rejected).

    Example:
        >>> check_positive_number(2, "temperature", "LexicalSimulator")
        2.0
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise invalid(name, owner, "a number > 0", value)
    return float(value)


def check_choice(value: object, name: str, owner: str, choices: Sequence[_Choice]) -> _Choice:
    """Return ``value`` if it is one of ``choices`` (typed as the choice, e.g. a ``Literal``)."""
    if value not in choices:
        raise invalid(name, owner, "one of " + ", ".join(repr(c) for c in choices), value)
    return cast(_Choice, value)  # equal to one of the choices


def check_same_length(first: Sized, second: Sized, names: tuple[str, str], owner: str) -> None:
    """Raise if two sequences differ in length."""
    if len(first) != len(second):
        raise InvalidParameterError(
            f"'{names[0]}' and '{names[1]}' of {owner} must have the same length. "
            f"Got {len(first)} and {len(second)}. Pass one {names[1][:-1] if names[1].endswith('s') else names[1]} "
            f"per {names[0][:-1] if names[0].endswith('s') else names[0]}."
        )


def check_fitted(estimator: object, attribute: str, call: str = "first") -> None:
    """Raise :class:`~xaimetrics.exceptions.NotFittedError` unless ``estimator`` has its learned ``attribute``.

    The one message of every estimator: ``This <class> is not fitted yet. Call 'fit' <call>.``

    Example:
        >>> class Model:
        ...     pass
        >>> check_fitted(Model(), "components_", "with activations before 'encode'")
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.NotFittedError: This Model is not fitted yet. Call 'fit' with activations before 'encode'.
    """
    if not hasattr(estimator, attribute):
        raise NotFittedError(f"This {type(estimator).__name__} is not fitted yet. Call 'fit' {call}.")


# ---------------------------------------------------------------------------------------- declared rules
@dataclass(frozen=True)
class Interval:
    """Numbers of ``kind`` (``int``: integers, numpy's too; ``float``: any real) between ``low`` and ``high``.

    ``closed`` says which ends belong to the interval; ``None`` for an end means unbounded. Booleans are
    never numbers here. ``text`` replaces the generated wording where a message says more.

    Example:
        >>> str(Interval(int, 1)), str(Interval(float, 0, 1, closed="right")), str(Interval(float, 0, closed="neither"))
        ('an integer ≥ 1', 'a number in ]0, 1]', 'a number > 0')
        >>> Interval(int, 1).accepts(True), Interval(float, 0, 1).accepts(0.5)
        (False, True)
    """

    kind: type[int] | type[float]
    low: float | None = None
    high: float | None = None
    closed: Literal["both", "left", "right", "neither"] = "both"
    text: str | None = None
    fix: str | None = None

    def accepts(self, value: object) -> bool:
        """True if ``value`` is a number of the right kind inside the interval."""
        wanted = numbers.Integral if self.kind is int else numbers.Real
        if isinstance(value, bool) or not isinstance(value, wanted):
            return False
        number = cast(float, value)
        if number != number:  # NaN
            return False
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.low is not None and not (number >= self.low if left else number > self.low):
            return False
        return self.high is None or (number <= self.high if right else number < self.high)

    def __str__(self) -> str:
        if self.text is not None:
            return self.text
        noun = "an integer" if self.kind is int else "a number"
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.low is not None and self.high is not None:
            return (
                f"{noun} in {'[' if left else ']'}{_num(self.low)}, {_num(self.high)}{']' if right else '['}"
            )
        if self.low is not None:
            return f"{noun} {'≥' if left else '>'} {_num(self.low)}"
        if self.high is not None:
            return f"{noun} {'≤' if right else '<'} {_num(self.high)}"
        return noun


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 2**53 else str(value)


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values, or of a registry read live (``choices`` may be a function returning it).

    Example:
        >>> rule = Options(("mean", "max"))
        >>> rule.accepts("max"), str(rule)
        (True, "one of 'mean', 'max'")
    """

    choices: Iterable[object] | Callable[[], Iterable[object]]
    text: str | None = None
    fix: str | None = None

    def values(self) -> tuple[object, ...]:
        """The choices as they are now (a registry is read at every check)."""
        return tuple(self.choices() if callable(self.choices) else self.choices)

    def accepts(self, value: object) -> bool:
        """True if ``value`` equals one of the choices (unhashable values are never a choice)."""
        try:
            return any(
                value == choice and isinstance(value, bool) == isinstance(choice, bool)
                for choice in self.values()
            )
        except (TypeError, ValueError):
            return False

    def __str__(self) -> str:
        return self.text if self.text is not None else "one of " + ", ".join(repr(c) for c in self.values())


@dataclass(frozen=True)
class Kind:
    """An instance of ``types`` (``bool`` is not an ``int`` here unless listed), or ``callable`` for any callable.

    A value that fails a type rule is shown by its type's name, as in ``Got str.``

    Example:
        >>> Kind(bool, text="True or False").accepts(1), Kind(callable, text="a callable").accepts(len)
        (False, True)
    """

    types: type | tuple[type, ...] | Callable[[object], bool]
    text: str
    fix: str | None = None

    def accepts(self, value: object) -> bool:
        """True if ``value`` has one of the types (or is callable, for ``Kind(callable, ...)``)."""
        if self.types is callable:
            return callable(value)
        types = self.types if isinstance(self.types, tuple) else (self.types,)
        types = cast(tuple[type, ...], types)
        if isinstance(value, bool) and bool not in types:
            return False
        return isinstance(value, types)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Check:
    """A predicate with its wording (what is expected, and optionally the fix sentence).

    Example:
        >>> Check(lambda v: isinstance(v, str) and v.isidentifier(), "a Python name").accepts("x1")
        True
    """

    predicate: Callable[[object], bool]
    text: str
    fix: str | None = None

    def accepts(self, value: object) -> bool:
        """True if the predicate holds (a predicate that raises counts as a refusal)."""
        try:
            return bool(self.predicate(value))
        except (TypeError, ValueError):
            return False

    def __str__(self) -> str:
        return self.text


_Constraint: TypeAlias = Interval | Options | Kind | Check
#: What an argument may be: one constraint, ``None`` (the value None), or a tuple of them (any one accepts).
Rule: TypeAlias = "_Constraint | tuple[_Constraint | None, ...] | None"


def _alternatives(rule: Rule) -> tuple[_Constraint | None, ...]:
    return rule if isinstance(rule, tuple) else (rule,)


def _accepts(constraint: _Constraint | None, value: object) -> bool:
    return value is None if constraint is None else constraint.accepts(value)


def _refusal(name: str, owner: str, rule: Rule, value: object, fix: str | None) -> InvalidParameterError:
    """The standard error for ``value`` refused by ``rule``, worded from the rule's parts."""
    parts = _alternatives(rule)
    described = [str(c) for c in parts if c is not None]
    expected = " or ".join(described) if described else "None"
    if None in parts and described and "None" not in expected:
        expected = "None or " + expected
    typed = all(isinstance(c, Kind) for c in parts if c is not None)
    shown: object = type(value).__name__ if typed and value is not None else value
    fixes = [c.fix for c in parts if c is not None and c.fix]
    return invalid(name, owner, expected, shown, fix or (fixes[0] if fixes else None))


def check_params(
    owner: str,
    rules: Mapping[str, Rule],
    values: Mapping[str, object],
    fixes: Mapping[str, str] | None = None,
) -> None:
    """Check ``values`` against declared ``rules`` in declaration order; raise for the first refused one.

    Arguments absent from ``values`` are not checked (a default the caller did not pass is the author's).
    ``fixes`` adds the fix sentence of an argument.

    Example:
        >>> rules = {"steps": Interval(int, 1), "mode": Options(("a", "b")), "batch_size": (Interval(int, 1), None)}
        >>> check_params("Deletion", rules, {"steps": 3, "mode": "a", "batch_size": None})
        >>> check_params("Deletion", rules, {"steps": 0})
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'steps' parameter of Deletion must be an integer ≥ 1. Got 0.
        >>> check_params("Deletion", rules, {"batch_size": 0.5}, {"batch_size": "Use None for one batch."})
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'batch_size' parameter of Deletion must be None or an integer ≥ 1. Got 0.5. Use None for one batch.
    """
    for name, rule in rules.items():
        if name not in values:
            continue
        value = values[name]
        if not any(_accepts(c, value) for c in _alternatives(rule)):
            raise _refusal(name, owner, rule, value, (fixes or {}).get(name))


# ---------------------------------------------------------------------------------------- the caller's name
_OWNER: contextvars.ContextVar[str | None] = contextvars.ContextVar("xaimetrics_owner", default=None)


def caller(default: str = "this function") -> str:
    """The public callable being checked (set by :func:`validate_params` or :func:`owner_scope`).

    Helpers deep inside a public call name it in their messages without an ``owner`` argument.

    Example:
        >>> with owner_scope("PCA.fit"):
        ...     caller()
        'PCA.fit'
        >>> caller()
        'this function'
    """
    return _OWNER.get() or default


@contextmanager
def owner_scope(owner: str) -> Iterator[str]:
    """Name ``owner`` as the :func:`caller` for the checks run inside the ``with`` block (nested scopes win)."""
    token = _OWNER.set(owner)
    try:
        yield owner
    finally:
        _OWNER.reset(token)


def validate_params(
    rules: Mapping[str, Rule], *, fixes: Mapping[str, str] | None = None
) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Decorate a public function or method: check its arguments against ``rules`` at every call.

    The owner in messages is the function's name; for a method, ``Class.method`` (``Class`` for
    ``__init__``), with the class of the object itself (a subclass names itself). Defaults are checked too,
    so a bad default fails its own doctest. Inside the call, :func:`caller` returns that owner.

    Example:
        >>> @validate_params({"k": Interval(int, 1)}, fixes={"k": "Pass k=1 or more."})
        ... def top(values, k=1):
        ...     return sorted(values)[-k:]
        >>> top([3, 1, 2], k=2)
        [2, 3]
        >>> top([3, 1, 2], k=0)
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'k' parameter of top must be an integer ≥ 1. Got 0. Pass k=1 or more.
    """

    def decorate(function: Callable[_P, _R]) -> Callable[_P, _R]:
        signature = inspect.signature(function)
        unknown = set(rules) - set(signature.parameters)
        if unknown:  # an author's mistake, caught at import
            raise TypeError(f"validate_params: {function.__qualname__} has no parameter {sorted(unknown)}")
        is_method = next(iter(signature.parameters), None) == "self"

        @functools.wraps(function)
        def checked(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            owner = function.__name__
            if is_method:
                cls = type(bound.arguments["self"]).__name__
                owner = cls if owner == "__init__" else f"{cls}.{owner}"
            check_params(owner, rules, bound.arguments, fixes)
            with owner_scope(owner):
                return function(*args, **kwargs)

        checked.__signature__ = signature  # type: ignore[attr-defined]  # inspect reads it for help()
        return checked

    return decorate
