"""What a grid row is computed from, beyond its setting's own fields: its *inputs fingerprint*.

A stored row may be reused only if it was computed from exactly the inputs the current run would use. The
setting's fields (dataset and model names, method, number of concepts, prompt, seed, simulator, phase, scoring)
are its key already; everything else that can change the row goes into :func:`setting_inputs`, whose digest
(:func:`input_fingerprint`) is part of the store key (:attr:`Setting.inputs <xaimetrics.benchmark._grid.Setting>`):

- the data: the content of the concept-fit texts and of the LP/EP pool as loaded (texts, labels, class names),
  so the file's content, its columns, encoding and reading options, ``n_fit`` and ``pool_size`` all count, and
  only where they change what was read (the baseline does not read the concept-fit texts);
- the model: a digest of its weights (every tensor of its ``state_dict``), config, class names and metadata
  (:func:`model_digest`);
- the selection (``n_lp``, ``n_ep``, ``balance``) and the prompt options (``max_sample_chars``,
  ``prompt_layout``: recorded only when it is not the paper's, so older stores keep their keys);
- the method's extractor options (only that method's rows);
- a randomised twin's ``twin_seed`` when the grid sets one (the twin's rows only);
- the simulator: its ``cache_identity()`` (server URL *without* credentials or query, model, sampling), the
  same description its response cache keys on. API keys are never part of it.

A changed input gives new keys, so exactly the affected settings are computed again; the stored rows they replace
are marked *superseded* in the store and are no longer read by reports and exports (:func:`setting_identity`
says which stored row a setting replaces). Grid fields that cannot change a row are listed in
:data:`RUN_ONLY_FIELDS`; a test checks that every other field changes a key or a fingerprint.

Classes are matched by name (:func:`xaimetrics.consim._classes.align_classes`), before the fingerprint is taken.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from xaimetrics._digest import canonical_json, json_digest, update_with_texts
from xaimetrics._model_identity import model_digest

if TYPE_CHECKING:
    from xaimetrics.benchmark._concept_row import ConceptSetting
    from xaimetrics.benchmark._grid import ArtefactConfig, Setting
    from xaimetrics.data import TextDataset

__all__ = [
    "RUN_ONLY_FIELDS",
    "changed_inputs",
    "concept_inputs",
    "data_digest",
    "input_fingerprint",
    "model_digest",
    "setting_identity",
    "setting_inputs",
]

#: grid fields that never change a row: how many calls run at once, how long a local model's call may take
#: (a call past it fails and is not stored), and the names registered by the runner (what they stand for is
#: fingerprinted through the data, the model and the simulator)
RUN_ONLY_FIELDS = ("concurrency", "call_timeout", "extra_datasets", "extra_models", "extra_simulators")


def data_digest(dataset: TextDataset) -> str:
    """The digest of a loaded dataset's content: texts, labels and class names (16 hex characters).

    Example:
        >>> import numpy as np
        >>> from xaimetrics.data import TextDataset
        >>> a = TextDataset(["good", "bad"], np.array([1, 0]), ["negative", "positive"])
        >>> b = TextDataset(["good", "bad"], np.array([1, 1]), ["negative", "positive"])
        >>> data_digest(a) == data_digest(a.subset([0, 1])), data_digest(a) == data_digest(b)
        (True, False)
    """
    digest = hashlib.sha256(canonical_json([str(c) for c in dataset.class_names]).encode())
    digest.update(np.ascontiguousarray(dataset.labels, dtype=np.int64).tobytes())
    return update_with_texts(digest, dataset.texts).hexdigest()[:16]


def setting_inputs(
    config: ArtefactConfig,
    setting: Setting,
    *,
    data: Mapping[str, str],
    model: str,
    simulator: Mapping[str, object],
) -> dict[str, object]:
    """Everything beside its own fields that can change ``setting``'s row (see the module docstring).

    Args:
        config: what the run reads of the grid the setting belongs to (:meth:`Grid.artefact_config`).
        setting: the setting.
        data: ``{"fit": digest, "pool": digest}`` of the setting's dataset (:func:`data_digest`).
        model: :func:`model_digest` of the setting's model on that dataset.
        simulator: the simulator's ``cache_identity()`` (no credentials).

    Example:
        >>> from xaimetrics.benchmark import Grid
        >>> from xaimetrics.benchmark._grid import Setting
        >>> from xaimetrics.consim import PromptSetting
        >>> grid = Grid(methods=("PCA", "NoExplanation"), simulators=("perfect",))
        >>> s = Setting("rotten_tomatoes", "minilm+", "NoExplanation", 0, "", PromptSetting.parse("NE1"), 0, "perfect")
        >>> sorted(setting_inputs(grid.artefact_config(), s, data={"fit": "a", "pool": "b"}, model="m", simulator={}))
        ['model', 'pool', 'prompt', 'selection', 'simulator']
    """
    from xaimetrics.benchmark._grid import BASELINE_METHOD
    from xaimetrics.benchmark._twins import TWIN_SEPARATOR

    inputs: dict[str, object] = {
        "pool": data["pool"],
        "model": model,
        "selection": {"n_lp": config.n_lp, "n_ep": config.n_ep, "balance": config.balance},
        "prompt": {
            "max_sample_chars": config.max_sample_chars,
            # the paper's layout adds nothing, so the keys of stores written before the option stay valid
            **({} if config.prompt_layout == "paper" else {"layout": config.prompt_layout}),
        },
        "simulator": dict(simulator),
    }
    if setting.method != BASELINE_METHOD:  # concepts and controls are fitted on the concept-fit texts
        inputs["fit"] = data["fit"]
        inputs["method"] = config.options(setting.method)
        inputs["fit_draw"] = config.fit_draw
    if (
        config.twin_seed is not None and TWIN_SEPARATOR in setting.method
    ):  # one twin for the grid, drawn with it
        inputs["twin_seed"] = config.twin_seed
    return inputs


def concept_inputs(
    config: ArtefactConfig,
    setting: ConceptSetting,
    *,
    data: Mapping[str, str],
    model: str,
    reader: Mapping[str, object],
    options: Mapping[str, object],
) -> dict[str, object]:
    """Everything beside its own fields that a per-concept row (``Grid.detection``) is computed from: the fit and
    pool texts, the model, the method's options and fit draw (a twin's ``twin_seed``), the reader's identity (no
    credentials) and the scorer's options (texts drawn per concept, texts per intruder trial, prompt).

    Example:
        >>> from xaimetrics.benchmark import Grid
        >>> from xaimetrics.benchmark._concept_row import ConceptSetting
        >>> grid = Grid(methods=("PCA",), prompt_types=("E1",), simulators=("lexical",), detection=("intruder",))
        >>> s = ConceptSetting("rotten_tomatoes", "minilm+", "PCA", 20, "", 0, "lexical", "intruder")
        >>> sorted(concept_inputs(grid.artefact_config(), s, data={"fit": "a", "pool": "b"}, model="m", reader={}, options={}))
        ['fit', 'fit_draw', 'method', 'model', 'pool', 'reader', 'scorer']
    """
    from xaimetrics.benchmark._twins import TWIN_SEPARATOR

    inputs: dict[str, object] = {
        "pool": data["pool"], "fit": data["fit"], "model": model, "method": config.options(setting.method),
        "fit_draw": config.fit_draw, "reader": dict(reader), "scorer": dict(options),
    }  # fmt: skip
    if config.twin_seed is not None and TWIN_SEPARATOR in setting.method:
        inputs["twin_seed"] = config.twin_seed
    return inputs


def input_fingerprint(inputs: Mapping[str, object]) -> str:
    """The fingerprint of :func:`setting_inputs` (16 hex characters), part of the setting's store key.

    Example:
        >>> input_fingerprint({"model": "m", "pool": "p"}) == input_fingerprint({"pool": "p", "model": "m"})
        True
    """
    return json_digest(dict(inputs), length=16)


def setting_identity(params: Mapping[str, object], *, n_concepts: bool | None = None) -> str:
    """What a setting *is*, whatever its inputs: a row with the same identity and another key was computed from
    other inputs and is superseded by the current one.

    ``params`` are :meth:`Setting.params` or a stored row. The number of concepts of an evaluation setting is left
    out (one per method: a changed ``n_concepts`` supersedes the rows of the old number); validation settings
    keep it (every candidate is a setting). ``n_concepts=True`` keeps it in any phase (the setting whatever its
    inputs fingerprint).

    Example:
        >>> row = {"dataset": "d", "model": "m", "method": "PCA", "n_concepts": 3, "interpretation": "top_words",
        ...        "prompt_type": "E1", "anonymized": 0, "seed": 0, "simulator": "s", "phase": "evaluation"}
        >>> setting_identity(row) == setting_identity({**row, "n_concepts": 5, "anonymized": False, "inputs": "x"})
        True
    """
    phase = str(params.get("phase", "evaluation"))
    keep = phase != "evaluation" if n_concepts is None else n_concepts
    return json_digest([
        str(params["dataset"]), str(params["model"]), str(params["method"]),
        int(params["n_concepts"]) if keep else None,  # type: ignore[call-overload]
        str(params["interpretation"] or ""), str(params["prompt_type"]), bool(params["anonymized"]),
        int(params["seed"]), str(params["simulator"]), phase,  # type: ignore[call-overload]
        str(params.get("scoring") or "accuracy"),
    ], length=32)  # fmt: skip


def changed_inputs(before: Mapping[str, object], now: Mapping[str, object]) -> list[str]:
    """The names whose recorded value differs (names recorded on one side only are not compared).

    Example:
        >>> changed_inputs({"n_lp": 20, "data 'a.csv'": "x", "n_ep": 20}, {"n_lp": 10, "data 'a.csv'": "y"})
        ["data 'a.csv'", 'n_lp']
    """
    return sorted(
        name for name in set(before) & set(now) if canonical_json(before[name]) != canonical_json(now[name])
    )
