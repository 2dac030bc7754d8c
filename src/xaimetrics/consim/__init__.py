"""ConSim: concept-based simulatability (Poché et al., ACL 2025).

How much does a concept explanation help a simulator (an LLM) predict **the model's** outputs? The pieces,
each usable alone:

- :func:`select_examples` — learning-phase (LP) and evaluation-phase (EP) samples: classes uniform, half
  predicted wrongly by f, without replacement, seeded (paper App. B.1);
- :data:`PROMPT_TYPES` — the prompt types (:class:`PromptType`: the six of the paper, NE1/L1, E1, NE2/L2, E2,
  E3 and the U1 upper bound, and any registered), each with an anonymised variant (a :class:`PromptSetting`
  is a prompt type and the anonymisation, written as its label ``"E3-a"``); :func:`render_prompt` renders one
  (paper App. E);
- :func:`parse_answers` — answers matched by sample id, robust to formatting noise;
- :func:`score_response` → :class:`ConSimResult` — accuracy against f's EP predictions (eq. 5);
  :func:`evaluate_prompts` — ask a simulator about rendered prompts (one batch) and score the answers;
- :class:`Explanation` — one method's explanation (extractor, interpretation, activations, importances);
- :class:`ConSim` — the façade, configured once with the model, the simulator, the class names and one
  :class:`Explanation`, that computes predictions and concept importances, renders, calls the simulator
  (one call or a batch) and scores the samples given to each call;
- :class:`LLMLabels` / :func:`o1ca` — concept labels proposed by an LLM and aligned to concepts (eq. 2);
- :class:`SurrogateWords` / :class:`RandomWords` — the positive and negative controls (explanations that
  do and do not carry information about f), rendered like concept explanations.
"""

from __future__ import annotations

from xaimetrics.consim._asking import evaluate_prompts
from xaimetrics.consim._consim import DEFAULT_PROMPT_TYPES, ConSim, ConSimSamples
from xaimetrics.consim._controls import (
    CONTROL_ROLES,
    CONTROLS,
    ControlKind,
    RandomWords,
    SurrogateWords,
    make_control,
)
from xaimetrics.consim._explanation import Explanation
from xaimetrics.consim._llm_labels import LLMLabels, o1ca, parse_label_proposals
from xaimetrics.consim._parsing import ParsedAnswers, parse_answers
from xaimetrics.consim._prompt_types import (
    PROMPT_TYPES,
    PromptContent,
    PromptSetting,
    PromptType,
    prompt_label,
)
from xaimetrics.consim._rendering import render_prompt
from xaimetrics.consim._result import DEGENERATE_SHARE, DEGENERATE_SPREAD, ConSimResult
from xaimetrics.consim._scoring import SCORINGS, ConSimPrompt, score_response
from xaimetrics.consim._selection import ExampleSelection, select_examples

__all__ = [
    "CONTROLS",
    "CONTROL_ROLES",
    "DEFAULT_PROMPT_TYPES",
    "DEGENERATE_SHARE",
    "DEGENERATE_SPREAD",
    "PROMPT_TYPES",
    "SCORINGS",
    "ConSim",
    "ConSimPrompt",
    "ConSimResult",
    "ConSimSamples",
    "ControlKind",
    "ExampleSelection",
    "Explanation",
    "LLMLabels",
    "ParsedAnswers",
    "PromptContent",
    "PromptSetting",
    "PromptType",
    "RandomWords",
    "SurrogateWords",
    "evaluate_prompts",
    "make_control",
    "o1ca",
    "parse_answers",
    "parse_label_proposals",
    "prompt_label",
    "render_prompt",
    "score_response",
    "select_examples",
]
