"""Prompt types: the six presets, their paper names, content and anonymised variants."""

from __future__ import annotations

import pytest

from xaimetrics.consim import PromptType, resolve_prompt_type
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
        content = PromptType(name).content
        assert (content.global_explanations, content.lp_samples, content.lp_local) == (global_, lp, local)
        assert content.lp_predictions == content.lp_samples
        assert content.task and not content.ep_local
    u1 = PromptType.U1_upper_bound_concepts_at_ep
    assert u1.content.ep_local and u1.is_upper_bound and not u1.is_baseline
    assert [p for p in PromptType if p.is_baseline] == [
        PromptType.L1_baseline_without_lp,
        PromptType.L2_baseline_with_lp,
    ]
    assert PromptType("E1").baseline is PromptType.L1_baseline_without_lp
    assert E3.baseline is PromptType.L2_baseline_with_lp


def test_interpreto_member_names() -> None:
    assert [p.name for p in PromptType] == [
        "L1_baseline_without_lp",
        "E1_global_concepts_without_lp",
        "L2_baseline_with_lp",
        "E2_global_concepts_with_lp",
        "E3_global_and_local_concepts_with_lp",
        "U1_upper_bound_concepts_at_ep",
    ]


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
    ],
)
def test_resolve(name, expected) -> None:
    assert resolve_prompt_type(name) == expected


def test_resolve_with_flag_and_errors() -> None:
    assert resolve_prompt_type("E2", True) == (PromptType.E2_global_concepts_with_lp, True)
    assert resolve_prompt_type("E2-a", True)[1] is True
    with pytest.raises(InvalidParameterError, match="'-a' suffix"):
        resolve_prompt_type("E2-a", False)
    with pytest.raises(InvalidParameterError, match="one of NE1, E1, NE2, E2, E3, U1"):
        resolve_prompt_type("E4")
    with pytest.raises(InvalidParameterError, match="'prompt_type' parameter"):
        resolve_prompt_type(3)  # type: ignore[arg-type]


def test_labels() -> None:
    assert PromptType.L2_baseline_with_lp.label() == "NE2"
    assert E3.label(anonymize_classes=True) == "E3-a"
