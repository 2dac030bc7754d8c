"""What each participant goes through: the assignment of arms (or the order of texts) and the screens.

A participant's *plan* is fixed when they are invited and stored with them, so the sequence of screens never
changes, across restarts included:

- simulatability: the arms, each on a different seed (nobody sees the same samples twice: an LP sample
  seen with the model's answer under one arm would help under the next), handed out as a Latin square over
  conditions and seeds (:func:`assign_arms`), so that the methods meet on the same samples;
- Likert: the texts; when the study shuffles, in one seeded order rotated per annotator, so that the planned
  annotators start in different parts of it (a cyclic Latin square: positions balance out across them).

Screens: simulatability — instructions, then per arm a *learn* screen (the explanation and/or the LP samples
with the model's answers; none for NE1) and one *question* screen per EP sample. Likert — instructions, then
one *rate* screen per text with every dimension.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from xaimetrics._validation import invalid
from xaimetrics.studies._bundle import Study
from xaimetrics.studies._likert import LikertStudy
from xaimetrics.studies._simulatability import SimulatabilityStudy, StudyArm

__all__ = ["Screen", "assign_arms", "make_plan", "screens"]

ScreenKind = Literal["instructions", "learn", "question", "rate"]


@dataclass(frozen=True)
class Screen:
    """One page of a participant's sequence.

    Attributes:
        index: position in the sequence (0 = instructions).
        kind: ``"instructions"``, ``"learn"``, ``"question"`` (simulatability) or ``"rate"`` (Likert).
        arm: the arm id (simulatability); sample: the EP sample id (questions); item: the text id (Likert).
        block: the arm's number in the plan, 1-based; number / total: the question's number in its block.
    """

    index: int
    kind: ScreenKind
    arm: str | None = None
    sample: str | None = None
    item: str | None = None
    block: int = 0
    number: int = 0
    total: int = 0

    @property
    def answered(self) -> bool:
        """Whether the screen asks for an answer (else it is acknowledged with "Continue")."""
        return self.kind in ("question", "rate")


def assign_arms(study: SimulatabilityStudy, number: int) -> list[str]:
    """The arms of participant ``number`` (0-based): a Latin square over conditions and seeds.

    A *condition* is an arm without its seed (method, prompt type, anonymisation). Participant ``p`` does,
    in slot ``j``, condition ``(p + j) mod C`` on seed ``(p // C + j) mod S``: each participant meets
    different conditions on different seeds, and every ``C`` consecutive participants cover every condition
    on each seed, so that the methods meet on the same samples. Pairs missing from the study are replaced by
    the closest arm with an unused seed.

    Example:
        >>> from xaimetrics.studies import SimulatabilityStudy
        >>> from xaimetrics.studies._simulatability import SampleSet, StudyArm
        >>> sets = [SampleSet.from_texts(s, ["a"], [0], ["b"], [1]) for s in (0, 1)]
        >>> arms = [StudyArm("NoExplanation", kind, False, seed) for kind in ("NE1", "NE2") for seed in (0, 1)]
        >>> study = SimulatabilityStudy(["x", "y"], sets, [], arms, arms_per_participant=2)
        >>> assign_arms(study, 0), assign_arms(study, 1)
        (['NoExplanation/NE1/seed0', 'NoExplanation/NE2/seed1'], ['NoExplanation/NE2/seed0', 'NoExplanation/NE1/seed1'])
    """
    conditions = list(dict.fromkeys(_condition(arm) for arm in study.arms))
    seeds = sorted({arm.seed for arm in study.arms})
    by_pair = {(_condition(arm), arm.seed): arm.id for arm in study.arms}
    n_c, n_s = len(conditions), len(seeds)
    chosen: list[str] = []
    used: set[int] = set()
    for j in range(study.arms_per_participant):
        condition, seed = conditions[(number + j) % n_c], seeds[(number // n_c + j) % n_s]
        arm_id = by_pair.get((condition, seed))
        if arm_id is None or seed in used:
            arm_id = next(
                by_pair[(c, s)]
                for s in seeds
                for c in [condition, *conditions]
                if (c, s) in by_pair and s not in used
            )
        chosen.append(arm_id)
        used.add(study.arm(arm_id).seed)
    return chosen


def _condition(arm: StudyArm) -> tuple[str, int, str, str]:
    return (arm.method, arm.n_concepts, arm.interpretation, arm.label)


def make_plan(study: Study, number: int, arms: Sequence[str] | None = None) -> list[str]:
    """A new participant's plan: the given ``arms`` (checked), balanced arms, or the texts' order."""
    if isinstance(study, LikertStudy):
        if arms is not None:
            raise invalid(
                "arms", "make_plan", "None for a Likert study (every annotator rates every text)", list(arms)
            )
        ids = [item.id for item in study.items]
        if study.shuffle:  # one seeded order, rotated so that each annotator starts in another part of it
            ids = [ids[i] for i in np.random.default_rng(0).permutation(len(ids))]
            offset = (number * -(-len(ids) // study.n_annotators)) % len(ids)
            ids = ids[offset:] + ids[:offset]
        return ids
    if arms is None:
        return assign_arms(study, number)
    arms = list(arms)
    for arm_id in arms:
        study.arm(arm_id)  # raises on an unknown id
    if not arms or len(set(arms)) != len(arms):
        raise invalid("arms", "make_plan", "distinct arm ids", arms)
    by_seed: dict[int, list[str]] = {}
    for arm_id in arms:
        by_seed.setdefault(study.arm(arm_id).seed, []).append(arm_id)
    repeated = {seed: ids for seed, ids in by_seed.items() if len(ids) > 1}
    if repeated:  # the same LP/EP samples twice: what the answers to the first arm taught helps on the second
        seed, ids = next(iter(repeated.items()))
        raise invalid(
            "arms", "make_plan", "arms on different seeds (one person never sees the same samples twice)",
            f"{', '.join(ids)} (all on seed {seed})",
            "Give each participant at most one arm per seed, or let the study assign them (no --arms).",
        )  # fmt: skip
    return arms


def screens(study: Study, plan: Sequence[str]) -> list[Screen]:
    """The sequence of screens of a participant with ``plan``.

    Example:
        >>> from xaimetrics.studies import LikertStudy
        >>> from xaimetrics.studies._likert import Dimension, RatingItem
        >>> study = LikertStudy([Dimension("tone", "emotional tone")], [RatingItem("0", "a joy", (1.0,))])
        >>> [s.kind for s in screens(study, ["0"])]
        ['instructions', 'rate']
    """
    out = [Screen(0, "instructions")]
    if isinstance(study, LikertStudy):
        for number, item in enumerate(plan, 1):
            out.append(Screen(len(out), "rate", item=item, number=number, total=len(plan)))
        return out
    for block, arm_id in enumerate(plan, 1):
        arm = study.arm(arm_id)
        content = study.prompt(arm).setting.kind.content
        if content.global_explanations or content.lp_samples:
            out.append(Screen(len(out), "learn", arm=arm_id, block=block))
        ep = study.sample_set(arm.seed).ep
        for number, sample in enumerate(ep, 1):
            out.append(
                Screen(
                    len(out),
                    "question",
                    arm=arm_id,
                    sample=sample.id,
                    block=block,
                    number=number,
                    total=len(ep),
                )
            )
    return out
