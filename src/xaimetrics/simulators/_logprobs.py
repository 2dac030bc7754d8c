"""Class probabilities from the ``top_logprobs`` of a freely generated answer (OpenAI-compatible servers).

A chat server that returns ``logprobs`` gives, for every generated token, the ``K`` most probable tokens at
that position with their log-probabilities. For each answer line ``Sample_{id}: {class}`` the class is
decided at the token where the class names *diverge* (the first character after their common prefix:
``positive``/``negative`` diverge at once, ``Class_0``/``Class_1`` at the digit). That token's alternatives
are read as follows:

- an alternative is matched to a class after removing what was already written in that token (the space
  after the colon and/or the common prefix, e.g. ``" Class"`` then ``"_"`` then ``"1"``); leading spaces and
  letter case do not matter (``" positive"``, ``"positive"`` and ``" Positive"`` all count for
  ``positive``), as in :func:`~xaimetrics.consim._parsing.parse_answers`;
- an alternative that fits several classes (``"1"`` for ``Class_1`` and ``Class_10``) is followed to the next
  position when it is the generated token, and split evenly among those classes otherwise;
- alternatives that fit no class (``" neutral"``, a newline) are dropped: the distribution is conditioned on
  a valid answer, as with per-sample continuations;
- a class absent from the top ``K`` gets an even share of the unlisted mass ``1 − Σ top-K``, capped at the
  smallest listed probability (it was not in the top ``K``, so it cannot be more probable than that);
- the result is renormalised over the classes.

A sample whose line is missing, whose answer does not start with the classes' common prefix, or whose
alternatives contain no class at all cannot be read: see ``probability_fallback`` of
:class:`~xaimetrics.simulators.OpenAICompatibleSimulator`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xaimetrics.simulators._base import AnswerSchema

__all__ = ["TokenLogprob", "read_class_probabilities", "token_logprobs"]


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token, its log-probability, and the top alternatives at its position."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


def token_logprobs(content: object) -> list[TokenLogprob] | None:
    """``choices[0].logprobs.content`` (openai client objects or plain dicts) as :class:`TokenLogprob` s.

    Returns ``None`` when there is no such list (the server ignored ``logprobs``).

    Example:
        >>> item = {"token": "yes", "logprob": -0.1, "top_logprobs": [{"token": "yes", "logprob": -0.1}]}
        >>> token_logprobs([item])
        [TokenLogprob(token='yes', logprob=-0.1, top=(('yes', -0.1),))]
    """
    if not isinstance(content, Sequence) or isinstance(content, str | bytes):
        return None

    def field(item: object, name: str) -> object:
        return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)

    out = []
    for item in content:
        token, logprob = field(item, "token"), field(item, "logprob")
        if not isinstance(token, str) or not isinstance(logprob, int | float):
            return None
        top = []
        alternatives = field(item, "top_logprobs")
        for alternative in alternatives if isinstance(alternatives, Sequence) else ():
            alt_token, alt_logprob = field(alternative, "token"), field(alternative, "logprob")
            if isinstance(alt_token, str) and isinstance(alt_logprob, int | float):
                top.append((alt_token, float(alt_logprob)))
        out.append(TokenLogprob(token, float(logprob), tuple(top)))
    return out


def _shared(a: str, b: str) -> int:
    """Length of the common prefix of two strings."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _ends_name(text: str) -> bool:
    """Whether a class name that is complete here is not continued by ``text`` (next char not a word char)."""
    return not text or not (text[0].isalnum() or text[0] == "_")


def _fits(rest: str, tail: str) -> bool:
    """Whether an alternative's remaining text ``rest`` (non-empty) can start the class tail ``tail``."""
    return tail.startswith(rest) or (rest.startswith(tail) and _ends_name(rest[len(tail) :]))


def _walk(
    tokens: Sequence[TokenLogprob],
    index: int,
    core: str,
    shared: str,
    tails: Mapping[int, str],
    mass: float,
    out: list[float],
) -> bool:
    """Spread ``mass`` over the classes from the alternatives at ``tokens[index]``; True if any class fits.

    The token at ``index`` holds, before the point of divergence, ``core`` (text before the class, e.g. a
    colon; spaces after it are optional) then ``shared`` (the start of the class names already written);
    ``tails`` maps class index → the class text (case-folded) still to be written.
    """
    entry = tokens[index]
    alternatives = entry.top or ((entry.token, entry.logprob),)
    found = False
    for alternative, logprob in alternatives:
        text = alternative.casefold()
        if not text.startswith(core):
            continue
        rest = text[len(core) :].lstrip(" \t")
        if not rest.startswith(shared):
            continue
        rest = rest[len(shared) :]
        if not rest:
            continue  # this token stops before the classes diverge: not followed
        fits = [k for k, tail in tails.items() if (_fits(rest, tail) if tail else _ends_name(rest))]
        if not fits:
            continue
        found = True
        p = mass * math.exp(logprob)
        if len(fits) > 1 and alternative == entry.token and index + 1 < len(tokens):
            deeper = {k: tails[k][len(rest) :] for k in fits}
            if _walk(tokens, index + 1, "", "", deeper, p, out):
                continue
        for k in fits:
            out[k] += p / len(fits)
    return found


def _line_start(text: str, sample_id: str) -> list[int]:
    """Character offsets where the answer of ``Sample_{id}:`` starts (after the colon and spaces)."""
    pattern = re.compile(rf"Sample_{re.escape(sample_id)}(?![A-Za-z0-9_\-])\s*:[ \t]*", re.IGNORECASE)
    return [m.end() for m in pattern.finditer(text)]


def _read_one(
    tokens: Sequence[TokenLogprob], starts: list[int], text: str, start: int, classes: Sequence[str]
) -> list[float] | None:
    folded = [c.casefold() for c in classes]
    prefix = folded[0][: min(_shared(folded[0], name) for name in folded)]
    position = start + len(prefix)
    if text[start:position].casefold() != prefix or position >= len(text):
        return None
    index = max(i for i, s in enumerate(starts) if s <= position)
    before = text[starts[index] : start].casefold() if starts[index] < start else ""
    inside = text[max(starts[index], start) : position].casefold()
    out = [0.0] * len(classes)
    tails = {k: name[len(prefix) :] for k, name in enumerate(folded)}
    if not _walk(tokens, index, before.rstrip(" \t"), inside, tails, 1.0, out):
        return None
    entry = tokens[index]
    listed = [math.exp(lp) for _, lp in (entry.top or ((entry.token, entry.logprob),))]
    absent = [k for k, p in enumerate(out) if p <= 0.0]
    if absent:
        share = min(max(0.0, 1.0 - sum(listed)) / len(absent), min(listed))
        for k in absent:
            out[k] = share
    total = sum(out)
    return [p / total for p in out]


def read_class_probabilities(
    tokens: Sequence[TokenLogprob], schema: AnswerSchema
) -> tuple[dict[str, tuple[float, ...]], list[str]]:
    """Per sample id, the class distribution read from the generated tokens; and the ids that could not be read.

    The first ``Sample_{id}:`` line whose answer can be read is used (see the module docstring).

    Example:
        >>> import math
        >>> tokens = [TokenLogprob("Sample_4:", 0.0), TokenLogprob(" yes", math.log(0.6),
        ...           ((" yes", math.log(0.6)), (" no", math.log(0.3)), (" maybe", math.log(0.1))))]
        >>> probabilities, unread = read_class_probabilities(tokens, AnswerSchema(("4", "5"), ("no", "yes")))
        >>> [round(p, 4) for p in probabilities["4"]], unread
        ([0.3333, 0.6667], ['5'])
    """
    text = "".join(t.token for t in tokens)
    starts, offset = [], 0
    for t in tokens:
        starts.append(offset)
        offset += len(t.token)
    probabilities: dict[str, tuple[float, ...]] = {}
    unread: list[str] = []
    for sample_id in schema.sample_ids:
        for start in _line_start(text, sample_id):
            values = _read_one(tokens, starts, text, start, schema.classes)
            if values is not None:
                probabilities[sample_id] = tuple(values)
                break
        else:
            unread.append(sample_id)
    return probabilities, unread
