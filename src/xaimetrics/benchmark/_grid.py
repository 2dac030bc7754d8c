"""The experiment grid: which settings a ConSim benchmark runs (paper §5.1), from Python or a TOML file.

A *setting* fixes the dataset, the model, the concept method and its number of concepts, the
interpretation, the prompt type (± anonymised classes), the seed and the simulator (paper §4.3). The grid is
their product, with two rules of the paper:

- ``NoExplanation`` is the no-explanation baseline: it only runs the baseline prompt types (NE1, NE2), once
  per dataset × model × seed × simulator (its prompt shows no concept, so it does not depend on the concept
  method, the number of concepts or the interpretation). In rankings it stands in the column of every
  explanation prompt type whose baseline it is (NE1 for E1, NE2 for E2 and E3), see :func:`ranking_prompt`.
- Concept methods only run the explanation prompt types (E1, E2, E3 and the U1 upper bound, which is
  stored but never ranked).

The number of concepts is one integer, one per method (``{"NMF": 20, "PCA": 10}``), or a list of
candidates chosen per dataset–method pair on the validation seeds (paper §5.1: two extra 40-sample sets).

The TOML file mirrors the dataclass fields (``tomllib``, Python ≥ 3.11; ``tomli`` on 3.10)::

    datasets = ["rotten_tomatoes"]
    models = ["minilm+"]
    methods = ["NMF", "PCA", "NoExplanation"]
    n_concepts = { NMF = [10, 20], PCA = 10 }
    prompt_types = ["NE1-a", "E1-a", "NE2-a", "E2-a", "E3-a"]
    seeds = [0, 1, 2]
    simulators = ["local"]

A data file of your own goes in ``datasets`` with the keys that read it (the keywords of
:func:`xaimetrics.data.load_dataset`; the file is checked when the grid is built)::

    datasets = ["tweets.csv"]
    text_column = "Content"
    label_column = "Author"
    encoding = "utf-8"
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from xaimetrics._registry import did_you_mean, join_or
from xaimetrics._urls import public_url
from xaimetrics._validation import invalid
from xaimetrics.benchmark._concept_row import DETECTION_SCORERS, ConceptSetting
from xaimetrics.benchmark._store import setting_key
from xaimetrics.benchmark._twins import parse_twin, split_twin, twin_method
from xaimetrics.concepts import EXTRACTORS
from xaimetrics.consim import (
    BALANCES,
    CONTROLS,
    INTERPRETATIONS,
    PROMPT_LAYOUTS,
    PROMPT_TYPES,
    SCORINGS,
    PromptLayout,
    PromptSetting,
)
from xaimetrics.exceptions import InvalidParameterError

if TYPE_CHECKING:
    from xaimetrics.simulators import SimulatorKind

__all__ = [
    "BASELINE_METHOD",
    "ArtefactConfig",
    "Grid",
    "Setting",
    "grid_from_dict",
    "load_grid",
    "method_names",
    "ranking_prompt",
    "read_grid_file",
]

#: the no-explanation baseline
BASELINE_METHOD = "NoExplanation"
#: the grid file's table of the gated, sequential design (``xaimetrics benchmark run --sequential``)
SEQUENTIAL_TABLE = "sequential"
#: what a seed varies of the concept fit (:attr:`Grid.fit_draw`)
FIT_DRAWS: tuple[str, ...] = ("bootstrap", "fixed")
_OWNER = "Grid"
_T = TypeVar("_T")
#: the number of concepts: one for every method, or per method (a number or candidates to choose among)
NConcepts = int | Sequence[int] | Mapping[str, int | Sequence[int]]


@dataclass(frozen=True)
class Setting:
    """One cell of the grid: one prompt sent to one simulator, one row of the results store.

    ``phase`` is ``"evaluation"`` for the reported seeds and ``"validation"`` for the runs that choose the
    number of concepts. ``n_concepts`` and ``interpretation`` are ``0`` and ``""`` for ``NoExplanation``.
    ``prompt`` is the :class:`~xaimetrics.consim.PromptSetting` (prompt type and anonymisation); the store
    writes it as the ``prompt_type`` and ``anonymized`` of :meth:`params`. ``inputs`` is the fingerprint of
    everything else the row is computed from (data content, model weights, selection, prompt, extractor and
    simulator options; :func:`~xaimetrics.benchmark.Artefacts.fingerprinted` sets it before a run): part of the key,
    so that a row computed from other inputs is never reused.

    Example:
        >>> s = Setting("rotten_tomatoes", "minilm+", "NMF", 20, "top_words", PromptSetting.parse("E2-a"), 0, "local")
        >>> s.label, s.params()["prompt_type"], s.params()["anonymized"], len(s.key)
        ('E2-a', 'E2', True, 32)
    """

    dataset: str
    model: str
    method: str
    n_concepts: int
    interpretation: str
    prompt: PromptSetting
    seed: int
    simulator: str
    phase: str = "evaluation"
    scoring: str = "accuracy"
    inputs: str = ""

    @property
    def label(self) -> str:
        """The prompt setting's label: the prompt type with the paper's ``-a`` suffix for anonymised classes."""
        return self.prompt.label

    def params(self) -> dict[str, str | int | bool]:
        """The setting as the results store keys it: every field, the prompt as ``prompt_type`` and
        ``anonymized``, ``scoring`` only when it is not ``"accuracy"`` and ``inputs`` only when set."""
        params: dict[str, str | int | bool] = {
            "dataset": self.dataset, "model": self.model, "method": self.method, "n_concepts": self.n_concepts,
            "interpretation": self.interpretation, "prompt_type": self.prompt.name,
            "anonymized": self.prompt.anonymized, "seed": self.seed, "simulator": self.simulator,
            "phase": self.phase,
        }  # fmt: skip
        if self.scoring != "accuracy":  # the key of an accuracy setting has no scoring entry
            params["scoring"] = self.scoring
        if self.inputs:
            params["inputs"] = self.inputs
        return params

    @property
    def key(self) -> str:
        """The store key (stable hash of every field)."""
        return setting_key(self.params())


def ranking_prompt(prompt_type: str) -> tuple[str, ...]:
    """The explanation prompt types whose ranking a prompt type's score enters (read from ``PROMPT_TYPES``).

    A concept method's E1/E2/E3 score enters its own column; the NoExplanation baseline NE1 enters E1 and NE2
    enters E2 and E3 (the paper compares E1 to NE1 and the LP prompts to NE2). U1 enters none.

    Example:
        >>> ranking_prompt("NE2"), ranking_prompt("E1"), ranking_prompt("U1")
        (('E2', 'E3'), ('E1',), ())
    """
    return PROMPT_TYPES.ranked_in(prompt_type)


def _tuple_of(name: str, value: object, kind: type[_T], allow_empty: bool = False) -> tuple[_T, ...]:
    if isinstance(value, kind) and not isinstance(value, bool):
        value = (value,)
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise invalid(name, _OWNER, f"a list of {kind.__name__}", value)
    items = tuple(value)
    for item in items:
        if isinstance(item, bool) or not isinstance(item, kind):
            raise invalid(name, _OWNER, f"a list of {kind.__name__}", items)
    if not items and not allow_empty:
        raise invalid(name, _OWNER, f"a non-empty list of {kind.__name__}", "an empty list")
    if len(set(items)) != len(items):
        raise invalid(name, _OWNER, "a list without duplicates", items)
    return items


@dataclass(frozen=True)
class Grid:
    """A ConSim benchmark grid (paper §5.1): the product of every listed choice.

    Args:
        datasets: offline dataset names (``rotten_tomatoes``, ``imdb``, ``bbc_news``), recipes, data files
            (CSV, TSV, JSON Lines, JSON, Parquet: read with ``text_column`` …, checked before the run), Hugging
            Face ids, or extra ones registered with the runner.
        models: names of :data:`~xaimetrics.models.CLASSIFIERS` (``"minilm"`` / ``"minilm+"``: the MiniLM
            classifier fine-tuned on the dataset, any dataset; ``+`` adds a ReLU at the split, as NMF needs), a
            Hugging Face id (``+`` for the ReLU variant), a saved classifier directory (its own config says
            whether it is a ``+`` model), or names registered with the runner.
        methods: extractors of :data:`~xaimetrics.concepts.EXTRACTORS` (NMF, SAE, ICA, PCA, SVD, NoProjection
            and any registered), ``"NoExplanation"`` and the controls, case-insensitive (stored in their
            canonical spelling). Default: every registered extractor and ``"NoExplanation"``.
        n_concepts: one integer for all methods, or ``{method: int or [candidates]}`` (missing methods get
            ``default_n_concepts``). Candidates are chosen on ``validation_seeds``.
        interpretations: names of :data:`~xaimetrics.consim.INTERPRETATIONS`: ``"top_words"`` (CMAW, eq. 1)
            and/or ``"llm_labels"`` (o1CA, eq. 2).
        prompt_types: names of :data:`~xaimetrics.consim.PROMPT_TYPES` with an optional ``-a`` suffix
            (anonymised classes): NE1, E1, NE2, E2, E3, U1 and any registered. Baselines (NE1/NE2) are run by
            ``NoExplanation`` only, the others by concept methods and controls only.
        seeds: evaluation seeds (LP/EP selection and concept fits).
        simulators: specs of :data:`~xaimetrics.simulators.SIMULATORS`: ``"local"`` (the default offline GGUF),
            ``"local:<name>"`` (a model of :data:`~xaimetrics.simulators.GGUF_ASSETS`), ``"openai:<model>"``
            (with ``base_url``), ``"perfect"`` (answers the model's predictions: a pipeline check), any
            registered kind, or names provided to the runner (:class:`Providers`).
        base_url: server URL of ``openai:`` simulators.
        n_lp, n_ep: learning- and evaluation-phase samples per selection (paper: 20 + 20).
        concurrency: simulator calls in flight.
        n_fit: training texts the concepts are fitted on (drawn once per dataset).
        fit_draw: what a seed varies of the concept fit besides the extractor's ``random_state``:
            ``"bootstrap"`` (default) fits each seed on a bootstrap draw of the ``n_fit`` texts (no extra
            encoding), so that a method's ranking rests on several fits, not one; ``"fixed"`` fits every seed on
            the same ``n_fit`` texts (PCA and SVD then give the same concepts at every seed).
        pool_size: test texts LP/EP samples are drawn from (``None``: the whole test split).
        validation_seeds: seeds of the runs choosing the number of concepts (paper: two).
        max_sample_chars: cut longer sample texts in prompts.
        prompt_layout: a name of :data:`~xaimetrics.consim.PROMPT_LAYOUTS`: ``"paper"`` (App. E) or ``"cache"``
            (what a seed's prompts share first, the explanation after it, so a provider's prompt cache reads
            the shared part; see :func:`~xaimetrics.consim.render_prompt`).
        balance: a name of :data:`~xaimetrics.consim.BALANCES`: ``"strict"`` or ``"relaxed"`` LP/EP selection
            (see :func:`xaimetrics.consim.select_examples`).
        default_n_concepts: the number of concepts of methods ``n_concepts`` does not name.
        extractor_options: ``{method: {keyword: value}}`` passed to the extractors (e.g. ``{"SAE":
            {"max_steps": 200}}``).
        layers: ``{model: layer}``: read that model's activations at the output of transformer block ``layer``
            (0 = the closest to the input, mean over the text's tokens; :meth:`SplitClassifier.with_layer
            <xaimetrics.models.SplitClassifier.with_layer>`) instead of the head input. Checked against the
            model's number of layers when it loads; part of the model's digest, so of every row's key.
        controls: also run the positive control (``SurrogateWords``, a linear surrogate of f's predictions)
            and the negative control (``RandomWords``, random words) on the explanation prompt types, so
            that the report can say whether this grid detects explanation quality at all. The control
            names may also be listed in ``methods``.
        randomized_twins: the model-randomisation control (:mod:`xaimetrics.benchmark._twins`): for each
            entry (``"all"``, ``"top"``, ``"top<N>"``) every concept method also runs as ``<method>@random-<entry>``
            on a copy of the classifier with re-drawn weights (seeded by the setting's seed), while the simulator
            predicts the trained classifier; :func:`~xaimetrics.benchmark._twin_comparison.twin_comparison` tests real vs twin.
        twin_seed: ``None`` (default): each seed draws its own twin (the random draw is part of the replicate);
            an integer: one twin per entry for the whole grid, drawn with it (one forward per twin instead of
            one per seed; the intervals are then conditional on that draw).
        detection: per-concept scorers run on the same fitted concepts (``"detection"``, ``"intruder"``,
            ``"embedding"``; default none): every concept with words of each concept method (and twin), dataset,
            model and seed is scored by each, and stored one row per concept × scorer × reader in the store's
            ``concept_results`` table (:class:`~xaimetrics.benchmark.ConceptRow`). The readers are the grid's
            simulators (``lexical``: the detection word reader :class:`~xaimetrics.detection.WordOverlapReader`;
            ``perfect`` reads nothing and is left out); ``embedding`` needs no reader (the offline MiniLM).
        scoring: a name of :data:`~xaimetrics.consim.SCORINGS`: ``"accuracy"`` (eq. 5 on the answer text) or
            ``"probability"`` (also the simulator's class probabilities per EP sample: expected accuracy,
            log-loss, Brier; needs a simulator with log-probabilities). Rankings use expected accuracy when every setting has it.
        text_column, label_column: the columns of data-file datasets holding the texts and the labels (any
            names; default: the usual ones, ``text``/``label`` …), as in :func:`xaimetrics.data.load_dataset`.
        encoding: the text encoding of data files (default UTF-8).
        drop_empty_rows: drop the rows of data files with an empty text or label (default: refuse them).
        call_timeout: the base deadline in seconds of a local model's call (``local`` simulators: plus 0.01 s per
            prompt character and 0.25 s per answer token); a worker past it is killed and the setting recorded
            as failed. ``None``: the simulator's default (120 s, or ``--llm-call-timeout``). Not part of a
            row's key.

    Example:
        >>> grid = Grid(methods=("NMF", "PCA", "NoExplanation"), prompt_types=("NE2", "E2"), seeds=(0, 1),
        ...             simulators=("perfect",))
        >>> len(grid.settings())  # 2 methods × E2 × 2 seeds + NoExplanation × NE2 × 2 seeds
        6
    """

    datasets: tuple[str, ...] = ("rotten_tomatoes",)
    models: tuple[str, ...] = ("minilm+",)
    methods: tuple[str, ...] = field(default_factory=lambda: (*EXTRACTORS.names(), BASELINE_METHOD))
    n_concepts: NConcepts = 20
    interpretations: tuple[str, ...] = ("top_words",)
    prompt_types: tuple[str, ...] = ("NE1-a", "E1-a", "NE2-a", "E2-a", "E3-a")
    seeds: tuple[int, ...] = (0, 1, 2)
    simulators: tuple[str, ...] = ("local",)
    base_url: str | None = None
    n_lp: int = 20
    n_ep: int = 20
    concurrency: int = 4
    n_fit: int = 2000
    fit_draw: str = "bootstrap"
    pool_size: int | None = None
    validation_seeds: tuple[int, ...] = (1000, 1001)
    max_sample_chars: int | None = None
    prompt_layout: PromptLayout = "paper"
    balance: str = "strict"
    default_n_concepts: int = 20
    extractor_options: Mapping[str, Mapping[str, object]] | None = None
    layers: Mapping[str, int] | None = None
    controls: bool = False
    randomized_twins: tuple[str, ...] = ()
    twin_seed: int | None = None
    detection: tuple[str, ...] = ()
    scoring: str = "accuracy"
    text_column: str | None = None
    label_column: str | None = None
    encoding: str | None = None
    drop_empty_rows: bool = False
    call_timeout: float | None = None
    extra_datasets: tuple[str, ...] = field(default=(), repr=False, compare=False)
    extra_models: tuple[str, ...] = field(default=(), repr=False, compare=False)
    extra_simulators: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("datasets", "models", "methods", "interpretations", "prompt_types", "simulators"):
            object.__setattr__(self, name, _tuple_of(name, getattr(self, name), str))
        for name in ("seeds", "validation_seeds"):
            object.__setattr__(self, name, _tuple_of(name, getattr(self, name), int, allow_empty=True))
        for name in ("randomized_twins", "detection"):
            object.__setattr__(self, name, _tuple_of(name, getattr(self, name), str, allow_empty=True))
        for name in ("extra_datasets", "extra_models", "extra_simulators"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        methods = tuple(_canonical_method(m) for m in self.methods)
        if len(set(methods)) != len(methods):
            raise invalid(
                "methods", _OWNER, "a list without duplicates (names are case-insensitive)", self.methods
            )
        object.__setattr__(self, "methods", methods)
        if isinstance(self.n_concepts, Mapping):
            object.__setattr__(
                self, "n_concepts", {_canonical_method(k): v for k, v in self.n_concepts.items()}
            )
        if isinstance(self.layers, Mapping):
            object.__setattr__(self, "layers", dict(self.layers))
        if isinstance(self.extractor_options, Mapping):
            object.__setattr__(
                self,
                "extractor_options",
                {_canonical_method(k): dict(v) for k, v in self.extractor_options.items()},
            )
        self.validate()

    # -- validation ------------------------------------------------------------------------------------------
    def _check_layers(self) -> None:
        """``layers``: ``{listed model: integer ≥ 0}`` (the upper bound needs the model: checked when it loads)."""
        if self.layers is None:
            return
        fix = 'Write it as {model: layer}, e.g. layers = {"models/mine" = 3} in a grid file.'
        if not isinstance(self.layers, Mapping):
            raise invalid("layers", _OWNER, "a mapping {model: layer index}", self.layers, fix)
        unknown = sorted(set(self.layers) - set(self.models))
        if unknown:
            raise invalid("layers", _OWNER, f"keys among the listed models {list(self.models)}", unknown, fix)
        for model, layer in self.layers.items():
            if isinstance(layer, bool) or not isinstance(layer, int) or layer < 0:
                raise invalid(
                    f"layers.{model}", _OWNER, "an integer ≥ 0 (0 is the transformer layer closest to the input)",
                    layer, "Leave the model out of 'layers' to read its head input.",
                )  # fmt: skip

    def validate(self) -> None:
        """Check every field; raise :class:`~xaimetrics.exceptions.InvalidParameterError` naming the bad key."""
        from xaimetrics.data import check_dataset
        from xaimetrics.models import CLASSIFIERS, is_classifier_reference, is_positive_model

        # recipes, data files (read once here, so that a bad file stops the grid before the run) and "org/name"
        # hub ids are datasets; hub ids and local directories are models
        self._check_data_options()
        for dataset in self.datasets:
            if dataset not in self.extra_datasets:
                check_dataset(
                    dataset, owner=_OWNER, argument="datasets", text_column=self.text_column,
                    label_column=self.label_column, encoding=self.encoding or "utf-8",
                    drop_empty_rows=self.drop_empty_rows,
                )  # fmt: skip
        _choices(
            "models",
            [m for m in self.models if not is_classifier_reference(m)],
            (*CLASSIFIERS.names(), *self.extra_models),
        )
        _choices("methods", self.methods, method_names())
        if not isinstance(self.controls, bool):
            raise invalid("controls", _OWNER, "True or False", self.controls)
        for twin in self.randomized_twins:
            parse_twin(twin)
        if self.twin_seed is not None and (
            isinstance(self.twin_seed, bool)
            or not isinstance(self.twin_seed, int)
            or not 0 <= self.twin_seed < MAX_SEED
        ):
            raise invalid("twin_seed", _OWNER, "None or an integer in [0, 2**32 - 1]", self.twin_seed)
        if self.randomized_twins and not self.concept_methods:
            raise invalid(
                "randomized_twins", _OWNER, "empty when no concept method is listed (a twin re-runs a concept "
                "method on a randomised copy of the model)", list(self.randomized_twins),
                "List a concept method in 'methods' or drop 'randomized_twins'.",
            )  # fmt: skip
        _choices("detection", self.detection, DETECTION_SCORERS)
        if self.detection and not self.concept_methods:
            raise invalid(
                "detection", _OWNER, "empty when no concept method is listed (it scores a method's concepts)",
                list(self.detection), "List a concept method in 'methods' or drop 'detection'.",
            )  # fmt: skip
        _choices("scoring", [self.scoring], SCORINGS.names())
        _choices("fit_draw", [self.fit_draw], FIT_DRAWS)
        _choices("prompt_layout", [self.prompt_layout], PROMPT_LAYOUTS)
        _choices("interpretations", self.interpretations, INTERPRETATIONS.names())
        kinds = [self._simulator_kind(simulator) for simulator in self.simulators]
        for simulator, kind in zip(self.simulators, kinds, strict=True):
            if kind is not None and kind.interactive:
                raise invalid(
                    "simulators", _OWNER, "simulators that answer without a person", simulator,
                    "Collect human answers with 'xaimetrics study create' and 'study serve', then 'study export' "
                    "them into the results store: the ranking and the report read them like any simulator.",
                )  # fmt: skip
        prompts = self.prompt_settings()
        if not any(p.kind.is_ranked for p in prompts) and self.concept_methods:
            raise invalid(
                "prompt_types", _OWNER,
                f"at least one explanation prompt type ({join_or(PROMPT_TYPES.explanations())}) when concept methods "
                "are listed",
                self.prompt_types,
            )  # fmt: skip
        if BASELINE_METHOD in self.methods and not any(p.kind.is_baseline for p in prompts):
            raise invalid(
                "prompt_types", _OWNER,
                f"at least one baseline prompt type ({join_or(PROMPT_TYPES.baselines())}) when 'NoExplanation' is listed",
                self.prompt_types,
            )  # fmt: skip
        if not self.seeds:
            raise invalid("seeds", _OWNER, "a non-empty list of int", "an empty list")
        for name in ("seeds", "validation_seeds"):
            out_of_range = [seed for seed in getattr(self, name) if not 0 <= seed < MAX_SEED]
            if out_of_range:
                raise invalid(
                    name, _OWNER, "integers in [0, 2**32 - 1] (the range of numpy's and scikit-learn's seeds)",
                    out_of_range[:5], "Use smaller seeds.",
                )  # fmt: skip
        overlap = set(self.seeds) & set(self.validation_seeds)
        if overlap and self.needs_validation:  # validation seeds are used only to choose among candidates
            raise invalid(
                "validation_seeds", _OWNER,
                f"disjoint from 'seeds' (the seeds choosing among candidate numbers of concepts; default "
                f"{list(_DEFAULT_VALIDATION_SEEDS)})",
                sorted(overlap)[:5], "Set 'validation_seeds' to seeds outside 'seeds'.",
            )  # fmt: skip
        for name in ("n_lp", "n_ep", "concurrency", "n_fit", "default_n_concepts"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise invalid(name, _OWNER, "an integer ≥ 1", value)
        if self.pool_size is not None and (
            isinstance(self.pool_size, bool) or not isinstance(self.pool_size, int) or self.pool_size < 2
        ):
            raise invalid("pool_size", _OWNER, "None or an integer ≥ 2", self.pool_size)
        _choices("balance", [self.balance], BALANCES.names())
        self._check_n_concepts()
        self._check_layers()
        extractor_options = self.extractor_options
        if extractor_options is not None:
            if not isinstance(extractor_options, Mapping) or not all(
                isinstance(v, Mapping) for v in extractor_options.values()
            ):
                raise invalid(
                    "extractor_options", _OWNER, "a mapping {method: {keyword: value}}", extractor_options
                )
            unknown = sorted(set(extractor_options) - set(self.concept_methods))
            if unknown:
                raise invalid(
                    "extractor_options", _OWNER, f"keys among the listed concept methods {self.concept_methods}",
                    unknown,
                )  # fmt: skip
            for method, method_options in extractor_options.items():
                _check_extractor_options(method, method_options)
        positive = [m for m in self.concept_methods if EXTRACTORS.get(m).positive_activations]
        # built-in names and Hugging Face ids: a trailing '+' asks for the non-negative variant; a saved
        # classifier directory says in its own config whether it was fine-tuned with the ReLU
        standard = [m for m in self.models if m not in self.extra_models and not is_positive_model(m)]
        if positive and standard:
            raise invalid(
                "models", _OWNER, f"'+' (non-negative) variants when {join_or(tuple(positive))} is listed", standard,
                f"Use 'minilm+' (or '<model>+', or a directory fine-tuned with positive=True) or drop "
                f"{join_or(tuple(positive))}.",
            )  # fmt: skip
        uses_url = any(kind is not None and kind.uses_base_url for kind in kinds)
        if (
            uses_url
            and self.base_url is not None
            and not str(self.base_url).startswith(("http://", "https://"))
        ):
            raise invalid("base_url", _OWNER, "an http(s):// URL", public_url(self.base_url))
        if self.needs_validation and not self.validation_seeds:
            raise invalid(
                "validation_seeds",
                _OWNER,
                "at least one seed when 'n_concepts' lists candidates",
                self.validation_seeds,
            )

    def _check_data_options(self) -> None:
        from xaimetrics._file_checks import check_encoding

        for name in ("text_column", "label_column"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise invalid(name, _OWNER, "None or a column name (a non-empty string)", value)
        if self.encoding is not None:
            check_encoding(self.encoding, _OWNER)
        if not isinstance(self.drop_empty_rows, bool):
            raise invalid("drop_empty_rows", _OWNER, "true or false", self.drop_empty_rows)
        if self.call_timeout is not None:
            from xaimetrics._call_timeout import resolve_call_timeout

            resolve_call_timeout(self.call_timeout, owner=_OWNER)

    def artefact_config(self) -> ArtefactConfig:
        """The settings the artefact cache and the runner read (:class:`ArtefactConfig`).

        Example:
            >>> Grid(simulators=("perfect",), n_lp=6).artefact_config().n_lp
            6
        """
        return ArtefactConfig(
            n_fit=self.n_fit, pool_size=self.pool_size, dataset_options=self.dataset_options(),
            layers=dict(self.layers or {}), extractor_options=dict(self.extractor_options or {}),
            fit_draw=self.fit_draw, twin_seed=self.twin_seed, n_lp=self.n_lp, n_ep=self.n_ep, balance=self.balance,
            max_sample_chars=self.max_sample_chars, prompt_layout=self.prompt_layout, base_url=self.base_url,
            concurrency=self.concurrency, call_timeout=self.call_timeout, scoring=self.scoring,
        )  # fmt: skip

    def dataset_options(self) -> dict[str, object]:
        """The keyword arguments of :func:`~xaimetrics.data.load_dataset` that read the grid's data files
        (``text_column``, ``label_column``, ``encoding``, ``drop_empty_rows``; only those set).

        Example:
            >>> Grid(simulators=("perfect",), text_column="Content").dataset_options()
            {'text_column': 'Content'}
        """
        names = ("text_column", "label_column", "encoding", "drop_empty_rows")
        return {name: getattr(self, name) for name in names if getattr(self, name) not in (None, False)}

    def _simulator_kind(self, spec: str) -> SimulatorKind | None:
        """The :class:`~xaimetrics.simulators.SimulatorKind` of a spec (``None`` for a runner-provided name)."""
        from xaimetrics.simulators import SIMULATORS, check_simulator_spec

        name, _ = check_simulator_spec(spec, extra=self.extra_simulators, owner=_OWNER, argument="simulators")
        return None if name in self.extra_simulators else SIMULATORS.get(name)

    def _check_n_concepts(self) -> None:
        value = self.n_concepts
        if isinstance(value, Mapping):
            unknown = sorted(set(value) - set(self.concept_methods))
            if unknown:
                raise invalid(
                    "n_concepts",
                    _OWNER,
                    f"keys among the listed concept methods {self.concept_methods}",
                    unknown,
                )
            for method, count in value.items():
                _check_counts(f"n_concepts.{method}", count)
        else:
            _check_counts("n_concepts", value)

    # -- derived ---------------------------------------------------------------------------------------------
    @property
    def concept_methods(self) -> tuple[str, ...]:
        """The concept extraction methods listed (not the baseline, not the controls)."""
        return tuple(m for m in self.methods if m != BASELINE_METHOD and m not in CONTROLS)

    @property
    def twin_methods(self) -> tuple[str, ...]:
        """The randomised twins run (``"PCA@random-all"`` …): each concept method × ``randomized_twins``.

        Example:
            >>> Grid(methods=("PCA", "NoExplanation"), simulators=("perfect",), randomized_twins=("all", "top")).twin_methods
            ('PCA@random-all', 'PCA@random-top')
        """
        return tuple(twin_method(m, twin) for m in self.concept_methods for twin in self.randomized_twins)

    @property
    def control_methods(self) -> tuple[str, ...]:
        """The controls run: those listed in ``methods``, and both when ``controls`` is on."""
        listed = [m for m in self.methods if m in CONTROLS]
        extra = [m for m in CONTROLS.names() if self.controls and m not in listed]
        return (*listed, *extra)

    def candidates(self, method: str) -> tuple[int, ...]:
        """The numbers of concepts tried for ``method`` (one value: no validation run); a twin's are its method's."""
        method = split_twin(method)[0]
        kind = EXTRACTORS.find(method) or CONTROLS.find(method)
        if kind is not None and not kind.sized:
            return (0,)  # C = H (the model's width), or one concept per class direction (the surrogate's)
        if method in CONTROLS:
            count = self.n_concepts if isinstance(self.n_concepts, int) else self.default_n_concepts
            return (count,)
        value = self.n_concepts
        if isinstance(value, Mapping):
            value = value.get(method, self.default_n_concepts)
        return (value,) if isinstance(value, int) else tuple(value)

    @property
    def needs_validation(self) -> bool:
        return any(len(self.candidates(m)) > 1 for m in self.concept_methods)

    def options(self, method: str) -> dict[str, object]:
        """Extra keyword arguments of ``method``'s extractor (a twin's are its method's)."""
        return self.artefact_config().options(method)

    def prompt_settings(self) -> list[PromptSetting]:
        """The prompt types of the grid as :class:`~xaimetrics.consim.PromptSetting` values, in grid order."""
        return [PromptSetting.parse(p, owner=_OWNER, argument="prompt_types") for p in self.prompt_types]

    def settings(
        self, *, phase: str = "evaluation", chosen: Mapping[tuple[str, str, str], int] | None = None
    ) -> list[Setting]:
        """Every setting of a phase, in a deterministic order.

        ``phase="validation"`` lists the concept-method runs on ``validation_seeds`` for methods with
        several candidates; ``"evaluation"`` the reported runs, with the number of concepts taken from
        ``chosen[(dataset, model, method)]`` for such methods.
        """
        out: list[Setting] = []
        validation = phase == "validation"
        seeds = self.validation_seeds if validation else self.seeds
        for dataset in self.datasets:
            for model in self.models:
                for seed in seeds:
                    for simulator in self.simulators:
                        out.extend(self._group(dataset, model, seed, simulator, phase, chosen or {}))
        if self.scoring != "accuracy":
            out = [dataclasses.replace(s, scoring=self.scoring) for s in out]
        return out

    def _group(
        self,
        dataset: str,
        model: str,
        seed: int,
        simulator: str,
        phase: str,
        chosen: Mapping[tuple[str, str, str], int],
    ) -> Iterator[Setting]:
        validation = phase == "validation"
        if BASELINE_METHOD in self.methods and not validation:
            for prompt in self.prompt_settings():
                if prompt.kind.is_baseline:
                    yield Setting(dataset, model, BASELINE_METHOD, 0, "", prompt, seed, simulator, phase)
        later = () if validation else (*self.twin_methods, *self.control_methods)
        for method in (*self.concept_methods, *later):
            candidates = self.candidates(method)
            if validation:
                if len(candidates) == 1:
                    continue
                counts = candidates
            elif len(candidates) == 1:
                counts = candidates
            else:
                base = split_twin(method)[0]  # a twin shows as many concepts as its method
                if (dataset, model, base) not in chosen:
                    continue
                counts = (chosen[(dataset, model, base)],)
            for k in counts:
                for interpretation in self.interpretations:
                    for prompt in self.prompt_settings():
                        if prompt.kind.is_baseline or (validation and prompt.kind.is_upper_bound):
                            continue
                        yield Setting(
                            dataset, model, method, k, interpretation, prompt, seed, simulator, phase
                        )

    def concept_settings(
        self, chosen: Mapping[tuple[str, str, str], int] | None = None
    ) -> list[ConceptSetting]:
        """The per-concept groups of ``detection``: each concept method (and twin) × dataset × model × seed ×
        scorer × reader (the evaluation's number of concepts; a method with candidates needs ``chosen``).

        Example:
            >>> g = Grid(methods=("PCA", "NoExplanation"), prompt_types=("NE1", "E1"), seeds=(0, 1),
            ...          simulators=("lexical", "perfect"), detection=("detection", "embedding"))
            >>> [(s.seed, s.scorer, s.reader, s.interpretation) for s in g.concept_settings()][:2]
            [(0, 'detection', 'lexical', 'top_words'), (0, 'embedding', 'minilm', '')]
        """
        from xaimetrics.benchmark._concept_row import EMBEDDING_READER

        readers = [s for s in self.simulators if s != "perfect"]  # the pipeline check reads no text
        out: list[ConceptSetting] = []
        for dataset in self.datasets:
            for model in self.models:
                for seed in self.seeds:
                    for method in (*self.concept_methods, *self.twin_methods):
                        candidates = self.candidates(method)
                        base = split_twin(method)[0]
                        if len(candidates) == 1:
                            k = candidates[0]
                        elif (dataset, model, base) in (chosen or {}):
                            k = (chosen or {})[(dataset, model, base)]
                        else:
                            continue
                        for scorer in self.detection:
                            interpretation = "" if scorer == "embedding" else "top_words"
                            for reader in [EMBEDDING_READER] if scorer == "embedding" else readers:
                                out.append(
                                    ConceptSetting(
                                        dataset, model, method, k, interpretation, seed, reader, scorer
                                    )
                                )
        return out

    def to_dict(self) -> dict[str, object]:
        """The grid as plain data (what the TOML file holds), ``base_url`` without credentials.

        This is what the results store and the report keep: a credential inside ``base_url``
        (``http://user:KEY@host/v1``) or its query never leaves the object.
        """
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.repr}
        if data.get("base_url") is not None:
            data["base_url"] = public_url(data["base_url"])
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in data.items() if v is not None}

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in self._shown().items())
        return f"{type(self).__name__}({fields})"

    def _shown(self) -> dict[str, object]:
        shown = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.repr}
        if shown.get("base_url") is not None:
            shown["base_url"] = public_url(shown["base_url"])
        return shown

    def replace(self, **changes: Any) -> Grid:
        """A copy with ``changes`` (checked again)."""
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class ArtefactConfig:
    """What the artefact cache and the runner read of a grid (:meth:`Grid.artefact_config`), and nothing else:
    how the data are drawn, how models are read and concepts fitted, how samples are selected and prompts cut,
    and how the simulators are built. The fields have the meaning and the defaults of :class:`Grid`'s of the same
    name (``dataset_options``: :meth:`Grid.dataset_options`); a job that reads one dataset and one model (the
    ``detection`` command) builds one directly, without a grid.

    Example:
        >>> config = Grid(simulators=("perfect",), n_fit=50, extractor_options={"NMF": {"max_iter": 9}}).artefact_config()
        >>> config.n_fit, config.options("NMF"), config.options("PCA")
        (50, {'max_iter': 9}, {})
        >>> ArtefactConfig(n_fit=50) == Grid(simulators=("perfect",), n_fit=50).artefact_config()
        True
    """

    n_fit: int = Grid.n_fit
    pool_size: int | None = Grid.pool_size
    dataset_options: Mapping[str, object] = field(default_factory=dict)
    layers: Mapping[str, int] = field(default_factory=dict)
    extractor_options: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    fit_draw: str = Grid.fit_draw
    twin_seed: int | None = Grid.twin_seed
    n_lp: int = Grid.n_lp
    n_ep: int = Grid.n_ep
    balance: str = Grid.balance
    max_sample_chars: int | None = Grid.max_sample_chars
    prompt_layout: PromptLayout = Grid.prompt_layout
    base_url: str | None = Grid.base_url
    concurrency: int = Grid.concurrency
    call_timeout: float | None = Grid.call_timeout
    scoring: str = Grid.scoring

    def options(self, method: str) -> dict[str, object]:
        """Extra keyword arguments of ``method``'s extractor (a twin's are its method's)."""
        return dict(self.extractor_options.get(split_twin(method)[0], {}))


#: seeds must fit numpy's and scikit-learn's ``random_state`` (a uint32)
MAX_SEED = 2**32
_DEFAULT_VALIDATION_SEEDS = (1000, 1001)
#: how deeply a grid's values may nest (a TOML grid needs 2: ``[extractor_options.SAE]``)
MAX_DEPTH = 16


def _check_extractor_options(method: str, options: Mapping[str, object]) -> None:
    """Every option must be a keyword of the extractor's (or control's) constructor, checked before any call."""
    registry = CONTROLS if method in CONTROLS.names() else EXTRACTORS
    kind = registry.get(method)
    try:
        signature = inspect.signature(kind.factory)
    except (TypeError, ValueError):  # pragma: no cover - a builtin factory: nothing to check against
        return
    parameters = signature.parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return
    reserved = {"n_concepts", "random_state"} if kind.sized else set()
    accepted = sorted(
        name for name, p in parameters.items()
        if name not in reserved and p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        and name != "self"
    )  # fmt: skip
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise invalid(
            f"extractor_options.{method}", _OWNER, f"keywords of {method} among {accepted}", unknown,
            "The grid sets n_concepts and random_state itself." if set(unknown) & reserved else "",
        )  # fmt: skip


def check_depth(value: object, name: str, owner: str, limit: int = MAX_DEPTH) -> None:
    """Refuse values nested deeper than ``limit`` (iteratively: a 5,000-deep input raises this, not a
    ``RecursionError``).

    Example:
        >>> check_depth({"a": [[1]]}, "grid", "load_grid", limit=2)
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'grid' parameter of load_grid must be values nested at most 2 levels deep. Got 3 levels (under 'a').
    """
    stack: list[tuple[object, int, str]] = [(value, 0, "")]
    while stack:
        item, depth, where = stack.pop()
        if depth > limit:
            raise invalid(
                name, owner, f"values nested at most {limit} levels deep", f"{depth} levels (under {where!r})"
            )
        if isinstance(item, Mapping):
            stack.extend((v, depth + 1, where or str(k)) for k, v in item.items())
        elif isinstance(item, list | tuple):
            stack.extend((v, depth + 1, where) for v in item)


def method_names() -> tuple[str, ...]:
    """Every name ``methods`` accepts, read from the registries: the extractors, the controls, the baseline.

    Example:
        >>> method_names()
        ('NMF', 'SAE', 'ICA', 'PCA', 'SVD', 'NoProjection', 'SurrogateWords', 'RandomWords', 'NoExplanation')
    """
    return (*EXTRACTORS.names(), *CONTROLS.names(), BASELINE_METHOD)


def _choices(name: str, values: Sequence[object], valid: Sequence[str]) -> None:
    for value in values:
        if value not in valid:
            raise invalid(
                name,
                _OWNER,
                "among " + ", ".join(repr(v) for v in valid),
                value,
                did_you_mean(value, valid) or None,
            )


def _canonical_method(name: object) -> object:
    """A method name in its registry spelling (``"nmf"`` → ``"NMF"``); unknown names are left for validation."""
    if not isinstance(name, str):
        return name
    if name.lower() == BASELINE_METHOD.lower():
        return BASELINE_METHOD
    for registry in (EXTRACTORS, CONTROLS):
        if name in registry:
            return registry.canonical(name)
    return name


def _check_counts(name: str, value: object) -> None:
    values = [value] if isinstance(value, int) and not isinstance(value, bool) else value
    if isinstance(values, str) or not isinstance(values, Sequence) or not values:
        raise invalid(name, _OWNER, "an integer ≥ 1 or a non-empty list of them", value)
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise invalid(name, _OWNER, "an integer ≥ 1 or a non-empty list of them", value)
    if len(set(values)) != len(values):
        raise invalid(name, _OWNER, "candidates without duplicates", value)


def load_grid(path: str | Path, **extra: Any) -> Grid:
    """Read a :class:`Grid` from a TOML file; unknown keys are an error naming the valid ones.

    ``extra`` (``extra_datasets=...``, …) is passed to :class:`Grid` (names registered with the runner).

    Example:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "grid.toml")
        >>> _ = open(path, "w").write('methods = ["PCA", "NoExplanation"]\\nseeds = [0, 1]\\nsimulators = ["perfect"]')
        >>> load_grid(path).seeds
        (0, 1)
    """
    return grid_from_dict(read_grid_file(path), **extra)


def read_grid_file(path: str | Path) -> dict[str, Any]:
    """The plain data of a grid's TOML file (the grid's keys and, when present, its ``[sequential]`` table);
    errors name the file and the fix."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        from xaimetrics._optional import import_optional

        tomllib = import_optional("tomli", extra="benchmark", caller="load_grid")
    path = Path(path)
    if not path.is_file():
        raise invalid(
            "path",
            "load_grid",
            "an existing TOML file",
            str(path),
            f"File not found: '{path}'; check the path.",
        )
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise InvalidParameterError(
            f"The grid file '{path}' is not UTF-8 text (byte 0x{error.object[error.start]:02x} at offset "
            f"{error.start}). Save it as UTF-8 (TOML files are UTF-8)."
        ) from None
    except tomllib.TOMLDecodeError as error:
        # the whole message: tomllib puts the line and column at its end
        raise InvalidParameterError(
            f"The grid file '{path}' is not valid TOML: {error}. Fix the syntax there (strings in double quotes, "
            'lists in brackets: datasets = ["tweets.csv"]; tables such as n_concepts = { NMF = 10 }).'
        ) from None
    except RecursionError as error:
        raise invalid(
            "path", "load_grid", f"a TOML file nested at most {MAX_DEPTH} levels deep", f"{path}: deeper"
        ) from error
    return data


def grid_from_dict(data: Mapping[str, Any], **extra: Any) -> Grid:
    """Build a :class:`Grid` from plain data; unknown keys are an error naming the valid ones.

    The ``[sequential]`` table (:data:`SEQUENTIAL_TABLE`, read by :func:`~xaimetrics.benchmark._design_file.load_design`) is not
    a grid key: it is skipped here.
    """
    check_depth(data, "grid", "load_grid")
    data = {k: v for k, v in data.items() if k != SEQUENTIAL_TABLE}
    valid = [f.name for f in dataclasses.fields(Grid) if f.repr]
    unknown = sorted(set(data) - set(valid))
    if unknown:
        hints = [hint for hint in (did_you_mean(key, valid) for key in unknown) if hint]
        raise invalid(
            "grid", "load_grid", "keys among " + ", ".join(valid) + f" (and a [{SEQUENTIAL_TABLE}] table)", unknown,
            " ".join(hints) or None,
        )  # fmt: skip
    return Grid(**dict(data), **extra)
