"""How much of a list of prompts a provider's prompt cache can read: the shared-prefix share.

A provider caches a prompt's exact prefix (OpenAI in 128-token steps from 1,024 tokens, Anthropic at
``cache_control`` breakpoints, vLLM and llama.cpp per KV block): a later prompt pays full price only for what
follows its longest prefix shared with a prompt sent before it. :func:`shared_prefix_share` measures that share in
characters (a fine proxy for tokens: both layouts use the same words), with the messages joined as a chat template
joins them (role, then content), so a prefix never spans a role change unnoticed.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from xaimetrics._validation import invalid
from xaimetrics.consim._scoring import ConSimPrompt
from xaimetrics.simulators import ChatMessage

__all__ = ["prompt_text", "shared_prefix_share"]


def prompt_text(messages: Sequence[ChatMessage]) -> str:
    """The messages as one string, each as ``<|role|>`` then its content (what a cache sees, in order).

    Example:
        >>> prompt_text([ChatMessage("system", "a"), ChatMessage("user", "b")])
        '<|system|>\\na\\n<|user|>\\nb\\n'
    """
    return "".join(f"<|{m.role}|>\n{m.content}\n" for m in messages)


def _common(a: str, b: str) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n
    while lo < hi:  # the longest equal prefix, by bisection on slices (C-speed comparisons)
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def shared_prefix_share(prompts: Sequence[ConSimPrompt | Sequence[ChatMessage]]) -> float:
    """The share of the prompts' characters that lie in a prefix shared with an earlier prompt of the list.

    ``Σ_i max_{j<i} lcp(p_i, p_j) / Σ_i |p_i|`` over :func:`prompt_text`, in the order the prompts are sent (the
    first prompt shares nothing). The longest prefix shared with any earlier prompt is the one shared with its
    lexicographic neighbours among them, so the cost is ``O(n log n)`` comparisons.

    Args:
        prompts: :class:`ConSimPrompt` objects or message lists, in sending order.

    Returns:
        A share in ``[0, 1]``.

    Raises:
        InvalidParameterError: no prompt, or only empty ones.

    Example:
        >>> ask = lambda text: [ChatMessage("user", text)]
        >>> shared_prefix_share([ask("abcd"), ask("abxy"), ask("zz")])  # (0 + 11 + 9) of 14 + 14 + 12 characters
        0.5
    """
    texts = [prompt_text(p.messages if isinstance(p, ConSimPrompt) else p) for p in prompts]
    total = sum(len(t) for t in texts)
    if not total:
        raise invalid("prompts", "shared_prefix_share", "at least one non-empty prompt", len(texts))
    seen: list[str] = []
    shared = 0
    for text in texts:
        at = bisect.bisect_left(seen, text)
        neighbours = seen[max(at - 1, 0) : at + 1]
        shared += max((_common(text, other) for other in neighbours), default=0)
        seen.insert(at, text)
    return shared / total
