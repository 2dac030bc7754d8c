"""Human studies: a web app for ConSim-protocol simulatability and Atlas-protocol Likert ratings, and a report
that says whether an LLM simulator ranks explanations the way people do.

- :class:`SimulatabilityStudy` — the ConSim protocol for people: the same seeded LP/EP selection, prompt
  types and explanations as the LLM's prompt (:meth:`~SimulatabilityStudy.prompt`), shown as readable
  badges; built from a benchmark grid by :func:`simulatability_study_from_grid`;
- :class:`LikertStudy` — texts, dimensions and a 1–5 scale (:func:`likert_study_from_concepts`,
  :func:`likert_study_from_grid`);
- :func:`save_study` / :func:`load_study` — the self-contained JSON bundle; :class:`StudyConfig` — ``STUDY.toml``;
- :class:`StudyStore` — the answers (SQLite, WAL, every answer committed; hashed invite tokens);
- :func:`create_app` / :func:`serve` — the web app (FastAPI, extra ``studies``);
- :func:`human_results`, :func:`export_results` — eq. 5 scores of people, written to a results store with
  simulator ``"human"``; :func:`likert_ratings` — the ratings array for
  :func:`~xaimetrics.representation.analyze_ratings`;
- :func:`simulate_study` — an LLM on the study's own prompts; :func:`agreement_report` — "Does the LLM rank
  explanations like people?".
"""

from __future__ import annotations

from xaimetrics.studies import _kinds as _kinds  # registers the built-in study kinds (STUDY_KINDS)
from xaimetrics.studies._agreement import agreement_report
from xaimetrics.studies._app import create_app
from xaimetrics.studies._build import likert_study_from_concepts
from xaimetrics.studies._bundle import load_study, save_study
from xaimetrics.studies._config import StudyConfig, serve
from xaimetrics.studies._from_grid import likert_study_from_grid, simulatability_study_from_grid
from xaimetrics.studies._likert import LikertStudy
from xaimetrics.studies._results import export_results, human_results, likert_ratings
from xaimetrics.studies._simulatability import SimulatabilityStudy
from xaimetrics.studies._simulate import simulate_study
from xaimetrics.studies._store import StudyStore

__all__ = [
    "LikertStudy",
    "SimulatabilityStudy",
    "StudyConfig",
    "StudyStore",
    "agreement_report",
    "create_app",
    "export_results",
    "human_results",
    "likert_ratings",
    "likert_study_from_concepts",
    "likert_study_from_grid",
    "load_study",
    "save_study",
    "serve",
    "simulatability_study_from_grid",
    "simulate_study",
]
