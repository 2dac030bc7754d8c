"""The cache-friendly prompt layout: same parts and answer key as App. E, shared parts first; the prefix share."""

from __future__ import annotations

import random

import numpy as np
import pytest

from xaimetrics.consim import (
    PROMPT_LAYOUTS,
    PROMPT_TYPES,
    ConSim,
    PromptSetting,
    build_prompts,
    render_prompt,
    select_examples,
)
from xaimetrics.consim._prefix import prompt_text, shared_prefix_share
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import ChatMessage, LexicalSimulator
from xaimetrics.simulators._lexical import read_prompt

from .test_rendering import CLASSES, _render

SETTINGS = [PromptSetting(p, a).label for p in PROMPT_TYPES.values() for a in (False, True)]


@pytest.mark.parametrize("label", SETTINGS)
def test_the_cache_layout_shows_the_same_parts_in_another_order(label: str) -> None:
    paper, cache = _render(label), _render(label, layout="cache")
    assert cache.messages[1] == paper.messages[1]  # the EP samples (and U1's local contributions) unchanged
    assert (cache.sample_ids, cache.references, cache.concept_ids) == (
        paper.sample_ids,
        paper.references,
        paper.concept_ids,
    )
    sections = lambda p: sorted(p.messages[0].content.split("\n\n")[1:])  # noqa: E731
    if not PromptSetting.parse(label).kind.content.needs_explanations:
        assert cache.messages == paper.messages  # a baseline reads the same in both layouts
    else:
        # every part but the task text is the same; the task's sentences on the explanation open its part
        task = paper.messages[0].content.split("\n\n")[0]
        assert set(sections(paper)) <= set(sections(cache)) and task.startswith("You are a classifier.")
        assert cache.messages[0] != paper.messages[0]
    assert read_prompt(cache.messages) == read_prompt(paper.messages)  # a literal reader finds the same


def test_in_the_cache_layout_each_prompt_of_a_seed_extends_the_shared_part() -> None:
    ne2, e2, e3 = (_render(label, layout="cache").messages[0].content for label in ("NE2", "E2", "E3"))
    assert e2.startswith(ne2) and e3.startswith(e2)  # E3 adds the LP local contributions after E2's parts
    assert ne2.endswith("The classes predicted for these examples are:\nSample_0: not prime\nSample_1: prime\n"
                        "Sample_2: Sci/Tech\nSample_3: prime")  # fmt: skip
    other = _render("E2", layout="cache", global_importances=-np.asarray(_render_global()))
    assert other.messages[0].content.startswith(ne2)  # another method's explanation: the same shared part
    ne1, e1 = (_render(label, layout="cache").messages[0].content for label in ("NE1", "E1"))
    assert e1.startswith(ne1)
    # App. E puts the explanation first: NE2 and E2 share the first sentence of the task only
    paper_ne2, paper_e2 = (_render(label).messages[0].content for label in ("NE2", "E2"))
    assert _common(paper_ne2, paper_e2) < len("You are a classifier. For each sample,") + 40


def _render_global() -> np.ndarray:
    from .test_rendering import GLOBAL

    return GLOBAL


def test_the_lexical_reader_answers_alike_in_both_layouts() -> None:
    reader = LexicalSimulator()
    for label in ("E1", "E2", "E3-a", "U1"):
        paper, cache = _render(label), _render(label, layout="cache")
        assert reader.generate(cache.messages).text == reader.generate(paper.messages).text


def _common(a: str, b: str) -> int:
    """The length of the longest common prefix, character by character (the definition)."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _brute_force(texts: list[str]) -> float:
    shared = sum(max((_common(t, u) for u in texts[:i]), default=0) for i, t in enumerate(texts))
    return shared / sum(len(t) for t in texts)


def test_shared_prefix_share_equals_the_definition_on_random_prompts_with_duplicates() -> None:
    rng = random.Random(3)
    for _ in range(40):
        contents = [
            "".join(rng.choice("ab") for _ in range(rng.randint(0, 9))) for _ in range(rng.randint(1, 12))
        ]
        contents += rng.sample(
            contents, k=min(2, len(contents))
        )  # exact repeats are read wholly from the cache
        messages = [[ChatMessage("system", c[:3]), ChatMessage("user", c[3:])] for c in contents]
        assert shared_prefix_share(messages) == pytest.approx(
            _brute_force([prompt_text(m) for m in messages])
        )


def test_shared_prefix_share_of_a_seed_is_higher_in_the_cache_layout() -> None:
    rng = np.random.default_rng(0)
    methods = [rng.normal(size=(3, 5)) for _ in range(4)]

    def prompts(layout: str) -> list:
        out = [_render("NE2", layout=layout)]
        out += [
            _render(label, layout=layout, global_importances=g) for g in methods for label in ("E2", "E3")
        ]
        return out

    paper, cache = shared_prefix_share(prompts("paper")), shared_prefix_share(prompts("cache"))
    # the methods here share their concept words (only the importances differ), so App. E shares 41 %
    assert (round(paper, 2), round(cache, 2)) == (0.41, 0.68)


def test_build_prompts_and_the_facade_pass_the_layout() -> None:
    samples = select_examples(
        ["dull", "fun", "great", "meh"], [0, 1, 1, 0], [0, 0, 1, 1], n_lp=2, n_ep=2, seed=1
    )
    (built,) = build_prompts(
        samples, prompt_types=["NE2"], class_names=["negative", "positive"], layout="cache"
    )
    assert built.messages == render_prompt(
        "NE2", class_names=["negative", "positive"], lp_samples=samples.lp_texts,
        lp_predictions=samples.lp_predictions, ep_samples=samples.ep_texts, ep_predictions=samples.ep_predictions,
        layout="cache",
    ).messages  # fmt: skip
    assert ConSim(class_names=CLASSES, layout="cache").layout == "cache"
    assert PROMPT_LAYOUTS == ("paper", "cache")


@pytest.mark.parametrize(
    "call", [lambda: _render("E2", layout="Cache"), lambda: ConSim(class_names=CLASSES, layout=None)]
)
def test_an_unknown_layout_is_refused_with_the_choices(call) -> None:
    with pytest.raises(
        InvalidParameterError, match=r"'layout' .* must be one of 'paper', 'cache'.*Use 'paper'"
    ):
        call()
