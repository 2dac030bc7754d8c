"""Example selection for ConSim (paper App. B.1): LP + EP samples, classes uniform, half predicted wrongly.

The exact rule, so that a selection can be reproduced by hand:

1. **Quotas.** ``N = n_lp + n_ep`` samples are spread over the ``C`` classes (w.r.t. the *labels*):
   ``N // C`` each, and the ``N % C`` remaining ones go to classes drawn at random. Inside a class, half of
   its quota must be correctly predicted by f and half wrongly; an odd quota gives its extra sample to
   "correct" and "wrong" alternately (in class order), so that the totals differ by at most one.
2. **Draw.** Each (class, correct) cell draws its quota **without replacement** (a seeded permutation of
   its indices). ``balance="strict"`` raises :class:`~xaimetrics.exceptions.InvalidParameterError` with the
   per-class counts when a cell is short; ``balance="relaxed"`` fills the shortfall from the nearest cells —
   first the other kind (correct/wrong) of the same class, keeping classes uniform, then the same kind of
   the class with the most spare samples, then anything — and records what it did in
   :attr:`ExampleSelection.notes`. It never returns fewer samples than asked: too little data always raises.
3. **LP/EP split, stratified.** The correct and wrong samples are split between LP and EP in proportion to
   ``n_lp : n_ep`` (largest remainder), keeping at least one of each kind on each side whenever that kind
   has two samples or more; each kind's LP share is then spread over the classes in proportion to the
   cell sizes (largest remainder, ties broken by a seeded draw). Each half is finally shuffled.

Everything random comes from one ``numpy.random.default_rng(seed)`` (PCG64), whose streams are identical
on every platform, and the arithmetic of steps 1 and 3 is exact integer arithmetic.

**Repeated texts.** When the texts are given (``inputs=``, as :func:`~xaimetrics.consim.select_examples` does), a text is
selected at most once: samples whose *normalised* text (NFKC, case-folded, whitespace collapsed) repeats an
earlier one are left out before step 1, whatever their label. Otherwise a pool holding the same text twice
could show it with f's prediction in LP and ask for it again in EP, which inflates the score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np
from numpy.typing import ArrayLike

from xaimetrics._registry import Registry
from xaimetrics._text_keys import first_occurrences
from xaimetrics._validation import check_choice, check_positive_int, check_seed, invalid
from xaimetrics.exceptions import InvalidParameterError

__all__ = ["BALANCES", "Balance", "BalanceKind", "ExampleSelection", "select_indices"]

Balance = Literal["strict", "relaxed"]
_OWNER = "select_examples"
_KINDS = ("correct", "wrong")


@dataclass(frozen=True)
class ExampleSelection:
    """Indices of the learning-phase (LP) and evaluation-phase (EP) samples.

    Attributes:
        lp_indices: int64 array of shape ``(n_lp,)``, positions in the data given to :func:`select_indices`.
        ep_indices: int64 array of shape ``(n_ep,)``.
        class_ids: the classes the quotas cover, in order.
        available: int64 array of shape ``(n_classes, 2)``: per class, how many samples f predicts
            correctly (column 0) and wrongly (column 1) in the data.
        chosen: same shape, how many of each were selected (LP + EP).
        notes: what ``balance="relaxed"`` changed (empty when the quotas were met exactly).
        seed: the seed used.
        n_repeated: samples left out because their normalised text repeats an earlier one (``inputs=``).
    """

    lp_indices: np.ndarray
    ep_indices: np.ndarray
    class_ids: tuple[int, ...]
    available: np.ndarray
    chosen: np.ndarray
    notes: tuple[str, ...] = ()
    seed: int = 0
    n_repeated: int = 0

    @property
    def indices(self) -> np.ndarray:
        """LP indices followed by EP indices, shape ``(n_lp + n_ep,)``."""
        return np.concatenate([self.lp_indices, self.ep_indices])

    @property
    def relaxed(self) -> bool:
        """Whether the quotas had to be relaxed."""
        return bool(self.notes)


def select_indices(
    labels: ArrayLike,
    predictions: ArrayLike,
    n_lp: int = 20,
    n_ep: int = 20,
    *,
    seed: int = 0,
    balance: Balance = "strict",
    class_names: Sequence[str] | None = None,
    inputs: Sequence[str] | None = None,
) -> ExampleSelection:
    """The positions of ``n_lp`` learning-phase and ``n_ep`` evaluation-phase samples for ConSim (App. B.1).

    :func:`~xaimetrics.consim.select_examples` applies this rule to texts and returns the samples.

    Classes are covered uniformly (w.r.t. ``labels``), half of the samples are predicted correctly by the
    model and half wrongly, without replacement; the module docstring gives the exact allocation rule.

    Args:
        labels: true classes, integer array-like of shape ``(n_samples,)`` (numpy, torch or list).
        predictions: f's predicted classes, same shape.
        n_lp: number of learning-phase samples.
        n_ep: number of evaluation-phase samples.
        seed: seed of ``numpy.random.default_rng``.
        balance: ``"strict"`` raises when the data cannot meet the quotas; ``"relaxed"`` fills from the
            nearest cells and says so in :attr:`ExampleSelection.notes`.
        class_names: names of the classes ``0 … C-1``. When given, every one of them gets a quota (even if
            absent from ``labels``); otherwise the classes are the distinct values of ``labels``.
        inputs: the texts, same length. When given, no two selected samples share a normalised text (NFKC,
            case-folded, whitespace collapsed): repeats of an earlier text are left out
            (:attr:`ExampleSelection.n_repeated` counts them).

    Returns:
        An :class:`ExampleSelection`.

    Raises:
        InvalidParameterError: on malformed inputs, or when the data cannot satisfy the request (the message
            lists, per class, the correct/wrong counts needed and available).

    Example:
        >>> labels = [0, 0, 0, 0, 1, 1, 1, 1, 1, 1]
        >>> predictions = [0, 1, 0, 1, 1, 0, 1, 0, 1, 1]
        >>> selection = select_indices(labels, predictions, n_lp=4, n_ep=4, seed=0)
        >>> sorted(selection.indices.tolist())  # all of class 0, both wrong ones of class 1
        [0, 1, 2, 3, 5, 6, 7, 8]
        >>> selection.chosen.tolist()  # per class: [correct, wrong]
        [[2, 2], [2, 2]]
        >>> texts = ["a", "b", "c", "d", "e", "f", "A ", "g", "h", "i"]  # "A " repeats "a"
        >>> select_indices(labels, predictions, n_lp=2, n_ep=2, inputs=texts).n_repeated
        1
    """
    n_lp = check_positive_int(n_lp, "n_lp", _OWNER)
    n_ep = check_positive_int(n_ep, "n_ep", _OWNER)
    balance = check_choice(balance, "balance", _OWNER, cast("tuple[Balance, ...]", BALANCES.names()))
    seed = check_seed(seed, "seed", _OWNER)
    labels_ = _as_int_array(labels, "labels")
    predictions_ = _as_int_array(predictions, "predictions")
    if labels_.shape != predictions_.shape:
        raise InvalidParameterError(
            f"'labels' and 'predictions' of {_OWNER} must have the same length. "
            f"Got {labels_.shape[0]} and {predictions_.shape[0]}. Pass one prediction per label."
        )
    if class_names is not None:
        class_ids = tuple(range(len(class_names)))
        if labels_.size and labels_.max() >= len(class_names):
            raise invalid(
                "labels",
                _OWNER,
                f"class ids below {len(class_names)} (the number of class_names)",
                int(labels_.max()),
            )
        names = [str(name) for name in class_names]
    else:
        class_ids = tuple(int(c) for c in np.unique(labels_))
        names = [str(c) for c in class_ids]
    if not class_ids:
        raise invalid("labels", _OWNER, "a non-empty array", "an empty array")
    first = first_occurrences(inputs, labels_.shape[0], _OWNER)

    total = n_lp + n_ep
    rng = np.random.default_rng(int(seed))
    correct = labels_ == predictions_
    pools = [
        [np.flatnonzero((labels_ == c) & (correct if kind == 0 else ~correct) & first) for kind in (0, 1)]
        for c in class_ids
    ]
    n_repeated = int((~first).sum())
    available = np.array([[len(pool) for pool in cell] for cell in pools], dtype=np.int64).reshape(
        len(class_ids), 2
    )

    quotas = _quotas(total, len(class_ids), rng)
    if int(available.sum()) < total:
        raise _shortage_error(
            total,
            n_lp,
            n_ep,
            names,
            quotas,
            available,
            f"the data has only {int(available.sum())} samples in these classes"
            + (f" once {n_repeated} repeated texts are left out." if n_repeated else "."),
        )
    notes: tuple[str, ...] = ()
    if np.any(available < quotas):
        short = quotas  # the quotas the error reports (the fill below replaces them)
        quotas, notes = BALANCES.get(balance).fill(
            quotas, available, names,
            lambda: _shortage_error(total, n_lp, n_ep, names, short, available, None, n_repeated),
        )  # fmt: skip

    drawn = [
        [rng.permutation(pools[c][kind])[: quotas[c, kind]] for kind in (0, 1)] for c in range(len(class_ids))
    ]
    lp_per_cell = _split_lp(quotas, n_lp, rng)
    lp = np.concatenate([drawn[c][k][: lp_per_cell[c, k]] for c in range(len(class_ids)) for k in (0, 1)])
    ep = np.concatenate([drawn[c][k][lp_per_cell[c, k] :] for c in range(len(class_ids)) for k in (0, 1)])
    return ExampleSelection(
        lp_indices=rng.permutation(lp).astype(np.int64),
        ep_indices=rng.permutation(ep).astype(np.int64),
        class_ids=class_ids,
        available=available,
        chosen=quotas,
        notes=notes,
        seed=seed,
        n_repeated=n_repeated,
    )


def _as_int_array(values: ArrayLike, name: str) -> np.ndarray:
    detach = getattr(values, "detach", None)
    if callable(detach):
        values = detach().cpu().numpy()
    try:
        array = np.asarray(values)
    except (TypeError, ValueError) as error:
        raise invalid(name, _OWNER, "a 1-D array of class ids", type(values).__name__) from error
    if array.ndim != 1:
        raise invalid(name, _OWNER, "a 1-D array of class ids", f"an array of shape {array.shape}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        if np.issubdtype(array.dtype, np.floating) and np.all(np.mod(array, 1) == 0):
            array = array.astype(np.int64)
        else:
            raise invalid(
                name, _OWNER, "integer class ids", f"dtype {array.dtype}", "Pass class indices, not names."
            )
    array = array.astype(np.int64)
    if array.size and array.min() < 0:
        raise invalid(name, _OWNER, "non-negative class ids", int(array.min()))
    return array


def _quotas(total: int, n_classes: int, rng: np.random.Generator) -> np.ndarray:
    """Per (class, kind) quotas: classes uniform, correct/wrong halves (step 1)."""
    per_class = np.full(n_classes, total // n_classes, dtype=np.int64)
    per_class[rng.permutation(n_classes)[: total % n_classes]] += 1
    quotas = np.stack([per_class // 2, per_class // 2], axis=1)
    extra_kind = 0
    for c in np.flatnonzero(per_class % 2):
        quotas[c, extra_kind] += 1
        extra_kind = 1 - extra_kind
    return quotas


def _relax(quotas: np.ndarray, available: np.ndarray, names: list[str]) -> tuple[np.ndarray, tuple[str, ...]]:
    """Move each missing unit to the nearest cell with spare samples (step 2, ``balance="relaxed"``)."""
    take = np.minimum(quotas, available)
    moves: dict[tuple[int, int, int, int], int] = {}
    n_classes = quotas.shape[0]
    for c in range(n_classes):
        for k in (0, 1):
            for _ in range(int(quotas[c, k] - take[c, k])):
                spare = available - take
                tiers = [
                    [(c, 1 - k)],
                    [(o, k) for o in range(n_classes) if o != c],
                    [(o, 1 - k) for o in range(n_classes) if o != c],
                ]
                for tier in tiers:
                    candidates = [cell for cell in tier if spare[cell] > 0]
                    if candidates:
                        source = max(candidates, key=lambda cell: (spare[cell], -cell[0]))
                        take[source] += 1
                        key = (c, k, *source)
                        moves[key] = moves.get(key, 0) + 1
                        break
    notes = []
    for (c, k, sc, sk), count in moves.items():
        short = f"class {names[c]!r} has only {available[c, k]} {_KINDS[k]}ly predicted samples"
        taken = f"{_KINDS[sk]}ly predicted samples of " + (
            "the same class" if sc == c else f"class {names[sc]!r}"
        )
        notes.append(f"{short} (needed {quotas[c, k]}): took {count} {taken} instead.")
    return take, tuple(notes)


def _refuse(
    quotas: np.ndarray, available: np.ndarray, names: list[str], error: Callable[[], Exception]
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Raise ``error()`` (step 2, ``balance="strict"``): the per-class counts say what is missing."""
    raise error()


def _fill_nearest(
    quotas: np.ndarray, available: np.ndarray, names: list[str], error: Callable[[], Exception]
) -> tuple[np.ndarray, tuple[str, ...]]:
    """:func:`_relax` (step 2, ``balance="relaxed"``); ``error`` is not needed: the total was checked before."""
    return _relax(quotas, available, names)


#: ``fill(quotas, available, class names, error) -> (quotas, notes)`` when a cell lacks samples (``error()`` is
#: the shortage error with the per-class counts, for a mode that refuses)
Fill = Callable[
    [np.ndarray, np.ndarray, list[str], Callable[[], Exception]], tuple[np.ndarray, tuple[str, ...]]
]


@dataclass(frozen=True)
class BalanceKind:
    """How the learning- and evaluation-phase quotas are met when the data are short.

    Args:
        fill: what :func:`select_indices` does when a class × correctness cell lacks samples (:data:`Fill`).
        relaxed: the mode fills short cells from the others (and says so) instead of raising.

    Example:
        >>> BALANCES.get("relaxed").relaxed, BALANCES.names()
        (True, ('strict', 'relaxed'))
        >>> quotas, notes = BALANCES.get("relaxed").fill(
        ...     np.array([[1, 1], [1, 1]]), np.array([[2, 0], [1, 1]]), ["a", "b"], lambda: ValueError())
        >>> quotas.tolist(), notes
        ([[2, 0], [1, 1]], ("class 'a' has only 0 wrongly predicted samples (needed 1): took 1 correctly predicted samples of the same class instead.",))
    """

    fill: Fill
    relaxed: bool = False


#: how the LP/EP quotas are met (the ``balance`` of :func:`~xaimetrics.consim.select_examples` and of a grid)
BALANCES: Registry[BalanceKind] = Registry("balance mode", argument="balance")
for _name, _kind, _description in (
    ("strict", BalanceKind(_refuse),
     "raise, with the per-class counts, when a class lacks right or wrong predictions"),
    ("relaxed", BalanceKind(_fill_nearest, relaxed=True), "fill the shortfall from the nearest classes and say so"),
):  # fmt: skip
    BALANCES.register(_name, _kind, builtin=True, description=_description)


def _apportion(total: int, weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Largest-remainder split of ``total`` in proportion to integer ``weights``; ties broken at random."""
    weights = np.asarray(weights, dtype=np.int64)
    denominator = int(weights.sum())
    if denominator == 0:
        return np.zeros_like(weights)
    numerators = total * weights
    shares = numerators // denominator
    remainders = numerators % denominator
    left = total - int(shares.sum())
    priority = rng.permutation(len(weights))
    order = sorted(range(len(weights)), key=lambda i: (-int(remainders[i]), int(priority[i])))
    for i in order[:left]:
        shares[i] += 1
    return shares


def _split_lp(chosen: np.ndarray, n_lp: int, rng: np.random.Generator) -> np.ndarray:
    """How many samples of each (class, kind) cell go to LP (step 3)."""
    per_kind = chosen.sum(axis=0)
    lp_kind = _apportion(n_lp, per_kind, rng)
    n_correct, n_wrong = int(per_kind[0]), int(per_kind[1])
    low, high = max(0, n_lp - n_wrong), min(n_correct, n_lp)
    wanted_low, wanted_high = low, high
    if n_correct >= 2:
        wanted_low, wanted_high = max(wanted_low, 1), min(wanted_high, n_correct - 1)
    if n_wrong >= 2:
        wanted_low, wanted_high = max(wanted_low, n_lp - (n_wrong - 1)), min(wanted_high, n_lp - 1)
    if wanted_low <= wanted_high:
        low, high = wanted_low, wanted_high
    lp_correct = int(np.clip(lp_kind[0], low, high))
    lp = np.zeros_like(chosen)
    lp[:, 0] = _apportion(lp_correct, chosen[:, 0], rng)
    lp[:, 1] = _apportion(n_lp - lp_correct, chosen[:, 1], rng)
    return lp


def _shortage_error(
    total: int,
    n_lp: int,
    n_ep: int,
    names: list[str],
    quotas: np.ndarray,
    available: np.ndarray,
    reason: str | None,
    n_repeated: int = 0,
) -> InvalidParameterError:
    rows = []
    for c, name in enumerate(names):
        needed, have = quotas[c], available[c]
        row = f"{name!r} needs {needed[0]} correct / {needed[1]} wrong, has {have[0]} / {have[1]}"
        rows.append(row)
    sentences = [
        (
            f"select_examples cannot pick {total} samples ({n_lp} LP + {n_ep} EP) with the classes covered "
            "uniformly and half of them predicted correctly by the model, without replacement."
        ),
    ]
    if reason:
        sentences.append(f"Here {reason}")
    sentences.append("Per class (labels), correctly / wrongly predicted: " + "; ".join(rows) + ".")
    if n_repeated and reason is None:
        sentences.append(f"{n_repeated} repeated texts were left out (a text is selected at most once).")
    sentences.append(
        "Pass more samples, ask for fewer (n_lp, n_ep), or pass balance='relaxed' to fill the missing "
        "cells from the nearest ones."
        if reason is None
        else "Pass more samples or ask for fewer (n_lp, n_ep)."
    )
    return InvalidParameterError(" ".join(sentences))
