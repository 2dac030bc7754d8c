"""Parse a simulator's answer into one class per evaluation sample, matched by sample **id**.

Rules (the parser never raises on any answer text):

1. Reasoning blocks (``<think>…</think>``, or everything before a lone ``</think>``) are dropped.
2. Every mention of a sample id — ``Sample_20``, ``sample 20``, ``**Sample-20**``, ``Sample #20``,
   ``Sample\\_20`` — starts a *segment* that runs to the next mention. Its answer is the first non-empty
   line after the separators (``:``, ``-``, ``=``, ``->``, ``|``, quotes, markdown marks…), so both
   ``Sample_20: positive`` and a table row ``| Sample_20 | positive |`` or JSON ``"Sample_20": "positive"`` work.
   Only when the answer mentions no sample id at all, lines such as ``20: positive`` or ``- 20. positive``
   are read as ``id: class``.
3. Classes are matched on their **words**: text is NFKC-normalised and case-folded, and only runs of
   letters and digits count, so case, spaces, bullets, quotes, bold, trailing dots do not matter, and
   ``sci/tech`` or ``Sci / Tech`` match ``Sci/Tech``. At each word the *longest* class name wins, so
   ``not prime`` is never read as ``prime`` and ``Class_10`` never as ``Class_1``.
4. A segment answers its class when that class starts the line, or when it is the only class named in it;
   otherwise (no class, or several) it is *invalid*. Repeated answers for one id are fine when they agree
   and a *conflict* when they do not. Ids that were not asked for are ignored and reported.

Missing, invalid and conflicting answers count as wrong when scoring.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from xaimetrics._validation import invalid

__all__ = ["ParsedAnswers", "parse_answers"]

Status = Literal["ok", "missing", "invalid", "conflict"]

_WORD = re.compile(r"[^\W_]+")
_SAMPLE = re.compile(r"(?<![^\W_])samples?[ \t_\-#\\]*([0-9]+)(?![0-9])", re.IGNORECASE)
_BARE_LINE = re.compile(
    r"^[ \t]*(?:[-*•+>][ \t]*)?[*_`\"'\[(]*#?([0-9]+)(?![0-9])[*_`\"'\])]*[ \t]*[:.)\-=|][ \t]*(.*)$",
    re.MULTILINE,
)
_ID = re.compile(r"[0-9]+")
_THINK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_LEADING = " \t\r\n*_:-=>→|)]}.\"'`“”‘’–—\\~"


@dataclass(frozen=True)
class ParsedAnswers:
    """The answers recovered from one simulator reply.

    Attributes:
        answers: ``{sample_id: class id or None}``, in the order of the requested ids.
        statuses: ``{sample_id: "ok" | "missing" | "invalid" | "conflict"}``.
        raw: ``{sample_id: the answer text(s) found for it}`` ("" when missing), for reports and debugging.
        unexpected_ids: ids mentioned in the reply that were not asked for.
    """

    answers: dict[str, int | None]
    statuses: dict[str, Status]
    raw: dict[str, str] = field(default_factory=dict)
    unexpected_ids: tuple[str, ...] = ()

    def count(self, status: Status) -> int:
        """How many samples have this status."""
        return sum(1 for value in self.statuses.values() if value == status)

    @property
    def n_parsed(self) -> int:
        """Samples with a valid answer."""
        return self.count("ok")


def parse_answers(text: str | None, sample_ids: Sequence[str | int], classes: Sequence[str]) -> ParsedAnswers:
    """Recover ``{sample_id: class id}`` from a free-form answer (module docstring gives the rules).

    Args:
        text: the simulator's reply (any string; ``None`` counts as an empty reply).
        sample_ids: the evaluation ids asked for (``"20"`` or ``20`` for ``Sample_20``).
        classes: the class names the simulator was shown (index = class id).

    Returns:
        A :class:`ParsedAnswers`.

    Raises:
        InvalidParameterError: only for bad ``sample_ids`` or ``classes`` (e.g. two classes with the same
            words), never because of ``text``.

    Example:
        >>> reply = "Here you go:\\n- **Sample_21**: Not Prime.\\n* sample 20 -> prime\\nSample_22: composite?"
        >>> parsed = parse_answers(reply, ["20", "21", "22", "23"], ["prime", "not prime"])
        >>> parsed.answers
        {'20': 0, '21': 1, '22': None, '23': None}
        >>> parsed.statuses
        {'20': 'ok', '21': 'ok', '22': 'invalid', '23': 'missing'}
    """
    ids = _check_ids(sample_ids)
    matcher = ClassMatcher(classes)
    found: dict[str, list[tuple[str, int | None]]] = {i: [] for i in ids}
    unexpected: list[str] = []
    for sample_id, segment in _segments(_strip_reasoning(text)):
        if sample_id not in found:
            if sample_id not in unexpected:
                unexpected.append(sample_id)
            continue
        line = _answer_line(segment)
        found[sample_id].append((line, matcher.match(line)))

    answers: dict[str, int | None] = {}
    statuses: dict[str, Status] = {}
    raw: dict[str, str] = {}
    for sample_id, hits in found.items():
        valid = {label for _, label in hits if label is not None}
        raw[sample_id] = " | ".join(line for line, _ in hits)
        if len(valid) == 1:
            answers[sample_id], statuses[sample_id] = valid.pop(), "ok"
        else:
            answers[sample_id] = None
            statuses[sample_id] = "conflict" if valid else "invalid" if hits else "missing"
    return ParsedAnswers(answers=answers, statuses=statuses, raw=raw, unexpected_ids=tuple(unexpected))


class ClassMatcher:
    """Finds class names in a line by their words, longest name first (rule 3 and 4 of the module).

    Example:
        >>> ClassMatcher(["Class_1", "Class_10"]).match("**class_10**")
        1
    """

    def __init__(self, classes: Sequence[str]) -> None:
        if isinstance(classes, str) or not isinstance(classes, Sequence) or not classes:
            raise invalid("classes", "parse_answers", "a non-empty list of class names", classes)
        self.tokens: list[tuple[str, ...]] = []
        for name in classes:
            words = tuple(words_of(name)) if isinstance(name, str) else ()
            if not words:
                raise invalid("classes", "parse_answers", "names containing letters or digits", repr(name))
            if words in self.tokens:
                raise invalid(
                    "classes",
                    "parse_answers",
                    "names that differ in their letters or digits (case, spaces and punctuation are ignored)",
                    list(classes),
                    "Rename the classes.",
                )
            self.tokens.append(words)
        self._by_first: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
        for index, words in sorted(enumerate(self.tokens), key=lambda item: -len(item[1])):
            self._by_first.setdefault(words[0], []).append((index, words))

    def occurrences(self, line: str) -> list[tuple[int, int]]:
        """``(word position, class id)`` of each class named in ``line``, left to right, longest match."""
        words = words_of(line)
        result: list[tuple[int, int]] = []
        position = 0
        while position < len(words):
            for index, name in self._by_first.get(words[position], ()):
                if tuple(words[position : position + len(name)]) == name:
                    result.append((position, index))
                    position += len(name)
                    break
            else:
                position += 1
        return result

    def match(self, line: str) -> int | None:
        """The class a line answers, or ``None`` when it names none or several without starting with one."""
        found = self.occurrences(line)
        if not found:
            return None
        if found[0][0] == 0:
            return found[0][1]
        distinct = {index for _, index in found}
        return distinct.pop() if len(distinct) == 1 else None


def words_of(text: str) -> list[str]:
    """The case-folded letter/digit runs of ``text`` after NFKC normalisation.

    Example:
        >>> words_of("**Sci / TECH.**")
        ['sci', 'tech']
    """
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def _check_ids(sample_ids: Sequence[str | int]) -> list[str]:
    if isinstance(sample_ids, str) or not isinstance(sample_ids, Sequence):
        raise invalid("sample_ids", "parse_answers", "a list of sample ids", sample_ids)
    ids: list[str] = []
    for value in sample_ids:
        text = str(value).strip()
        if isinstance(value, bool) or not _ID.fullmatch(text):
            raise invalid(
                "sample_ids", "parse_answers", "non-negative integer ids ('20' for Sample_20)", value
            )
        ids.append(_canonical_id(text))
    if len(set(ids)) != len(ids):
        raise invalid("sample_ids", "parse_answers", "distinct ids", list(sample_ids))
    return ids


def _strip_reasoning(text: str | None) -> str:
    if not isinstance(text, str):
        return ""
    text = unicodedata.normalize("NFKC", text)
    text = _THINK.sub("\n", text)
    lowered = text.lower()
    if "</think>" in lowered:  # the opening tag was in the prompt template
        text = text[lowered.rindex("</think>") + len("</think>") :]
        lowered = text.lower()
    if "<think>" in lowered:  # reasoning cut off before its end: nothing after it is an answer
        text = text[: lowered.index("<think>")]
    return text


def _segments(text: str) -> list[tuple[str, str]]:
    mentions = list(_SAMPLE.finditer(text))
    if mentions:
        ends = [m.start() for m in mentions[1:]] + [len(text)]
        return [
            (_canonical_id(m.group(1)), text[m.end() : end]) for m, end in zip(mentions, ends, strict=True)
        ]
    return [(_canonical_id(m.group(1)), m.group(2)) for m in _BARE_LINE.finditer(text)]


def _canonical_id(digits: str) -> str:
    """``"020"`` → ``"20"`` (string arithmetic: no limit on the number of digits)."""
    return digits.lstrip("0") or "0"


def _answer_line(segment: str) -> str:
    stripped = segment.lstrip(_LEADING)
    return stripped.split("\n", 1)[0].strip()
