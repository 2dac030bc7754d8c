"""The ConSim prompt types: what each prompt shows, their names, and the one registry that lists them.

A prompt has up to six parts: the task description and the class list (always), the global explanation
(concept descriptions + per-class important concepts), the learning-phase (LP) samples with f's predictions,
the LP local explanations, and the evaluation-phase (EP) samples (always). ``U1`` also shows local
explanations at EP: that leaks f's predictions, so its accuracy is an *upper bound*, never a ConSim score.

Two types say everything about "which prompt":

- :class:`PromptType` — what a prompt shows (its :class:`PromptContent`) and its names. Every one is
  registered in :data:`PROMPT_TYPES`: the six of the paper (Tab. 1), also class attributes with their
  Interpreto member names (``PromptType.E3_global_and_local_concepts_with_lp``) and the ``L1``/``L2`` aliases,
  and any a user adds. The API, the command line, the grid, the report and the figures all read that
  registry, and rendering is driven by the content alone, so a new prompt type is one ``register`` call::

    PROMPT_TYPES.register("E3x", PromptType(PromptContent(global_explanations=True, lp_samples=True,
                                                          lp_local=True)))

- :class:`PromptSetting` — a prompt type and whether classes are anonymised (``Class_0``, ``Class_1``…),
  parsed from and printed as its label with the paper's ``-a`` suffix (``"E3-a"``); ``anonymize_classes=True``
  and the ``--anonymize`` flag map onto it. Rendering, scoring (:class:`~xaimetrics.consim.ConSimPrompt`,
  :class:`~xaimetrics.consim.ConSimResult`) and the grid's settings hold one; the results store writes it as
  its ``prompt_type`` and ``anonymized`` columns.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from xaimetrics._registry import Registry, did_you_mean, join_or
from xaimetrics._validation import invalid

__all__ = [
    "ANONYMIZED_SUFFIX",
    "PROMPT_TYPES",
    "PromptContent",
    "PromptSetting",
    "PromptType",
    "PromptTypeRegistry",
    "prompt_label",
]

#: the suffix of an anonymised prompt type in labels (``"E3-a"``); ``"_a"`` is accepted when parsing
ANONYMIZED_SUFFIX = "-a"
_SUFFIXES = ("-a", "_a")


@dataclass(frozen=True)
class PromptContent:
    """Which parts a prompt type shows (paper Tab. 1, plus ``ep_local`` for the U1 upper bound).

    The task, the class list and the EP samples are always shown; LP predictions and LP local explanations
    are shown with the LP samples only.

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

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            if not isinstance(getattr(self, field.name), bool):
                raise invalid(field.name, "PromptContent", "True or False", getattr(self, field.name))
        if not self.task:
            raise invalid("task", "PromptContent", "True (every prompt states the task)", self.task)
        for name in ("lp_predictions", "lp_local"):
            if getattr(self, name) and not self.lp_samples:
                raise invalid(
                    name, "PromptContent", "False when lp_samples is False", True,
                    "Set lp_samples=True: they belong to the learning-phase samples.",
                )  # fmt: skip

    @property
    def needs_explanations(self) -> bool:
        """Whether the prompt shows any concept explanation (global or local)."""
        return self.global_explanations or self.lp_local or self.ep_local

    def without_explanations(self) -> PromptContent:
        """The same prompt with every concept explanation removed (what its baseline shows)."""
        return dataclasses.replace(self, global_explanations=False, lp_local=False, ep_local=False)


def prompt_label(name: str, anonymized: bool) -> str:
    """The label of a prompt setting: the prompt type's name, with ``-a`` when classes are anonymised.

    :attr:`PromptSetting.label` prints with it; it also labels stored rows, whose ``prompt_type`` and
    ``anonymized`` columns hold the two halves of a label.

    Example:
        >>> prompt_label("E3", True), prompt_label("NE1", False)
        ('E3-a', 'NE1')
    """
    return name + (ANONYMIZED_SUFFIX if anonymized else "")


@dataclass(frozen=True, repr=False)
class PromptType:
    """One prompt type: what the prompt shows and its names (the values :data:`PROMPT_TYPES` holds).

    The six of the paper are class attributes named as in Interpreto (the ``member`` name):

    ========================================= ======== ============================================
    attribute                                  name     content
    ========================================= ======== ============================================
    ``L1_baseline_without_lp``                 NE1      task only (no-explanation baseline)
    ``E1_global_concepts_without_lp``          E1       task + global explanation
    ``L2_baseline_with_lp``                    NE2      task + LP samples with f's predictions
    ``E2_global_concepts_with_lp``             E2       task + global + LP
    ``E3_global_and_local_concepts_with_lp``   E3       task + global + LP + LP local explanations
    ``U1_upper_bound_concepts_at_ep``          U1       E3 + local explanations at EP (upper bound)
    ========================================= ======== ============================================

    Every prompt type, built-in or registered, is listed by :data:`PROMPT_TYPES` (``PROMPT_TYPES.values()``)
    and found by name with ``PROMPT_TYPES.get("E3")``.

    Args:
        content: the parts the prompt shows.
        name: the short name shown in tables and stored in results (``"E3"``); filled in from the name it is
            registered under.
        member: Interpreto's member name, for the built-ins (``"E3_global_and_local_concepts_with_lp"``).
        baseline_name: the no-explanation prompt type its scores are compared with. Default: the registered
            baseline that shows the same parts minus the explanations, else NE2 with LP samples and NE1
            without.

    Example:
        >>> PromptType.L2_baseline_with_lp, PromptType.L2_baseline_with_lp.is_baseline
        (PromptType('NE2'), True)
        >>> kind = PromptType(PromptContent(global_explanations=True, lp_samples=True, lp_local=True), name="E3x")
        >>> kind.is_baseline, kind.is_upper_bound, kind.baseline
        (False, False, PromptType('NE2'))
    """

    content: PromptContent
    name: str = ""
    member: str = ""
    baseline_name: str | None = None

    # the six of the paper (Tab. 1), set below
    L1_baseline_without_lp: ClassVar[PromptType]
    E1_global_concepts_without_lp: ClassVar[PromptType]
    L2_baseline_with_lp: ClassVar[PromptType]
    E2_global_concepts_with_lp: ClassVar[PromptType]
    E3_global_and_local_concepts_with_lp: ClassVar[PromptType]
    U1_upper_bound_concepts_at_ep: ClassVar[PromptType]

    def __repr__(self) -> str:
        return f"PromptType({self.name!r})"

    def __str__(self) -> str:
        return self.name

    @property
    def is_baseline(self) -> bool:
        """True for prompts without concept explanations (NE1, NE2): the reference methods are compared to."""
        return not self.content.needs_explanations

    @property
    def is_upper_bound(self) -> bool:
        """True when explanations are shown at EP (U1): they leak f's predictions, so never a ConSim score."""
        return self.content.ep_local

    @property
    def is_ranked(self) -> bool:
        """True for the explanation prompts whose scores rank methods (not a baseline, not an upper bound)."""
        return not self.is_baseline and not self.is_upper_bound

    @property
    def baseline(self) -> PromptType:
        """The baseline prompt type this one is compared with (itself for a baseline).

        Example:
            >>> PromptType.E1_global_concepts_without_lp.baseline, PromptType.U1_upper_bound_concepts_at_ep.baseline
            (PromptType('NE1'), PromptType('NE2'))
        """
        if self.is_baseline:
            return self
        if self.baseline_name is not None:
            return PROMPT_TYPES.get(self.baseline_name)
        stripped = self.content.without_explanations()
        for kind in PROMPT_TYPES.values():
            if kind.is_baseline and kind.content == stripped:
                return kind
        return PromptType.L2_baseline_with_lp if stripped.lp_samples else PromptType.L1_baseline_without_lp


PromptType.L1_baseline_without_lp = PromptType(PromptContent(), "NE1", "L1_baseline_without_lp")
PromptType.E1_global_concepts_without_lp = PromptType(
    PromptContent(global_explanations=True), "E1", "E1_global_concepts_without_lp"
)
PromptType.L2_baseline_with_lp = PromptType(
    PromptContent(lp_samples=True, lp_predictions=True), "NE2", "L2_baseline_with_lp"
)
PromptType.E2_global_concepts_with_lp = PromptType(
    PromptContent(global_explanations=True, lp_samples=True, lp_predictions=True),
    "E2",
    "E2_global_concepts_with_lp",
)
PromptType.E3_global_and_local_concepts_with_lp = PromptType(
    PromptContent(global_explanations=True, lp_samples=True, lp_predictions=True, lp_local=True),
    "E3",
    "E3_global_and_local_concepts_with_lp",
)
PromptType.U1_upper_bound_concepts_at_ep = PromptType(
    PromptContent(
        global_explanations=True, lp_samples=True, lp_predictions=True, lp_local=True, ep_local=True
    ),
    "U1",
    "U1_upper_bound_concepts_at_ep",
)

# the built-ins with their extra aliases and descriptions, in the paper's order (Tab. 1)
_BUILTINS: tuple[tuple[PromptType, tuple[str, ...], str], ...] = (
    (PromptType.L1_baseline_without_lp, ("L1",), "task only (no-explanation baseline)"),
    (PromptType.E1_global_concepts_without_lp, (), "task + global explanation"),
    (PromptType.L2_baseline_with_lp, ("L2",), "task + LP samples with f's predictions"),
    (PromptType.E2_global_concepts_with_lp, (), "task + global + LP"),
    (PromptType.E3_global_and_local_concepts_with_lp, (), "task + global + LP + LP local explanations"),
    (
        PromptType.U1_upper_bound_concepts_at_ep,
        (),
        "E3 + local explanations at EP (upper bound, never a score)",
    ),
)


def _prepare(name: str, kind: PromptType) -> PromptType:
    owner = "the prompt type registry"
    if not isinstance(kind, PromptType):
        raise invalid(
            "value", owner, "a PromptType", type(kind).__name__, "Write PromptType(PromptContent(...))."
        )
    if name.lower().endswith(_SUFFIXES) or name != name.strip():
        raise invalid(
            "name", owner, "a name without surrounding spaces and without the '-a' / '_a' suffix", repr(name),
            "The suffix means anonymised classes: pick another name.",
        )  # fmt: skip
    if kind.name and kind.name != name:
        raise invalid("name", owner, f"the PromptType's own name {kind.name!r}", name)
    if kind.baseline_name is not None:
        baseline = PROMPT_TYPES.find(kind.baseline_name)
        if baseline is None or not baseline.is_baseline:
            raise invalid(
                "baseline_name", owner, f"a registered baseline prompt type ({join_or(PROMPT_TYPES.baselines())})",
                kind.baseline_name,
            )  # fmt: skip
        kind = dataclasses.replace(kind, baseline_name=baseline.name)
    return kind if kind.name else dataclasses.replace(kind, name=name)


class PromptTypeRegistry(Registry[PromptType]):
    """The registry of prompt types, with the questions the grid and the rankings ask of it.

    Example:
        >>> PROMPT_TYPES.names(), PROMPT_TYPES.baselines(), PROMPT_TYPES.explanations()
        (('NE1', 'E1', 'NE2', 'E2', 'E3', 'U1'), ('NE1', 'NE2'), ('E1', 'E2', 'E3'))
        >>> with PROMPT_TYPES.temporarily("G2", PromptType(PromptContent(global_explanations=True,
        ...                                                              lp_samples=True))):
        ...     PROMPT_TYPES.ranked_in("NE2"), PROMPT_TYPES.get("g2").content.lp_predictions
        (('E2', 'E3', 'G2'), False)
    """

    def summary(self) -> str:
        """The names with their short aliases, for ``--help`` (Interpreto member names are accepted too).

        Example:
            >>> PROMPT_TYPES.summary()
            'NE1 (L1), E1, NE2 (L2), E2, E3, U1'
        """
        parts = []
        for entry in self.entries():
            short = [alias for alias in entry.aliases if alias != entry.value.member]
            parts.append(f"{entry.name} ({', '.join(short)})" if short else entry.name)
        return ", ".join(parts)

    def baselines(self) -> tuple[str, ...]:
        """The no-explanation prompt types (run by the ``NoExplanation`` baseline only)."""
        return tuple(kind.name for kind in self.values() if kind.is_baseline)

    def explanations(self) -> tuple[str, ...]:
        """The explanation prompt types whose scores rank methods (no baseline, no upper bound)."""
        return tuple(kind.name for kind in self.values() if kind.is_ranked)

    def ranked_in(self, name: str) -> tuple[str, ...]:
        """The explanation prompt types whose rankings a score of prompt type ``name`` enters.

        An explanation prompt type enters its own; a baseline enters every explanation prompt type compared
        with it; an upper bound, or a name not registered, enters none.
        """
        kind = self.find(name)
        if kind is None or kind.is_upper_bound:
            return ()
        if kind.is_ranked:
            return (kind.name,)
        return tuple(
            other.name for other in self.values() if other.is_ranked and other.baseline.name == kind.name
        )

    def baseline_of(self, name: str) -> str | None:
        """The name of the baseline a ranked explanation prompt type is compared with, else ``None``."""
        kind = self.find(name)
        return kind.baseline.name if kind is not None and kind.is_ranked else None


#: every prompt type, by short name (aliases: Interpreto member names, ``L1``/``L2``), case-insensitive
PROMPT_TYPES = PromptTypeRegistry("prompt type", argument="prompt_type", prepare=_prepare)
for _kind, _aliases, _description in _BUILTINS:
    PROMPT_TYPES.register(
        _kind.name, _kind, aliases=(_kind.member, *_aliases), description=_description, builtin=True
    )


@dataclass(frozen=True, repr=False)
class PromptSetting:
    """A prompt type and whether classes are anonymised, parsed from and printed as its label (``"E3-a"``).

    The one value the API, the command line, the grid, rendering, scoring and the results store pass around
    for "which prompt"; the store writes it as its ``prompt_type`` (:attr:`name`) and ``anonymized`` columns.

    Args:
        kind: the :class:`PromptType`.
        anonymized: classes shown as ``Class_0``, ``Class_1``…

    Example:
        >>> setting = PromptSetting.parse("l2_a")
        >>> setting, setting.label, setting.kind.is_baseline
        (PromptSetting('NE2-a'), 'NE2-a', True)
        >>> PromptSetting.parse("E3", anonymize_classes=True).label, str(PromptSetting(PromptType.U1_upper_bound_concepts_at_ep))
        ('E3-a', 'U1')
    """

    kind: PromptType
    anonymized: bool = False

    @property
    def name(self) -> str:
        """The prompt type's short name, without the suffix (the store's ``prompt_type`` column)."""
        return self.kind.name

    @property
    def label(self) -> str:
        """The short name with the ``-a`` suffix when classes are anonymised."""
        return prompt_label(self.kind.name, self.anonymized)

    @property
    def baseline(self) -> PromptSetting:
        """The baseline setting its scores are compared with: the kind's baseline, anonymised alike."""
        return PromptSetting(self.kind.baseline, self.anonymized)

    def __repr__(self) -> str:
        return f"PromptSetting({self.label!r})"

    def __str__(self) -> str:
        return self.label

    @classmethod
    def parse(
        cls,
        prompt_type: PromptSetting | PromptType | str,
        anonymize_classes: bool | None = None,
        *,
        owner: str = "ConSim",
        argument: str = "prompt_type",
    ) -> PromptSetting:
        """Read any accepted spelling of a prompt setting, with or without the anonymisation suffix.

        Accepted: a :class:`PromptSetting`, a :class:`PromptType`, or a name registered in :data:`PROMPT_TYPES`
        (short name such as ``"NE1"``/``"E3"``, Interpreto member name, ``"L1"``/``"L2"``), case-insensitive,
        optionally suffixed with ``-a`` / ``_a``. An explicit ``anonymize_classes`` must agree with the suffix
        (``True`` or ``None`` with it).

        Raises:
            InvalidParameterError: an unknown name (with the closest one), another type, or
                ``anonymize_classes=False`` with a suffixed name.

        Example:
            >>> PromptSetting.parse("E2_global_concepts_with_lp-a"), PromptSetting.parse(PromptType.E1_global_concepts_without_lp)
            (PromptSetting('E2-a'), PromptSetting('E1'))
        """
        if isinstance(prompt_type, PromptSetting):
            return cls._with_flag(
                prompt_type.kind, prompt_type.anonymized, anonymize_classes, prompt_type, owner
            )
        if isinstance(prompt_type, PromptType) and prompt_type.name:
            return cls(prompt_type, bool(anonymize_classes))
        if not isinstance(prompt_type, str):
            raise invalid(argument, owner, "a PromptType or its name (e.g. 'E3' or 'E3-a')", prompt_type)
        name = prompt_type.strip()
        suffixed = name.lower().endswith(_SUFFIXES) and bool(name[:-2])
        kind = PROMPT_TYPES.find(name[:-2] if suffixed else name)
        if kind is None:
            raise invalid(
                argument, owner,
                f"one of {', '.join(PROMPT_TYPES.names())} (optionally with '-a' for anonymised classes) or a "
                "PromptType member name",
                prompt_type, did_you_mean(name[:-2] if suffixed else name, PROMPT_TYPES.names()) or None,
            )  # fmt: skip
        return cls._with_flag(kind, suffixed, anonymize_classes, prompt_type, owner)

    @classmethod
    def _with_flag(
        cls, kind: PromptType, suffixed: bool, anonymize_classes: bool | None, given: object, owner: str
    ) -> PromptSetting:
        if suffixed and anonymize_classes is False:
            raise invalid(
                "anonymize_classes", owner,
                f"True or None when the prompt type carries the '-a' suffix ({str(given)!r})", anonymize_classes,
                "Drop the suffix or the argument.",
            )  # fmt: skip
        return cls(kind, bool(suffixed or anonymize_classes))
