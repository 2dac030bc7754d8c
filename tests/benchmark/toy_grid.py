"""A tiny dataset and a tiny torch classifier for grid tests (importable by subprocesses and Ray workers).

``ToyTopicModel`` is the lexicon classifier of ``toy_models`` on its ``GRID`` task (see there).
"""

from __future__ import annotations

import json
from typing import ClassVar

from toy_models import GRID, LexiconClassifier
from xaimetrics.data import TextDataset

TOPICS = GRID.topics


class ToyTopicModel(LexiconClassifier):
    """The lexicon classifier of the ``GRID`` task: 3 topic counts + length + exclamation marks."""

    def __init__(self) -> None:
        super().__init__(GRID.topics, **GRID.model_settings)


def toy_dataset(split: str) -> TextDataset:
    """200 train / 150 test texts (deterministic)."""
    n, seed = (200, 1) if split == "train" else (150, 2)
    texts, labels = GRID.texts(n, seed)
    return TextDataset(texts, labels, list(TOPICS), name="toy", split=split)


def toy_model(dataset: str) -> ToyTopicModel:
    return ToyTopicModel()


class MethodOracle:
    """A simulator whose accuracy depends on the method of the setting (told through ``register``).

    Method ``m`` on seed ``s`` answers the first ``round(acc · n)`` EP samples with f's prediction and the
    others with another class, ``acc = BASE[m] + 0.1·((s + len(m)) mod 2)``: the expected ranking is the
    order of ``BASE`` and the per-seed jitter gives the paired differences a non-zero variance.
    """

    BASE: ClassVar[dict[str, float]] = {"NMF": 0.8, "ICA": 0.6, "PCA": 0.4, "NoExplanation": 0.2}
    name = "oracle"

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self._plans: dict[str, tuple] = {}
        self.calls = 0

    def register(self, setting, prompt) -> None:
        self._plans["\n\n".join(m.content for m in prompt.messages)] = (setting, prompt)

    def generate(self, messages, *, answer_schema=None):
        import time

        from xaimetrics.simulators import SimulatorResponse

        if self.delay:
            time.sleep(self.delay)
        self.calls += 1
        plan = self._plans.get("\n\n".join(m.content for m in messages))
        if plan is None:  # not a ConSim prompt: a request for concept labels (o1CA)
            return SimulatorResponse(LABELS, model="oracle")
        setting, prompt = plan
        accuracy = self.BASE.get(setting.method, 0.5) + 0.1 * ((setting.seed + len(setting.method)) % 2)
        n_right = round(accuracy * len(prompt.sample_ids))
        classes = prompt.shown_classes
        lines = []
        for i, (sample_id, reference) in enumerate(zip(prompt.sample_ids, prompt.references, strict=True)):
            answer = reference if i < n_right else (reference + 1) % len(classes)
            lines.append(f"Sample_{sample_id}: {classes[answer]}")
        text = "\n".join(lines)
        words = sum(len(m.content.split()) for m in messages)
        return SimulatorResponse(
            text, model="oracle", prompt_tokens=words, completion_tokens=len(text.split())
        )


LABELS = json.dumps([
    {"label": "diplomacy", "sentences": ["the minister visited the embassy", "a treaty at the border"]},
    {"label": "football", "sentences": ["the coach won the match", "a late goal in the league"]},
    {"label": "computers", "sentences": ["a new laptop chip", "the robot runs software on a server"]},
])  # fmt: skip


class ControlledOracle(MethodOracle):
    """A :class:`MethodOracle` whose controls behave as a good instrument's: the positive control scores as NMF,
    the negative control exactly as NoExplanation; PCA too (it does not help)."""

    BASE: ClassVar[dict[str, float]] = {
        "NMF": 0.8, "PCA": 0.2, "NoExplanation": 0.2, "SurrogateWords": 0.8, "RandomWords": 0.2,
    }  # fmt: skip


class BlindSimulator:
    """Answers the first shown class for every sample, whatever the prompt: no explanation can help it (the
    instrument a gate must refuse)."""

    name = "blind"

    def generate(self, messages, *, answer_schema=None):
        import re

        from xaimetrics.simulators import SimulatorResponse

        prompt = messages[-1].content
        ids = re.findall(r"Sample_(\d+)", prompt)
        classes = re.findall(r"Class_\d+", prompt) or ["diplomacy"]
        text = "\n".join(f"Sample_{i}: {classes[0]}" for i in dict.fromkeys(ids))
        return SimulatorResponse(
            text, model="blind", prompt_tokens=len(prompt.split()), completion_tokens=len(ids)
        )


def slow_oracle() -> MethodOracle:
    return MethodOracle(delay=0.05)


PROVIDER_KWARGS = {
    "datasets": {"toy": toy_dataset},
    "models": {"toy": toy_model},
    "simulators": {
        "oracle": MethodOracle,
        "slow_oracle": slow_oracle,
        "blind": BlindSimulator,
        "controlled_oracle": ControlledOracle,
    },
}


def toy_grid(**changes):
    """A small grid on the toy data (3 concepts, 8 + 8 samples, fast SAE)."""
    from xaimetrics.benchmark import Grid, Providers

    options = {
        "datasets": ("toy",), "models": ("toy",), "methods": ("NMF", "PCA", "ICA", "NoExplanation"),
        "n_concepts": 3, "default_n_concepts": 3, "prompt_types": ("NE1", "E1", "NE2", "E2", "E3", "U1"),
        "seeds": (0, 1, 2), "simulators": ("oracle",), "n_lp": 9, "n_ep": 9, "n_fit": 200,
        "extractor_options": {"SAE": {"max_steps": 30}} if "SAE" in changes.get("methods", ()) else None,
        "concurrency": 4,
    }  # fmt: skip
    options.update(changes)
    return Grid(**options, **Providers(**PROVIDER_KWARGS).grid_extras())


def resume_grid(**changes):
    """The grid of the kill-and-resume test: a slow simulator so that a kill lands mid-run."""
    options = {
        "simulators": ("slow_oracle",),
        "concurrency": 2,
        "seeds": (0, 1),
        "methods": ("NMF", "PCA", "NoExplanation"),
    }
    options.update(changes)
    return toy_grid(**options)


def run_child(store: str, artefacts: str) -> None:
    """Entry point of the subprocess killed by the resume test."""
    from xaimetrics.benchmark import Providers, run_grid

    run_grid(
        resume_grid(), store, providers=Providers(**PROVIDER_KWARGS), artefact_dir=artefacts, progress=False
    )


def _providers():
    from xaimetrics.benchmark import Providers

    return Providers(**PROVIDER_KWARGS)


PROVIDERS = _providers()
