"""Controls for simulatability: explanations whose information about f is known in advance.

A measurement that cannot tell a good explanation from an empty one is not a measurement. As saliency sanity
checks do (Adebayo et al., 2018), every grid can run two controls beside the concept methods, rendered in
exactly the format of a concept explanation (the same concept lines, class importances and local
contributions), so that only their *content* differs:

- :class:`SurrogateWords` — the **positive control**: a linear surrogate (logistic regression on word
  presence) fitted to **f's predictions** on the concept-fit texts. Each concept is one class's direction of
  the surrogate: its aligned words push f towards that class, its opposed words away from it; a binary task
  has one concept (aligned → class 1, opposed → class 0). Local contributions are the surrogate's logit of
  each sample. It states f's decision *rule*, never its answers on the prompt's samples, and the simulator
  should beat the no-explanation baseline with it.
- :class:`RandomWords` — the **negative control**: concepts made of words drawn at random from the same
  vocabulary, with random class importances and random local contributions (seeded by the text, so fixed
  for a sample but independent of f). It carries no information about f and must not beat the baseline.

Both are fitted like extractors (``fit`` returns ``self``, learned state ends in ``_``) and give ConSim their
:class:`~xaimetrics.consim.Explanation` of the samples with :meth:`explanation`.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from xaimetrics._registry import Registry
from xaimetrics._validation import check_fitted, check_positive_int, check_texts, invalid
from xaimetrics._words import WordTokenizer, count_words, most_frequent, stop_word_set
from xaimetrics.concepts import ConceptInterpretation
from xaimetrics.consim._explanation import Explanation

__all__ = ["CONTROLS", "CONTROL_ROLES", "ControlKind", "RandomWords", "SurrogateWords", "make_control"]

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

#: ``"english"``, ``None`` or a collection of words (as for :class:`~xaimetrics.concepts.TopWords`)
StopWords = str | Iterable[str] | None


def _vocabulary(
    texts: Sequence[str], min_frequency: int, stop_words: StopWords, owner: str
) -> tuple[WordTokenizer, list[str]]:
    """The words TopWords would consider (its default tokeniser, the stop words and the frequency floor), most
    frequent first."""
    tokenizer = WordTokenizer(lowercase=True)
    counts = count_words(texts, tokenizer, stop_word_set(stop_words, "TopWords", lowercase=True))
    vocabulary = [word for word, _ in most_frequent(counts.items(), min_count=min_frequency, max_words=None)]
    if len(vocabulary) < 2:
        raise invalid(
            "min_frequency", owner, "a floor that leaves at least two words", min_frequency,
            "Lower min_frequency or pass more texts.",
        )  # fmt: skip
    return tokenizer, vocabulary


class _Control(ABC):
    """Shared parts: the fitted-state check and the explanation."""

    interpretation_: dict[int, ConceptInterpretation]
    global_importances_: np.ndarray

    def _check_fitted(self) -> None:
        check_fitted(self, "global_importances_")

    @abstractmethod
    def local_importances(self, inputs: Sequence[str]) -> np.ndarray:
        """Local contributions of shape ``(n_samples, n_concepts)``."""

    def explanation(self, lp_texts: Sequence[str], ep_texts: Sequence[str]) -> Explanation:
        """The :class:`~xaimetrics.consim.Explanation` ConSim shows: the interpretation, the global importances
        and the local importances of the LP and EP texts (``None`` for an empty list)."""
        self._check_fitted()
        return Explanation(
            interpretation=dict(self.interpretation_),
            global_importances=self.global_importances_,
            lp_local_importances=self.local_importances(lp_texts) if len(lp_texts) else None,
            ep_local_importances=self.local_importances(ep_texts) if len(ep_texts) else None,
        )


class SurrogateWords(_Control):
    """Positive control: the top words of a linear surrogate of f (see the module docstring).

    Args:
        n_words: aligned and opposed words per concept.
        min_frequency: a word must occur this often in the fit texts (as for TopWords).
        stop_words: ``"english"``, ``None`` or a collection.
        C: inverse ℓ2 regularisation of the logistic regression.

    Attributes:
        vocabulary_: the words used as features; ``coef_``: ``(n_concepts, n_words)`` surrogate weights;
        interpretation_: ``{concept id: ConceptInterpretation}``; global_importances_: ``(n_classes,
        n_concepts)``; fidelity_: the surrogate's accuracy at predicting f on the fit texts.

    Example:
        >>> texts = ["good fun", "good film", "bad plot", "bad acting", "good cast", "bad end"] * 3
        >>> control = SurrogateWords(n_words=1, min_frequency=3).fit(texts, [1, 1, 0, 0, 1, 0] * 3, n_classes=2)
        >>> control.interpretation_[0].aligned, control.interpretation_[0].opposed, control.fidelity_
        (('good',), ('bad',), 1.0)
    """

    def __init__(
        self, *, n_words: int = 5, min_frequency: int = 5, stop_words: StopWords = "english", C: float = 1.0
    ):
        self.n_words = n_words
        self.min_frequency = min_frequency
        self.stop_words = stop_words
        self.C = C

    def _features(self, texts: Sequence[str]) -> csr_matrix:
        from scipy import sparse

        rows, cols = [], []
        for r, text in enumerate(texts):
            present = {self._index_[w] for w in self._words_(text) if w in self._index_}
            rows.extend([r] * len(present))
            cols.extend(sorted(present))
        data = np.ones(len(rows), dtype=np.float64)
        return sparse.csr_matrix((data, (rows, cols)), shape=(len(texts), len(self.vocabulary_)))

    def fit(self, inputs: Sequence[str], predictions: ArrayLike, *, n_classes: int) -> SurrogateWords:
        """Fit the surrogate to f's ``predictions`` (class ids) on ``inputs``."""
        from sklearn.linear_model import LogisticRegression

        owner = "SurrogateWords"
        texts = check_texts(inputs, "inputs", f"{owner}.fit")
        targets = np.asarray(predictions)
        if targets.shape != (len(texts),) or not np.issubdtype(targets.dtype, np.integer):
            raise invalid("predictions", f"{owner}.fit", f"{len(texts)} integer class ids", targets.shape)
        n_classes = check_positive_int(n_classes, "n_classes", owner, minimum=2)
        if len(np.unique(targets)) < 2:
            raise invalid(
                "predictions", f"{owner}.fit", "at least two predicted classes", np.unique(targets).tolist(),
                "f predicts a single class on these texts: pass more varied texts.",
            )  # fmt: skip
        n_words = check_positive_int(self.n_words, "n_words", owner)
        self._words_, self.vocabulary_ = _vocabulary(texts, self.min_frequency, self.stop_words, owner)
        self._index_ = {w: i for i, w in enumerate(self.vocabulary_)}
        features = self._features(texts)
        model = LogisticRegression(C=self.C, max_iter=2000).fit(features, targets)
        self.fidelity_ = float((model.predict(features) == targets).mean())
        coef = np.asarray(model.coef_, dtype=np.float64)
        classes = [int(c) for c in model.classes_]
        if n_classes == 2 and len(classes) == 2:
            self.coef_ = coef  # one concept: positive weights push towards class 1
            self.global_importances_ = np.array([[-1.0], [1.0]])
        else:
            self.coef_ = np.zeros((n_classes, coef.shape[1]))
            self.coef_[classes] = coef if len(classes) > 2 else np.vstack([-coef, coef])
            self.global_importances_ = np.eye(n_classes)
        self._intercept_ = model.intercept_
        self.interpretation_ = {}
        for concept, weights in enumerate(self.coef_):
            order = np.argsort(-weights, kind="stable")
            aligned = tuple(self.vocabulary_[j] for j in order[:n_words] if weights[j] > 0)
            opposed = tuple(self.vocabulary_[j] for j in order[::-1][:n_words] if weights[j] < 0)
            self.interpretation_[concept] = ConceptInterpretation(aligned=aligned, opposed=opposed)
        return self

    def local_importances(self, inputs: Sequence[str]) -> np.ndarray:
        """The surrogate's per-concept logit ``x · w`` of each text, shape ``(n_samples, n_concepts)``."""
        self._check_fitted()
        texts = check_texts(inputs, "inputs", "SurrogateWords.local_importances")
        return np.asarray(self._features(texts) @ self.coef_.T, dtype=np.float64)


class RandomWords(_Control):
    """Negative control: random words, random importances, independent of f (see the module docstring).

    Args:
        n_concepts: concepts to draw (as many as the concept methods it is compared with).
        n_words: aligned and opposed words per concept.
        min_frequency, stop_words: the vocabulary the words are drawn from (as for TopWords).
        random_state: the seed.

    Example:
        >>> texts = ["good fun", "good film", "bad plot", "bad acting", "good cast", "bad end"] * 3
        >>> control = RandomWords(n_concepts=3, n_words=2, min_frequency=3, random_state=0).fit(texts, n_classes=2)
        >>> control.global_importances_.shape, control.local_importances(["good fun"]).shape
        ((2, 3), (1, 3))
    """

    def __init__(
        self,
        n_concepts: int = 20,
        *,
        n_words: int = 5,
        min_frequency: int = 5,
        stop_words: StopWords = "english",
        random_state: int = 0,
    ):
        self.n_concepts = n_concepts
        self.n_words = n_words
        self.min_frequency = min_frequency
        self.stop_words = stop_words
        self.random_state = random_state

    def fit(
        self, inputs: Sequence[str], predictions: ArrayLike | None = None, *, n_classes: int
    ) -> RandomWords:
        """Draw the concepts from the vocabulary of ``inputs``; ``predictions`` is ignored (it is a control)."""
        owner = "RandomWords"
        texts = check_texts(inputs, "inputs", f"{owner}.fit")
        k = check_positive_int(self.n_concepts, "n_concepts", owner)
        n_words = check_positive_int(self.n_words, "n_words", owner)
        n_classes = check_positive_int(n_classes, "n_classes", owner, minimum=2)
        _, self.vocabulary_ = _vocabulary(texts, self.min_frequency, self.stop_words, owner)
        rng = np.random.default_rng(self.random_state)
        self.interpretation_ = {}
        for concept in range(k):
            drawn = rng.choice(
                len(self.vocabulary_), size=min(2 * n_words, len(self.vocabulary_)), replace=False
            )
            words = [self.vocabulary_[j] for j in drawn]
            half = len(words) // 2
            self.interpretation_[concept] = ConceptInterpretation(
                aligned=tuple(words[:half]), opposed=tuple(words[half:])
            )
        self.global_importances_ = rng.standard_normal((n_classes, k))
        return self

    def local_importances(self, inputs: Sequence[str]) -> np.ndarray:
        """Random contributions, fixed per (text, seed) and independent of f."""
        self._check_fitted()
        texts = check_texts(inputs, "inputs", "RandomWords.local_importances")
        rows = []
        for text in texts:
            digest = hashlib.sha256(f"{self.random_state}\0{text}".encode()).digest()
            rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
            rows.append(rng.standard_normal(len(self.interpretation_)))
        return np.array(rows, dtype=np.float64).reshape(len(texts), len(self.interpretation_))


@dataclass(frozen=True)
class ControlKind:
    """A control and its role.

    Args:
        factory: the control class.
        role: ``"positive"`` (must beat the no-explanation baseline) or ``"negative"`` (must not).
        sized: whether it takes a number of concepts (``RandomWords``); ``SurrogateWords`` has one concept per
            class direction.

    Example:
        >>> CONTROLS.get("SurrogateWords").role, CONTROLS.get("RandomWords").sized
        ('positive', True)
    """

    factory: Callable[..., SurrogateWords | RandomWords]
    role: str
    sized: bool = False


#: the controls a grid can run, by method name
CONTROLS: Registry[ControlKind] = Registry("control", argument="method")
CONTROLS.register("SurrogateWords", ControlKind(SurrogateWords, "positive"), builtin=True)
CONTROLS.register("RandomWords", ControlKind(RandomWords, "negative", sized=True), builtin=True)


class _ControlRoles(Mapping[str, str]):
    """Control method name → role, read from :data:`CONTROLS` at each access (never a copy made at import)."""

    def _roles(self) -> dict[str, str]:
        return {entry.name: entry.value.role for entry in CONTROLS.entries()}

    def __getitem__(self, name: str) -> str:
        return self._roles()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._roles())

    def __len__(self) -> int:
        return len(CONTROLS)

    def __repr__(self) -> str:
        return repr(self._roles())


#: control method name → role ("positive": must beat the baseline; "negative": must not), live: a control
#: registered later is in it
CONTROL_ROLES: Mapping[str, str] = _ControlRoles()


def make_control(method: str, n_concepts: int, seed: int, **options: object) -> SurrogateWords | RandomWords:
    """A fresh control by its grid name (``"SurrogateWords"`` or ``"RandomWords"``).

    Example:
        >>> type(make_control("RandomWords", 5, 0)).__name__, make_control("RandomWords", 5, 0).n_concepts
        ('RandomWords', 5)
    """
    kind = CONTROLS.get(method, owner="make_control")
    if kind.sized:
        return kind.factory(n_concepts, random_state=seed, **options)
    return kind.factory(**options)
