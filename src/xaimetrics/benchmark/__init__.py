"""The ConSim evaluation framework (paper §4.3, §5, App. B–D): grids of settings, a resumable runner, Copeland
rankings with exact sign-flip tests on seed-level units, Spearman correlations with the concept metrics, and an
HTML/Markdown report.

- :class:`Grid` / :func:`load_grid` — which settings to run (Python or TOML);
- :func:`run_grid` — computes each artefact once, calls simulators concurrently, stores every finished setting
  in a :class:`ResultsStore` (SQLite) and resumes after a crash; ``backend="ray"`` spreads it on Ray;
- :func:`ranking_frame`, :func:`rankings_by`, :func:`rank_methods`, :func:`win_matrix`,
  :func:`pairwise_differences`, :func:`spearman_with_metrics` — the statistics, for any grid axis
  (``ranking_frame(results, axis="interpretation")``);
- :func:`assess` — what the results support: statistics on independent units (one per seed,
  :func:`unit_scores`), exact sign-flip tests, t-intervals, Holm's correction, the controls' pre-stated tests
  (equivalence for the negative one), a best method only after corrected pairwise tests, and :func:`plan`
  (minimum detectable difference, seeds needed); :func:`until_decided` adds seeds until the controls are
  decided (α spent over the looks, :class:`SequentialDesign`); :func:`simulate_results` makes grids with known
  effects, to calibrate or plan;
- :func:`write_report` — the report.

Example:
    >>> import pandas as pd
    >>> from xaimetrics.benchmark import rank_methods
    >>> rank_methods(pd.DataFrame({"NMF": [0.8, 0.7], "PCA": [0.6, 0.7]}))["rank"].tolist()
    [1, 2]
"""

from xaimetrics.benchmark._analysis import (
    RANKING_KEYS,
    UNIT_KEYS,
    prompt_type_comparison,
    ranking_frame,
    rankings_by,
    spearman_with_metrics,
    subset_rankings,
    unit_scores,
)
from xaimetrics.benchmark._artefacts import Artefacts, ConceptFit, Providers
from xaimetrics.benchmark._assessment import Assessment, assess
from xaimetrics.benchmark._grid import (
    BASELINE_METHOD,
    Grid,
    Setting,
    grid_from_dict,
    load_grid,
    method_names,
    ranking_prompt,
)
from xaimetrics.benchmark._ranking import (
    PairwiseDifferences,
    copeland_ranks,
    pairwise_differences,
    pivot_scores,
    rank_methods,
    win_matrix,
)
from xaimetrics.benchmark._report import report_section, write_report
from xaimetrics.benchmark._row import ResultRow
from xaimetrics.benchmark._runner import RunInterrupted, RunSummary, choose_n_concepts, run_grid
from xaimetrics.benchmark._sequential import SequentialDesign, SequentialResult, until_decided
from xaimetrics.benchmark._simulation import simulate_results
from xaimetrics.benchmark._store import ResultsStore
from xaimetrics.benchmark._uncertainty import (
    DEFAULT_MARGIN,
    baseline_comparison,
    best_method,
    control_verdict,
    equivalence_test,
    minimum_pvalue,
    pairwise_comparison,
    plan,
    robust_pvalue,
    sign_flip_test,
)

__all__ = [
    "BASELINE_METHOD",
    "DEFAULT_MARGIN",
    "RANKING_KEYS",
    "UNIT_KEYS",
    "Artefacts",
    "Assessment",
    "ConceptFit",
    "Grid",
    "PairwiseDifferences",
    "Providers",
    "ResultRow",
    "ResultsStore",
    "RunInterrupted",
    "RunSummary",
    "SequentialDesign",
    "SequentialResult",
    "Setting",
    "assess",
    "baseline_comparison",
    "best_method",
    "choose_n_concepts",
    "control_verdict",
    "copeland_ranks",
    "equivalence_test",
    "grid_from_dict",
    "load_grid",
    "method_names",
    "minimum_pvalue",
    "pairwise_comparison",
    "pairwise_differences",
    "pivot_scores",
    "plan",
    "prompt_type_comparison",
    "rank_methods",
    "ranking_frame",
    "ranking_prompt",
    "rankings_by",
    "report_section",
    "robust_pvalue",
    "run_grid",
    "sign_flip_test",
    "simulate_results",
    "spearman_with_metrics",
    "subset_rankings",
    "unit_scores",
    "until_decided",
    "win_matrix",
    "write_report",
]
