"""The six ConSim prompt types (paper Tab. 1, Interpreto names) and what each prompt contains.

A prompt has up to six parts: the task description and the class list (always), the global explanation
(concept descriptions + per-class important concepts), the learning-phase (LP) samples with f's predictions,
the LP local explanations, and the evaluation-phase (EP) samples (always). ``U1`` also shows local
explanations at EP: that leaks f's predictions, so its accuracy is an *upper bound*, never a ConSim score.

Every type has an anonymised variant (classes shown as ``Class_0``, ``Class_1``…), selected with
``anonymize_classes=True`` or with the ``-a`` suffix of the paper's figures (``"E3-a"``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from xaimetrics._validation import invalid

__all__ = ["PromptContent", "PromptType", "resolve_prompt_type"]


@dataclass(frozen=True)
class PromptContent:
    """Which parts a prompt type shows (paper Tab. 1, plus ``ep_local`` for the U1 upper bound).

    Example:
        >>> PromptType.E2_global_concepts_with_lp.content
        PromptContent(task=True, global_explanations=True, lp_samples=True, lp_predictions=True, lp_local=False, ep_local=False)
    """

    task: bool = True
    global_explanations: bool = False
    lp_samples: bool = False
    lp_predictions: bool = False
    lp_local: bool = False
    ep_local: bool = False

    @property
    def needs_explanations(self) -> bool:
        """Whether the prompt shows any concept explanation (global or local)."""
        return self.global_explanations or self.lp_local or self.ep_local


class PromptType(str, enum.Enum):
    """The six prompt types, named as in Interpreto; the value is the paper's short name.

    ===================================== ======== ============================================
    member                                 paper    content
    ===================================== ======== ============================================
    ``L1_baseline_without_lp``             NE1      task only (no-explanation baseline)
    ``E1_global_concepts_without_lp``      E1       task + global explanation
    ``L2_baseline_with_lp``                NE2      task + LP samples with f's predictions
    ``E2_global_concepts_with_lp``         E2       task + global + LP
    ``E3_global_and_local_concepts_with_lp`` E3     task + global + LP + LP local explanations
    ``U1_upper_bound_concepts_at_ep``      U1       E3 + local explanations at EP (upper bound)
    ===================================== ======== ============================================

    Example:
        >>> PromptType.L2_baseline_with_lp.value, PromptType.L2_baseline_with_lp.is_baseline
        ('NE2', True)
        >>> PromptType.U1_upper_bound_concepts_at_ep.is_upper_bound
        True
    """

    L1_baseline_without_lp = "NE1"
    E1_global_concepts_without_lp = "E1"
    L2_baseline_with_lp = "NE2"
    E2_global_concepts_with_lp = "E2"
    E3_global_and_local_concepts_with_lp = "E3"
    U1_upper_bound_concepts_at_ep = "U1"

    @property
    def paper_name(self) -> str:
        """The paper's short name (``NE1``, ``E1``, ``NE2``, ``E2``, ``E3``; ``U1`` for the upper bound)."""
        return self.value

    @property
    def content(self) -> PromptContent:
        """The parts this prompt type shows."""
        return _CONTENT[self]

    @property
    def is_baseline(self) -> bool:
        """True for the no-explanation baselines NE1 and NE2 (the reference each method is compared to)."""
        return not self.content.needs_explanations

    @property
    def is_upper_bound(self) -> bool:
        """True for U1: explanations at EP leak f's predictions, so its accuracy is never a ConSim score."""
        return self.content.ep_local

    @property
    def baseline(self) -> PromptType:
        """The baseline a score of this type is compared to (NE1 without LP, NE2 with LP)."""
        return (
            PromptType.L2_baseline_with_lp if self.content.lp_samples else PromptType.L1_baseline_without_lp
        )

    def label(self, anonymize_classes: bool = False) -> str:
        """The short name used in tables, with the paper's ``-a`` suffix for anonymised classes.

        Example:
            >>> PromptType.E3_global_and_local_concepts_with_lp.label(anonymize_classes=True)
            'E3-a'
        """
        return self.value + ("-a" if anonymize_classes else "")


_CONTENT = {
    PromptType.L1_baseline_without_lp: PromptContent(),
    PromptType.E1_global_concepts_without_lp: PromptContent(global_explanations=True),
    PromptType.L2_baseline_with_lp: PromptContent(lp_samples=True, lp_predictions=True),
    PromptType.E2_global_concepts_with_lp: PromptContent(
        global_explanations=True, lp_samples=True, lp_predictions=True
    ),
    PromptType.E3_global_and_local_concepts_with_lp: PromptContent(
        global_explanations=True, lp_samples=True, lp_predictions=True, lp_local=True
    ),
    PromptType.U1_upper_bound_concepts_at_ep: PromptContent(
        global_explanations=True, lp_samples=True, lp_predictions=True, lp_local=True, ep_local=True
    ),
}

_ALIASES = {"L1": "NE1", "L2": "NE2"}


def resolve_prompt_type(
    prompt_type: PromptType | str, anonymize_classes: bool | None = None
) -> tuple[PromptType, bool]:
    """Turn any accepted spelling into ``(PromptType, anonymize_classes)``.

    Accepted: a :class:`PromptType`, its member name (``"E3_global_and_local_concepts_with_lp"``), the
    paper's short name (``"NE1"``, ``"E1"``, ``"NE2"``, ``"E2"``, ``"E3"``, ``"U1"``), Interpreto's short
    prefixes (``"L1"``, ``"L2"``), case-insensitive, optionally suffixed with ``-a`` / ``_a`` (anonymised
    classes). An explicit ``anonymize_classes`` must agree with the suffix.

    Example:
        >>> resolve_prompt_type("ne2-a")
        (<PromptType.L2_baseline_with_lp: 'NE2'>, True)
        >>> resolve_prompt_type("E3_global_and_local_concepts_with_lp")
        (<PromptType.E3_global_and_local_concepts_with_lp: 'E3'>, False)
    """
    owner = "ConSim"
    if isinstance(prompt_type, PromptType):
        return prompt_type, bool(anonymize_classes)
    if not isinstance(prompt_type, str):
        raise invalid("prompt_type", owner, "a PromptType or its name (e.g. 'E3' or 'E3-a')", prompt_type)
    name = prompt_type.strip()
    suffixed = False
    if name.lower().endswith(("-a", "_a")) and name[:-2]:
        name, suffixed = name[:-2], True
    resolved = _lookup(name)
    if resolved is None:
        choices = ", ".join(member.value for member in PromptType)
        raise invalid(
            "prompt_type",
            owner,
            f"one of {choices} (optionally with '-a' for anonymised classes) or a PromptType member name",
            prompt_type,
        )
    if suffixed and anonymize_classes is False:
        raise invalid(
            "anonymize_classes",
            owner,
            f"True or None when the prompt type carries the '-a' suffix ({prompt_type!r})",
            anonymize_classes,
            "Drop the suffix or the argument.",
        )
    return resolved, bool(suffixed or anonymize_classes)


def _lookup(name: str) -> PromptType | None:
    for member in PromptType:
        if name == member.name or name.lower() == member.name.lower():
            return member
    short = name.upper()
    short = _ALIASES.get(short, short)
    for member in PromptType:
        if short == member.value:
            return member
    return None
