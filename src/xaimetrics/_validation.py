"""Checks at the public boundary, all raising :class:`InvalidParameterError` with one message template:
the argument, what was expected, what was given, and the fix."""

from __future__ import annotations

from collections.abc import Iterable, Sequence, Sized
from typing import TypeVar, cast

from xaimetrics.exceptions import InvalidParameterError, NotFittedError

_Choice = TypeVar("_Choice", bound="str | None")

__all__ = [
    "check_choice",
    "check_in_range",
    "check_positive_int",
    "check_same_length",
    "check_seed",
    "check_texts",
    "invalid",
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
