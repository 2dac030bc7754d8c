"""The benchmark report: one HTML page and one Markdown file, with the figures as PNG files beside them."""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from xaimetrics._optional import import_optional
from xaimetrics._reporting import Table as _Table
from xaimetrics._reporting import html_table, markdown_table, render_template, report_section
from xaimetrics.benchmark import _analysis as analysis
from xaimetrics.benchmark import _figures as figures

if TYPE_CHECKING:
    from xaimetrics.benchmark._assessment import Assessment
    from xaimetrics.benchmark._ranking import PairwiseDifferences
    from xaimetrics.stats import BestMethod, SplitHalfStability

__all__ = ["html_table", "markdown_table", "report_section", "write_report"]

_BASELINE_NOTE = (
    "NoExplanation is the no-explanation baseline: its NE1 score stands in the E1 settings and its NE2 score "
    "in the E2 and E3 settings of the same seed."
)


def _format(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "—" if math.isnan(value) else f"{value:.3f}"
    return str(value)


def pipeline_sections(
    results: pd.DataFrame, units: pd.DataFrame, *, metric: str = "auto", k: int = 3, n_boot: int = 200
) -> list[dict[str, str]]:
    """The report's two sections: variance shares with intervals, and top-k stability next to the means.

    ``units`` is units × methods (the concept methods, :attr:`Assessment.units`); the decomposition reads the
    rows of those methods only (controls and randomised twins are checks, not levels of the method factor). A
    grid that cannot be decomposed (one seed, no residual) gets a sentence saying why instead of a table.
    """
    from xaimetrics.benchmark._variance import variance_components
    from xaimetrics.stats import top_k_stability

    if "method" in results.columns:
        results = results[results["method"].isin([str(m) for m in units.columns])]
    sections = []
    table: pd.DataFrame | None = None
    try:
        table = variance_components(results, metric=metric, n_boot=n_boot)
    except ValueError as error:
        sections.append(report_section("How much of the score is the pipeline", f"Not computed: {error}"))
    else:
        # every score the same (a perfect reader): nothing varies to share out
        if table["share"].isna().all():
            sections.append(report_section(
                "How much of the score is the pipeline",
                "Not computed: the explanation settings' scores do not vary (every one is the same), so there is "
                "no variance to decompose.",
            ))  # fmt: skip
            table = None
    if table is not None:
        top = table["share"].idxmax()
        sections.append(report_section(
            "How much of the score is the pipeline",
            "Shares of the variance of the concept methods' scores (NoExplanation, the controls and the "
            "randomised twins left out) by factor, "
            "ANOVA moment estimates with 95 % percentile intervals from a bootstrap over seeds (rough with few "
            f"seeds). The largest share is {top} ({table.loc[top, 'share']:.0%}); a method share small beside "
            "the seed, prompt and simulator shares means the pipeline moves the score more than the choice of "
            "method.",
            table.round(4),
        ))  # fmt: skip
    # seeds where no method ran (a gated run's gate seeds) are no draw of the methods
    methods = units.dropna(axis=1, how="all").dropna(axis=0, how="all")
    if methods.shape[1] >= 2 and len(methods) >= 2:
        k = min(k, methods.shape[1] - 1)
        stability = top_k_stability(methods, k)
        sections.append(report_section(
            f"Is the top {k} stable across seeds?",
            f"On {stability.n_draws} splits of the {stability.n_units} seeds into halves, both halves had "
            f"the same top-{k} set of methods {stability.same_top_k:.0%} of the time (top {k} on all seeds: "
            f"{', '.join(stability.top_k)}). top_k_share: how often each method was in a half's top {k}.",
            stability.table.round(4),
        ))  # fmt: skip
    return sections


def twin_sections(long: pd.DataFrame, ranking: pd.DataFrame | None = None) -> list[dict[str, str]]:
    """The report's randomised-twin section (none without twins), and ``ranking``'s ``beats_twins`` mark.

    Each concept method's gain over NoExplanation beside its gain over each randomised twin
    (:func:`~xaimetrics.benchmark._twin_comparison.twin_comparison`); a method that does not beat a twin (pre-stated one-sided
    sign-flip test over seeds, Holm-adjusted over methods × twins) is marked ``no`` in ``ranking`` (changed in
    place; index = methods).

    Example:
        >>> long = pd.DataFrame({"dataset": "d", "seed": [0, 0, 1, 1], "prompt_type": "E2",
        ...     "method": ["PCA", "PCA@random-all"] * 2, "score": [0.7, 0.6, 0.8, 0.6]})
        >>> ranking = pd.DataFrame({"rank": [1, 2]}, index=["PCA", "PCA@random-all"])
        >>> [s["md"].splitlines()[0] for s in twin_sections(long, ranking)], ranking["beats_twins"].tolist()
        (['## Does each method beat its randomised twin?'], ['no (all)', ''])
    """
    from xaimetrics.benchmark._twin_comparison import twin_comparison

    table = twin_comparison(long)
    if table.empty:
        return []
    if ranking is not None:
        failed = table[~table["beats_twin"]].groupby("method")["twin"].agg(", ".join)
        tested = set(table["method"])
        ranking["beats_twins"] = [
            (f"no ({failed[m]})" if m in failed.index else "yes") if m in tested else ""
            for m in ranking.index
        ]
    beaten = table[table["beats_twin"]]
    text = (
        "Each concept method against its randomised twin: the same extractor and interpretation fitted on a copy "
        "of the classifier with re-drawn weights ('all': every weight; 'top': the head), shown while the "
        "simulator predicts the trained classifier. gain: over NoExplanation; over_twin: over the twin (both "
        "matched within settings, t intervals over seeds); p_twin: the pre-stated one-sided sign-flip test that "
        "the method beats its twin; p_twin_holm: Holm's adjustment over the whole family of methods × twins, "
        f"which decides beats_twin. {len(beaten)} of {len(table)} comparisons favour the trained model at "
        "Holm-adjusted p < 0.05; a method that does not beat its twin owes its score to the pipeline, not to "
        "what training put in the model (Heap et al., 2026)."
    )
    return [report_section("Does each method beat its randomised twin?", text, table.round(4))]


def per_class_sections(results: pd.DataFrame) -> list[dict[str, str]]:
    """The report's per-class sections: one table per method (:func:`~xaimetrics.benchmark._per_class.per_class_table`),
    none when the rows carry no per-class counts.

    Example:
        >>> import json
        >>> rows = pd.DataFrame({"dataset": "d", "model": "m", "simulator": "s", "interpretation": "",
        ...     "anonymized": 0, "phase": "evaluation", "is_upper_bound": 0, "score": 0.5, "seed": [0, 1],
        ...     "method": "NoExplanation", "prompt_type": "NE2",
        ...     "class_counts": json.dumps({"a": {"n": 2, "hits": 1, "answered": 1}})})
        >>> [s["md"].splitlines()[0] for s in per_class_sections(rows)]
        ['## Per class: NoExplanation']
    """
    from xaimetrics.benchmark._per_class import MIN_CLASS_SAMPLES, per_class_table

    if "class_counts" not in results.columns:
        return []
    table = per_class_table(results)
    sections = []
    for method in table.index.get_level_values("method").unique():
        part = table.loc[method]
        few = [str(c) for c in part.index[part["note"] != ""]]
        text = (
            f"Which of the model's classes {method} helps the reader predict: per class of the model's predictions, "
            "recall = share of the evaluation samples the model put in the class that the reader also put there, "
            "precision = share of the reader's answers of the class the model agrees with (pooled counts over "
            "every setting), 95 % t-intervals over seeds; gain = recall minus NoExplanation's in the same seed "
            "and prompt setting, averaged over seeds. "
            + (
                f"Too few samples to say anything (under {MIN_CLASS_SAMPLES} over the seeds, or one seed): "
                f"{', '.join(few)}."
                if few
                else "Every class has enough samples for an interval."
            )
        )
        sections.append(report_section(f"Per class: {method}", text, part.round(4)))
    return sections


def write_report(
    results: pd.DataFrame,
    output: str | Path,
    *,
    grid: Mapping[str, object] | None = None,
    run: Mapping[str, object] | None = None,
    concept_metrics: pd.DataFrame | None = None,
    title: str = "ConSim benchmark report",
    metric: str = "auto",
    axes: Sequence[str] | None = None,
    sections: Sequence[Mapping[str, str]] = (),
    alpha: float = 0.05,
    headline: Sequence[str] = (),
) -> dict[str, Path]:
    """Write ``report.html``, ``report.md`` and the PNG figures into ``output``; return their paths.

    Args:
        results: the store's rows (:meth:`~xaimetrics.benchmark.ResultsStore.to_frame`).
        output: the folder (created if needed).
        grid: the grid settings shown at the end (:meth:`Grid.to_dict`).
        run: run totals (wall time, …) from :class:`RunSummary` to show beside the stored totals.
        concept_metrics: ``methods × metrics`` (App. D) for the Spearman correlation.
        title: the page title.
        metric: the score rankings use: ``"auto"`` (expected accuracy when every setting has class
            probabilities, else eq. 5's accuracy), ``"score"`` or ``"expected_accuracy"``.
        axes: grid axes ranked in sections of their own, beside the methods (Copeland ranking and sign-flip
            tests over seeds, :func:`~xaimetrics.benchmark.ranking_frame`): e.g. ``["interpretation"]`` (CMAW vs o1CA
            vs NoExplanation, paper Tab. 2 right) or ``["importance"]`` when the results carry that column.
            Default: ``interpretation`` when the results hold two or more interpretations.
        sections: extra sections appended before the totals, each ``{"md": ..., "html": ...}`` (the HTML
            already escaped by its producer), e.g. :func:`xaimetrics.studies.agreement_section` when the
            results hold human rows.
        alpha: the level of every test (:func:`~xaimetrics.benchmark.assess`).
        headline: the answer in a few lines (:func:`~xaimetrics.benchmark.headline`), shown first; the
            fixed-sample analysis of every row then follows as details, labelled as such.
    """
    import_optional("jinja2", extra="report", caller="write_report")
    import markupsafe

    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    from xaimetrics.benchmark._assessment import assess

    assessment = assess(results, metric=metric, alpha=alpha)
    from xaimetrics.benchmark._twins import split_twin
    from xaimetrics.consim import CONTROLS

    # the concept methods compared: controls and randomised twins are checks of the instrument and of the
    # training, not levels of the method factor (and a gated run's controls ran on other seeds)
    methods = [
        m for m in assessment.units.columns
        if m not in CONTROLS.names() and m != analysis.BASELINE_METHOD and split_twin(str(m))[1] is None
    ]  # fmt: skip
    pipeline = pipeline_sections(results, assessment.units[methods], metric=assessment.metric)
    long, overall = method_ranking(assessment)
    overall = overall.copy()
    twins = twin_sections(long, overall)
    per_class = per_class_sections(results)
    wins, differences = analysis.overall_statistics(long)
    paths = {
        "wins": figures.plot_win_matrix(wins, output / "win_matrix.png"),
        "differences": figures.plot_differences(differences, output / "differences.png"),
        "distributions": figures.plot_score_distributions(
            results, output / "score_distributions.png", metric=assessment.metric
        ),
    }
    subsets = [
        (f"{column} = {', '.join(map(str, key))}", _Table(table))
        for column, tables_of in analysis.subset_rankings(long).items() if column != "all"
        for key, table in tables_of.items()
    ]  # fmt: skip
    axis_sections: list[tuple[str, _Table, _Table]] = []
    for axis in _report_axes(results, axes):
        ranked = axis_ranking(results, axis, assessment.metric)
        if ranked is not None:
            axis_sections.append((axis, _Table(ranked[0]), _Table(ranked[1], index=False)))
    paths["baseline"] = figures.plot_baseline_comparison(assessment.comparison, output / "vs_baseline.png")
    totals: dict[str, object] = dict(analysis.totals(results))
    if run:
        totals.update({f"run_{k}": v for k, v in run.items() if not isinstance(v, dict | list)})
    totals_frame = pd.DataFrame({"value": [_format(v) for v in totals.values()]}, index=list(totals))
    totals_frame.index.name = "total"
    grid_frame = pd.DataFrame({"value": [str(v) for v in (grid or {}).values()]}, index=list(grid or {}))
    grid_frame.index.name = "key"
    tables = {
        "comparison": _Table(assessment.comparison),
        "controls": _Table(assessment.controls),
        "degenerate": _Table(assessment.degenerate, index=False),
        "sensitivity": _Table(assessment.sensitivity),
        "empty": _Table(assessment.empty, index=False),
        "overall": _Table(overall),
        "prompts": _Table(analysis.prompt_type_comparison(results, metric=assessment.metric), index=False),
        "parse": _Table(analysis.parse_statistics(results), index=False),
        "totals": _Table(totals_frame),
        "grid": _Table(grid_frame),
        "metrics": _Table(None),
        "spearman": _Table(None),
        "settings": _Table(_settings_table(results), index=False),
    }
    if concept_metrics is not None and len(concept_metrics):
        correlations = analysis.spearman_with_metrics(overall, concept_metrics)
        paths["spearman"] = figures.plot_spearman(correlations, output / "spearman.png")
        tables["metrics"], tables["spearman"] = _Table(concept_metrics), _Table(correlations)
    context: dict[str, object] = {
        "title": title,
        "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "version": _version(),
        "baseline_note": _BASELINE_NOTE,
        "figures": {k: v.name for k, v in paths.items()},
        "conclusion": assessment.summary,
        "metric": assessment.metric,
        "metric_note": _METRIC_NOTES[assessment.metric],
        "statistics_note": _STATISTICS_NOTE + _varies_note(grid),
        "margin": f"{assessment.verdict.margin:g}",
        "planning": _planning_text(assessment),
        "best": _best_text(assessment.best),
        "stability": _stability_text(assessment.stability),
        "ceiling": _ceiling_text(assessment.ceiling, assessment.metric),
        "n_settings": len(results),
        "headline": list(headline),
        "fixed_note": _FIXED_NOTE,
    }
    for name, fmt in (("report.html", "html"), ("report.md", "md")):
        markup = fmt == "html"
        rendered = {
            "tables": {key: table.render(markup) for key, table in tables.items()},
            "subsets": [{"title": heading, "table": table.render(markup)} for heading, table in subsets],
            "axes": [
                {"axis": axis, "table": table.render(markup), "pairs": pairs.render(markup)}
                for axis, table, pairs in axis_sections
            ],
            # extra sections come rendered to both formats, the HTML escaped by their producer
            "sections": [
                {"text": markupsafe.Markup(x["html"]) if markup else x["md"]}
                for x in [*twins, *pipeline, *per_class, *sections]
            ],
        }
        path = output / name
        text = render_template("xaimetrics.benchmark", f"{name}.jinja", {**context, **rendered}, html=markup)
        path.write_text(text, encoding="utf-8")
        paths[name.replace(".", "_")] = path
    return paths


def _varies_note(grid: Mapping[str, object] | None) -> str:
    """What a seed varies, from the grid's settings (issue #35: a ranking resting on one concept fit said so
    nowhere)."""
    if not grid or "fit_draw" not in grid:
        return ""
    fit = (
        "its own bootstrap draw of the concept-fit texts"
        if grid["fit_draw"] == "bootstrap"
        else "the same concept-fit texts as every other seed (fit_draw = fixed: deterministic extractors such as "
        "PCA show the same concepts at every seed, so the seeds do not vary the fit)"
    )
    return (
        f" Each seed varies the learning and evaluation samples, the extractor's random_state and {fit}; the "
        "model, the data and the prompts are the same."
    )


def method_ranking(assessment: Assessment) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The report's ranking of the methods: ``(long, table)``, the ranking frame without the controls (they
    validate the reader, they do not compete; kept when fewer than two methods are left) and its Copeland table.
    ``xaimetrics benchmark rank`` prints the same, so the two never disagree on one folder."""
    from xaimetrics.consim import CONTROLS

    long = assessment.long[~assessment.long["method"].isin(CONTROLS.names())]
    if long["method"].nunique() < 2:  # only controls and one method: rank them all rather than nothing
        long = assessment.long
    table = assessment.ranking if len(assessment.ranking) else analysis.rankings_by(long)[()]
    return long, table


def axis_ranking(results: pd.DataFrame, axis: str, metric: str) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The Copeland table and the pairwise-difference table of another grid ``axis`` scored by ``metric``, or
    ``None`` when the axis has fewer than two values in shared settings."""
    long_axis = analysis.ranking_frame(results, axis=axis, metric=metric)
    if long_axis[axis].nunique() < 2:
        return None
    table = analysis.rankings_by(long_axis, axis=axis)[()]
    _, differences = analysis.overall_statistics(long_axis, axis=axis)
    return table, _pairs_table(differences, list(table.index))


def _settings_table(results: pd.DataFrame) -> pd.DataFrame:
    """Every stored row with the store's columns (:class:`~xaimetrics.benchmark.ResultRow`'s fields, and any
    column the store's row type adds), ``created_at`` aside."""
    return results[[c for c in results.columns if c != "created_at"]]


_FIXED_NOTE = (
    "The answer above comes from the sequential tests, made at each look as the seeds came in. What follows "
    "tests every stored row once, as if the number of seeds had been fixed in advance: a check of the same data "
    "from another angle, not adjusted for the looks, and not the answer."
)

_STATISTICS_NOTE = (
    "Statistics run on independent units: the settings of a seed (models, simulators, prompt types, "
    "interpretations, anonymisation) share its samples, so they are averaged within each seed first; a method is "
    "compared with NoExplanation within the same setting before averaging (like with like), and rankings use "
    "the settings every method has; tests are exact sign-flip tests, intervals t-intervals over seeds, and "
    "comparisons of several methods are Holm-corrected. Beside each raw difference, the normalised "
    "simulatability gain NSG = (with − without) / (1 − without) (Mayne et al., 2026): the share of "
    "NoExplanation's headroom a method wins, per seed then averaged (t-interval over seeds; undefined, and "
    "left out, for a seed whose NoExplanation score was perfect: nsg_units counts the seeds it is defined on)."
)

_METRIC_NOTES = {
    "expected_accuracy": (
        "Scores are expected accuracies: the mean probability the simulator gave to the class the model "
        "predicted, over the evaluation samples (continuous, far less noisy than eq. 5's right/wrong count)."
    ),
    "score": (
        "Scores are accuracies at predicting the model on the evaluation samples (eq. 5); with 10–20 samples a "
        "setting's accuracy has a standard deviation of about 0.1, so only large or consistent differences show."
    ),
}


def _planning_text(assessment: Assessment) -> str:
    from xaimetrics.benchmark._sentences import planning_sentence

    return planning_sentence(assessment.planning)


def _best_text(best: BestMethod) -> str:
    if best.method is None:
        return "fewer than two concept methods: no best method to name."
    if best.established:
        return (
            f"{best.method} beats every other concept method in Holm-corrected pairwise sign-flip tests (whether "
            "it beats NoExplanation is the comparison above)."
        )
    return (
        f"{best.method} has the highest mean, but no method beats every other one in Holm-corrected pairwise "
        "tests: the order is not evidence of a best method."
    )


def _stability_text(stability: SplitHalfStability) -> str:
    tau = stability.tau_mean
    if math.isnan(tau):
        return f"Not measurable: {stability.n_seeds} seed(s); split-half stability needs at least two."
    return (
        f"Kendall's τ between the method orders on disjoint halves of the {stability.n_seeds} seeds: "
        f"{tau:.2f} on average (min {stability.tau_min:.2f}, max {stability.tau_max:.2f}, "
        f"{stability.n_splits} splits). 1 means the same order on both halves; around 0, unrelated orders."
    )


def _ceiling_text(ceiling: Mapping[str, float] | None, metric: str) -> str:
    if ceiling is None:
        return "U1 (the upper bound: local explanations shown for the evaluation samples too) was not run."
    return (
        f"U1 ceiling ({metric}): {ceiling['mean']:.3f}, 95% t-interval [{ceiling['ci_low']:.3f}, "
        f"{ceiling['ci_high']:.3f}] over {ceiling['n_units']} seeds. It leaks the model's answers, so it is never "
        "ranked."
    )


def _report_axes(results: pd.DataFrame, axes: Sequence[str] | None) -> list[str]:
    """The axes ranked beside the methods: those asked for, else ``interpretation`` when it varies."""
    if axes is not None:
        if isinstance(axes, str):
            axes = [axes]
        return [axis for axis in dict.fromkeys(axes) if axis != "method"]
    concept = results[(results["method"] != analysis.BASELINE_METHOD) & results["score"].notna()]
    return ["interpretation"] if concept["interpretation"].nunique() >= 2 else []


def _pairs_table(differences: PairwiseDifferences, order: list[str]) -> pd.DataFrame:
    """One row per pair (better-ranked first): mean difference over seeds, sign-flip p-value, its Holm
    adjustment over the pairs, significance (adjusted) and the number of seeds."""
    rows = []
    adjusted = differences.pvalue if differences.pvalue_adjusted is None else differences.pvalue_adjusted
    for i, first in enumerate(order):
        for second in order[i + 1 :]:
            rows.append({
                "pair": f"{first} − {second}",
                "mean_difference": float(differences.mean.loc[first, second]),
                "p_value": float(differences.pvalue.loc[first, second]),
                "p_adjusted": float(adjusted.loc[first, second]),
                "significant": bool(differences.significant.loc[first, second]),
                "n_units": int(differences.n_settings.loc[first, second]),
            })  # fmt: skip
    columns = ["pair", "mean_difference", "p_value", "p_adjusted", "significant", "n_units"]
    return pd.DataFrame(rows, columns=columns)


def _version() -> str:
    from xaimetrics import __version__

    return __version__
