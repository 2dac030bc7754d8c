"""The per-concept phase of a grid run (``Grid.detection``): each concept of the fits the ConSim settings show,
scored by the detection family's scorers, one :class:`~xaimetrics.benchmark.ConceptRow` per concept × scorer ×
reader in the same store file (its ``concept_results`` table).

It runs inside :func:`~xaimetrics.benchmark.run_grid`, after the ConSim settings, under the same lock: the fits come
from the run's :class:`~xaimetrics.benchmark.Artefacts` (the extractor and top words the explanations show, a twin's
on its randomised classifier), the keys hold every input (:func:`~xaimetrics.benchmark._inputs.concept_inputs`), a
concept whose row is stored is never asked again, a concept whose reader calls failed is counted and logged but
never stored (the next run asks it again), a failed write stops the run (a :class:`StoreError`), and Ctrl-C stops it
at once (:class:`~xaimetrics.benchmark.RunInterrupted`; the concept in flight is asked again by the next run).
Rows whose setting was computed from other inputs are marked superseded, as the settings' rows are.

Which concepts: those with words (the concepts a ConSim explanation can show), the same for every scorer.
Scorer options are the detection family's defaults (:data:`SCORER_OPTIONS`), part of every key.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, cast

import numpy as np

from xaimetrics.benchmark._artefacts import Artefacts, ConceptFit
from xaimetrics.benchmark._concept_row import EMBEDDING_READER, ConceptRow, ConceptSetting
from xaimetrics.benchmark._store import ResultsStore
from xaimetrics.exceptions import StoreError

if TYPE_CHECKING:
    from xaimetrics.concepts import ConceptInterpretation
    from xaimetrics.simulators import Simulator

__all__ = ["SCORER_OPTIONS", "fingerprint_concepts", "run_concept_phase"]

_LOG = logging.getLogger("xaimetrics.benchmark")
#: the lexical reader's grid name: per-concept prompts are read by the detection word reader
LEXICAL = "lexical"
#: what each scorer draws and shows (the detection family's defaults); part of the rows' keys
SCORER_OPTIONS: dict[str, dict[str, object]] = {
    "detection": {"n_top": 10, "n_quantile": 10, "n_random": 10, "n_hard": 10, "max_chars": 300, "prompt": "words",
                  "shuffled": True},
    "intruder": {"n_top": 10, "n_quantile": 10, "n_random": 10, "n_hard": 10, "max_chars": 300, "n_shown": 5,
                 "describe": True, "shuffled": True},
    "embedding": {"n_top": 10, "n_quantile": 10, "n_random": 10, "n_hard": 10, "encoder": "minilm"},
}  # fmt: skip


def _reader_identity(artefacts: Artefacts, reader: str) -> dict[str, object]:
    if reader == EMBEDDING_READER:
        return {"encoder": "minilm"}
    if reader == LEXICAL:
        from xaimetrics.detection import WordOverlapReader

        return WordOverlapReader().cache_identity()
    return artefacts.simulator_identity(reader)


def fingerprint_concepts(artefacts: Artefacts, settings: list[ConceptSetting]) -> list[ConceptSetting]:
    """``settings`` with their inputs fingerprint set (:func:`~xaimetrics.benchmark._inputs.concept_inputs`)."""
    from xaimetrics.benchmark._inputs import concept_inputs, input_fingerprint

    out = []
    for s in settings:
        inputs = concept_inputs(
            artefacts.config, s, data=artefacts.data_digests(s.dataset), model=artefacts.model_id(s.dataset, s.model),
            reader=_reader_identity(artefacts, s.reader), options=SCORER_OPTIONS[s.scorer],
        )  # fmt: skip
        out.append(dataclasses.replace(s, inputs=input_fingerprint(inputs)))
    return out


@dataclasses.dataclass
class ConceptCounts:
    """What the per-concept phase did: concepts stored before, scored now, failed (not stored), left out (no
    texts to draw), and the reader answers it asked for."""

    total: int = 0
    skipped: int = 0
    completed: int = 0
    failed: int = 0
    left_out: int = 0
    answers: int = 0

    def as_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


def _supersede(store: ResultsStore, settings: list[ConceptSetting]) -> int:
    """Mark superseded the stored concept rows of these settings computed from other inputs (same setting and
    concept, another key), and no longer superseded those computed from exactly these; how many were newly
    superseded."""
    current = {_identity(s.params()): s for s in settings}

    def expected_key(row: Mapping[str, object]) -> str | None:
        setting = current.get(_identity(row))
        return None if setting is None else setting.key(int(str(row["concept"])))

    return store.supersede(expected_key)


def _identity(params: Mapping[str, object]) -> str:
    """What a concept group *is*, whatever its inputs."""
    from xaimetrics._digest import json_digest

    names = [f.name for f in dataclasses.fields(ConceptSetting) if f.name != "inputs"]
    return json_digest([str(params[n]) for n in names], length=32)


def run_concept_phase(
    artefacts: Artefacts,
    store: ResultsStore,
    settings: list[ConceptSetting],
    make_reader: Callable[[str], Simulator],
    counts: ConceptCounts,
    errors: list[str],
) -> int:
    """Score every concept of ``settings`` (fingerprinted) not yet in ``store`` (a ``ConceptRow`` store); the
    number of stored rows newly superseded. ``make_reader(name)`` builds a grid simulator."""
    superseded = _supersede(store, settings)
    done = store.keys()
    readers: dict[str, Simulator] = {}
    for setting in settings:
        fit = ConceptFit(setting.dataset, setting.model, setting.method, setting.n_concepts, setting.seed)
        interpretations = artefacts.interpretation(fit, "top_words")
        from xaimetrics.detection._detection import describe_or_none

        words = {c: describe_or_none(i) for c, i in interpretations.items()}
        concepts = sorted(c for c, w in words.items() if w is not None)
        counts.total += len(concepts)
        todo = [c for c in concepts if setting.key(c) not in done]
        counts.skipped += len(concepts) - len(todo)
        if not todo:
            continue
        if setting.reader not in readers and setting.scorer != "embedding":
            readers[setting.reader] = _reader(setting.reader, make_reader)
        _LOG.info("per-concept %s: %s seed %d, reader %s: %d concept(s)", setting.scorer, setting.method,
                  setting.seed, setting.reader, len(todo))  # fmt: skip
        shown = {c: ", ".join(w[0]) for c, w in words.items() if w is not None}
        try:
            _score(artefacts, store, setting, fit, interpretations, todo, readers.get(setting.reader), shown, counts,
                   errors)  # fmt: skip
        except StoreError:  # a failed write stops the run
            raise
        except Exception as error:  # a reader that raises: its concepts are failed, never scored
            stored = store.keys()
            missed = [c for c in todo if setting.key(c) not in stored]
            counts.failed += len(missed)
            errors.append(f"{setting.scorer} {setting.method} seed {setting.seed}, reader {setting.reader}: "
                          f"{len(missed)} concept(s) failed: {type(error).__name__}: {error}")  # fmt: skip
            _LOG.info("concepts failed, not stored (the next run asks them again): %s", errors[-1])
    return superseded


def _reader(name: str, make_reader: Callable[[str], Simulator]) -> Simulator:
    if name == LEXICAL:
        from xaimetrics.detection import WordOverlapReader

        return WordOverlapReader()
    return make_reader(name)


def _score(
    artefacts: Artefacts, store: ResultsStore, setting: ConceptSetting, fit: ConceptFit,
    interpretations: dict[int, ConceptInterpretation],
    todo: list[int], reader: Simulator | None, words: dict[int, str], counts: ConceptCounts, errors: list[str],
) -> None:  # fmt: skip
    """Score ``todo`` with the setting's scorer; store each concept as it finishes."""
    from xaimetrics.detection import Detection, ExampleEmbedding, Intruder

    _, pool = artefacts.data(setting.dataset)
    texts = list(pool.texts)
    embeddings = artefacts.pool_activations(fit)
    U = np.asarray(artefacts.extractor(fit).encode(embeddings), dtype=np.float64)
    options = dict(SCORER_OPTIONS[setting.scorer])
    counts_of = {k: options.pop(k) for k in ("n_top", "n_quantile", "n_random", "n_hard")}

    def store_rows(concept: int, rows: list[dict[str, object]], answers: list[dict[str, object]]) -> None:
        payload = {"setting": {**setting.params(), "concept": concept}, "rows": rows, "answers": answers}
        store.add(
            setting.key(concept), ConceptRow.of(setting, concept, rows, words.get(concept, "")), payload
        )
        counts.completed += 1
        counts.answers += len(answers)

    def fail(concept: int, reason: str, answers: list[dict[str, object]]) -> None:
        counts.failed += 1
        counts.answers += len(answers)
        errors.append(f"{setting.scorer} {setting.method} seed {setting.seed} concept {concept}: {reason}")
        _LOG.info("concept failed, not stored (the next run asks it again): %s", errors[-1])

    result = None
    if setting.scorer == "detection":
        try:
            result = Detection(
                cast("Simulator", reader), prompt=str(options["prompt"]), max_chars=int(options["max_chars"]),  # type: ignore[arg-type,call-overload]
                shuffled=bool(options["shuffled"]), seed=setting.seed, **counts_of,  # type: ignore[arg-type]
            ).evaluate(U, texts, interpretations, embeddings=embeddings, concept_ids=todo, on_concept=store_rows,
                       on_failure=fail)  # fmt: skip
        except ValueError as error:  # fewer than two concepts with words: no shuffled control
            counts.left_out += len(todo)
            errors.append(f"detection {setting.method} seed {setting.seed}: left out ({error})")
    elif setting.scorer == "intruder":
        intruder = Intruder(
            cast("Simulator", reader), n_shown=int(options["n_shown"]), max_chars=int(options["max_chars"]),  # type: ignore[call-overload]
            describe=bool(options["describe"]), shuffled=bool(options["shuffled"]), seed=setting.seed, **counts_of,  # type: ignore[arg-type]
        )  # fmt: skip
        for concept in todo:  # one at a time: each concept is stored as soon as it is scored
            one = intruder.evaluate(U, texts, interpretations, embeddings=embeddings, concept_ids=[concept])
            counts.left_out += len(one.skipped)
            for failed, reason in one.failed.items():
                fail(failed, reason, [a for a in one.answers if a["concept"] == failed])
            if one.rows:
                store_rows(concept, one.rows, one.answers)
    else:
        result = ExampleEmbedding(seed=setting.seed, **counts_of).evaluate(  # type: ignore[arg-type]
            U, texts, embeddings=embeddings, concept_ids=todo
        )
        for concept in todo:
            rows = [r for r in result.rows if r["concept"] == concept]
            if rows:
                store_rows(concept, rows, [a for a in result.answers if a["concept"] == concept])
    if result is not None:
        counts.left_out += len(result.skipped)
