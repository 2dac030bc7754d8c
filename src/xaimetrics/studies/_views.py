"""What each screen shows, as plain data for the templates (all text is escaped by the templates).

The explanation of an arm is shown to people with the rules of the LLM prompt (:func:`~xaimetrics.consim.
render_prompt`): a concept is shown when its normalised global importance passes ``τ`` for some class; a class
lists the shown concepts above ``τ``; a local explanation the shown concepts above ``τ``; the signs are the
buckets of Tab. 4. Instead of ``'concept_3': '++'``, a person reads a badge "strongly for: goal, match, coach".

The texts are the prompt's (cut at the study's ``max_sample_chars`` like the LLM's), shown in a form a person
can use on a phone: the first :data:`LEARN_CHARS` (an example on the learn screen) or :data:`QUESTION_CHARS`
(the text of a question) characters, cut at a word, with the whole text one click away (``<details>``). So
the answer buttons stay on the first screen, and twenty news articles make a learn page of a few screens, not
twenty-three. Each answer button carries the concepts that describe its class (what the LLM reads in its
prompt, and all an anonymised ``Class_1`` means).
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from xaimetrics.concepts import importance_bucket, normalize_importance
from xaimetrics.consim import ConSimPrompt
from xaimetrics.studies._likert import LikertStudy
from xaimetrics.studies._plan import Screen
from xaimetrics.studies._simulatability import MethodExplanation, SimulatabilityStudy, StudyArm

__all__ = ["LEARN_CHARS", "QUESTION_CHARS", "excerpt", "explanation_view", "question_view", "rating_view"]

#: characters of an example shown on the learn screen before "Show the whole text"
LEARN_CHARS = 140
#: characters of a question's text shown before "Show the whole text"
QUESTION_CHARS = 360
#: concepts per class shown on an answer button
_BUTTON_CONCEPTS = 3

#: the sign buckets in words (``tone`` picks the badge's colour; the words carry the meaning)
_SIGNS = {
    "++": ("strongly for", "for"),
    "+": ("for", "for"),
    "-": ("against", "against"),
    "--": ("strongly against", "against"),
}


class Excerpt(TypedDict):
    """A text as a screen shows it: the first characters (``short``), the whole (``full``), whether cut."""

    short: str
    full: str
    cut: bool


class Badge(TypedDict):
    """A concept with its sign, in words (see the module docstring)."""

    concept: int
    sign: str
    meaning: str
    tone: str
    label: str | None
    words: str
    few: str
    opposed: str


class ClassView(TypedDict):
    name: str
    badges: list[Badge]


class LearnSample(TypedDict):
    id: str
    text: Excerpt
    answer: str
    badges: list[Badge]


class ExplanationView(TypedDict):
    """The learn screen of an arm (also shown, folded, under each question)."""

    classes: list[ClassView]
    concepts: list[Badge]
    lp: list[LearnSample]
    ep_badges: dict[str, list[Badge]]
    has_explanation: bool
    anonymized: bool
    lp_local: bool


def _prompt_texts(prompt: ConSimPrompt) -> dict[str, str]:
    """``{sample id: text}`` exactly as the LLM's prompt shows the samples (one line, cut like the prompt).

    Each sample's first line ``Sample_{id}: ...`` is its text (the LP predictions come later in the prompt).
    """
    ids = {*prompt.lp_sample_ids, *prompt.sample_ids}
    texts: dict[str, str] = {}
    for message in prompt.messages:
        for line in message.content.splitlines():
            head, separator, rest = line.partition(": ")
            sample = head.removeprefix("Sample_")
            if separator and head.startswith("Sample_") and sample in ids and sample not in texts:
                texts[sample] = rest
    return texts


def excerpt(text: str, limit: int) -> Excerpt:
    """``{"short", "full", "cut"}``: the first ``limit`` characters of ``text`` cut at a word, and the whole.

    Example:
        >>> excerpt("one two three four", 9)
        {'short': 'one two…', 'full': 'one two three four', 'cut': True}
        >>> excerpt("short", 9)["cut"]
        False
    """
    if len(text) <= limit:
        return {"short": text, "full": text, "cut": False}
    head = text[:limit]
    space = head.rfind(" ")
    head = head[:space] if space > limit // 2 else head
    return {"short": head.rstrip(" ,.;:") + "…", "full": text, "cut": True}


def _sign(value: float) -> str:
    return importance_bucket(value) or ("+" if value > 0 else "-")


def _badge(explanation: MethodExplanation, concept_id: int, value: float) -> Badge:
    sign = _sign(value)
    description = explanation.concepts.get(concept_id)
    words = ", ".join(description.aligned) if description else ""
    return {
        "concept": concept_id,
        "sign": sign,
        "meaning": _SIGNS[sign][0],
        "tone": _SIGNS[sign][1],
        "label": description.label if description else None,
        "words": words,
        "few": ", ".join(description.aligned[:3]) if description else "",
        "opposed": ", ".join(description.opposed) if description else "",
    }


def explanation_view(study: SimulatabilityStudy, arm: StudyArm) -> ExplanationView:
    """The learn screen of ``arm``: per class the important concepts, the LP samples and their badges."""
    prompt = study.prompt(arm)
    content = prompt.setting.kind.content
    texts = _prompt_texts(prompt)
    explanation = study.explanation(arm)
    shown = study.shown_classes(arm)
    samples = study.sample_set(arm.seed)
    threshold = study.importance_threshold
    view = ExplanationView(classes=[], concepts=[], lp=[], ep_badges={}, has_explanation=False,
                           anonymized=arm.anonymized, lp_local=content.lp_local)  # fmt: skip
    shown_ids: set[int] = set()
    if explanation is not None and content.global_explanations:
        ids = np.asarray(explanation.concept_ids)
        phi_hat = np.asarray(normalize_importance(explanation.global_importances))
        keep = np.abs(phi_hat) > threshold
        order = np.argsort(ids, kind="stable")
        shown_ids = {int(ids[j]) for j in np.flatnonzero(keep.any(axis=0))}
        for c, name in enumerate(shown):
            entries = sorted(
                ((float(phi_hat[c, j]), int(ids[j])) for j in order if keep[c, j]), key=lambda e: -abs(e[0])
            )
            view["classes"].append({"name": name, "badges": [_badge(explanation, i, v) for v, i in entries]})
        view["concepts"] = [_badge(explanation, cid, 1.0) for cid in sorted(shown_ids)]

    def local_badges(values: np.ndarray | None, row: int) -> list[Badge]:
        if explanation is None or values is None:
            return []
        ids = np.asarray(explanation.concept_ids)
        phi_hat = np.asarray(normalize_importance(values[row]))
        return [
            _badge(explanation, int(ids[j]), float(phi_hat[j]))
            for j in np.argsort(-np.abs(phi_hat), kind="stable")
            if int(ids[j]) in shown_ids and abs(phi_hat[j]) > threshold
        ]

    if content.lp_samples:
        lp_local = explanation.lp_local if explanation is not None and content.lp_local else None
        view["lp"] = [
            {
                "id": s.id,
                "text": excerpt(texts[s.id], LEARN_CHARS),
                "answer": shown[s.prediction],
                "badges": local_badges(lp_local, r),
            }
            for r, s in enumerate(samples.lp)
        ]
    if content.ep_local and explanation is not None:
        view["ep_badges"] = {s.id: local_badges(explanation.ep_local, r) for r, s in enumerate(samples.ep)}
    view["has_explanation"] = bool(view["classes"])
    return view


def question_view(study: SimulatabilityStudy, screen: Screen) -> dict[str, object]:
    """An EP question: the text, the class choices (with their keys) and, for U1, the sample's badges."""
    arm = study.arm(str(screen.arm))
    sample = next(s for s in study.sample_set(arm.seed).ep if s.id == screen.sample)
    learned = explanation_view(study, arm)
    described = {c["name"]: c["badges"][:_BUTTON_CONCEPTS] for c in learned["classes"]}
    choices = [
        {"value": i, "name": name, "key": str(i + 1) if i < 9 else ("0" if i == 9 else ""),
         "badges": described.get(name, [])}
        for i, name in enumerate(study.shown_classes(arm))
    ]  # fmt: skip
    return {
        "text": excerpt(_prompt_texts(study.prompt(arm))[sample.id], QUESTION_CHARS),
        "choices": choices,
        "badges": learned["ep_badges"].get(sample.id, []),
        "learned": learned,
    }


def rating_view(study: LikertStudy, screen: Screen) -> dict[str, object]:
    """A Likert screen: the text and, per dimension, its value, description, question and scale."""
    item = study.item(str(screen.item))
    values = study.values
    dimensions: list[dict[str, object]] = []
    for d, dimension in enumerate(study.dimensions):
        # the meter reads by value like the label: from 0 (or -max |value|) to the largest magnitude
        largest = float(np.abs(values[:, d]).max()) or 1.0
        _, signed = study.value_fraction(item, d)
        dimensions.append({
            "field": f"d{d}", "key": str(d), "name": dimension.name, "description": dimension.description,
            "low": dimension.low, "high": dimension.high, "value": item.values[d],
            "value_label": study.value_label(item, d), "min": -largest if signed else 0.0, "max": largest,
            "question": study.question_for(dimension),
        })  # fmt: skip
    scale = [
        {"value": i, "label": label, "short": label.split(":")[0]} for i, label in enumerate(study.scale, 1)
    ]
    return {"text": item.text, "dimensions": dimensions, "scale": scale}
