"""Expensive artefacts of a grid, computed once and reused (in memory, and on disk where it is cheap).

Per dataset × model: the concept-fit texts and their activations ``A``, the LP/EP candidate pool with its
activations and f's predictions (one forward of ``h`` each, saved as ``.npz``), and the activations of
single words used by the top-words interpretation (saved too). Per dataset × model × method × k × seed: the
fitted concept extractor and its interpretations (memory only: seeded, so a resumed run refits the same
extractor). Per dataset × model × seed: the LP/EP selection. Per group of settings: the rendered prompts
(saved as JSON, so that a resumed run asks exactly what it would have asked).

Artefacts live under ``directory`` (by default ``<output>/artefacts``), named by a hash of what they depend
on, so a changed grid never reads a stale one; deleting the folder only costs time.

**A results folder is data, never code.** Nothing here unpickles: arrays are ``.npz`` read with
``allow_pickle=False``, prompts are JSON carrying the SHA-256 of their content. A folder received from someone
else may hold crafted files; the worst they can do is be refused. A file that cannot be read, is truncated,
has other arrays or shapes, or fails its digest is logged and recomputed (then overwritten atomically).

**Why not ``joblib.Memory``.** It would replace the keyed cache below (:meth:`Artefacts._once` and the named
files) with a decorator, but it stores results as pickles and loads them back with ``pickle``: reading a results
folder would then run code. So the cache stays this small: an in-memory dict keyed by what an artefact depends on
(a :class:`ConceptFit` for the concept artefacts), and on disk only ``.npz`` arrays and digest-checked JSON.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, cast

import numpy as np

from xaimetrics._digest import json_digest
from xaimetrics._validation import invalid
from xaimetrics.benchmark._grid import BASELINE_METHOD, ArtefactConfig, Setting
from xaimetrics.consim import CONTROLS, ConSimPrompt, ConSimSamples, Explanation

if TYPE_CHECKING:
    from xaimetrics._protocols import SplitModel
    from xaimetrics._typing import Array
    from xaimetrics.concepts import ConceptExtractor, ConceptInterpretation
    from xaimetrics.consim import RandomWords, SurrogateWords
    from xaimetrics.data import TextDataset
    from xaimetrics.simulators import Simulator

__all__ = ["Artefacts", "ConceptFit", "Providers"]

T = TypeVar("T")

_LOG = logging.getLogger("xaimetrics.benchmark")
#: what a damaged ``.npz`` raises when read (a truncated zip, a garbage member, a pickled array refused)
_NPZ_ERRORS = (OSError, ValueError, KeyError, EOFError, AttributeError, TypeError, zipfile.BadZipFile)

DatasetLoader = Callable[[str], "TextDataset"]  # split -> dataset
ModelFactory = Callable[[str], "SplitModel"]  # dataset name -> split classifier
SimulatorFactory = Callable[[], "Simulator"]
#: a JSON object read from a saved file (its values are checked where they are read)
_Json = dict[str, Any]
#: a group's rendered prompts, each with its setting
SettingPrompts = list[tuple[Setting, ConSimPrompt]]


class _InsideNetwork(Protocol):
    """A classifier split inside the network (``needs_inputs``): its head re-runs the model on the texts."""

    def logits_from_activations(self, activations: Array, texts: list[str]) -> Array: ...


@dataclass(frozen=True)
class ConceptFit:
    """What one fitted concept extractor (or control) depends on: the key of the concept artefacts.

    Example:
        >>> from xaimetrics.benchmark._grid import Setting
        >>> from xaimetrics.consim import PromptSetting
        >>> ConceptFit.of(Setting("rotten_tomatoes", "minilm+", "NMF", 20, "top_words", PromptSetting.parse("E2-a"), 3, "local"))
        ConceptFit(dataset='rotten_tomatoes', model='minilm+', method='NMF', n_concepts=20, seed=3)
    """

    dataset: str
    model: str
    method: str
    n_concepts: int
    seed: int

    @classmethod
    def of(cls, setting: Setting) -> ConceptFit:
        """The concept fit a setting's method shows."""
        return cls(setting.dataset, setting.model, setting.method, setting.n_concepts, setting.seed)


class FitFailed(RuntimeError):
    """A concept extractor could not be fitted on a setting's activations (e.g. ICA on the constant activations
    of a randomised twin). The grid records the settings that need that fit as failed, with this message, and
    runs the others (:func:`xaimetrics.benchmark._group.group_prompts`); the next run tries the fit again."""


def _digest(*parts: object) -> str:
    return json_digest(parts, length=16)


def _numpy(value: Array | Sequence[float]) -> np.ndarray:
    detach = getattr(value, "detach", None)
    if callable(detach):
        value = detach().cpu().numpy()
    return np.asarray(value, dtype=np.float32)


class Providers:
    """How the names of a grid become objects: dataset loaders, model factories and simulator factories.

    Built-in names (offline datasets, ``minilm``/``minilm+``, ``local``/``openai:<model>``/``perfect``) are
    always available; ``datasets``, ``models`` and ``simulators`` add (or override) names. Factories must
    be picklable (module-level functions) for the Ray backend.

    Args:
        datasets: ``{name: loader(split) -> TextDataset}``.
        models: ``{name: factory(dataset_name) -> split classifier}``.
        simulators: ``{name: factory() -> simulator}``.
        progress: show the progress of slow built-in steps (fine-tuning the demo classifier).
    """

    def __init__(
        self,
        datasets: Mapping[str, DatasetLoader] | None = None,
        models: Mapping[str, ModelFactory] | None = None,
        simulators: Mapping[str, SimulatorFactory] | None = None,
        *,
        progress: bool = False,
    ) -> None:
        self.progress = progress
        self.datasets = dict(datasets or {})
        self.models = dict(models or {})
        self.simulators = dict(simulators or {})

    @classmethod
    def load(cls, spec: str | None, *, owner: str, progress: bool = False) -> Providers:
        """The :class:`Providers` object a command line names (``--providers module:attribute``; the attribute
        defaults to ``PROVIDERS``), or the built-in names alone when ``spec`` is ``None``.

        Example:
            >>> Providers.load(None, owner="xaimetrics benchmark run").datasets
            {}
            >>> Providers.load("xaimetrics:nothing", owner="xaimetrics benchmark run")
            Traceback (most recent call last):
            ...
            xaimetrics.exceptions.InvalidParameterError: The '--providers' parameter of xaimetrics benchmark run must be 'module:attribute' of an importable Providers object. Got xaimetrics:nothing. It could not be loaded (module 'xaimetrics' has no attribute 'nothing').
        """
        import importlib

        if spec is None:
            return cls(progress=progress)
        module, _, attribute = spec.partition(":")
        try:
            value = getattr(importlib.import_module(module), attribute or "PROVIDERS")
        except (ImportError, AttributeError) as error:
            raise invalid(
                "--providers", owner, "'module:attribute' of an importable Providers object", spec,
                f"It could not be loaded ({error}).",
            ) from error  # fmt: skip
        if not isinstance(value, Providers):
            raise invalid("--providers", owner, "a Providers object", type(value).__name__)
        return value

    def grid_extras(self) -> dict[str, tuple[str, ...]]:
        """The ``extra_*`` arguments of :class:`~xaimetrics.benchmark.Grid` for the registered names."""
        return {
            "extra_datasets": tuple(self.datasets),
            "extra_models": tuple(self.models),
            "extra_simulators": tuple(self.simulators),
        }

    def load_dataset(self, name: str, split: str, options: Mapping[str, object] | None = None) -> TextDataset:
        """A split of a dataset; ``options`` (the grid's ``text_column`` …) read built-in names' files."""
        if name in self.datasets:
            return self.datasets[name](split)
        from xaimetrics.data import load_dataset

        return load_dataset(name, split, **dict(options or {}))  # type: ignore[arg-type]  # the grid checked them

    def load_model(self, name: str, dataset: str, options: Mapping[str, object] | None = None) -> SplitModel:
        if name in self.models:
            return self.models[name](dataset)
        from xaimetrics.models import load_classifier  # minilm(+), a Hugging Face id or a local directory

        return load_classifier(name, dataset, progress=self.progress, dataset_options=options)


class _WordActivations:
    """``h`` with a memo: TopWords passes every vocabulary word alone; each word is computed once per model."""

    def __init__(self, model: SplitModel, path: Path | None) -> None:
        self.model = model
        self.path = path
        self._lock = threading.Lock()
        self._rows: dict[str, np.ndarray] = {}
        self._dirty = False
        stored = _load_npz(path, ("words", "values"))
        if stored is not None and stored["words"].ndim == 1 and len(stored["words"]) == len(stored["values"]):
            self._rows = dict(zip(stored["words"].tolist(), stored["values"], strict=True))

    def activations(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            missing = sorted({t for t in texts if t not in self._rows})
            if missing:
                values = _numpy(self.model.activations(missing))
                self._rows.update(zip(missing, values, strict=True))
                self._dirty = True
            return np.stack([self._rows[t] for t in texts]) if texts else np.zeros((0, 0), np.float32)

    def save(self) -> None:
        with self._lock:
            if self.path is None or not self._dirty or not self._rows:
                return
            words = sorted(self._rows)
            _atomic_savez(self.path, words=np.array(words), values=np.stack([self._rows[w] for w in words]))
            self._dirty = False


def _atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """Write through a temporary file and rename it (a crash leaves the old file or none, never half a file);
    a failed write raises a :class:`~xaimetrics.exceptions.StoreError` naming the cause."""
    from xaimetrics._writes import write_failure_cause
    from xaimetrics.exceptions import StoreError

    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp{path.suffix}")
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as error:
        tmp.unlink(missing_ok=True)
        raise StoreError(
            f"Could not write the artefact {path}: {write_failure_cause(path, error)}. Nothing was lost: it is "
            "recomputed by the next run."
        ) from error


def _atomic_savez(path: Path, **arrays: np.ndarray) -> None:
    _atomic_write(path, lambda tmp: np.savez(tmp, **arrays))  # type: ignore[arg-type]  # numpy's stub: allow_pickle


def _load_npz(path: Path | None, names: tuple[str, ...]) -> dict[str, np.ndarray] | None:
    """The arrays ``names`` of a saved ``.npz`` (never unpickled); ``None`` when absent, unreadable or
    incomplete (logged: it is recomputed)."""
    if path is None or not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as stored:
            if all(name in stored.files for name in names):
                return {name: stored[name] for name in names}
            problem = f"it lacks {sorted(set(names) - set(stored.files))}"
    except _NPZ_ERRORS as error:
        problem = f"{type(error).__name__}: {error}"
    _LOG.warning("The artefact %s cannot be used (%s); it is recomputed.", path, problem)
    return None


def _prompt_to_json(prompt: ConSimPrompt) -> _Json:
    return {
        "messages": [m.as_dict() for m in prompt.messages], "setting": prompt.label,
        "class_names": list(prompt.class_names),
        "shown_classes": list(prompt.shown_classes), "lp_sample_ids": list(prompt.lp_sample_ids),
        "sample_ids": list(prompt.sample_ids), "references": [int(r) for r in prompt.references],
        "concept_ids": [int(c) for c in prompt.concept_ids], "shared_prefix_chars": prompt.shared_prefix_chars,
    }  # fmt: skip


def _prompt_from_json(data: _Json) -> ConSimPrompt:
    from xaimetrics.consim import PromptSetting
    from xaimetrics.simulators import ChatMessage

    return ConSimPrompt(
        messages=tuple(ChatMessage(str(m["role"]), str(m["content"])) for m in data["messages"]),  # type: ignore[arg-type]  # a role ChatMessage checks
        setting=PromptSetting.parse(str(data["setting"]), owner="the saved prompts"),
        class_names=tuple(map(str, data["class_names"])), shown_classes=tuple(map(str, data["shown_classes"])),
        lp_sample_ids=tuple(map(str, data["lp_sample_ids"])), sample_ids=tuple(map(str, data["sample_ids"])),
        references=tuple(map(int, data["references"])), concept_ids=tuple(map(int, data["concept_ids"])),
        shared_prefix_chars=int(data.get("shared_prefix_chars", 0)),
    )  # fmt: skip


class Artefacts:
    """The artefact store of one grid run (thread-safe; see the module docstring).

    The concept artefacts (:meth:`extractor`, :meth:`control`, :meth:`interpretation`,
    :meth:`global_importances`) are keyed by a :class:`ConceptFit`.

    Args:
        config: what it reads of the grid (:meth:`Grid.artefact_config <xaimetrics.benchmark.Grid.artefact_config>`).
        providers: the :class:`Providers`.
        directory: where artefacts are saved (``None``: memory only).
    """

    def __init__(self, config: ArtefactConfig, providers: Providers, directory: str | Path | None) -> None:
        self.config = config
        self.providers = providers
        self.directory = None if directory is None else Path(directory)
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._memo: dict[tuple[object, ...], object] = {}
        #: what the user should be told once (classes matched by name)
        self.notes: list[str] = []

    def _once(self, key: tuple[object, ...], compute: Callable[[], T]) -> T:
        """``compute()`` once per ``key`` (the artefact's inputs), kept in memory for the run."""
        with self._lock:
            if key not in self._memo:
                self._memo[key] = compute()
            else:
                _LOG.debug("Artefact %s reused.", key[0])
            return cast(T, self._memo[key])

    def _path(self, kind: str, *parts: object, suffix: str) -> Path | None:
        if self.directory is None:
            return None
        return self.directory / f"{kind}-{_digest(*parts)}{suffix}"

    def json_record(self, kind: str, parts: Sequence[object], compute: Callable[[], _Json]) -> _Json:
        """A JSON-able result stored beside the other artefacts under a digest of ``parts`` (everything it depends
        on): read back when present and readable, else computed and written. Data only, never unpickled.

        Example:
            >>> import tempfile
            >>> from xaimetrics.benchmark import Grid
            >>> a = Artefacts(Grid().artefact_config(), Providers(), tempfile.mkdtemp())
            >>> a.json_record("demo", ["x", 1], lambda: {"value": 2.5}), a.json_record("demo", ["x", 1], dict)
            ({'value': 2.5}, {'value': 2.5})
        """
        import json

        path = self._path(kind, *parts, suffix=".json")
        if path is not None and path.is_file():
            try:
                stored = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(stored, dict):
                    return stored
            except (OSError, ValueError):
                _LOG.warning("The artefact %s is unreadable; it is recomputed.", path)
        value = compute()
        if path is not None:
            text = json.dumps(value, allow_nan=True)

            def write(tmp: Path) -> None:
                tmp.write_text(text, encoding="utf-8")

            _atomic_write(path, write)
        return value

    # -- data and model --------------------------------------------------------------------------------------
    def data(self, dataset: str) -> tuple[TextDataset, TextDataset]:
        """(concept-fit texts drawn from train, LP/EP candidate pool drawn from test), fixed seed 0."""

        def load() -> tuple[TextDataset, TextDataset]:
            config = self.config
            train = self.providers.load_dataset(dataset, "train", config.dataset_options)
            test = self.providers.load_dataset(dataset, "test", config.dataset_options)
            fit = train.sample(config.n_fit, seed=0)
            pool = test if config.pool_size is None else test.sample(config.pool_size, seed=0)
            return fit, pool

        return self._once(("data", dataset), load)

    def aligned_data(self, dataset: str, model: str) -> tuple[TextDataset, TextDataset]:
        """:meth:`data` with the labels in ``model``'s class order, matched by name (never by position): the
        same list of classes as is; the same names in another order relabelled (and said so, once); another set
        refused (:func:`~xaimetrics.consim._classes.align_classes`, naming both lists)."""

        def align() -> tuple[TextDataset, TextDataset]:
            from xaimetrics.consim._classes import align_classes

            classes = getattr(self.model(dataset, model), "class_names", None)
            aligned = []
            for texts in self.data(dataset):
                texts, note = align_classes(texts, classes, model=model, dataset=dataset, owner="run_grid")
                aligned.append(texts)
            if note is not None:  # said once, for the pool (the concept-fit texts have the same classes)
                self.notes.append(note)
                _LOG.warning("%s", note)
            return aligned[0], aligned[1]

        return self._once(("aligned", dataset, model), align)

    def data_digests(self, dataset: str) -> dict[str, str]:
        """``{"fit": digest, "pool": digest}`` of the texts, labels and class names loaded for ``dataset``."""
        from xaimetrics.benchmark._inputs import data_digest

        def digest() -> dict[str, str]:
            fit, pool = self.data(dataset)
            return {"fit": data_digest(fit), "pool": data_digest(pool)}

        return self._once(("data_digests", dataset), digest)

    def simulator_identity(self, name: str) -> dict[str, object]:
        """What the simulator ``name`` answers with (``cache_identity()``: server URL without credentials, model,
        sampling), the simulator built as the run builds it."""

        def identify() -> dict[str, object]:
            from xaimetrics.simulators import make_simulator
            from xaimetrics.simulators._response_cache import _identity

            simulator = make_simulator(
                name, base_url=self.config.base_url, concurrency=self.config.concurrency, provided=self.providers.simulators,
                owner="run_grid", argument="simulators",
            )  # fmt: skip
            return _identity(simulator)

        return self._once(("simulator_identity", name), identify)

    def inputs(self, setting: Setting) -> dict[str, object]:
        """Everything beside its own fields that ``setting``'s row is computed from
        (:func:`~xaimetrics.benchmark._inputs.setting_inputs`)."""
        from xaimetrics.benchmark._inputs import setting_inputs

        return setting_inputs(
            self.config, setting, data=self.data_digests(setting.dataset),
            model=self.model_id(setting.dataset, setting.model), simulator=self.simulator_identity(setting.simulator),
        )  # fmt: skip

    def fingerprinted(self, settings: Sequence[Setting]) -> list[Setting]:
        """``settings`` with their :attr:`~xaimetrics.benchmark.Setting.inputs` fingerprint set (loads the data and
        the models, and hashes their content once)."""
        import dataclasses

        from xaimetrics.benchmark._inputs import input_fingerprint

        return [dataclasses.replace(s, inputs=input_fingerprint(self.inputs(s))) for s in settings]

    def model(self, dataset: str, model: str) -> SplitModel:
        def load() -> SplitModel:
            loaded = self.providers.load_model(model, dataset, self.config.dataset_options)
            layer = self.config.layers.get(model)
            if layer is None:
                return loaded
            with_layer = getattr(loaded, "with_layer", None)
            if with_layer is None:
                raise invalid(
                    "layers", "Grid", "keys among transformers models (a SplitClassifier has layers to choose)",
                    model, f"{type(loaded).__name__} has no transformer layers: leave {model!r} out of 'layers'.",
                )  # fmt: skip
            return cast("SplitModel", with_layer(layer, owner="Grid", argument=f"layers.{model}"))

        return self._once(("model", dataset, model), load)

    def twin_model(self, dataset: str, model: str, twin: str, seed: int) -> SplitModel:
        """The randomised twin of ``model`` (:func:`~xaimetrics.models.randomized_copy` with the layers of
        ``twin`` and ``seed``), kept in memory for the run (re-drawn identically by a resumed run)."""

        def draw() -> SplitModel:
            from xaimetrics.benchmark._twins import parse_twin
            from xaimetrics.models import randomized_copy

            layers, n_top = parse_twin(twin)
            return randomized_copy(self.model(dataset, model), layers, n_top=n_top, seed=seed)  # type: ignore[arg-type]

        return self._once(("twin_model", dataset, model, twin, seed), draw)

    def classifier(self, fit: ConceptFit) -> SplitModel:
        """The classifier a concept fit explains: the trained one, or a twin's randomised copy."""
        from xaimetrics.benchmark._twins import split_twin

        twin = split_twin(fit.method)[1]
        if twin is None:
            return self.model(fit.dataset, fit.model)
        return self.twin_model(fit.dataset, fit.model, twin, self._twin_seed(fit))

    def _twin_seed(self, fit: ConceptFit) -> int:
        """The seed a twin is drawn with: the grid's ``twin_seed``, else the setting's seed."""
        return fit.seed if self.config.twin_seed is None else self.config.twin_seed

    def fit_activations(self, fit: ConceptFit) -> np.ndarray:
        """The concept-fit activations of :meth:`classifier` (a twin's are computed once, in memory)."""
        return self._texts_activations(fit, "fit")

    def pool_activations(self, fit: ConceptFit) -> np.ndarray:
        """The LP/EP pool's activations under :meth:`classifier` (the texts per-concept scorers draw from; a
        twin's are computed once, in memory)."""
        return self._texts_activations(fit, "pool")

    def _texts_activations(self, fit: ConceptFit, part: Literal["fit", "pool"]) -> np.ndarray:
        from xaimetrics.benchmark._twins import split_twin

        twin = split_twin(fit.method)[1]
        if twin is None:
            return self.activations(fit.dataset, fit.model)[part]

        def compute() -> np.ndarray:
            texts = self.data(fit.dataset)[0 if part == "fit" else 1]
            return _numpy(self.classifier(fit).activations(list(texts.texts)))

        kind = "twin_activations" if part == "fit" else "twin_pool"
        return self._once((kind, fit.dataset, fit.model, twin, self._twin_seed(fit)), compute)

    def importance_inputs(self, fit: ConceptFit) -> np.ndarray | list[str]:
        """What ``Φ`` is averaged over: the concept-fit activations, or the concept-fit texts when the classifier
        is split inside the network (``needs_inputs``, a grid ``layers`` entry: g re-runs it on the texts)."""
        if getattr(self.classifier(fit), "needs_inputs", False):
            return list(self.data(fit.dataset)[0].texts)
        return self.fit_activations(fit)

    def model_id(self, dataset: str, model: str) -> str:
        """What identifies the model: :func:`~xaimetrics.benchmark._inputs.model_digest` (weights, config,
        class names, metadata), so that artefacts of a retrained or replaced model are never reused."""

        def identify() -> str:
            from xaimetrics.benchmark._inputs import model_digest

            return _digest(model, dataset, model_digest(self.model(dataset, model)))

        return self._once(("model_id", dataset, model), identify)

    def activations(self, dataset: str, model: str) -> dict[str, np.ndarray]:
        """``{"fit": A_fit, "pool": A_pool, "predictions": f(pool), "fit_predictions": f(fit)}`` (one forward
        each, saved as .npz)."""

        def compute() -> dict[str, np.ndarray]:
            fit, pool = self.data(dataset)
            path = self._path(
                "activations",
                dataset,
                self.model_id(dataset, model),
                self.data_digests(dataset),
                suffix=".npz",
            )  # the content of the texts, not their file's name: a changed file is never read as the old one
            stored = _load_npz(path, ("fit", "pool", "predictions", "fit_predictions"))
            if stored is not None and _shapes_fit(stored, len(fit), len(pool)):
                return stored
            classifier = self.model(dataset, model)
            a_fit = _numpy(classifier.activations(list(fit.texts)))
            a_pool = _numpy(classifier.activations(list(pool.texts)))

            def predict(activations: np.ndarray, texts: Sequence[str]) -> np.ndarray:
                # inside the network (a grid `layers` entry) g re-runs the model on the texts
                logits: Array
                if getattr(classifier, "needs_inputs", False):
                    inside = cast("_InsideNetwork", classifier)
                    logits = inside.logits_from_activations(_torch_like(activations), list(texts))
                else:
                    logits = classifier.logits_from_activations(_torch_like(activations))
                predictions: np.ndarray = _numpy(logits).argmax(axis=1).astype(np.int64)
                return predictions

            arrays = {
                "fit": a_fit,
                "pool": a_pool,
                "predictions": predict(a_pool, pool.texts),
                "fit_predictions": predict(a_fit, fit.texts),
            }
            if path is not None:
                _atomic_savez(path, **arrays)
            return arrays

        return self._once(("activations", dataset, model), compute)

    def words(self, dataset: str, model: str) -> _WordActivations:
        return self._once(
            ("words", dataset, model),
            lambda: _WordActivations(
                self.model(dataset, model),
                self._path("words", dataset, self.model_id(dataset, model), suffix=".npz"),
            ),
        )

    def samples(self, dataset: str, model: str, seed: int) -> ConSimSamples:
        """The LP/EP selection of a seed (:func:`xaimetrics.consim.select_examples`)."""

        def select() -> ConSimSamples:
            from xaimetrics.consim import select_examples

            _, pool = self.aligned_data(dataset, model)
            arrays = self.activations(dataset, model)
            return select_examples(
                list(pool.texts), pool.labels, arrays["predictions"], n_lp=self.config.n_lp, n_ep=self.config.n_ep,
                seed=seed, balance=self.config.balance, class_names=list(pool.class_names),  # type: ignore[arg-type]
            )  # fmt: skip

        return self._once(("samples", dataset, model, seed), select)

    def _prompts_path(self, settings: Sequence[Setting]) -> Path | None:
        g = self.config
        return self._path(
            "prompts", sorted(s.key for s in settings), self.model_id(settings[0].dataset, settings[0].model),
            g.n_lp, g.n_ep, g.n_fit, g.pool_size, g.max_sample_chars, g.balance, g.options(settings[0].method),
            suffix=".json",
        )  # fmt: skip

    def stored_prompts(self, settings: Sequence[Setting]) -> SettingPrompts | None:
        """The rendered prompts of a group of settings saved by :meth:`store_prompts` (``None``: not saved, or
        a file that is unreadable, truncated, for other settings or failing its digest — then it is rebuilt)."""
        path = self._prompts_path(settings)
        if path is None or not path.is_file():
            return None
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
            entries = saved["prompts"]
            if saved.get("sha256") != json_digest(entries):
                raise ValueError("its content does not match its SHA-256 digest")
            by_key = {entry["key"]: _prompt_from_json(entry["prompt"]) for entry in entries}
            prompts = [(setting, by_key[setting.key]) for setting in settings]
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            _LOG.warning("The saved prompts %s cannot be used (%s); they are rebuilt.", path, error)
            return None
        _LOG.debug("Prompts of %d settings read from %s.", len(prompts), path)
        return prompts

    def store_prompts(self, settings: Sequence[Setting], prompts: SettingPrompts) -> None:
        """Save a group's rendered prompts (JSON with their digest), so that a resumed run reuses them; prompts
        that JSON cannot carry exactly (a custom prompt type) are not saved."""
        path = self._prompts_path(settings)
        if path is None:
            return
        try:
            entries: list[_Json] = [
                {"key": setting.key, "prompt": _prompt_to_json(prompt)} for setting, prompt in prompts
            ]
            if any(_prompt_from_json(e["prompt"]) != p for e, (_, p) in zip(entries, prompts, strict=True)):
                return
        except (ValueError, KeyError, TypeError, AttributeError):
            return
        text = json.dumps(
            {"format": 1, "sha256": json_digest(entries), "prompts": entries}, ensure_ascii=False
        )

        def write(tmp: Path) -> None:
            tmp.write_text(text, encoding="utf-8")

        _atomic_write(path, write)

    # -- concepts (keyed by a ConceptFit) --------------------------------------------------------------------
    def extractor(self, fit: ConceptFit) -> ConceptExtractor:
        """The concept extractor fitted on the concept-fit activations (kept in memory; seeded, so a resumed
        run fits the same one: extractors are never saved as pickles, which would run code when read)."""

        def compute() -> ConceptExtractor:
            from xaimetrics.benchmark._twins import split_twin
            from xaimetrics.concepts import make_extractor

            options = cast("dict[str, Any]", self.config.options(fit.method))  # its keywords
            method = split_twin(fit.method)[0]  # a twin fits its method's extractor
            extractor = make_extractor(method, fit.n_concepts, random_state=fit.seed, **options)
            activations = self.fit_activations(fit)
            try:
                return extractor.fit(activations[fit_rows(len(activations), fit.seed, self.config.fit_draw)])
            except (MemoryError, OSError):  # the machine, not the fit
                raise
            except Exception as error:  # whatever the extractor raises on these activations
                raise FitFailed(
                    f"{fit.method} could not be fitted on the activations of {fit.model} ({fit.n_concepts} concepts, "
                    f"seed {fit.seed}): {type(error).__name__}: {error}"
                ) from error

        return self._once(("fit", fit), compute)

    def control(self, fit: ConceptFit) -> SurrogateWords | RandomWords:
        """A control (``SurrogateWords`` fitted to f's predictions on the concept-fit texts, or ``RandomWords``)."""

        def compute() -> SurrogateWords | RandomWords:
            from xaimetrics.consim import make_control

            texts, _ = self.aligned_data(fit.dataset, fit.model)
            predictions = self.activations(fit.dataset, fit.model)["fit_predictions"]
            control = make_control(fit.method, fit.n_concepts, fit.seed, **self.config.options(fit.method))
            return control.fit(list(texts.texts), predictions, n_classes=len(texts.class_names))

        return self._once(("control", fit), compute)

    def interpretation(
        self, fit: ConceptFit, kind: str, simulator: Simulator | None = None, simulator_name: str = ""
    ) -> dict[int, ConceptInterpretation]:
        """``top_words`` (CMAW, eq. 1) or ``llm_labels`` (o1CA, eq. 2, asked to ``simulator``), by
        :func:`xaimetrics.consim.interpret_concepts` with its defaults (those of ``xaimetrics consim``)."""
        from xaimetrics.consim import INTERPRETATIONS

        entry = INTERPRETATIONS.get(kind)

        def interpret() -> dict[int, ConceptInterpretation]:
            from xaimetrics.benchmark._twins import split_twin
            from xaimetrics.consim import interpret_concepts

            texts, _ = self.aligned_data(fit.dataset, fit.model)
            extractor = self.extractor(fit)
            if entry.encodes_words:
                twin = split_twin(fit.method)[1]
                words = self.words(fit.dataset, fit.model) if twin is None else self._twin_words(fit, twin)
                interpretation = interpret_concepts(kind, texts.texts, model=words, extractor=extractor)
                words.save()
                return interpretation
            return interpret_concepts(
                kind, texts.texts, model=self.classifier(fit), extractor=extractor,
                simulator=simulator, class_names=list(texts.class_names), seed=fit.seed,
            )  # fmt: skip

        return self._once(
            ("interpretation", fit, kind, simulator_name if entry.asks_simulator else ""), interpret
        )

    def _twin_words(self, fit: ConceptFit, twin: str) -> _WordActivations:
        """The word activations of a twin's classifier (memory only: a twin is re-drawn by every run)."""
        classifier = self.classifier(fit)
        return self._once(
            ("twin_words", fit.dataset, fit.model, twin, self._twin_seed(fit)),
            lambda: _WordActivations(classifier, None),
        )

    def global_importances(self, fit: ConceptFit) -> Array:
        """``Φ`` (eq. 4) of a fitted extractor on the concept-fit activations, computed once for every
        interpretation and prompt type of the method."""

        def compute() -> Array:
            from xaimetrics.consim import global_importances_of

            _, pool = self.aligned_data(fit.dataset, fit.model)
            return global_importances_of(
                self.classifier(fit), self.extractor(fit), self.importance_inputs(fit), len(pool.class_names),
            )  # fmt: skip

        return self._once(("global_importances", fit), compute)

    def explanation(self, setting: Setting, simulator: Simulator | None = None) -> Explanation:
        """The :class:`~xaimetrics.consim.Explanation` a setting's method shows: none for the baseline; a
        control's words and importances (for the seed's samples); or a concept method's extractor,
        interpretation (``llm_labels`` asks ``simulator``), activations and ``Φ`` (ConSim adds the local
        importances of the samples)."""
        if setting.method == BASELINE_METHOD:
            return Explanation()
        fit = ConceptFit.of(setting)
        if setting.method in CONTROLS.names():
            samples = self.samples(setting.dataset, setting.model, setting.seed)
            return self.control(fit).explanation(samples.lp_texts, samples.ep_texts)
        return Explanation(
            extractor=self.extractor(fit),
            interpretation=self.interpretation(fit, setting.interpretation, simulator, setting.simulator),
            activations=self.importance_inputs(fit),
            global_importances=self.global_importances(fit),
        )


def fit_rows(n: int, seed: int, draw: str) -> np.ndarray:
    """The rows of the ``n`` concept-fit texts a seed's concepts are fitted on: all of them (``"fixed"``) or a
    bootstrap draw seeded by ``seed`` (``"bootstrap"``, :attr:`Grid.fit_draw`), sorted.

    Example:
        >>> fit_rows(5, 0, "fixed").tolist(), len(fit_rows(5, 0, "bootstrap")), bool((fit_rows(5, 1, "bootstrap") < 5).all())
        ([0, 1, 2, 3, 4], 5, True)
    """
    if draw == "fixed":
        return np.arange(n)
    # a stream of its own (not the selection's seed stream), the same at every resumed run
    return np.sort(np.random.default_rng([seed, 0xF17]).integers(0, n, size=n))


def _shapes_fit(arrays: Mapping[str, np.ndarray], n_fit: int, n_pool: int) -> bool:
    """Whether saved activations have the rows of the texts they stand for (a damaged file is recomputed)."""
    ok = (
        arrays["fit"].ndim == 2 and arrays["pool"].ndim == 2 and len(arrays["fit"]) == n_fit
        and len(arrays["pool"]) == n_pool and arrays["predictions"].shape == (n_pool,)
        and arrays["fit_predictions"].shape == (n_fit,)
    )  # fmt: skip
    if not ok:
        _LOG.warning("Saved activations do not match the %d + %d texts; they are recomputed.", n_fit, n_pool)
    return ok


def _torch_like(array: np.ndarray) -> Array:
    """Activations as the classifier's head expects them (torch for torch models)."""
    try:
        import torch
    except ImportError:  # pragma: no cover
        return array
    return torch.as_tensor(array)
