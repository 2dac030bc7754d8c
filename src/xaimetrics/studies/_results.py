"""From stored answers to results: eq. 5 scores and results-store rows (simulatability), the ratings array
(Likert), and the raw answers of everyone.

A participant's answers to one arm are scored exactly like an LLM's: they are written as the answer text
``Sample_{id}: {class}`` and passed with the arm's ConSim prompt to :func:`xaimetrics.consim.score_response`
(eq. 5 against f's predictions on the EP samples). The result is checked to hold what was clicked.

In the results store, each arm is **one row with simulator** ``"human"``: the mean of its participants'
eq. 5 accuracies (``n_samples`` counts all their answers), with each participant's full result in the row's
payload. One row per setting is what the benchmark's rankings take, so human rows rank like any simulator's.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from xaimetrics._validation import invalid
from xaimetrics.consim import ConSimResult, score_response
from xaimetrics.studies._bundle import study_digest
from xaimetrics.studies._kind_registry import Study, kind_of
from xaimetrics.studies._likert import LikertStudy
from xaimetrics.studies._simulatability import SimulatabilityStudy
from xaimetrics.studies._store import RESPONSE_COLUMNS, Participant, StudyStore

if TYPE_CHECKING:
    from xaimetrics.benchmark import ResultRow, ResultsStore

__all__ = [
    "HUMAN",
    "HumanResult",
    "LikertRatings",
    "answers_frame",
    "export_results",
    "human_results",
    "likert_ratings",
]

#: the simulator name of human answers in the results store
HUMAN = "human"


@dataclass(frozen=True)
class HumanResult:
    """One participant's answers to one arm, scored (eq. 5); ``complete`` when every EP sample is answered."""

    participant: str
    arm: str
    result: ConSimResult
    complete: bool


def _require(study: object, kind: type, owner: str) -> None:
    if not isinstance(study, kind):
        raise invalid("study", owner, f"a {kind.__name__}", type(study).__name__)


def _participant_answers(store: StudyStore, participant: Participant) -> dict[str, dict[str, int]]:
    """``{arm id: {EP sample id: class id}}`` of a simulatability participant."""
    answers = store.answers(participant)
    out: dict[str, dict[str, int]] = {}
    for screen in store.screens(participant):
        value = answers.get(screen.index, {}).get("")
        if screen.kind == "question" and value is not None:
            out.setdefault(str(screen.arm), {})[str(screen.sample)] = value
    return out


def human_results(
    study: SimulatabilityStudy, store: StudyStore, *, complete_only: bool = True
) -> list[HumanResult]:
    """Every participant's answers to every arm of their plan, scored like an LLM's (eq. 5).

    Args:
        study: the simulatability study.
        store: its answer database.
        complete_only: leave out arms a participant has not finished (default); otherwise unanswered
            samples count as missing, hence wrong, as for an LLM.
    """
    _require(study, SimulatabilityStudy, "human_results")
    out = []
    for participant in store.participants():
        answered = _participant_answers(store, participant)
        for arm_id in participant.plan:
            arm = study.arm(arm_id)
            prompt = study.prompt(arm)
            given = answered.get(arm_id, {})
            complete = all(i in given for i in prompt.sample_ids)
            if complete_only and not complete:
                continue
            text = "\n".join(
                f"Sample_{i}: {prompt.shown_classes[given[i]]}" for i in prompt.sample_ids if i in given
            )
            result = score_response(prompt, text, seed=arm.seed)
            expected = {i: (prompt.class_names[given[i]] if i in given else None) for i in prompt.sample_ids}
            if result.answers != expected:  # the parser must read back exactly what was clicked
                raise RuntimeError(f"answers of {participant.label} to {arm_id} were not read back as given")
            result = dataclasses.replace(result, metadata={"participant": participant.label, "arm": arm_id})
            out.append(HumanResult(participant.label, arm_id, result, complete))
    return out


def export_results(
    study: SimulatabilityStudy,
    store: StudyStore,
    results: ResultsStore | str | Path,
    *,
    simulator: str = HUMAN,
    phase: str = "evaluation",
) -> int:
    """Write one row per arm (its participants' mean eq. 5 accuracy) into a results store; return the count.

    Rows use the benchmark's setting columns (``dataset``, ``model``, ``method``, ``n_concepts``,
    ``interpretation``, ``prompt_type``, ``anonymized``, ``seed``) with ``simulator`` (``"human"``), so rankings
    and reports read them like an LLM's. Exporting the same answers again writes nothing; exporting after more
    participants finished into a store holding the earlier rows is refused (rows are never replaced).

    Args:
        study, store: the study and its answer database.
        results: a :class:`~xaimetrics.benchmark.ResultsStore` or its path.
        simulator: the simulator name of the rows.
        phase: the rows' phase (``"evaluation"``, as the benchmark's reported runs).
    """
    from xaimetrics.benchmark import ResultsStore
    from xaimetrics.benchmark._store import setting_key

    _require(study, SimulatabilityStudy, "export_results")
    target = results if isinstance(results, ResultsStore) else ResultsStore(results)
    owned = target is not results
    try:
        by_arm: dict[str, list[HumanResult]] = {}
        for human in human_results(study, store):
            by_arm.setdefault(human.arm, []).append(human)
        digest = study_digest(study)
        earlier = _earlier_exports(target, digest, simulator)
        written = 0
        for arm_id, group in by_arm.items():
            arm = study.arm(arm_id)
            setting: dict[str, object] = {
                "dataset": study.dataset, "model": study.model, **arm.setting(), "simulator": simulator,
                "phase": phase,
            }  # fmt: skip
            participants = sorted(h.participant for h in group)
            key = setting_key({**setting, "study": digest, "participants": participants})
            if key not in earlier and arm_id in earlier.values():
                raise invalid(
                    "results", "export_results", "a store without earlier human rows of this arm",
                    f"rows of {arm_id} from other participants",
                    "Export into a new results store (rows are never replaced), or copy the LLM rows into it.",
                )  # fmt: skip
            row, payload = _row(setting, [h.result for h in group], participants, digest, arm_id)
            written += int(target.add(key, row, payload))
        return written
    finally:
        if owned:
            target.close()


def _earlier_exports(results: ResultsStore, digest: str, simulator: str) -> dict[str, str]:
    """``{key: arm id}`` of the rows this study exported before (read from their payloads)."""
    out = {}
    for row in results.rows():
        if row["simulator"] != simulator:
            continue
        key = str(row["key"])
        study = results.payload(key).get("study", {})
        if study.get("digest") == digest:
            out[key] = study.get("arm")
    return out


def _row(
    setting: dict[str, object], results: list[ConSimResult], participants: list[str], digest: str, arm_id: str
) -> tuple[ResultRow, dict[str, object]]:
    from xaimetrics.benchmark import ResultRow

    row = ResultRow.of(setting, results)
    payload = {
        "setting": setting,
        "study": {"digest": digest, "arm": arm_id, "participants": participants},
        "participants": [
            {"participant": p, "result": r.to_dict()} for p, r in zip(participants, results, strict=True)
        ],
    }
    return row, payload


@dataclass(frozen=True)
class LikertRatings:
    """Ratings of a Likert study: ``ratings`` of shape ``(n_examples, n_annotators, n_dimensions)`` (NaN where
    missing) — the layout :func:`xaimetrics.representation.analyze_ratings` reads — and what each axis is."""

    ratings: np.ndarray
    examples: tuple[str, ...]
    annotators: tuple[str, ...]
    dimensions: tuple[str, ...]

    def frame(self) -> pd.DataFrame:
        """The long table ``example, annotator, dimension, rating`` (rated cells only)."""
        rows = [
            {"example": e, "annotator": a, "dimension": d, "rating": int(self.ratings[i, j, k])}
            for i, e in enumerate(self.examples) for j, a in enumerate(self.annotators)
            for k, d in enumerate(self.dimensions) if not math.isnan(self.ratings[i, j, k])
        ]  # fmt: skip
        return pd.DataFrame(rows, columns=["example", "annotator", "dimension", "rating"])

    def to_list(self) -> list[list[list[int | None]]]:
        """The ratings as nested lists, ``None`` where missing (JSON-ready)."""
        return [
            [[None if math.isnan(v) else int(v) for v in row] for row in example] for example in self.ratings
        ]

    def save(self, path: str | os.PathLike[str]) -> Path:
        """``.json``: the bare ``examples × annotators × dimensions`` array (``null`` = missing), as
        ``xaimetrics interpretability --ratings`` reads it, with a ``.meta.json`` naming the axes beside it;
        ``.csv``: the long table."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".csv":
            self.frame().to_csv(path, index=False)
        elif path.suffix == ".json":
            path.write_text(json.dumps(self.to_list()) + "\n", encoding="utf-8")
            meta = {"examples": list(self.examples), "annotators": list(self.annotators),
                    "dimensions": list(self.dimensions), "layout": "examples × annotators × dimensions"}  # fmt: skip
            path.with_suffix(".meta.json").write_text(
                json.dumps(meta, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
            )
        else:
            raise invalid("path", "LikertRatings.save", "a file ending in .json or .csv", str(path))
        return path


def likert_ratings(study: LikertStudy, store: StudyStore) -> LikertRatings:
    """The ratings of every annotator (examples in study order, annotators in invitation order).

    Example:
        >>> import os, tempfile
        >>> from xaimetrics.studies import LikertStudy, StudyStore
        >>> from xaimetrics.studies._likert import Dimension, RatingItem
        >>> study = LikertStudy([Dimension("tone", "emotional tone")], [RatingItem("0", "a joy", (0.8,))])
        >>> store = StudyStore(os.path.join(tempfile.mkdtemp(), "answers.sqlite"), study)
        >>> for rating in (4, 5):
        ...     annotator = store.invite().participant
        ...     store.record(annotator, 1, {"0": rating})
        >>> likert_ratings(study, store).ratings.tolist()
        [[[4.0], [5.0]]]
    """
    _require(study, LikertStudy, "likert_ratings")
    participants = store.participants()
    examples = [item.id for item in study.items]
    row = {item_id: i for i, item_id in enumerate(examples)}
    cube = np.full((len(examples), len(participants), len(study.dimensions)), np.nan)
    for j, participant in enumerate(participants):
        answers = store.answers(participant)
        for screen in store.screens(participant):
            if screen.kind != "rate":
                continue
            for field, value in answers.get(screen.index, {}).items():
                if value is not None:
                    cube[row[str(screen.item)], j, int(field)] = value
    return LikertRatings(
        cube, tuple(examples), tuple(p.label for p in participants), tuple(d.name for d in study.dimensions)
    )


def answers_frame(study: Study, store: StudyStore) -> pd.DataFrame:
    """Every stored answer with its participant, screen, subject, time to answer and revisions; for
    simulatability also the class chosen, f's prediction and whether they agree."""
    frame = pd.DataFrame(store.responses())
    if frame.empty:
        return pd.DataFrame(columns=[*RESPONSE_COLUMNS, "seconds"])
    frame["value"] = frame["value"].astype("Int64")  # class ids and ratings; empty for "Continue" screens
    frame["seconds"] = (frame["answered_at"] - frame["first_seen"]).round(3)
    return kind_of(study).annotate(frame)
