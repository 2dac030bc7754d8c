"""The concept extractors by name: one registry read by the API, the command line, the grid and the demo.

Each entry is an :class:`ExtractorKind`: the class (any :class:`~xaimetrics.concepts.ConceptExtractor`, or a
factory taking the same keyword arguments) and what callers must know about it without fitting it — whether
it needs non-negative activations (a ``+`` model), whether its concepts are non-negative, whether its number of
concepts is free or bounded by the data. Names are canonical CamelCase (``NMF``, ``NoProjection``), matched
case-insensitively, one spelling each (no aliases). Adding an extractor is one ``register`` call::

    EXTRACTORS.register("TopVariance", ExtractorKind(TopVariance))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xaimetrics._registry import Registry
from xaimetrics.concepts._base import ConceptExtractor
from xaimetrics.concepts._ica import ICA
from xaimetrics.concepts._nmf import NMF
from xaimetrics.concepts._no_projection import NoProjection
from xaimetrics.concepts._pca import PCA
from xaimetrics.concepts._sae import SAE
from xaimetrics.concepts._svd import SVD

__all__ = ["EXTRACTORS", "ExtractorKind", "make_extractor"]


@dataclass(frozen=True)
class ExtractorKind:
    """A concept extractor and what is known about it before fitting.

    Args:
        factory: the extractor class (called with ``n_concepts=``, ``random_state=`` and its own options).
        sized: whether it takes a number of concepts; ``False`` for one concept per neuron (NoProjection),
            which is then built with its options only.
        positive_activations: it needs non-negative activations (NMF: use a ``+`` model, ReLU at the split).
        nonnegative_codes: its concepts are ≥ 0 (NMF, SAE), so they are clipped at 0 when perturbed and their
            sign is meaningful.
        bounded: its number of concepts is at most ``min(n_samples, n_features)`` of the fit activations.

    Example:
        >>> EXTRACTORS.get("nmf").positive_activations, EXTRACTORS.canonical("noprojection")
        (True, 'NoProjection')
    """

    factory: Callable[..., ConceptExtractor]
    sized: bool = True
    positive_activations: bool = False
    nonnegative_codes: bool = False
    bounded: bool = False


#: every concept extractor, by canonical name (case-insensitive)
EXTRACTORS: Registry[ExtractorKind] = Registry("extractor", argument="method")
EXTRACTORS.register(
    "NMF", ExtractorKind(NMF, positive_activations=True, nonnegative_codes=True, bounded=True), builtin=True,
    description="non-negative matrix factorisation (needs a '+' model)",
)  # fmt: skip
EXTRACTORS.register(
    "SAE", ExtractorKind(SAE, nonnegative_codes=True), builtin=True, description="sparse autoencoder"
)
EXTRACTORS.register(
    "ICA", ExtractorKind(ICA, bounded=True), builtin=True, description="independent component analysis"
)
EXTRACTORS.register(
    "PCA", ExtractorKind(PCA, bounded=True), builtin=True, description="principal component analysis"
)
EXTRACTORS.register(
    "SVD", ExtractorKind(SVD, bounded=True), builtin=True, description="singular value decomposition"
)
EXTRACTORS.register(
    "NoProjection", ExtractorKind(NoProjection, sized=False), builtin=True,
    description="the neurons themselves (C = H)",
)  # fmt: skip


def make_extractor(
    name: str,
    n_concepts: int | None = None,
    *,
    random_state: int | None = None,
    owner: str = "make_extractor",
    argument: str = "method",
    **options: object,
) -> ConceptExtractor:
    """A fresh (unfitted) extractor of a registered name; ``options`` go to its constructor.

    Extractors that are not ``sized`` (NoProjection) ignore ``n_concepts`` and ``random_state``.

    Example:
        >>> make_extractor("pca", 3, random_state=0)
        PCA(n_concepts=3, random_state=0)
        >>> make_extractor("NoProjection", 3)
        NoProjection()
    """
    kind = EXTRACTORS.get(name, owner=owner, argument=argument)
    if not kind.sized:
        return kind.factory(**options)
    return kind.factory(n_concepts=n_concepts, random_state=random_state, **options)
