"""A reference reader for detection and fuzzing prompts: word overlap, no LLM.

:class:`WordOverlapReader` sees exactly the chat messages an LLM sees (it parses the prompt of
:func:`~xaimetrics.detection._prompts.build_detection_prompts`), and answers by counting words:

- **detection**: ``n`` = how many of the description's words (and label words) occur in the text;
  ``P(Yes) = sigmoid((n − 0.5) / temperature)``, so a text with one word of the description is more
  probably Yes than No;
- **fuzzing**: ``f`` = the share of the marked words that are description words;
  ``P(Yes) = sigmoid((f − 0.5) / temperature)``.

- **intruder** (:func:`~xaimetrics.detection._intruder.build_intruder_prompts`): with a description, the intruder is
  the text holding *fewest* of the description's words; without one, the text sharing fewest content words
  (English stop words left out) with the other shown texts, ``e_i = mean_{j≠i} |W_i ∩ W_j|``.
  ``P(position i) = softmax(−e / temperature)``.

It shows what the description's *words alone* carry: a concept whose top words occur in the texts where it
fires is legible to this reader whatever an LLM makes of it. It is the detection counterpart of the ConSim
:class:`~xaimetrics.simulators.LexicalSimulator` (which parses ConSim prompts, not these); both use the
library's :class:`~xaimetrics._words.WordTokenizer`, the tokenizer that made the top words.
"""

from __future__ import annotations

import math
import time
import zlib

import numpy as np

from xaimetrics._words import stop_word_set
from xaimetrics.detection._intruder import read_intruder_prompt
from xaimetrics.detection._prompts import ANSWERS, read_detection_prompt
from xaimetrics.simulators import AnswerSchema, ChatMessage, SimulatorResponse
from xaimetrics.simulators._lexical import WordReader

__all__ = ["WordOverlapReader"]


class WordOverlapReader(WordReader):
    """Answer detection, fuzzing and intruder prompts by word overlap (see the module docstring for the rule).

    Args:
        temperature: scale of the logistic (> 0).

    Example:
        >>> from xaimetrics.detection._prompts import build_detection_prompts
        >>> prompts = build_detection_prompts(["goal", "cup"], ["A goal won the cup.", "A new chip."])
        >>> reader = WordOverlapReader()
        >>> [round(reader.generate(p.messages, answer_schema=p.schema).probabilities["0"][1], 3) for p in prompts]
        [0.818, 0.378]
    """

    name = "word-overlap"

    def cache_identity(self) -> dict[str, object]:
        return {"simulator": "word-overlap", "rule": 1, "temperature": self.temperature}

    def __init__(self, temperature: float = 1.0) -> None:
        super().__init__(temperature)
        self._stop_words = stop_word_set("english", "WordOverlapReader")

    def intruder_probabilities(
        self, messages: tuple[ChatMessage, ...] | list[ChatMessage]
    ) -> np.ndarray | None:
        """``P(position)`` of an intruder prompt (``None`` when it is not one); see the module docstring.

        Example:
            >>> from xaimetrics.detection._intruder import build_intruder_prompts
            >>> p = build_intruder_prompts([["goal cup", "cup final", "new chip"]])[0]
            >>> WordOverlapReader().intruder_probabilities(p.messages).round(3).tolist()
            [0.274, 0.274, 0.452]
        """
        read = read_intruder_prompt(messages)
        if read is None:
            return None
        vocabulary = {w for entry in (*read.words, read.label or "") for w in self._tokenizer(entry)}
        texts = [set(self._tokenizer(t)) for t in read.texts]
        if vocabulary:
            evidence = np.array([len(vocabulary & words) for words in texts], dtype=np.float64)
        else:
            content = [words - self._stop_words for words in texts]
            evidence = np.array([
                np.mean([len(a & b) for j, b in enumerate(content) if j != i]) for i, a in enumerate(content)
            ])  # fmt: skip
        logits = -evidence / self.temperature
        weights = np.exp(logits - logits.max())
        return weights / weights.sum()

    def p_yes(self, messages: tuple[ChatMessage, ...] | list[ChatMessage]) -> float | None:
        """``P(Yes)`` of one prompt (``None`` when it is not a detection or fuzzing prompt)."""
        read = read_detection_prompt(messages)
        if read is None:
            return None
        vocabulary = {w for entry in (*read.words, read.label or "") for w in self._tokenizer(entry)}
        if read.fuzzing:
            marked = [w for entry in read.marked for w in self._tokenizer(entry)]
            evidence = sum(w in vocabulary for w in marked) / len(marked) if marked else 0.0
        else:
            evidence = float(len(vocabulary & set(self._tokenizer(read.text))))
        return 1.0 / (1.0 + math.exp(-(evidence - 0.5) / self.temperature))

    def _generate(
        self, messages: tuple[ChatMessage, ...], answer_schema: AnswerSchema | None
    ) -> SimulatorResponse:
        started = time.perf_counter()
        positions = self.intruder_probabilities(messages)
        if positions is not None:
            ids = answer_schema.sample_ids if answer_schema is not None else ("0",)
            best = np.flatnonzero(positions == positions.max())
            pick = int(best[zlib.crc32(" ".join(m.content for m in messages).encode()) % len(best)])
            return SimulatorResponse(
                "\n".join(f"Sample_{i}: {pick}" for i in ids),
                model=self.name,
                prompt_tokens=sum(len(m.content.split()) for m in messages),
                completion_tokens=2,
                latency_s=time.perf_counter() - started,
                probabilities=(
                    {i: tuple(float(v) for v in positions) for i in ids}
                    if answer_schema is not None and answer_schema.probabilities
                    else None
                ),
            )
        p = self.p_yes(messages)
        if p is None:
            return SimulatorResponse(
                "", model=self.name, error="not a detection prompt: no feature words or text"
            )
        ids = answer_schema.sample_ids if answer_schema is not None else ("0",)
        text = "\n".join(f"Sample_{i}: {ANSWERS[int(p > 0.5)]}" for i in ids)
        asked = answer_schema is not None and answer_schema.probabilities
        return SimulatorResponse(
            text,
            model=self.name,
            prompt_tokens=sum(len(m.content.split()) for m in messages),
            completion_tokens=2,
            latency_s=time.perf_counter() - started,
            probabilities={i: (1.0 - p, p) for i in ids} if asked else None,
        )
