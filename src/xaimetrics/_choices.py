"""The small lists of choices of a ConSim setting, one :class:`~xaimetrics._registry.Registry` each.

- :data:`INTERPRETATIONS` — how concepts are put into words: ``top_words`` (CMAW, paper eq. 1) or
  ``llm_labels`` (o1CA, eq. 2);
- :data:`SCORINGS` — how an answer is scored: ``accuracy`` (eq. 5 on the answer text) or ``probability`` (also
  the simulator's class probabilities);
- :data:`BALANCES` — how :func:`~xaimetrics.consim.select_examples` meets its quotas: ``strict`` or ``relaxed``.

The grid (validation and its messages), the command line (``choices=`` and ``--help``), the API's checks and the
docs read these registries, so that a name is spelled one way everywhere (the grid's spelling: ``top_words``, not
``words``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xaimetrics._registry import Registry

__all__ = ["BALANCES", "INTERPRETATIONS", "SCORINGS", "BalanceKind", "InterpretationKind", "ScoringKind"]


@dataclass(frozen=True)
class InterpretationKind:
    """How concepts are put into words.

    Args:
        asks_simulator: the simulator (an LLM) proposes the labels, so an oracle simulator cannot be used.

    Example:
        >>> INTERPRETATIONS.get("llm_labels").asks_simulator, INTERPRETATIONS.names()
        (True, ('top_words', 'llm_labels'))
    """

    asks_simulator: bool = False


@dataclass(frozen=True)
class ScoringKind:
    """How a simulator's answer is scored.

    Args:
        needs_probabilities: the simulator must return class probabilities (log-probabilities).

    Example:
        >>> SCORINGS.get("probability").needs_probabilities, SCORINGS.names()
        (True, ('accuracy', 'probability'))
    """

    needs_probabilities: bool = False


@dataclass(frozen=True)
class BalanceKind:
    """How the learning- and evaluation-phase quotas are met when the data are short.

    Args:
        relaxed: fill a short class × correctness cell from the nearest cells (and say so) instead of raising.

    Example:
        >>> BALANCES.get("relaxed").relaxed, BALANCES.names()
        (True, ('strict', 'relaxed'))
    """

    relaxed: bool = False


#: how concepts are put into words (the ``interpretation`` of a setting)
INTERPRETATIONS: Registry[InterpretationKind] = Registry("interpretation", argument="interpretation")
INTERPRETATIONS.register(
    "top_words", InterpretationKind(), builtin=True,
    description="the words whose encoding most activates each concept (CMAW, eq. 1)",
)  # fmt: skip
INTERPRETATIONS.register(
    "llm_labels", InterpretationKind(asks_simulator=True), builtin=True,
    description="labels proposed by the LLM with sentences, aligned to the concepts (o1CA, eq. 2)",
)  # fmt: skip

#: how a simulator's answer is scored (the ``scoring`` of a setting)
SCORINGS: Registry[ScoringKind] = Registry("scoring", argument="scoring")
SCORINGS.register(
    "accuracy", ScoringKind(), builtin=True, description="eq. 5 on the answer text",
)  # fmt: skip
SCORINGS.register(
    "probability", ScoringKind(needs_probabilities=True), builtin=True,
    description="also the simulator's class probabilities: expected accuracy, log-loss, Brier (needs log-probabilities)",
)  # fmt: skip

#: how the LP/EP quotas are met (the ``balance`` of :func:`~xaimetrics.consim.select_examples` and of a grid)
BALANCES: Registry[BalanceKind] = Registry("balance mode", argument="balance")
BALANCES.register(
    "strict", BalanceKind(), builtin=True,
    description="raise, with the per-class counts, when a class lacks right or wrong predictions",
)  # fmt: skip
BALANCES.register(
    "relaxed", BalanceKind(relaxed=True), builtin=True,
    description="fill the shortfall from the nearest classes and say so",
)  # fmt: skip
