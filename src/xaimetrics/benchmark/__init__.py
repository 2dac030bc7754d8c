"""The ConSim evaluation framework (paper §4.3, §5, App. B–D): grids of settings, a resumable runner, Copeland
rankings with exact sign-flip tests on seed-level units, and an HTML/Markdown report.

- :class:`Grid` / :func:`load_grid` — which settings to run (Python or TOML);
- :func:`run_grid` — computes each artefact once (:class:`Artefacts`, :class:`Providers`, :class:`ConceptFit`),
  calls simulators concurrently, stores every finished setting (:class:`ResultRow`, :class:`ConceptRow`) in a
  :class:`ResultsStore` (SQLite) and resumes after a crash (:class:`RunSummary`, :class:`RunInterrupted`);
- :func:`assess` — what the results support (:class:`Assessment`): statistics on independent units (one per seed
  of a dataset), each method against NoExplanation like with like, exact sign-flip tests, t-intervals, Holm's
  correction, the controls' pre-stated tests, a best method only after corrected pairwise tests, and what the
  grid's size can detect. The statistics themselves are :mod:`xaimetrics.stats`;
- :func:`ranking_frame`, :func:`rankings_by`, :func:`rank_methods` — Copeland rankings for any grid axis;
- :func:`run_gated` — check each simulator on its controls first, then measure the methods on fresh seeds until
  each is decided (:class:`GatedDesign`, :class:`SequentialDesign`, :class:`GatedResult`, :func:`plan_gated`,
  :func:`replay_gated`); :func:`headline` says the answer in a few lines, :func:`print_gated` prints it;
- :func:`write_report` — the report, from :func:`report_section` parts (:func:`gated_sections` for a gated run,
  :func:`concept_sections` for the per-concept scores).

Everything else (the win matrix, per-class tables, normalised gains, variance components, twins, budgets, design
files) is computed by :func:`assess` and :func:`write_report` and stays importable from its private module.

Example:
    >>> import pandas as pd
    >>> from xaimetrics.benchmark import rank_methods
    >>> rank_methods(pd.DataFrame({"NMF": [0.8, 0.7], "PCA": [0.6, 0.7]}))["rank"].tolist()
    [1, 2]
"""

from xaimetrics.benchmark._analysis import ranking_frame, rankings_by
from xaimetrics.benchmark._artefacts import Artefacts, ConceptFit, Providers
from xaimetrics.benchmark._assessment import Assessment, assess
from xaimetrics.benchmark._concept_report import concept_sections
from xaimetrics.benchmark._concept_row import ConceptRow
from xaimetrics.benchmark._gated import GatedDesign, GatedResult, plan_gated, replay_gated, run_gated
from xaimetrics.benchmark._gated_report import gated_sections, print_gated
from xaimetrics.benchmark._grid import BASELINE_METHOD, Grid, load_grid
from xaimetrics.benchmark._headline import headline
from xaimetrics.benchmark._ranking import rank_methods
from xaimetrics.benchmark._report import report_section, write_report
from xaimetrics.benchmark._row import ResultRow
from xaimetrics.benchmark._runner import RunInterrupted, RunSummary, run_grid
from xaimetrics.benchmark._sequential import SequentialDesign
from xaimetrics.benchmark._store import ResultsStore

__all__ = [
    "BASELINE_METHOD",
    "Artefacts",
    "Assessment",
    "ConceptFit",
    "ConceptRow",
    "GatedDesign",
    "GatedResult",
    "Grid",
    "Providers",
    "ResultRow",
    "ResultsStore",
    "RunInterrupted",
    "RunSummary",
    "SequentialDesign",
    "assess",
    "concept_sections",
    "gated_sections",
    "headline",
    "load_grid",
    "plan_gated",
    "print_gated",
    "rank_methods",
    "ranking_frame",
    "rankings_by",
    "replay_gated",
    "report_section",
    "run_gated",
    "run_grid",
    "write_report",
]
