"""A transparent reference simulator: a literal reader of the ConSim prompt's words.

:class:`LexicalSimulator` sees exactly the chat messages an LLM sees and nothing else (no ``register`` hook,
no reference answers): it parses the rendered prompt (``consim/_rendering.py``, paper App. E) and predicts
f's class for every evaluation sample by counting words. Its rule, in full:

1. **Explanation evidence** (E1, E2, E3, U1). A concept's *evidence* in a sample is the number of its
   aligned words (and label words) present in the sample minus the number of its opposed words present.
   Class ``k`` scores ``s_E(k) = Σ_c w(k, c) · evidence(c)`` over the concepts listed for ``k``, with the
   bucket weights ``++ = 2``, ``+ = 1``, ``- = -1``, ``-- = -2``.
2. **Learning-phase evidence** (NE2, E2, E3, U1). Class ``k`` scores ``s_LP(k)``, the number of the sample's
   words (English stop words left out) found in the learning-phase texts f put in class ``k`` and in no
   learning-phase text of another class.
3. **Combination**: ``s(k) = s_E(k) + s_LP(k)``; probabilities ``softmax(s / temperature)``. With no
   evidence at all every class gets ``1 / n_classes`` (never a fixed class). The answer line of a sample is
   its most probable class; on a tie, one of the tied classes picked by a hash of the sample's text
   (deterministic, and spread over the classes across samples: a tie never answers a fixed class, which eq. 5's
   accuracy would reward whenever f predicts that class).

Words are those of :class:`~xaimetrics._words.WordTokenizer` (the tokenizer that made the concepts' top
words), presence is binary, and a multi-word entry is present when all its words are. Local contributions
(E3, U1) are parsed but not used. The simulator measures how useful the explanation's *words* are to a
literal reader; it says nothing of what an LLM or a person makes of them (docs/consim.md, "A lexical
reference simulator").
"""

from __future__ import annotations

import ast
import re
import time
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from xaimetrics._validation import check_positive_number
from xaimetrics._words import WordTokenizer, stop_word_set
from xaimetrics.simulators._base import AnswerSchema, BaseSimulator, ChatMessage, SimulatorResponse

__all__ = ["LexicalSimulator", "ReadPrompt", "read_prompt"]

#: weight of each importance bucket (paper Tab. 4)
BUCKET_WEIGHTS: Mapping[str, float] = {"++": 2.0, "+": 1.0, "-": -1.0, "--": -2.0}
_SAMPLE_LINE = re.compile(r"^Sample_(\S+?): (.*)$")
_CONCEPT_LINE = re.compile(r"^concept_(-?\d+): (.*)$")
_IMPORTANCE = re.compile(r"'concept_(-?\d+)': '(\+\+|\+|--|-)'")
_FIELD = re.compile(r"^(label|aligned|opposed): (.*)$", re.DOTALL)


@dataclass(frozen=True)
class ReadPrompt:
    """What a literal reader finds in a rendered ConSim prompt.

    ``concepts`` maps a concept id to its ``(aligned, opposed)`` word entries (label words count as aligned);
    ``importances`` maps a class to ``{concept id: bucket}``; ``lp`` lists ``(text, class)`` pairs of the
    learning phase when f's predictions are shown; ``ep`` maps each evaluation sample id to its text.
    """

    classes: tuple[str, ...]
    concepts: dict[int, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    importances: dict[str, dict[int, str]] = field(default_factory=dict)
    lp: tuple[tuple[str, str], ...] = ()
    ep: dict[str, str] = field(default_factory=dict)


def read_prompt(messages: Sequence[ChatMessage]) -> ReadPrompt:
    """Parse the messages of a rendered ConSim prompt (system: task, explanation, LP; user: EP samples).

    Example:
        >>> system = ("You are a classifier.\\n\\nThe classes are: [neg, pos]\\n\\n"
        ...           "For each concept, the most aligned and opposed words are:\\n"
        ...           "concept_3: aligned: ['fine'], opposed: ['dull']\\n\\n"
        ...           "The most important concepts and their importance for each class are:\\n"
        ...           "neg: 'concept_3': '--'\\npos: 'concept_3': '++'")
        >>> read = read_prompt([ChatMessage("system", system), ChatMessage("user", "Sample_1: a fine cast")])
        >>> read.classes, read.concepts, read.importances["pos"], read.ep
        (('neg', 'pos'), {3: (('fine',), ('dull',))}, {3: '++'}, {'1': 'a fine cast'})
    """
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    user = "\n\n".join(m.content for m in messages if m.role == "user")
    classes: tuple[str, ...] = ()
    concepts: dict[int, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    importances: dict[str, dict[int, str]] = {}
    lp_texts: dict[str, str] = {}
    lp_classes: dict[str, str] = {}
    for section in system.split("\n\n"):
        head, _, body = section.partition("\n")
        if head.startswith("The classes are: [") and head.endswith("]"):
            classes = tuple(name.strip() for name in head[len("The classes are: [") : -1].split(", "))
        elif head.startswith("For each concept"):
            for line in body.splitlines():
                match = _CONCEPT_LINE.match(line)
                if match:
                    concepts[int(match.group(1))] = _concept_words(match.group(2))
        elif head.startswith("The most important concepts"):
            for line in body.splitlines():
                name = next(
                    (c for c in sorted(classes, key=len, reverse=True) if line.startswith(c + ": ")), None
                )
                if name is not None:
                    importances[name] = {int(i): b for i, b in _IMPORTANCE.findall(line[len(name) + 2 :])}
        elif head.startswith("Here are examples of samples"):
            lp_texts = _sample_lines(body)
        elif head.startswith("The classes predicted for these examples"):
            lp_classes = _sample_lines(body)
    lp = tuple((lp_texts[i], lp_classes[i]) for i in lp_texts if i in lp_classes)
    return ReadPrompt(classes, concepts, importances, lp, _sample_lines(user))


def _sample_lines(text: str) -> dict[str, str]:
    lines = (_SAMPLE_LINE.match(line) for line in text.splitlines())
    return {m.group(1): m.group(2) for m in lines if m}


def _concept_words(description: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(aligned, opposed)`` entries of ``label: '…', aligned: [...], opposed: [...]`` (or a bare label)."""
    aligned: list[str] = []
    opposed: list[str] = []
    for part in _top_level_parts(description):
        match = _FIELD.match(part)
        key, literal = (match.group(1), match.group(2)) if match else ("label", part)
        try:
            value = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            continue  # not a literal the renderer writes: a literal reader skips it
        words = (
            [value] if isinstance(value, str) else [str(v) for v in value] if isinstance(value, list) else []
        )
        (opposed if key == "opposed" else aligned).extend(words)
    return tuple(aligned), tuple(opposed)


def _top_level_parts(text: str) -> list[str]:
    """Split at ``", "`` outside quotes and brackets (words and labels are Python string literals)."""
    parts, start, depth, quote, escaped = [], 0, 0, "", False
    for i, char in enumerate(text):
        if quote:
            escaped, quote = (not escaped and char == "\\"), ("" if char == quote and not escaped else quote)
        elif char in "'\"":
            quote = char
        elif char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif char == "," and depth == 0 and text[i + 1 : i + 2] == " ":
            parts.append(text[start:i])
            start = i + 2
    parts.append(text[start:])
    return [part for part in parts if part]


def _answer(probabilities: np.ndarray, text: str) -> int:
    """The most probable class; on a tie, the tied class a hash of the sample's text picks (module docstring).

    Example:
        >>> _answer(np.array([0.2, 0.8]), "x"), sorted({_answer(np.array([0.5, 0.5]), t) for t in "abcdefgh"})
        (1, [0, 1])
    """
    tied = np.flatnonzero(probabilities >= probabilities.max() - 1e-12)
    return int(tied[zlib.crc32(text.encode("utf-8")) % tied.size])


class WordReader(BaseSimulator):
    """A local reader that answers by counting words (the library's ``WordTokenizer``) at a ``temperature``.

    The base of :class:`LexicalSimulator` (ConSim prompts) and of the detection prompts'
    :class:`~xaimetrics.detection.WordOverlapReader`; ``temperature`` must be a number > 0.
    """

    supports_probabilities = True

    def __init__(self, temperature: float = 1.0) -> None:
        self.temperature = check_positive_number(temperature, "temperature", type(self).__name__)
        self._tokenizer = WordTokenizer()


class LexicalSimulator(WordReader):
    """A deterministic literal reader of the ConSim prompt (see the module docstring for its whole rule).

    Args:
        temperature: softmax temperature on the word-count scores (> 0; 1.0: one word more makes a class
            ``e ≈ 2.7`` times as probable).

    Example:
        >>> from xaimetrics.consim import render_prompt
        >>> prompt = render_prompt(
        ...     "E1", class_names=["sport", "tech"], ep_samples=["a late goal", "a new chip"], ep_predictions=[0, 1],
        ...     interpretation={0: ["goal", "match"], 1: ["chip", "laptop"]},
        ...     global_importances=[[1.0, -1.0], [-1.0, 1.0]])
        >>> sim = LexicalSimulator()
        >>> sim.generate(prompt.messages).text
        'Sample_0: sport\\nSample_1: tech'
        >>> schema = AnswerSchema(("0", "1"), ("sport", "tech"), probabilities=True)
        >>> [round(p, 3) for p in sim.generate(prompt.messages, answer_schema=schema).probabilities["0"]]
        [0.982, 0.018]
    """

    name = "lexical"

    def __init__(self, temperature: float = 1.0) -> None:
        super().__init__(temperature)
        self._stop_words = stop_word_set("english", "LexicalSimulator")

    def cache_identity(self) -> dict[str, object]:
        return {"simulator": "lexical", "rule": 2, "temperature": self.temperature}

    def scores(self, read: ReadPrompt, classes: Sequence[str], text: str) -> np.ndarray:
        """``s_E(k) + s_LP(k)`` of one sample text for each class (the module docstring's rule)."""
        words = set(self._tokenizer(text))
        evidence = {
            cid: self._present(aligned, words) - self._present(opposed, words)
            for cid, (aligned, opposed) in read.concepts.items()
        }
        profiles: dict[str, set[str]] = {}
        for lp_text, label in read.lp:
            profiles.setdefault(label, set()).update(set(self._tokenizer(lp_text)) - self._stop_words)
        out = np.zeros(len(classes))
        for k, name in enumerate(classes):
            for cid, bucket in read.importances.get(name, {}).items():
                out[k] += BUCKET_WEIGHTS[bucket] * evidence.get(cid, 0)
            others = set().union(*(p for label, p in profiles.items() if label != name))
            out[k] += len((words & profiles.get(name, set())) - others - self._stop_words)
        return out

    def _present(self, entries: Sequence[str], words: set[str]) -> int:
        count = 0
        for entry in entries:
            tokens = self._tokenizer(entry)
            count += bool(tokens) and all(token in words for token in tokens)
        return count

    def probabilities(self, read: ReadPrompt, classes: Sequence[str], text: str) -> np.ndarray:
        """``softmax(scores / temperature)`` over ``classes``."""
        logits = self.scores(read, classes, text) / self.temperature
        weights = np.exp(logits - logits.max())
        return weights / weights.sum()

    def _generate(
        self, messages: tuple[ChatMessage, ...], answer_schema: AnswerSchema | None
    ) -> SimulatorResponse:
        started = time.perf_counter()
        read = read_prompt(messages)
        classes = answer_schema.classes if answer_schema is not None else read.classes
        sample_ids = answer_schema.sample_ids if answer_schema is not None else tuple(read.ep)
        if len(classes) < 2 or not read.ep:
            return SimulatorResponse(
                "", model=self.name, error="not a ConSim prompt: no class list or no sample to classify"
            )
        probabilities = {i: self.probabilities(read, classes, read.ep.get(i, "")) for i in sample_ids}
        text = "\n".join(
            f"Sample_{i}: {classes[_answer(p, read.ep.get(i, ''))]}" for i, p in probabilities.items()
        )
        asked = answer_schema is not None and answer_schema.probabilities
        return self._offline_response(
            text,
            messages,
            started,
            {i: tuple(float(v) for v in p) for i, p in probabilities.items()} if asked else None,
        )
