"""The ConSim evaluation framework (paper §4.3, §5, App. B–D): grids of settings, a resumable runner, Copeland
rankings with exact sign-flip tests on seed-level units, Spearman correlations with the concept metrics, and an
HTML/Markdown report.

- :class:`Grid` / :func:`load_grid` — which settings to run (Python or TOML);
- :func:`run_grid` — computes each artefact once, calls simulators concurrently, stores every finished setting
  in a :class:`ResultsStore` (SQLite) and resumes after a crash; ``backend="ray"`` spreads it on Ray;
- :func:`ranking_frame`, :func:`rankings_by`, :func:`rank_methods`, :func:`win_matrix`,
  :func:`pairwise_differences`, :func:`spearman_with_metrics` — the statistics, for any grid axis
  (``ranking_frame(results, axis="interpretation")``);
- :func:`per_class_table` — per class of f's predictions, the reader's recall and precision of f and the gain
  over NoExplanation, with intervals over seeds;
- :func:`normalised_gain`, :func:`unit_normalised_gains` — NSG (Mayne et al., 2026) beside the raw difference;
- ``Grid(detection=[...])`` — per-concept scores (detection, intruder, example embedding) of the same fits in the
  same store (:class:`ConceptRow`), summarised by :func:`legibility_summary` and the report's
  :func:`concept_sections`;
- :func:`twin_comparison` — each concept method against its randomised twin (``Grid(randomized_twins=...)``: the
  same extractor on a re-initialised copy of the classifier), beside its gain over NoExplanation;
- :func:`variance_components`, :func:`top_k_stability` — how much of a score is the pipeline (seed draw,
  interpretation, prompt type, simulator, method) and how stable the top-k is across draws of seeds;
- :func:`assess` — what the results support: statistics on independent units (one per seed of a dataset,
  :func:`unit_scores`; each method against the baseline like with like, :func:`unit_differences`), exact sign-flip tests, t-intervals, Holm's correction, the controls' pre-stated tests
  (equivalence for the negative one), a best method only after corrected pairwise tests, and :func:`plan`
  (minimum detectable difference, seeds needed); :func:`simulate_results` makes grids with known effects, to
  calibrate or plan;
- :func:`run_gated` — check each simulator on its controls first, then measure the methods on fresh seeds until
  each is decided (:class:`GatedDesign`; exact group-sequential tests, :func:`sequential_verdicts`,
  :func:`until_decided`, :class:`SequentialDesign`); :func:`headline` says the answer in a few lines;
- :func:`load_design` — the ``[sequential]`` table of a grid file; :func:`budget_table` — the worst-case settings,
  tokens and dollars before any call;
- :func:`write_report` — the report (:func:`gated_sections` for a gated run).

Example:
    >>> import pandas as pd
    >>> from xaimetrics.benchmark import rank_methods
    >>> rank_methods(pd.DataFrame({"NMF": [0.8, 0.7], "PCA": [0.6, 0.7]}))["rank"].tolist()
    [1, 2]
"""

from xaimetrics.benchmark._analysis import (
    RANKING_KEYS,
    UNIT_KEYS,
    complete_blocks,
    prompt_type_comparison,
    ranking_frame,
    rankings_by,
    spearman_with_metrics,
    subset_rankings,
    unit_differences,
    unit_scores,
)
from xaimetrics.benchmark._artefacts import Artefacts, ConceptFit, Providers
from xaimetrics.benchmark._assessment import Assessment, assess
from xaimetrics.benchmark._budget import budget_table, estimate_tokens
from xaimetrics.benchmark._concept_report import concept_sections, legibility_summary
from xaimetrics.benchmark._concept_row import ConceptRow, ConceptSetting
from xaimetrics.benchmark._design_file import design_from_table, load_design
from xaimetrics.benchmark._gain import normalised_gain, unit_normalised_gains
from xaimetrics.benchmark._gated import GatedDesign, GatedResult, plan_gated, replay_gated, run_gated
from xaimetrics.benchmark._gated_report import gated_sections, print_gated
from xaimetrics.benchmark._grid import (
    BASELINE_METHOD,
    Grid,
    Setting,
    grid_from_dict,
    load_grid,
    method_names,
    ranking_prompt,
)
from xaimetrics.benchmark._headline import headline
from xaimetrics.benchmark._per_class import per_class_table
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
from xaimetrics.benchmark._sequential import (
    SequentialDesign,
    SequentialResult,
    gate_outcome,
    sequential_sign_test,
    sequential_verdicts,
    until_decided,
)
from xaimetrics.benchmark._simulation import simulate_results
from xaimetrics.benchmark._store import ResultsStore
from xaimetrics.benchmark._twin_comparison import twin_comparison
from xaimetrics.benchmark._twins import twin_method
from xaimetrics.benchmark._variance import top_k_stability, variance_components

__all__ = [
    "BASELINE_METHOD",
    "RANKING_KEYS",
    "UNIT_KEYS",
    "Artefacts",
    "Assessment",
    "ConceptFit",
    "ConceptRow",
    "ConceptSetting",
    "GatedDesign",
    "GatedResult",
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
    "budget_table",
    "choose_n_concepts",
    "complete_blocks",
    "concept_sections",
    "copeland_ranks",
    "design_from_table",
    "estimate_tokens",
    "gate_outcome",
    "gated_sections",
    "grid_from_dict",
    "headline",
    "legibility_summary",
    "load_design",
    "load_grid",
    "method_names",
    "normalised_gain",
    "pairwise_differences",
    "per_class_table",
    "pivot_scores",
    "plan_gated",
    "print_gated",
    "prompt_type_comparison",
    "rank_methods",
    "ranking_frame",
    "ranking_prompt",
    "rankings_by",
    "replay_gated",
    "report_section",
    "run_gated",
    "run_grid",
    "sequential_sign_test",
    "sequential_verdicts",
    "simulate_results",
    "spearman_with_metrics",
    "subset_rankings",
    "top_k_stability",
    "twin_comparison",
    "twin_method",
    "unit_differences",
    "unit_normalised_gains",
    "unit_scores",
    "until_decided",
    "variance_components",
    "win_matrix",
    "write_report",
]
