"""Human studies: a web app for ConSim-protocol simulatability and Atlas-protocol Likert ratings, and a report
that says whether an LLM simulator ranks explanations the way people do.

- :class:`SimulatabilityStudy` — the ConSim protocol for people: the same seeded LP/EP selection, prompt
  types and explanations as the LLM's prompt (:meth:`~SimulatabilityStudy.prompt`), shown as readable
  badges; built from a benchmark grid by :func:`simulatability_study_from_grid`;
- :class:`LikertStudy` — texts, dimensions and a 1–5 scale (:func:`likert_study_from_concepts`,
  :func:`likert_study_from_grid`);
- :func:`save_study` / :func:`load_study` — the self-contained JSON bundle; :class:`StudyConfig` /
  :func:`load_config` — ``STUDY.toml``;
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
from xaimetrics.studies._agreement import AgreementReport, agreement_report, agreement_section, shown_samples
from xaimetrics.studies._app import create_app
from xaimetrics.studies._build import choose_examples, explain_method, likert_study_from_concepts
from xaimetrics.studies._bundle import load_study, save_study
from xaimetrics.studies._config import StudyConfig, load_config, open_study, serve, write_config
from xaimetrics.studies._from_grid import likert_study_from_grid, simulatability_study_from_grid
from xaimetrics.studies._likert import DEFAULT_QUESTION, DEFAULT_SCALE, Dimension, LikertStudy, RatingItem
from xaimetrics.studies._plan import assign_arms
from xaimetrics.studies._results import (
    HUMAN,
    HumanResult,
    LikertRatings,
    answers_frame,
    export_results,
    human_results,
    likert_ratings,
)
from xaimetrics.studies._simulatability import (
    MethodExplanation,
    SampleSet,
    SimulatabilityStudy,
    StudyArm,
    StudySample,
)
from xaimetrics.studies._simulate import simulate_study
from xaimetrics.studies._store import Invite, Participant, StudyStore

__all__ = [
    "DEFAULT_QUESTION",
    "DEFAULT_SCALE",
    "HUMAN",
    "AgreementReport",
    "Dimension",
    "HumanResult",
    "Invite",
    "LikertRatings",
    "LikertStudy",
    "MethodExplanation",
    "Participant",
    "RatingItem",
    "SampleSet",
    "SimulatabilityStudy",
    "StudyArm",
    "StudyConfig",
    "StudySample",
    "StudyStore",
    "agreement_report",
    "agreement_section",
    "answers_frame",
    "assign_arms",
    "choose_examples",
    "create_app",
    "explain_method",
    "export_results",
    "human_results",
    "likert_ratings",
    "likert_study_from_concepts",
    "likert_study_from_grid",
    "load_config",
    "load_study",
    "open_study",
    "save_study",
    "serve",
    "shown_samples",
    "simulatability_study_from_grid",
    "simulate_study",
    "write_config",
]
