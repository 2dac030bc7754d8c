"""Prompt types and prompt settings: the six presets, their paper names, content and anonymised variants."""

from __future__ import annotations

import pytest

from xaimetrics.consim import PROMPT_TYPES, PromptContent, PromptSetting, PromptType
from xaimetrics.exceptions import InvalidParameterError

E3 = PromptType.E3_global_and_local_concepts_with_lp


def test_paper_table_1() -> None:
    rows = {
        "NE1": (False, False, False),
        "E1": (True, False, False),
        "NE2": (False, True, False),
        "E2": (True, True, False),
        "E3": (True, True, True),
    }
    for name, (global_, lp, local) in rows.items():
        content = PROMPT_TYPES.get(name).content
        assert (content.global_explanations, content.lp_samples, content.lp_local) == (global_, lp, local)
        assert content.lp_predictions == content.lp_samples
        assert content.task and not content.ep_local
    u1 = PromptType.U1_upper_bound_concepts_at_ep
    assert u1.content.ep_local and u1.is_upper_bound and not u1.is_baseline
    assert [p for p in PROMPT_TYPES.values() if p.is_baseline] == [
        PromptType.L1_baseline_without_lp,
        PromptType.L2_baseline_with_lp,
    ]
    assert PROMPT_TYPES.get("E1").baseline is PromptType.L1_baseline_without_lp
    assert E3.baseline is PromptType.L2_baseline_with_lp


def test_interpreto_member_names() -> None:
    """The class attributes are the registry's values, named as Interpreto's members."""
    members = [p.member for p in PROMPT_TYPES.values()]
    assert members == [
        "L1_baseline_without_lp",
        "E1_global_concepts_without_lp",
        "L2_baseline_with_lp",
        "E2_global_concepts_with_lp",
        "E3_global_and_local_concepts_with_lp",
        "U1_upper_bound_concepts_at_ep",
    ]
    assert all(getattr(PromptType, m) is p for m, p in zip(members, PROMPT_TYPES.values(), strict=True))
    assert [p.name for p in PROMPT_TYPES.values()] == ["NE1", "E1", "NE2", "E2", "E3", "U1"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("E3", (E3, False)),
        ("e3-a", (E3, True)),
        ("E3_a", (E3, True)),
        ("L1", (PromptType.L1_baseline_without_lp, False)),
        ("NE1-a", (PromptType.L1_baseline_without_lp, True)),
        ("L2_baseline_with_lp", (PromptType.L2_baseline_with_lp, False)),
        ("E2_global_concepts_with_lp-a", (PromptType.E2_global_concepts_with_lp, True)),
        (PromptType.U1_upper_bound_concepts_at_ep, (PromptType.U1_upper_bound_concepts_at_ep, False)),
        (PromptSetting(E3, True), (E3, True)),
    ],
)
def test_parse(name, expected) -> None:
    setting = PromptSetting.parse(name)
    assert (setting.kind, setting.anonymized) == expected
    assert setting == PromptSetting(*expected)


def test_parse_with_flag_and_errors() -> None:
    assert PromptSetting.parse("E2", True) == PromptSetting(PromptType.E2_global_concepts_with_lp, True)
    assert PromptSetting.parse("E2-a", True).anonymized is True
    assert PromptSetting.parse(PromptSetting.parse("E2"), True).label == "E2-a"
    with pytest.raises(InvalidParameterError, match="'-a' suffix"):
        PromptSetting.parse("E2-a", False)
    with pytest.raises(InvalidParameterError, match="'-a' suffix"):
        PromptSetting.parse(PromptSetting.parse("E2-a"), False)
    with pytest.raises(InvalidParameterError, match="one of NE1, E1, NE2, E2, E3, U1"):
        PromptSetting.parse("E4")
    with pytest.raises(InvalidParameterError, match="'prompt_type' parameter"):
        PromptSetting.parse(3)  # type: ignore[arg-type]


@pytest.mark.parametrize("label", ["NE1", "E1", "NE2", "E2", "E3", "U1", "NE1-a", "E2-a", "U1-a"])
def test_label_round_trip(label: str) -> None:
    """A setting is printed as its label and parsed back from it."""
    setting = PromptSetting.parse(label)
    assert setting.label == str(setting) == label
    assert PromptSetting.parse(setting.label) == setting
    assert setting.name == label.removesuffix("-a")


def test_baseline_setting_keeps_anonymisation() -> None:
    assert PromptSetting.parse("E3-a").baseline == PromptSetting.parse("NE2-a")
    assert PromptSetting.parse("E1").baseline.label == "NE1"
    assert PromptSetting.parse("NE2").baseline == PromptSetting.parse("NE2")


def test_user_prompt_type_is_the_same_type() -> None:
    """A registered prompt type is a PromptType like the built-ins: no second kind type."""
    mine = PromptType(PromptContent(global_explanations=True, lp_samples=True, lp_local=True))
    with PROMPT_TYPES.temporarily("E3nolabels", mine):
        setting = PromptSetting.parse("e3NoLabels-a")
        assert isinstance(setting.kind, PromptType)
        assert (setting.label, setting.kind.baseline, setting.kind.is_ranked) == (
            "E3nolabels-a",
            PromptType.L2_baseline_with_lp,
            True,
        )
    assert repr(E3) == "PromptType('E3')" and repr(PromptSetting(E3, True)) == "PromptSetting('E3-a')"
