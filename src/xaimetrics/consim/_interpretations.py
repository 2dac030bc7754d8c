"""How concepts are put into words: :data:`INTERPRETATIONS`, each entry holding the function that interprets.

- ``top_words`` — the words whose encoding most activates each concept (CMAW, paper eq. 1):
  :class:`~xaimetrics.concepts.TopWords` with :data:`DEFAULT_MIN_FREQUENCY` and :data:`DEFAULT_STOP_WORDS`;
- ``llm_labels`` — labels proposed by the LLM with sentences, aligned to the concepts (o1CA, eq. 2):
  :class:`~xaimetrics.consim.LLMLabels`.

:func:`~xaimetrics.consim.interpret_concepts`, the grid's artefact cache, the dry-run budget and the study
builder ask an entry what to do (:attr:`InterpretationKind.interpret`, :attr:`~InterpretationKind.asks_simulator`,
:attr:`~InterpretationKind.encodes_words`, :attr:`~InterpretationKind.stand_in`); none of them compares names,
so a new interpretation is one :meth:`~xaimetrics._registry.Registry.register` call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from xaimetrics._registry import Registry

if TYPE_CHECKING:
    from xaimetrics._protocols import ActivationModel
    from xaimetrics.concepts import ConceptExtractor, ConceptInterpretation
    from xaimetrics.simulators import Simulator

__all__ = [
    "DEFAULT_MIN_FREQUENCY",
    "DEFAULT_STOP_WORDS",
    "INTERPRETATIONS",
    "InterpretationInputs",
    "InterpretationKind",
]

#: top words (CMAW): a word is a candidate when it occurs this often in the concept-fit texts
DEFAULT_MIN_FREQUENCY = 5
#: top words (CMAW): the stop-word list left out of the candidates
DEFAULT_STOP_WORDS = "english"
#: the length of a typical concept word and of a typical LLM label (the dry-run budget's stand-ins)
_WORD_CHARS, _LABEL_CHARS, _WORDS = 8, 40, 5


@dataclass(frozen=True)
class InterpretationInputs:
    """What an interpretation may read: the concept-fit ``texts``, ``h`` (``model``), the fitted ``extractor``,
    and for the kinds that ask an LLM the ``simulator``, the ``class_names`` it is shown and the ``seed`` of the
    examples drawn; ``min_frequency`` and ``variant`` tune top words (:class:`~xaimetrics.concepts.TopWords`)."""

    texts: Sequence[str]
    model: ActivationModel
    extractor: ConceptExtractor
    simulator: Simulator | None = None
    class_names: Sequence[str] | None = None
    seed: int = 0
    min_frequency: int = DEFAULT_MIN_FREQUENCY
    variant: Literal["signed", "paper"] = "signed"


@dataclass(frozen=True)
class InterpretationKind:
    """How concepts are put into words, and what that needs.

    Args:
        interpret: the function that interprets a fitted extractor: ``interpret(InterpretationInputs(...))`` →
            ``{concept id: interpretation}``.
        stand_in: a typical description of one concept (what a prompt shows), for estimates before any fit.
        asks_simulator: the simulator (an LLM) proposes the labels, so an oracle simulator cannot be used and
            the interpretation depends on the simulator.
        encodes_words: interprets by encoding single words, so a memo of the model's word activations serves it.

    Example:
        >>> INTERPRETATIONS.get("llm_labels").asks_simulator, INTERPRETATIONS.names()
        (True, ('top_words', 'llm_labels'))
        >>> INTERPRETATIONS.get("llm_labels").stand_in()
        {'label': 'llllllllllllllllllllllllllllllllllllllll'}
    """

    interpret: Callable[[InterpretationInputs], dict[int, ConceptInterpretation]]
    stand_in: Callable[[], Mapping[str, object]]
    asks_simulator: bool = False
    encodes_words: bool = False


def _top_words(inputs: InterpretationInputs) -> dict[int, ConceptInterpretation]:
    """CMAW (eq. 1): :class:`~xaimetrics.concepts.TopWords` with the stop words of :data:`DEFAULT_STOP_WORDS`."""
    from xaimetrics.concepts import TopWords

    top = TopWords(
        inputs.model, inputs.extractor, min_frequency=inputs.min_frequency, stop_words=DEFAULT_STOP_WORDS,
        variant=inputs.variant,
    )  # fmt: skip
    return top.fit(list(inputs.texts)).interpret()


def _llm_labels(inputs: InterpretationInputs) -> dict[int, ConceptInterpretation]:
    """o1CA (eq. 2): :class:`~xaimetrics.consim.LLMLabels` asked to the simulator, examples drawn with ``seed``."""
    from xaimetrics.consim._llm_labels import LLMLabels

    labels = LLMLabels(
        inputs.simulator,
        inputs.model,
        inputs.extractor,
        class_names=inputs.class_names,
        random_state=inputs.seed,
    )
    return labels.fit(list(inputs.texts)).interpret()


def _typical_words() -> Mapping[str, object]:
    word = "w" * _WORD_CHARS
    return {"aligned": [word] * _WORDS, "opposed": [word] * _WORDS}


def _typical_label() -> Mapping[str, object]:
    return {"label": "l" * _LABEL_CHARS}


#: how concepts are put into words (the ``interpretation`` of a setting)
INTERPRETATIONS: Registry[InterpretationKind] = Registry("interpretation", argument="interpretation")
INTERPRETATIONS.register(
    "top_words", InterpretationKind(_top_words, _typical_words, encodes_words=True), builtin=True,
    description="the words whose encoding most activates each concept (CMAW, eq. 1)",
)  # fmt: skip
INTERPRETATIONS.register(
    "llm_labels", InterpretationKind(_llm_labels, _typical_label, asks_simulator=True), builtin=True,
    description="labels proposed by the LLM with sentences, aligned to the concepts (o1CA, eq. 2)",
)  # fmt: skip
