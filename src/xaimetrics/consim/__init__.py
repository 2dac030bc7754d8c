"""ConSim: concept-based simulatability (Poché et al., ACL 2025).

How much does a concept explanation help a simulator (an LLM) predict **the model's** outputs? The pieces,
each usable alone:

The pipeline, as functions (the one path that :class:`ConSim`, the benchmark and ``xaimetrics consim`` call):

- :func:`select_examples` → :class:`ConSimSamples` — learning-phase (LP) and evaluation-phase (EP) samples:
  classes uniform, half predicted wrongly by f, without replacement, seeded (paper App. B.1);
- :func:`interpret_concepts` — a fitted extractor's concepts in words (top words or LLM labels);
- :func:`build_prompts` — computes the importances a prompt type needs and the explanation does not give,
  once, and renders the prompts;
- :data:`PROMPT_TYPES` — the prompt types (:class:`PromptType`: the six of the paper, NE1/L1, E1, NE2/L2, E2,
  E3 and the U1 upper bound, and any registered), each with an anonymised variant (a :class:`PromptSetting`
  is a prompt type and the anonymisation, written as its label ``"E3-a"``); :func:`render_prompt` renders one
  (paper App. E) in the paper's layout or a cache-friendly one (:data:`PROMPT_LAYOUTS`);
- :func:`score_response` → :class:`ConSimResult` — answers matched by sample id (robust to formatting noise)
  and scored: accuracy against f's EP predictions (eq. 5);
  :func:`per_class_scores` — the reader's recall and precision of f per class of f's predictions;
  :func:`evaluate_prompts` — ask a simulator about rendered prompts (one batch) and score the answers;
- :class:`Explanation` — one method's explanation (extractor, interpretation, activations, importances);
- :class:`ConSim` — a thin façade over these functions, configured once with the model, the simulator, the
  class names and one :class:`Explanation`, that computes predictions, renders, calls the simulator (one call
  or a batch) and scores the samples given to each call;
- :class:`LLMLabels` — concept labels proposed by an LLM and aligned to concepts (eq. 2);
- :class:`SurrogateWords` / :class:`RandomWords` — the positive and negative controls (explanations that
  do and do not carry information about f), rendered like concept explanations.
"""

from __future__ import annotations

from xaimetrics.consim._asking import evaluate_prompts
from xaimetrics.consim._consim import ConSim
from xaimetrics.consim._controls import CONTROL_ROLES, CONTROLS, RandomWords, SurrogateWords, make_control
from xaimetrics.consim._explanation import Explanation, global_importances_of
from xaimetrics.consim._interpretations import INTERPRETATIONS, InterpretationKind
from xaimetrics.consim._llm_labels import LLMLabels
from xaimetrics.consim._per_class import per_class_scores
from xaimetrics.consim._pipeline import build_prompts, interpret_concepts
from xaimetrics.consim._prompt_types import (
    PROMPT_TYPES,
    PromptContent,
    PromptSetting,
    PromptType,
    prompt_label,
)
from xaimetrics.consim._rendering import PROMPT_LAYOUTS, PromptLayout, render_prompt
from xaimetrics.consim._result import ConSimResult
from xaimetrics.consim._samples import ConSimSamples, select_examples
from xaimetrics.consim._scoring import SCORINGS, ConSimPrompt, Scoring, ScoringKind, score_response
from xaimetrics.consim._selection import BALANCES, BalanceKind

__all__ = [
    "BALANCES",
    "CONTROLS",
    "CONTROL_ROLES",
    "INTERPRETATIONS",
    "PROMPT_LAYOUTS",
    "PROMPT_TYPES",
    "SCORINGS",
    "BalanceKind",
    "ConSim",
    "ConSimPrompt",
    "ConSimResult",
    "ConSimSamples",
    "Explanation",
    "InterpretationKind",
    "LLMLabels",
    "PromptContent",
    "PromptLayout",
    "PromptSetting",
    "PromptType",
    "RandomWords",
    "Scoring",
    "ScoringKind",
    "SurrogateWords",
    "build_prompts",
    "evaluate_prompts",
    "global_importances_of",
    "interpret_concepts",
    "make_control",
    "per_class_scores",
    "prompt_label",
    "render_prompt",
    "score_response",
    "select_examples",
]
