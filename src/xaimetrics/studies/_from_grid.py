"""Studies from a benchmark grid: the same data, model, concept fits, interpretations and LP/EP selections
as ``xaimetrics benchmark run`` (through :class:`xaimetrics.benchmark.Artefacts`), so that the human answers
and the LLM's land on the same settings of the results store.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from xaimetrics._validation import invalid
from xaimetrics.benchmark import BASELINE_METHOD
from xaimetrics.consim import BALANCES, CONTROLS, INTERPRETATIONS, PromptSetting
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.studies._build import explain_method, likert_study_from_concepts
from xaimetrics.studies._likert import LikertOptions, LikertStudy
from xaimetrics.studies._simulatability import (
    MethodExplanation,
    SampleSet,
    SimulatabilityStudy,
    StudyArm,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from xaimetrics.benchmark import Artefacts, Grid, Providers
    from xaimetrics.concepts import ConceptInterpretation

__all__ = ["likert_study_from_grid", "simulatability_study_from_grid", "write_grid"]

_LOG = logging.getLogger("xaimetrics.studies")


def _pick(values: Sequence[str], chosen: str | None, name: str, owner: str) -> str:
    if chosen is None:
        if len(values) != 1:
            raise invalid(name, owner, f"given when the grid lists several {name}s", list(values),
                          f"Pass {name}=... (one study shows one {name}).")  # fmt: skip
        return values[0]
    if chosen not in values:
        raise invalid(name, owner, "one of the grid's: " + ", ".join(values), chosen)
    return chosen


def _n_concepts(grid: Grid, method: str, owner: str) -> int:
    candidates = grid.candidates(method)
    if len(candidates) != 1:
        raise invalid(
            "n_concepts", owner, f"one number of concepts for {method}", list(candidates),
            "Write the number the benchmark chose (see its report) in the grid before creating the study.",
        )  # fmt: skip
    return int(candidates[0])


def _artefacts(grid: Grid, providers: Providers | None, artefact_dir: str | Path | None) -> Artefacts:
    from xaimetrics.benchmark import Artefacts, Providers

    return Artefacts(
        grid.artefact_config(), providers if providers is not None else Providers(), artefact_dir
    )


def simulatability_study_from_grid(
    grid: Grid,
    providers: Providers | None = None,
    *,
    artefact_dir: str | Path | None = None,
    dataset: str | None = None,
    model: str | None = None,
    seeds: Sequence[int] | None = None,
    methods: Sequence[str] | None = None,
    prompt_types: Sequence[str] | None = None,
    arms_per_participant: int = 1,
    title: str | None = None,
) -> SimulatabilityStudy:
    """A simulatability study on the settings of a benchmark grid (one dataset and model).

    Every (method, prompt type, seed) of the grid becomes an arm: ``NoExplanation`` with the baseline prompt
    types, concept methods and controls with the explanation types, as the benchmark runs them.

    Args:
        grid: a :class:`~xaimetrics.benchmark.Grid` (methods with one number of concepts each).
        providers: the :class:`~xaimetrics.benchmark.Providers` of its names.
        artefact_dir: the benchmark's artefact folder (reuses its activations and concept fits).
        dataset, model: which of the grid's (required when it lists several).
        seeds, methods, prompt_types: subsets of the grid's (default: all of them).
        arms_per_participant: arms each participant goes through (on different seeds).
        title: shown to participants.
    """
    owner = "simulatability_study_from_grid"
    artefacts = _artefacts(grid, providers, artefact_dir)
    dataset = _pick(grid.datasets, dataset, "dataset", owner)
    model_name = _pick(grid.models, model, "model", owner)
    seeds = tuple(grid.seeds if seeds is None else seeds)
    listed = (*grid.methods, *(m for m in grid.control_methods if m not in grid.methods))
    methods = tuple(listed if methods is None else methods)
    unknown = [m for m in methods if m not in listed]
    if unknown:
        raise invalid("methods", owner, "methods of the grid: " + ", ".join(listed), unknown)
    labels = [PromptSetting.parse(p) for p in (grid.prompt_types if prompt_types is None else prompt_types)]
    _LOG.info("study: loading the data of %r", dataset)
    _, pool = artefacts.data(dataset)
    # before the model is loaded (fine-tuned on first use: minutes to hours) and reads the pool (minutes)
    check_selection(pool.labels, pool.class_names, grid, dataset, texts=pool.texts)
    _LOG.info("study: the model %r for %r (a built-in model is fine-tuned on first use: minutes, with a "
              "progress bar unless --no-progress)", model_name, dataset)  # fmt: skip
    artefacts.model(dataset, model_name)
    _LOG.info("study: the model reads the pool of %d texts and the LP/EP samples are drawn", len(pool.labels))
    samples = {s: SampleSet.from_samples(artefacts.samples(dataset, model_name, s)) for s in seeds}
    _LOG.info("study: explanations of %d methods on %d seeds", len(methods), len(seeds))
    arms: list[StudyArm] = []
    explanations: list[MethodExplanation] = []
    for method in methods:
        baseline = method == BASELINE_METHOD
        kinds = [p for p in labels if p.kind.is_baseline == baseline]
        if not kinds:
            continue
        if baseline:
            arms += [StudyArm(method, p.name, p.anonymized, seed) for seed in seeds for p in kinds]
            continue
        k = _n_concepts(grid, method, owner)
        lp_local = any(p.kind.content.lp_local for p in kinds)
        ep_local = any(p.kind.content.ep_local for p in kinds)
        for interpretation in grid.interpretations:
            for seed in seeds:
                explanations.append(_explanation(
                    artefacts, dataset, model_name, method, k, interpretation, samples[seed], lp_local, ep_local,
                ))  # fmt: skip
                arms += [StudyArm(method, p.name, p.anonymized, seed, k, interpretation) for p in kinds]
    return SimulatabilityStudy(
        class_names=tuple(artefacts.aligned_data(dataset, model_name)[1].class_names),  # the samples' order
        samples=tuple(samples.values()), explanations=tuple(explanations),
        arms=tuple(arms), dataset=dataset, model=model_name, arms_per_participant=arms_per_participant,
        max_sample_chars=grid.max_sample_chars, title=title or SimulatabilityStudy.title,
    )  # fmt: skip


def check_selection(
    labels: Sequence[int] | np.ndarray,
    class_names: Sequence[str],
    grid: Grid,
    dataset: str,
    *,
    texts: Sequence[str] | None = None,
) -> None:
    """Fail fast when the pool's labels alone cannot give the LP/EP selection of ``grid``.

    :func:`~xaimetrics.consim.select_examples` needs, per class, about ``(n_lp + n_ep) / C`` texts, half
    predicted right and half wrong by the model; which are wrong is known only after the model has read the
    whole pool (minutes on long texts). The label counts are known at once: when a class has fewer texts
    than its share (``balance="strict"``), or the pool fewer than ``n_lp + n_ep`` texts, no prediction can
    help, and the error comes before the long work. With ``texts``, a text repeating an earlier one (after
    the selection's normalisation) is not counted: the selection never shows it twice. What strict balance
    will then need from the model's predictions (so many wrong answers per class) is logged at INFO.

    Example:
        >>> from xaimetrics.benchmark import Grid
        >>> grid = Grid(methods=("NoExplanation",), prompt_types=("NE2",), n_lp=4, n_ep=4, simulators=("perfect",))
        >>> check_selection([0, 0, 0, 0, 1, 1, 1, 1, 1], ["a", "b"], grid, "toy")  # 4 per class: enough
        >>> try:
        ...     check_selection([0, 0, 0, 1, 1, 1, 1, 1, 1], ["a", "b"], grid, "toy")
        ... except ValueError as error:
        ...     print(str(error).split(": ")[1].split(". ")[0])
        class 'a' has 3 texts, and each class needs at least 4 (half predicted right by the model, half wrong)
    """
    labels = np.asarray(labels, dtype=np.int64)
    if (
        texts is not None
    ):  # the selection leaves out repeated texts before it counts (select_examples(inputs=))
        from xaimetrics._text_keys import first_occurrences

        labels = labels[first_occurrences(list(texts), len(labels), "select_examples")]
    counts = np.bincount(labels, minlength=len(class_names))
    total = grid.n_lp + grid.n_ep
    share = total // len(class_names)
    head = (
        f"simulatability_study_from_grid cannot select {grid.n_lp} + {grid.n_ep} LP/EP samples from the pool of "
        f"{dataset!r} ({int(counts.sum())} texts) with balance={grid.balance!r}: "
    )
    fix = (
        "Ask for fewer samples (--n-lp, --n-ep; n_lp, n_ep) or draw from more texts (--pool-size; pool_size)"
    )
    if int(counts.sum()) < total:
        raise InvalidParameterError(head + f"it has fewer than {total} texts. {fix}.")
    short = [(class_names[c], int(n)) for c, n in enumerate(counts) if n < share]
    relaxed = BALANCES.get(grid.balance).relaxed
    if short and not relaxed:
        name, n = short[0]
        raise InvalidParameterError(
            head
            + f"class {name!r} has {n} texts, and each class needs at least {share} (half predicted right "
            f"by the model, half wrong). {fix}, or fill the short classes from the others with --balance relaxed "
            "(balance='relaxed')."
        )
    if not relaxed:
        wrong = (share // 2) * len(class_names)
        _LOG.info(
            "study: balance='strict' needs %d texts per class that the model predicts wrongly (%d of the pool's "
            "%d, so at most %.1f%% accuracy on it); a more accurate model fails after reading the pool: "
            "--balance relaxed fills the short cells from the others.",
            share // 2, wrong, int(counts.sum()), 100 * (1 - wrong / max(int(counts.sum()), 1)),
        )  # fmt: skip


def _explanation(
    artefacts: Artefacts, dataset: str, model: str, method: str, k: int, interpretation: str, samples: SampleSet,
    lp_local: bool, ep_local: bool,
) -> MethodExplanation:  # fmt: skip
    from xaimetrics.benchmark import ConceptFit

    owner = "simulatability_study_from_grid"
    if method in CONTROLS:
        control = artefacts.control(ConceptFit(dataset, model, method, k, samples.seed))
        lp, ep = [s.text for s in samples.lp], [s.text for s in samples.ep]
        shown = control.explanation(lp if lp_local else [], ep if ep_local else [])
        return MethodExplanation(
            method=method, seed=samples.seed, n_concepts=k, interpretation=interpretation,
            # a control's explanation holds arrays and a {concept id: words} mapping (SurrogateWords, RandomWords)
            concepts=cast("Mapping[int, ConceptInterpretation]", shown.interpretation),
            global_importances=cast(np.ndarray, shown.global_importances),
            lp_local=cast("np.ndarray | None", shown.lp_local_importances),
            ep_local=cast("np.ndarray | None", shown.ep_local_importances),
        )  # fmt: skip
    if INTERPRETATIONS.get(interpretation).asks_simulator:
        raise invalid("interpretations", owner, "'top_words' (LLM labels need a simulator)", interpretation,
                      "Create the study from a grid with interpretations = ['top_words'].")  # fmt: skip
    return explain_method(
        artefacts.model(dataset, model),
        artefacts.extractor(ConceptFit(dataset, model, method, k, samples.seed)),
        artefacts.interpretation(ConceptFit(dataset, model, method, k, samples.seed), interpretation),
        artefacts.activations(dataset, model)["fit"],
        samples, method=method, n_concepts=k, interpretation_kind=interpretation,
        lp_local=lp_local, ep_local=ep_local,
    )  # fmt: skip


def likert_study_from_grid(
    grid: Grid,
    providers: Providers | None = None,
    *,
    artefact_dir: str | Path | None = None,
    dataset: str | None = None,
    model: str | None = None,
    method: str | None = None,
    seed: int | None = None,
    n_examples: int = 50,
    concept_ids: Sequence[int] | None = None,
    **options: Unpack[LikertOptions],
) -> LikertStudy:
    """A Likert study rating the concepts of one of the grid's methods on ``n_examples`` test texts.

    The concepts are the benchmark's fit (``seed``, default the grid's first) and their top words (CMAW);
    the texts come from the grid's LP/EP pool, every class represented (:func:`choose_examples`).

    Args:
        grid, providers, artefact_dir, dataset, model: as in :func:`simulatability_study_from_grid`.
        method: one of the grid's concept methods (required when it lists several).
        seed: the concept fit's seed (default: the grid's first).
        n_examples: texts to rate (the protocol: 50).
        concept_ids: the concepts to rate (default: all).
        options: passed to :class:`LikertStudy` (``title``, ``n_annotators``…).
    """
    from xaimetrics.benchmark import ConceptFit

    owner = "likert_study_from_grid"
    artefacts = _artefacts(grid, providers, artefact_dir)
    dataset = _pick(grid.datasets, dataset, "dataset", owner)
    model_name = _pick(grid.models, model, "model", owner)
    method = _pick(grid.concept_methods, method, "method", owner)
    seed = grid.seeds[0] if seed is None else seed
    k = _n_concepts(grid, method, owner)
    fit = ConceptFit(dataset, model_name, method, k, seed)
    extractor = artefacts.extractor(fit)
    interpretation = artefacts.interpretation(fit, "top_words")
    _, pool = artefacts.data(dataset)
    values = extractor.encode(artefacts.activations(dataset, model_name)["pool"])
    options.setdefault("title", f"Rate the concepts of {method}")
    return likert_study_from_concepts(
        list(pool.texts), values, interpretation, n_examples=n_examples, labels=list(pool.labels),
        concept_ids=concept_ids, seed=seed, **options,
    )  # fmt: skip


def _toml(value: object) -> str:
    """A TOML value: strings, numbers, booleans, lists and (inline) tables, as a grid holds them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return (
            ("nan" if math.isnan(value) else ("inf" if value > 0 else "-inf"))
            if not math.isfinite(value)
            else repr(value)
        )
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, Mapping):
        inner = ", ".join(
            f"{json.dumps(str(k), ensure_ascii=False)} = {_toml(v)}"
            for k, v in value.items()
            if v is not None
        )
        return "{ " + inner + " }" if inner else "{}"
    raise invalid(
        "grid", "write_grid", "plain values (strings, numbers, lists, tables)", type(value).__name__
    )


def write_grid(grid: Grid, path: str | Path, *, header: str = "") -> Path:
    """Write ``grid`` as the TOML file :func:`~xaimetrics.benchmark.load_grid` reads back (``base_url`` without
    credentials); ``header`` becomes comment lines at the top.

    ``xaimetrics study create`` writes the grid a study was made from beside its bundle, so that the LLM rows of
    ``xaimetrics benchmark run STUDY.grid.toml`` are shown the people's samples.

    Example:
        >>> import os, tempfile
        >>> from xaimetrics.benchmark import Grid, load_grid
        >>> grid = Grid(methods=("NMF", "NoExplanation"), n_concepts={"NMF": 5}, seeds=(3,), n_lp=4, n_ep=6,
        ...             balance="relaxed", simulators=("perfect",))
        >>> path = write_grid(grid, os.path.join(tempfile.mkdtemp(), "study.grid.toml"), header="made by a test")
        >>> load_grid(path) == grid
        True
    """
    path = Path(path)
    lines = [f"# {line}" for line in header.splitlines()]
    lines += [f"{name} = {_toml(value)}" for name, value in grid.to_dict().items()]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
