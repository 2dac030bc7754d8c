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

from xaimetrics._validation import invalid
from xaimetrics.studies._kind_registry import Screen, Study, kind_of
from xaimetrics.studies._simulatability import SimulatabilityStudy, StudyArm

__all__ = ["Screen", "assign_arms", "make_plan", "screens", "simulatability_plan"]


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
    """A new participant's plan, as the study's kind makes it: the given ``arms`` (checked), balanced arms, or
    the texts' order."""
    return kind_of(study).plan(number, arms)


def screens(study: Study, plan: Sequence[str]) -> list[Screen]:
    """The sequence of screens of a participant with ``plan``, as the study's kind lays them out.

    Example:
        >>> from xaimetrics.studies import LikertStudy
        >>> from xaimetrics.studies._likert import Dimension, RatingItem
        >>> study = LikertStudy([Dimension("tone", "emotional tone")], [RatingItem("0", "a joy", (1.0,))])
        >>> [s.kind for s in screens(study, ["0"])]
        ['instructions', 'rate']
    """
    return kind_of(study).screens(plan)


def simulatability_plan(study: SimulatabilityStudy, number: int, arms: Sequence[str] | None) -> list[str]:
    """The given ``arms`` (checked: known, distinct, one per seed), else :func:`assign_arms`."""
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
