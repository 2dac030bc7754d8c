"""Randomised twins of concept methods: the model-randomisation control applied to ConSim (issue #30).

Adebayo et al. (2018) ask of a saliency method that it change when the model's weights are re-drawn; Heap et al.
(ICLR 2026) find that concepts of randomly initialised transformers score nearly as well as trained ones. A
*randomised twin* of a concept method runs the same extractor and interpretation on a copy of the classifier with
re-initialised weights (:func:`~xaimetrics.models.randomized_copy`, drawn with the setting's seed), while the
simulator still predicts the **trained** classifier: the LP samples, f's predictions shown and the EP references
are the trained model's, only the concepts, their words and their importances come from the twin.

A grid lists its twins in ``randomized_twins``: ``"all"`` (every weight re-drawn), ``"top"`` (the head only) or
``"top<N>"`` (the ``N`` topmost units of the cascade: head, then blocks from the last). Each concept method ``M``
then gets the methods ``M@random-all``, ``M@random-top`` … (:func:`twin_method`), ranked like any competitor.
:func:`twin_comparison` reports, per method and twin, the gain over ``NoExplanation`` beside the gain over the
twin, with t intervals over the independent units (seeds) and the pre-stated one-sided sign-flip test that the
method beats its twin: a method that does not is what Heap et al. warn of — a score the training did not earn.
"""

from __future__ import annotations

import re

from xaimetrics._validation import invalid

__all__ = ["TWIN_SEPARATOR", "parse_twin", "split_twin", "twin_method"]

#: what separates a concept method's name from its twin's specification (``"PCA@random-all"``)
TWIN_SEPARATOR = "@random-"
_TWIN = re.compile(r"all|top([1-9][0-9]*)?")


def parse_twin(twin: object, *, owner: str = "Grid", argument: str = "randomized_twins") -> tuple[str, int]:
    """``(layers, n_top)`` of :func:`~xaimetrics.models.randomized_copy` for a twin's specification.

    Example:
        >>> parse_twin("all"), parse_twin("top"), parse_twin("top3")
        (('all', 1), ('top', 1), ('top', 3))
        >>> parse_twin("bottom")
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'randomized_twins' parameter of Grid must be ...
    """
    match = _TWIN.fullmatch(twin) if isinstance(twin, str) else None
    if match is None:
        raise invalid(
            argument, owner, "'all', 'top' or 'top<N>' (every weight re-drawn, the head only, or the N topmost "
            "units: head, then blocks from the last)", repr(twin), "Use e.g. randomized_twins = [\"all\", \"top\"].",
        )  # fmt: skip
    if twin == "all":
        return "all", 1
    return "top", int(match.group(1) or 1)


def twin_method(method: str, twin: str) -> str:
    """The method name of ``method``'s randomised twin.

    Example:
        >>> twin_method("PCA", "all")
        'PCA@random-all'
    """
    return f"{method}{TWIN_SEPARATOR}{twin}"


def split_twin(method: str) -> tuple[str, str | None]:
    """``(concept method, twin or None)`` of a method name.

    Example:
        >>> split_twin("NMF@random-top2"), split_twin("NMF")
        (('NMF', 'top2'), ('NMF', None))
    """
    base, separator, twin = str(method).partition(TWIN_SEPARATOR)
    return (base, twin) if separator else (base, None)
