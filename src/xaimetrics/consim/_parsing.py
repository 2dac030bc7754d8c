"""Parse a simulator's answer into one class per evaluation sample, matched by sample **id**.

Rules (the parser never raises on any answer text, and its time is linear in the answer's length):

1. JSON string escapes (``\\u00e9``, ``\\n``, ``\\"``, …) are decoded, then the text is NFKC-normalised.
   Reasoning blocks (``<think>…</think>``, or everything before a lone ``</think>``, or everything after an
   unclosed ``<think>``) are dropped; the tags are found case-insensitively on the text itself.
2. Every mention of a sample id — ``Sample_20``, ``sample 20``, ``**Sample-20**``, ``Sample #20``,
   ``Sample\\_20`` — starts a *segment* that runs to the next mention. Its answer is the first non-empty
   line after the separators (``:``, ``-``, ``=``, ``->``, ``|``, quotes, markdown marks…), so both
   ``Sample_20: positive`` and a table row ``| Sample_20 | positive |`` or JSON ``"Sample_20": "positive"`` work.
   A minus sign glued to the digits (``Sample_-2``, ``Sample −2``) makes a negative id: never a requested
   sample, reported in ``unexpected_ids``. Only when the answer mentions no sample id at all, lines such as
   ``20: positive`` or ``- 20. positive`` are read as ``id: class``.
3. Classes are matched on their **words**: text is NFKC-normalised and case-folded (``casefold(upper(
   casefold(text)))``, normalised again, so that every case variant of a name — ``KIRMIZI`` for ``Kırmızı``,
   ``STRASSE`` for ``Straße`` — folds alike), and only runs of letters and digits count, so case, spaces, bullets, quotes,
   bold, trailing dots do not matter, and ``sci/tech`` or ``Sci / Tech`` match ``Sci/Tech``. At each word the
   *longest* class name wins, so ``not prime`` is never read as ``prime`` and ``Class_10`` never as ``Class_1``.
4. A segment answers a class only when its line names **exactly one distinct class, not negated**. A line
   naming two or more distinct classes (``World News or Sci/Tech``, ``World News / Sci/Tech``) is *hedged*; a
   class preceded (within three words) by a negation (``not``, ``no``, ``never``, ``isn't``, ``non``…) is
   *negated*; both are *invalid*, as is a line naming no class (:attr:`ParsedAnswers.reasons` says which).
   A JSON string value (``"Sample_20": "positive", "reason": "…"``) is read alone. Repeated answers for one
   id are fine when they agree and a *conflict* when they do not. Ids that were not asked for are ignored
   and reported.

Missing, invalid and conflicting answers count as wrong when scoring.
"""

from __future__ import annotations

import re
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from xaimetrics._validation import invalid
from xaimetrics._words import words_of

__all__ = ["ParsedAnswers", "ReasonCounts", "count_of", "parse_answers"]

Status = Literal["ok", "missing", "invalid", "conflict"]
#: why a sample's answer is invalid: it names no class, several distinct classes, or a negated class
Reason = Literal["no_class", "hedged", "negated"]

_MINUS = "-\u2212"  # ASCII hyphen-minus and the Unicode minus sign
_SAMPLE = re.compile(r"(?<![^\W_])samples?([ \t_\-#\\\u2212]*)([0-9]+)(?![0-9])", re.IGNORECASE)
_BARE_LINE = re.compile(
    r"^[ \t]*(?:[-*•+>][ \t]*)?[*_`\"'\[(]*#?([0-9]+)(?![0-9])[*_`\"'\])]*[ \t]*[:.)\-=|][ \t]*(.*)$",
    re.MULTILINE,
)
_ID = re.compile(r"[0-9]+")
_THINK_TAG = re.compile(r"<(/?)think>", re.IGNORECASE)
_JSON_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|[\"\\/bfnrt])")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_LEADING = " \t\r\n*_:-=>→|)]}.\"'`“”‘’–—\\~"
#: after a JSON string value, what shows that the value stands alone: the end of the line, a closing
#: bracket, or the next ``"key":``
_JSON_VALUE_END = re.compile(r"\s*(?:[,;]?\s*$|[,;]?\s*[}\]]|,\s*\"[^\"\n]*\"\s*:)")
#: words that negate the class named within the next three words ("isn't" is split into "isn" + "t")
_NEGATIONS = frozenset(
    [
        "not",
        "no",
        "never",
        "neither",
        "nor",
        "non",
        "cannot",
        "without",
        "isnt",
        "arent",
        "wasnt",
        "werent",
        "doesnt",
        "dont",
        "didnt",
        "cant",
        "wont",
        "shouldnt",
        "wouldnt",
        "couldnt",
    ]
)
_NEGATION_WINDOW = 3


class ReasonCounts(ABC):
    """``n_hedged`` and ``n_negated``, for a record that keeps why each invalid answer is invalid.

    Subclasses return their ``{sample_id: reason}`` mapping from ``_invalid_reasons``.

    Example:
        >>> class Reply(ReasonCounts):
        ...     def _invalid_reasons(self):
        ...         return {"3": "hedged", "4": "negated", "5": "hedged"}
        >>> Reply().n_hedged, Reply().n_negated
        (2, 1)
    """

    @abstractmethod
    def _invalid_reasons(self) -> Mapping[str, str]:
        """``{sample_id: reason}`` of the invalid answers."""

    @property
    def n_hedged(self) -> int:
        """Invalid answers whose line named several distinct classes (``World News or Sci/Tech``)."""
        return count_of(self._invalid_reasons(), "hedged")

    @property
    def n_negated(self) -> int:
        """Invalid answers whose line negated a class (``not World News``)."""
        return count_of(self._invalid_reasons(), "negated")


@dataclass(frozen=True)
class ParsedAnswers(ReasonCounts):
    """The answers recovered from one simulator reply.

    Attributes:
        answers: ``{sample_id: class id or None}``, in the order of the requested ids.
        statuses: ``{sample_id: "ok" | "missing" | "invalid" | "conflict"}``.
        raw: ``{sample_id: the answer text(s) found for it}`` ("" when missing), for reports and debugging.
        unexpected_ids: ids mentioned in the reply that were not asked for (negative ids keep their sign).
        reasons: ``{sample_id: "no_class" | "hedged" | "negated"}`` for the *invalid* samples: the line named
            no class, several distinct classes, or a negated class.
    """

    answers: dict[str, int | None]
    statuses: dict[str, Status]
    raw: dict[str, str] = field(default_factory=dict)
    unexpected_ids: tuple[str, ...] = ()
    reasons: dict[str, Reason] = field(default_factory=dict)

    def count(self, status: Status) -> int:
        """How many samples have this status."""
        return count_of(self.statuses, status)

    @property
    def n_parsed(self) -> int:
        """Samples with a valid answer."""
        return self.count("ok")

    def _invalid_reasons(self) -> Mapping[str, str]:
        return self.reasons


def count_of(values: Mapping[str, str], value: str) -> int:
    """How many samples of ``{sample_id: status or reason}`` have ``value`` (statuses, invalid reasons).

    Example:
        >>> count_of({"20": "hedged", "21": "negated", "22": "hedged"}, "hedged")
        2
    """
    return sum(1 for v in values.values() if v == value)


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
        >>> hedged = parse_answers("Sample_1: World News or Sci/Tech\\nSample_2: not World News",
        ...                        ["1", "2"], ["World News", "Sci/Tech"])
        >>> hedged.statuses, hedged.reasons
        ({'1': 'invalid', '2': 'invalid'}, {'1': 'hedged', '2': 'negated'})
    """
    ids = _check_ids(sample_ids)
    matcher = ClassMatcher(classes)
    found: dict[str, list[tuple[str, int | None, Reason | None]]] = {i: [] for i in ids}
    unexpected: dict[str, None] = {}  # insertion-ordered set: membership in O(1)
    cleaned = _strip_reasoning(_decode_escapes(text))
    for sample_id, segment in _segments(cleaned):
        if sample_id not in found:
            unexpected.setdefault(sample_id)
            continue
        line = _answer_line(segment)
        label, reason = matcher.judge(line)
        if label is None and reason == "no_class":
            whole = _first_line(segment)
            if whole != line:  # a quoted value named no class: judge the whole line
                line = whole
                label, reason = matcher.judge(line)
        found[sample_id].append((line, label, reason))

    answers: dict[str, int | None] = {}
    statuses: dict[str, Status] = {}
    raw: dict[str, str] = {}
    reasons: dict[str, Reason] = {}
    for sample_id, hits in found.items():
        valid = {label for _, label, _ in hits if label is not None}
        raw[sample_id] = " | ".join(line for line, _, _ in hits)
        if len(valid) == 1:
            answers[sample_id], statuses[sample_id] = valid.pop(), "ok"
            continue
        answers[sample_id] = None
        statuses[sample_id] = "conflict" if valid else "invalid" if hits else "missing"
        if statuses[sample_id] == "invalid":
            kinds = {reason for _, _, reason in hits}
            reasons[sample_id] = next(k for k in ("negated", "hedged", "no_class") if k in kinds)
    return ParsedAnswers(
        answers=answers, statuses=statuses, raw=raw, unexpected_ids=tuple(unexpected), reasons=reasons
    )


class ClassMatcher:
    """Finds class names in a line by their words, longest name first (rules 3 and 4 of the module).

    Example:
        >>> ClassMatcher(["Class_1", "Class_10"]).match("**class_10**")
        1
        >>> ClassMatcher(["prime", "not prime"]).judge("definitely not prime")
        (1, None)
        >>> ClassMatcher(["positive", "negative"]).judge("positive, not negative")
        (None, 'negated')
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
        return self._scan(words_of(line))

    def _scan(self, words: list[str]) -> list[tuple[int, int]]:
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

    def judge(self, line: str) -> tuple[int | None, Reason | None]:
        """``(class id, None)`` when the line names exactly one distinct class, not negated; else
        ``(None, reason)`` with reason ``"no_class"``, ``"hedged"`` (several distinct classes) or ``"negated"``."""
        words = words_of(line)
        found = self._scan(words)
        if not found:
            return None, "no_class"
        previous_end = 0
        for position, index in found:
            start = max(previous_end, position - _NEGATION_WINDOW)
            if any(_is_negation(words, i) for i in range(start, position)):
                return None, "negated"
            previous_end = position + len(self.tokens[index])
        distinct = {index for _, index in found}
        if len(distinct) > 1:
            return None, "hedged"
        return distinct.pop(), None

    def match(self, line: str) -> int | None:
        """The class a line answers, or ``None`` (no class, several distinct ones, or a negated one)."""
        return self.judge(line)[0]


def _is_negation(words: list[str], i: int) -> bool:
    word = words[i]
    # "isn't", "don't": the apostrophe splits the word, leaving "t" after a word ending in "n"
    return word in _NEGATIONS or (word == "t" and i > 0 and words[i - 1].endswith("n"))


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


def _decode_escapes(text: str | None) -> str:
    """Decode JSON string escapes (``\\u00e9``, ``\\n``, ``\\"``…), left to right as JSON does, in one pass.

    Example:
        >>> _decode_escapes('{"Sample_1": "Caf\\\\u00e9", "Sample_2": "\\\\ud83d\\\\ude00"}')
        '{"Sample_1": "Café", "Sample_2": "😀"}'
    """
    if not isinstance(text, str):
        return ""
    if "\\" not in text:
        return text
    decoded = _JSON_ESCAPE.sub(_unescape, text)
    if _SURROGATE.search(decoded):  # halves of \\uXXXX pairs: join them into the characters they encode
        decoded = decoded.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return decoded


def _unescape(match: re.Match[str]) -> str:
    token = match.group(0)
    return chr(int(token[2:], 16)) if token[1] == "u" else _SIMPLE_ESCAPES[token[1]]


def _strip_reasoning(text: str | None) -> str:
    """NFKC-normalise and drop reasoning blocks in one left-to-right pass over the ``<think>`` tags.

    ``<think>…</think>`` blocks are removed (a block ends at the first closing tag); a closing tag without
    an opening one drops everything before it (the opening tag was in the prompt template); an opening tag
    that is never closed drops everything after it (reasoning cut off before its end). Positions come from
    the text itself (no lower-cased copy, whose length may differ).
    """
    if not isinstance(text, str):
        return ""
    text = unicodedata.normalize("NFKC", text)
    kept: list[str] = []
    position = 0
    opened = False
    for tag in _THINK_TAG.finditer(text):
        if tag.group(1):  # </think>
            if opened:
                kept.append("\n")
                opened = False
            else:
                kept.clear()
            position = tag.end()
        elif not opened:
            kept.append(text[position : tag.start()])
            opened = True
    if not opened:
        kept.append(text[position:])
    return "".join(kept)


def _segments(text: str) -> list[tuple[str, str]]:
    mentions = list(_SAMPLE.finditer(text))
    if mentions:
        ends = [m.start() for m in mentions[1:]] + [len(text)]
        return [
            (_mention_id(m.group(1), m.group(2)), text[m.end() : end])
            for m, end in zip(mentions, ends, strict=True)
        ]
    return [(_bare_id(text, m), m.group(2)) for m in _BARE_LINE.finditer(text)]


def _bare_id(text: str, match: re.Match[str]) -> str:
    """The id of a bare ``20: class`` line: a minus glued to the digits (``-2: x``) is a sign, not a bullet."""
    start = match.start(1)
    negative = start > 0 and text[start - 1] in _MINUS
    return ("-" if negative else "") + _canonical_id(match.group(1))


def _mention_id(separator: str, digits: str) -> str:
    """The id of ``Sample<separator><digits>``: negative when a minus sign is glued to the digits (``_-2``,
    `` -2``, ``−2``), but ``Sample-2`` (the hyphen alone) is sample 2."""
    negative = separator.endswith("\u2212") or (separator.endswith("-") and separator != "-")
    return ("-" if negative else "") + _canonical_id(digits)


def _canonical_id(digits: str) -> str:
    """``"020"`` → ``"20"`` (string arithmetic: no limit on the number of digits)."""
    return digits.lstrip("0") or "0"


def _first_line(segment: str) -> str:
    return segment.lstrip(_LEADING).split("\n", 1)[0].strip()


def _answer_line(segment: str) -> str:
    """The first non-empty line after the separators; a JSON string value (``": "positive", "why": …``)
    when the line holds one."""
    stripped = segment.lstrip(_LEADING)
    prefix = segment[: len(segment) - len(stripped)]
    line = stripped.split("\n", 1)[0]
    if prefix.rstrip(" \t").endswith('"'):
        close = line.find('"')
        if close > 0 and _JSON_VALUE_END.match(line, close + 1):
            return line[:close].strip()
    return line.strip()
