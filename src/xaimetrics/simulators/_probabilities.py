"""Class probabilities from token log-probabilities: the pieces every probabilistic simulator shares.

A simulator that exposes log-probabilities scores each evaluation sample as a *continuation* of the prompt:
the answer line ``Sample_{id}: {class}`` is tokenised once per class, the tokens all lines share (the
*stem*, e.g. ``Sample_12: Class_``) are read once, and each class gets the sum of the log-probabilities of
its remaining tokens. Normalising over the classes gives ``p(class | prompt, Sample_{id}: )`` — the
distribution restricted to the valid answers (a grammar-constrained answer has no other choice). When one
class's tokens are a prefix of another's (``Class_1`` / ``Class_10``) the line ends with a newline token, so
the shorter class has to *stop* to be chosen. The probability is that of each line's own tokenisation (no
marginalisation over other tokenisations of the same string), the usual convention.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from xaimetrics._validation import invalid
from xaimetrics.simulators._base import AnswerSchema, SimulatorResponse

__all__ = [
    "ClassContinuations",
    "answer_text",
    "check_probabilities",
    "class_continuations",
    "log_softmax",
    "normalise_log_probabilities",
    "probability_response",
]


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Numerically stable ``log softmax`` of a 1-d array of logits (float64).

    Example:
        >>> np.round(np.exp(log_softmax(np.array([0.0, np.log(3.0)]))), 3).tolist()
        [0.25, 0.75]
    """
    values = np.asarray(logits, dtype=np.float64)
    shifted = values - values.max()
    return shifted - math.log(float(np.exp(shifted).sum()))


def normalise_log_probabilities(log_probabilities: Sequence[float]) -> tuple[float, ...]:
    """Probabilities proportional to ``exp(log p)``, summing to 1 (``-inf`` gives 0).

    Example:
        >>> [round(p, 6) for p in normalise_log_probabilities([math.log(0.2), math.log(0.6)])]
        [0.25, 0.75]
    """
    values = np.asarray(log_probabilities, dtype=np.float64)
    if values.ndim != 1 or not values.size or not np.isfinite(values).any():
        raise invalid(
            "log_probabilities", "normalise_log_probabilities", "a 1-d array with a finite value", values
        )
    weights = np.exp(values - values[np.isfinite(values)].max())
    return tuple(float(v) for v in weights / weights.sum())


class ClassContinuations:
    """The token sequences of one sample's answer lines, one per class, split into a shared stem and tails.

    Attributes:
        stem: the tokens every class line starts with (read once).
        tails: per class, the tokens after the stem (each non-empty).

    Example:
        >>> cont = ClassContinuations([[5, 6, 7], [5, 6, 8, 9]])
        >>> cont.stem, cont.tails
        ((5, 6), ((7,), (8, 9)))
    """

    def __init__(self, sequences: Sequence[Sequence[int]]) -> None:
        sequences = [tuple(int(t) for t in s) for s in sequences]
        if len(sequences) < 2 or any(not s for s in sequences):
            raise invalid("sequences", "ClassContinuations", "two or more non-empty token lists", sequences)
        n = 0
        while all(len(s) > n for s in sequences) and len({s[n] for s in sequences}) == 1:
            n += 1
        if any(len(s) == n for s in sequences):
            raise invalid(
                "sequences",
                "ClassContinuations",
                "token lists none of which is a prefix of another",
                sequences,
                "End every line with a terminator token (see class_continuations).",
            )
        self.stem = sequences[0][:n]
        self.tails = tuple(s[n:] for s in sequences)

    def log_probabilities(self, next_log_probs: Callable[[tuple[int, ...]], np.ndarray]) -> list[float]:
        """Sum of each tail's token log-probabilities.

        ``next_log_probs(prefix)`` returns the log-distribution of the next token after ``stem + prefix``
        (``prefix`` a tuple of tail tokens, ``()`` right after the stem); it is called once per distinct
        prefix, so a model evaluates each shared tail token once.
        """
        memo: dict[tuple[int, ...], np.ndarray] = {}
        out = []
        for tail in self.tails:
            total = 0.0
            for position, token in enumerate(tail):
                prefix = tuple(tail[:position])
                if prefix not in memo:
                    memo[prefix] = next_log_probs(prefix)
                total += float(memo[prefix][token])
            out.append(total)
        return out

    def probabilities(self, next_log_probs: Callable[[tuple[int, ...]], np.ndarray]) -> tuple[float, ...]:
        """The classes' probabilities: :meth:`log_probabilities` normalised over the classes.

        Example:
            >>> cont = ClassContinuations([[5, 7], [5, 8]])
            >>> log_probs = np.log([0.1] * 7 + [0.2, 0.6])  # the next token's distribution, ids 0 to 8
            >>> [round(p, 6) for p in cont.probabilities(lambda prefix: log_probs)]
            [0.25, 0.75]
        """
        return normalise_log_probabilities(self.log_probabilities(next_log_probs))


def class_continuations(
    tokenize: Callable[[str], Sequence[int]], sample_id: str, classes: Sequence[str], terminator: str = "\n"
) -> ClassContinuations:
    """Tokenise ``Sample_{id}: {class}`` for every class; add ``terminator`` when a line prefixes another.

    Example:
        >>> chars = lambda text: [ord(c) for c in text]
        >>> cont = class_continuations(chars, "3", ["Class_1", "Class_10"])
        >>> "".join(map(chr, cont.stem)), ["".join(map(chr, t)) for t in cont.tails]
        ('Sample_3: Class_1', ['\\n', '0\\n'])
    """
    lines = [f"Sample_{sample_id}: {name}" for name in classes]
    sequences = [tuple(tokenize(line)) for line in lines]
    try:
        return ClassContinuations(sequences)
    except ValueError:
        return ClassContinuations([tuple(tokenize(line + terminator)) for line in lines])


def answer_text(schema: AnswerSchema, probabilities: Mapping[str, Sequence[float]]) -> str:
    """The answer lines with the most probable class per sample (the first one on exact ties).

    Example:
        >>> schema = AnswerSchema(("4", "5"), ("no", "yes"), probabilities=True)
        >>> print(answer_text(schema, {"4": (0.3, 0.7), "5": (0.6, 0.4)}))
        Sample_4: yes
        Sample_5: no
    """
    return "\n".join(
        schema.line(i, schema.classes[int(np.argmax(probabilities[i]))]) for i in schema.sample_ids
    )


def check_probabilities(
    probabilities: object, schema: AnswerSchema, owner: str, *, tolerance: float = 1e-6
) -> dict[str, tuple[float, ...]]:
    """Check ``{sample id: probabilities over schema.classes}`` and return it renormalised as tuples.

    Every sample id of the schema needs a finite, non-negative vector of the schema's length with a positive
    sum within ``tolerance`` of 1 (the renormalisation only removes rounding).

    Example:
        >>> check_probabilities({"1": [0.25, 0.75]}, AnswerSchema(("1",), ("a", "b")), "demo")
        {'1': (0.25, 0.75)}
    """
    if not isinstance(probabilities, Mapping):
        raise invalid("probabilities", owner, "a mapping {sample id: class probabilities}", probabilities)
    out: dict[str, tuple[float, ...]] = {}
    for sample_id in schema.sample_ids:
        values = np.asarray(probabilities.get(sample_id, ()), dtype=np.float64)
        if (
            values.shape != (len(schema.classes),)
            or not np.isfinite(values).all()
            or (values < 0).any()
            or abs(float(values.sum()) - 1.0) > tolerance
        ):
            raise invalid(
                "probabilities",
                owner,
                f"for sample {sample_id!r}, {len(schema.classes)} non-negative probabilities summing to 1",
                values.tolist(),
            )
        out[sample_id] = tuple(float(v) for v in values / values.sum())
    return out


def probability_response(
    schema: AnswerSchema,
    probabilities: Mapping[str, tuple[float, ...]],
    *,
    model: str,
    computed: int,
    conditioned: int,
    prefix_reuse: bool,
    latency_s: float = 0.0,
) -> SimulatorResponse:
    """The response of a local simulator that scored continuations: argmax text, tokens computed / conditioned on.

    ``latency_s`` may be left out when the caller times the call itself (as :class:`LocalModelSimulator` does).

    Example:
        >>> r = probability_response(AnswerSchema(("1",), ("a", "b")), {"1": (0.2, 0.8)}, model="m", computed=5,
        ...                          conditioned=50, latency_s=0.1, prefix_reuse=True)
        >>> r.text, r.prompt_tokens, r.metadata["prompt_tokens_total"], r.cached_prompt_tokens
        ('Sample_1: b', 5, 50, 45)
    """
    return SimulatorResponse(
        text=answer_text(schema, probabilities),
        model=model,
        prompt_tokens=computed,
        cached_prompt_tokens=max(0, conditioned - computed),  # the prefix read from the KV state
        completion_tokens=0,
        latency_s=latency_s,
        probabilities=dict(probabilities),
        metadata={
            "mode": "class_probabilities",
            "prompt_tokens_total": conditioned,
            "prefix_reuse": prefix_reuse,
        },
    )
