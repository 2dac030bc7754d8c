"""Every grid field is checked before the first call: extractor options against the extractor's signature,
the seed range, nesting depth, and class names that would break the ``Sample_<id>: <class>`` answer."""

from __future__ import annotations

import pytest
from toy_grid import PROVIDER_KWARGS, MethodOracle, toy_dataset, toy_grid

from xaimetrics.benchmark import Providers, load_grid, run_grid
from xaimetrics.data import TextDataset
from xaimetrics.exceptions import InvalidParameterError


def test_unknown_extractor_option_is_refused_with_the_accepted_keywords(tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text(
        'methods = ["PCA", "NoExplanation"]\nsimulators = ["perfect"]\n[extractor_options.PCA]\nmax_iter = 5\n'
    )
    with pytest.raises(
        InvalidParameterError, match=r"'extractor_options.PCA' parameter .* keywords of PCA among"
    ) as caught:
        load_grid(path)
    assert "max_iter" in str(caught.value)


def test_options_the_grid_sets_itself_are_refused():
    with pytest.raises(InvalidParameterError, match="sets n_concepts and random_state itself"):
        toy_grid(extractor_options={"PCA": {"random_state": 3}})


def test_seeds_must_fit_in_32_bits():
    with pytest.raises(InvalidParameterError, match=r"'seeds' parameter .* \[0, 2\*\*32 - 1\]"):
        toy_grid(seeds=(0, 2**32))
    assert toy_grid(seeds=(0, 2**32 - 1)).seeds == (0, 2**32 - 1)


def test_many_seeds_do_not_trip_over_validation_seeds_nobody_uses():
    assert len(toy_grid(seeds=tuple(range(100_000))).seeds) == 100_000
    with pytest.raises(InvalidParameterError, match="validation_seeds"):
        toy_grid(seeds=tuple(range(2000)), n_concepts={"PCA": [2, 3], "NMF": 3, "ICA": 3})


def test_a_deeply_nested_toml_is_refused_without_recursion_error(tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text("seeds = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(InvalidParameterError, match="nested at most"):
        load_grid(path)


@pytest.mark.parametrize("bad", ["Sample_3: x", "a\x00b", "a, b", "two\nlines", " padded", ""])
def test_class_names_that_break_the_answer_format_are_refused_before_any_call(tmp_path, bad):
    def dataset(split):
        good = toy_dataset(split)
        names = list(good.class_names)
        names[1] = bad
        return TextDataset(list(good.texts), good.labels, names, name="toy", split=split)

    oracle = MethodOracle()
    providers = Providers(
        **{**PROVIDER_KWARGS, "datasets": {"toy": dataset}, "simulators": {"oracle": lambda: oracle}}
    )
    with pytest.raises(InvalidParameterError, match=r"'toy.class_names' parameter of run_grid"):
        run_grid(toy_grid(), tmp_path / "r.sqlite", providers=providers, progress=False)
    assert oracle.calls == 0


def test_class_names_differing_only_by_case_are_refused(tmp_path):
    def dataset(split):
        good = toy_dataset(split)
        names = [good.class_names[0], good.class_names[0].upper(), good.class_names[2]]
        return TextDataset(list(good.texts), good.labels, names, name="toy", split=split)

    providers = Providers(**{**PROVIDER_KWARGS, "datasets": {"toy": dataset}})
    with pytest.raises(InvalidParameterError, match="differ"):
        run_grid(toy_grid(), tmp_path / "r.sqlite", providers=providers, progress=False)


def test_the_prompt_layout_is_read_from_a_grid_file_and_checked(tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text('methods = ["PCA", "NoExplanation"]\nsimulators = ["perfect"]\nprompt_layout = "cache"\n')
    assert load_grid(path).prompt_layout == "cache"
    with pytest.raises(InvalidParameterError, match=r"'prompt_layout' parameter .* among 'paper', 'cache'"):
        toy_grid(prompt_layout="cached")
