"""o1 Concept Alignment (o1CA, ConSim paper §3.2 eq. 2): concept labels proposed by an LLM.

1. An LLM (any simulator) reads the task, the classes and a few example texts, and proposes concept
   *labels*, each with representative sentences (:meth:`LLMLabels.propose`, parsed by
   :func:`parse_label_proposals`, which accepts JSON — fenced or not — and plain numbered/bulleted lists).
2. Each concept ``i`` of the extractor takes the label ``j`` whose sentences ``X_j`` activate it most on
   average: ``o1CA(cpt_i) = argmax_j mean_{x ∈ X_j} f_ic(x)_i`` (:func:`o1ca`).

The paper prompted GPT o1; any chat model behind the simulator protocol works here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from xaimetrics._validation import check_fitted, check_positive_int, check_texts, invalid
from xaimetrics._words import encode_texts
from xaimetrics.consim._parsing import _strip_reasoning
from xaimetrics.exceptions import SimulatorError

__all__ = ["LLMLabels", "o1ca", "parse_label_proposals"]

if TYPE_CHECKING:
    from xaimetrics._protocols import ActivationModel
    from xaimetrics._typing import Array
    from xaimetrics.concepts import ConceptExtractor, ConceptInterpretation
    from xaimetrics.simulators import ChatMessage, Simulator

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_NUMBERED = re.compile(r"^\s*(?:#+\s*)?(?:(?:concept|label)\s*)?\d+\s*[.):\-]\s*", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•+>]|\d+[a-z][.)])\s+")
_LABEL_KEY = re.compile(r"^\s*(?:label|concept|name)\s*\d*\s*[:\-]\s*", re.IGNORECASE)
_SENTENCES_HEADER = re.compile(r"^\s*(?:representative\s+)?(?:sentences|examples)\s*:?\s*$", re.IGNORECASE)
_QUOTES = "\"'“”‘’`*_ "
_LABEL_KEYS = ("label", "name", "concept", "title")
_SENTENCE_KEYS = ("sentences", "examples", "representative_sentences", "texts")


def parse_label_proposals(text: str | None) -> dict[str, tuple[str, ...]]:
    """Read ``{label: sentences}`` from an LLM answer; never raises on any text.

    Accepted: a JSON list of ``{"label": ..., "sentences": [...]}`` objects (``name``/``concept`` and
    ``examples`` also work), a JSON object ``{label: [sentences]}`` or ``{"concepts": [...]}``, inside
    code fences or surrounded by prose; otherwise numbered or bold label lines each followed by bulleted
    or quoted sentences. Labels are de-duplicated (case-insensitive) and labels without a sentence dropped.

    Example:
        >>> answer = '''Sure!
        ... 1. **Praise of acting**
        ...    - The cast is superb.
        ...    - "A moving performance."
        ... 2. Boredom:
        ...    * I fell asleep.'''
        >>> parse_label_proposals(answer)
        {'Praise of acting': ('The cast is superb.', 'A moving performance.'), 'Boredom': ('I fell asleep.',)}
    """
    cleaned = _strip_reasoning(text)
    for candidate in _json_candidates(cleaned):
        proposals = _from_json(candidate)
        if proposals:
            return proposals
    return _from_lines(cleaned)


def o1ca(
    label_sentences: Mapping[str, Sequence[str]], encode: Callable[[list[str]], ArrayLike]
) -> tuple[dict[int, str], np.ndarray]:
    """Give each concept the label whose sentences activate it most on average (paper eq. 2).

    Args:
        label_sentences: ``{label: representative sentences}``.
        encode: ``texts → concept activations f_ic(texts)``, array of shape ``(n_texts, n_concepts)``,
            e.g. ``lambda texts: extractor.encode(model.activations(texts))``.

    Returns:
        ``({concept_id: label}, scores)`` with ``scores[j, i] = mean_{x ∈ X_j} f_ic(x)_i``, shape
        ``(n_labels, n_concepts)``, labels in the order given. Ties go to the first label.

    Example:
        >>> import numpy as np
        >>> activations = {"great": [2.0, 0.0], "superb": [1.0, 0.5], "dull": [0.0, 3.0], "slow": [0.5, 1.0]}
        >>> encode = lambda texts: np.array([activations[t] for t in texts])
        >>> labels, scores = o1ca({"praise": ["great", "superb"], "boredom": ["dull", "slow"]}, encode)
        >>> labels, scores.tolist()
        ({0: 'praise', 1: 'boredom'}, [[1.5, 0.25], [0.25, 2.0]])
    """
    owner = "o1ca"
    if not isinstance(label_sentences, Mapping) or not label_sentences:
        raise invalid("label_sentences", owner, "a non-empty mapping {label: sentences}", label_sentences)
    labels = list(label_sentences)
    groups = [check_texts(label_sentences[label], f"label_sentences[{label!r}]", owner) for label in labels]
    flat = [sentence for group in groups for sentence in group]
    values = encode_texts(encode, flat, batch_size=None, owner=owner, name="encode")
    bounds = np.cumsum([0] + [len(group) for group in groups])
    scores = np.stack([values[bounds[j] : bounds[j + 1]].mean(axis=0) for j in range(len(labels))])
    best = scores.argmax(axis=0)
    return {i: labels[int(j)] for i, j in enumerate(best)}, scores


@dataclass(eq=False)
class LLMLabels:
    """o1CA interpretation: an LLM proposes concept labels, each concept gets the best-aligned one (eq. 2).

    Args:
        simulator: the LLM, anything with ``generate(messages)`` (see :mod:`xaimetrics.simulators`).
        model: the split classifier (``activations``, ``h``), or a callable ``texts → activations``.
        extractor: the fitted concept extractor (``encode``, ``t``).
        class_names: class names shown to the LLM (default: ``model.class_names`` when it has them).
        n_labels: how many labels to ask for.
        n_sentences: representative sentences per label.
        n_examples: dataset texts shown to the LLM (drawn with ``random_state``, cut to 300 characters).
        task: a one-line description of the task (default: generic text classification).
        random_state: seed of the example draw.

    Attributes (after :meth:`fit`):
        proposals_ (dict[str, tuple[str, ...]]): the labels and sentences the LLM proposed.
        raw_answer_ (str): the LLM's answer.
        scores_ (numpy.ndarray): mean activation of each label's sentences, ``(n_labels, n_concepts)``.
        concept_labels_ (dict[int, str]): the label of each concept.

    Example:
        >>> import numpy as np
        >>> from xaimetrics.simulators import ScriptedSimulator
        >>> answer = '[{"label": "praise", "sentences": ["great", "superb"]}, {"label": "boredom", "sentences": ["dull"]}]'
        >>> h = lambda texts: np.array([[len(t), t.count("u")] for t in texts], dtype=float)
        >>> class Identity:
        ...     def encode(self, A):
        ...         return A
        >>> labels = LLMLabels(ScriptedSimulator(lambda messages: answer), h, Identity(), class_names=["neg", "pos"])
        >>> labels.fit(["a great film", "so dull"]).concept_labels_
        {0: 'praise', 1: 'boredom'}
    """

    simulator: Simulator | None
    model: ActivationModel | Callable[[list[str]], Array]
    extractor: ConceptExtractor
    _: KW_ONLY
    class_names: Sequence[str] | None = None
    n_labels: int = 10
    n_sentences: int = 5
    n_examples: int = 10
    task: str | None = None
    random_state: int = 0

    def messages(self, inputs: Sequence[str]) -> list[ChatMessage]:
        """The chat messages asking the LLM for labels (shown for transparency and dry runs)."""
        from xaimetrics.simulators import ChatMessage

        owner = "LLMLabels"
        texts = check_texts(inputs, "inputs", owner)
        n_labels = check_positive_int(self.n_labels, "n_labels", owner)
        n_sentences = check_positive_int(self.n_sentences, "n_sentences", owner)
        n_examples = check_positive_int(self.n_examples, "n_examples", owner)
        classes = self._class_names()
        rng = np.random.default_rng(self.random_state)
        picked = rng.permutation(len(texts))[: min(n_examples, len(texts))]
        examples = "\n".join(f"- {_one_line(texts[i])[:300]}" for i in sorted(picked))
        task = self.task or "classifying texts"
        system = (
            f"You help explain a text classifier used for {task}. The classes are: [{', '.join(classes)}]. "
            f"Propose {n_labels} distinct concepts that such a model could rely on to classify texts. For each "
            f"concept give a short label (a few words) and {n_sentences} short, varied sentences that clearly "
            'express it. Answer only with JSON: a list of objects {"label": "...", "sentences": ["...", ...]}.'
        )
        return [ChatMessage("system", system), ChatMessage("user", "Examples of texts:\n" + examples)]

    def propose(self, inputs: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """Ask the LLM for labels and representative sentences; sets ``proposals_`` and ``raw_answer_``.

        Raises:
            SimulatorError: the call failed for good, or no label could be read from the answer.
        """
        simulator = self.simulator
        if simulator is None or not callable(getattr(simulator, "generate", None)):
            raise invalid(
                "simulator", "LLMLabels", "an object with generate(messages)", type(simulator).__name__
            )
        response = simulator.generate(self.messages(inputs))
        error = getattr(response, "error", None)
        text = response if isinstance(response, str) else getattr(response, "text", "")
        if error:
            raise SimulatorError(f"LLMLabels could not get concept labels: the simulator failed ({error}).")
        proposals = parse_label_proposals(text)
        if not proposals:
            excerpt = (text or "")[:200].replace("\n", " ")
            raise SimulatorError(
                f"LLMLabels could not read any label with sentences from the LLM answer: {excerpt!r}. "
                "Use a stronger model, or pass the labels to fit(inputs, proposals=...)."
            )
        self.raw_answer_ = text
        self.proposals_ = proposals
        return proposals

    def fit(self, inputs: Sequence[str], proposals: Mapping[str, Sequence[str]] | None = None) -> LLMLabels:
        """Get labels (from the LLM unless ``proposals`` is given) and align them to the concepts (eq. 2)."""
        if proposals is None:
            proposals = self.propose(inputs)
        else:
            self.proposals_ = {str(label): tuple(sentences) for label, sentences in proposals.items()}
            self.raw_answer_ = ""
        labels, scores = o1ca(proposals, self._encode)
        self.concept_labels_ = labels
        self.scores_ = scores
        return self

    def interpret(self) -> dict[int, ConceptInterpretation]:
        """``{concept_id: ConceptInterpretation(label=...)}`` for every concept (usable by :class:`ConSim`).

        Raises:
            NotFittedError: before :meth:`fit`.
        """
        from xaimetrics.concepts import ConceptInterpretation

        check_fitted(self, "concept_labels_", "with the dataset texts first")
        return {i: ConceptInterpretation(label=label) for i, label in self.concept_labels_.items()}

    def _encode(self, texts: list[str]) -> Array:
        if hasattr(self.model, "activations"):
            activations = self.model.activations(texts)
        elif callable(self.model):
            activations = self.model(texts)
        else:
            raise invalid(
                "model", "LLMLabels", "a split classifier or a callable texts → activations", self.model
            )
        if not callable(getattr(self.extractor, "encode", None)):
            raise invalid(
                "extractor", "LLMLabels", "a fitted concept extractor with encode(A)", self.extractor
            )
        return self.extractor.encode(activations)

    def _class_names(self) -> list[str]:
        if self.class_names is not None:
            return [str(c) for c in self.class_names]
        if hasattr(self.model, "class_names"):
            return [str(c) for c in self.model.class_names]
        raise invalid("class_names", "LLMLabels", "given when the model has no class_names", None)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _json_candidates(text: str) -> list[str]:
    candidates = [match.group(1) for match in _FENCE.finditer(text)]
    for opening, closing in (("[", "]"), ("{", "}")):
        start, end = text.find(opening), text.rfind(closing)
        if 0 <= start < end:
            candidates.append(text[start : end + 1])
    return candidates


def _from_json(candidate: str) -> dict[str, tuple[str, ...]]:
    try:
        data = json.loads(candidate)
    except (ValueError, RecursionError):
        return {}
    if isinstance(data, dict):
        nested = next(
            (data[k] for k in ("concepts", "labels", "items") if isinstance(data.get(k), list)), None
        )
        if nested is not None:
            data = nested
        else:
            data = [{"label": key, "sentences": value} for key, value in data.items()]
    if not isinstance(data, list):
        return {}
    result: dict[str, tuple[str, ...]] = {}
    for item in data:
        if not isinstance(item, dict):
            continue
        label = next((item[k] for k in _LABEL_KEYS if isinstance(item.get(k), str)), None)
        sentences = next((item[k] for k in _SENTENCE_KEYS if k in item), None)
        if isinstance(sentences, str):
            sentences = [sentences]
        if label is None or not isinstance(sentences, list):
            continue
        _add(result, label, [s for s in sentences if isinstance(s, str)])
    return result


def _from_lines(text: str) -> dict[str, tuple[str, ...]]:
    result: dict[str, tuple[str, ...]] = {}
    label: str | None = None
    sentences: list[str] = []
    for line in text.splitlines():
        if not line.strip() or _SENTENCES_HEADER.match(line):
            continue
        indented = line[:1].isspace()
        is_label = not indented and (
            _NUMBERED.match(line) or _LABEL_KEY.match(line) or line.strip().startswith(("**", "#"))
        )
        if is_label:
            if label is not None:
                _add(result, label, sentences)
            body = _LABEL_KEY.sub("", _NUMBERED.sub("", line, count=1), count=1)
            head, _, rest = body.partition(":")
            label, sentences = head, ([rest] if rest.strip(_QUOTES) else [])
        elif label is not None:
            sentences.append(_BULLET.sub("", line, count=1))
    if label is not None:
        _add(result, label, sentences)
    return result


def _add(result: dict[str, tuple[str, ...]], label: str, sentences: list[str]) -> None:
    label = _one_line(label.replace("#", " ")).strip(_QUOTES + ":-")
    cleaned = tuple(s for s in (_one_line(s).strip(_QUOTES) for s in sentences) if s)
    if not label or not cleaned or any(label.casefold() == known.casefold() for known in result):
        return
    result[label] = cleaned
