"""``xaimetrics detection``: per-concept detection scores of a concept method, offline, cached and resumable.

Reuses the ConSim grid's artefacts (:class:`~xaimetrics.benchmark.Artefacts`: the classifier — the demo one or
``--model DIR`` —, its activations, the fitted extractor and its top words, saved under ``OUTPUT/artefacts``).
The folder (:mod:`xaimetrics.detection._results`) keeps every reader answer as it arrives
(``responses.sqlite``), one line per scored or failed concept (``rows.jsonl``; ``rows.csv`` is its export) and
the settings with each reader's server (``settings.json``): an interrupted run resumes where it stopped, a failed
call is recorded as failed and tried again by the next run, and a rerun with other settings or another server
is refused.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xaimetrics._validation import invalid

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from xaimetrics.benchmark import Artefacts, Providers
    from xaimetrics.concepts import ConceptExtractor, ConceptInterpretation
    from xaimetrics.data import TextDataset
    from xaimetrics.detection._results import DetectionFolder
    from xaimetrics.detection._sampling import DetectionSample
    from xaimetrics.simulators import Simulator

__all__ = ["register", "run", "run_detection"]

_OWNER = "xaimetrics detection"
#: the reference reader's name on the command line
LEXICAL = "lexical"
#: the reader name of the example-embedding rows (no LLM: the offline MiniLM sentence encoder)
EMBEDDING_READER = "minilm"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add the ``detection`` sub-command."""
    from xaimetrics._arguments import add_data_arguments, add_simulator_arguments

    parser = subparsers.add_parser(
        "detection",
        help="per-concept simulatability: does each concept's interpretation predict where it is active?",
        description=(
            "For each concept of a fitted concept method, ask readers (the word-overlap reference reader and "
            "LLM simulators) whether texts where the concept is active and texts where it is not match the "
            "concept's top words, one text per prompt, and score each concept by the AUROC of P(Yes), with "
            "a shuffled-words control. Writes rows.jsonl (and rows.csv), answers.jsonl, responses.sqlite, "
            "detection.md and detection.html."
        ),
    )
    parser.add_argument(
        "--output", default="xaimetrics-detection", help="results folder (default: %(default)s)"
    )
    add_data_arguments(parser, dataset="bbc_news")
    parser.add_argument(
        "--model", default="demo",
        help="'demo' (MiniLM fine-tuned once on the dataset with a ReLU at the split, and cached) or a saved "
        "classifier directory (default: %(default)s)",
    )  # fmt: skip
    parser.add_argument("--method", default="NMF", help="concept method (default: %(default)s)")
    parser.add_argument(
        "--n-concepts", type=int, default=20, help="concepts of the method (default: %(default)s)"
    )
    parser.add_argument(
        "--n-fit", type=int, default=2000,
        help="training texts the concepts are fitted on (default: %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--concepts", default="8", help="how many concepts to score (the first N with words) or a list like "
        "0,3,7 (default: %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--seeds", default="0", help="comma-separated seeds (fit and draws; default: %(default)s)"
    )
    parser.add_argument(
        "--readers", default=f"{LEXICAL},local",
        help=f"comma-separated readers: '{LEXICAL}' (word overlap, no LLM) and simulator specs ('local', "
        "'local:<name>', 'openai:<model>') (default: %(default)s)",
    )  # fmt: skip
    add_simulator_arguments(parser, default="local", local="the offline Qwen2.5-Coder-0.5B", api_key_env=True)
    parser.add_argument(
        "--prompt", default="words", help="prompt wording: words or topic (default: %(default)s)"
    )
    parser.add_argument(
        "--n-top", type=int, default=5, help="top activating texts per concept (default: %(default)s)"
    )
    parser.add_argument("--n-quantile", type=int, default=5, help="activating texts across quantile strata "
                        "(default: %(default)s)")  # fmt: skip
    parser.add_argument(
        "--n-random", type=int, default=10, help="random non-activating texts (default: %(default)s)"
    )
    parser.add_argument("--n-hard", type=int, default=10, help="hard negatives: nearest non-activating texts in the "
                        "classifier's activation space (default: %(default)s)")  # fmt: skip
    parser.add_argument(
        "--max-chars", type=int, default=300, help="texts are cut to this length (default: %(default)s)"
    )
    parser.add_argument("--fuzzing", action="store_true", help="also run the fuzzing scorer (marked words)")
    parser.add_argument(
        "--intruder", action="store_true",
        help="also run intruder detection: each reader picks the one non-activating text among --n-shown - 1 "
        "activating ones (no written explanation)",
    )  # fmt: skip
    parser.add_argument(
        "--n-shown", type=int, default=5, help="texts per intruder trial (default: %(default)s)"
    )
    parser.add_argument(
        "--embedding", action="store_true",
        help=f"also run example-embedding scoring (reader '{EMBEDDING_READER}': similarity of held-out texts to "
        "the concept's top texts under the offline MiniLM sentence encoder; no LLM)",
    )  # fmt: skip
    parser.add_argument("--providers", default=None, help="'module:attribute' of a Providers object "
                        "(extra datasets and models)")  # fmt: skip
    parser.add_argument("--no-controls", action="store_true", help="leave out the shuffled-words control")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)
    return parser


def _ints(text: str, name: str) -> list[int]:
    try:
        return [int(v) for v in str(text).split(",") if v.strip()]
    except ValueError:
        raise invalid(name, _OWNER, "integers separated by commas", text) from None


def _model_name(args: argparse.Namespace) -> str:
    return "minilm+" if args.model == "demo" else str(args.model)


def _settings(args: argparse.Namespace) -> dict[str, object]:
    """What every row of the folder is computed from (the readers' servers are added per reader)."""
    from xaimetrics._arguments import data_options

    keys = ("dataset", "method", "n_concepts", "n_fit", "prompt", "n_top", "n_quantile", "n_random", "n_hard",
            "max_chars", "n_shown")  # fmt: skip
    return {
        **{key: getattr(args, key) for key in keys},
        "model": _model_name(args),
        "controls": not args.no_controls,
        **data_options(args),
    }


def _check_args(args: argparse.Namespace) -> list[str]:
    """Refuse bad arguments before anything loads or is written; the readers, deduplicated in order."""
    from xaimetrics.detection._prompts import PROMPTS
    from xaimetrics.simulators import check_simulator_spec

    if args.prompt not in PROMPTS:
        raise invalid("--prompt", _OWNER, "one of " + ", ".join(PROMPTS), args.prompt)
    _ints(args.seeds, "--seeds")
    _ints(args.concepts, "--concepts")
    readers = list(dict.fromkeys(r.strip() for r in str(args.readers).split(",") if r.strip()))
    if not readers:
        raise invalid("--readers", _OWNER, "one or more readers", args.readers)
    for spec in readers:
        if spec != LEXICAL:
            check_simulator_spec(spec, owner=_OWNER, argument="--readers")
    if args.base_url is not None and not str(args.base_url).startswith(("http://", "https://")):
        from xaimetrics._urls import public_url

        raise invalid(
            "--base-url", _OWNER, "an http:// or https:// URL", public_url(args.base_url),
            "For a local server, e.g. http://127.0.0.1:8080/v1.",
        )  # fmt: skip
    for name, minimum in (("n_concepts", 2), ("n_fit", 2), ("n_top", 0), ("n_quantile", 0), ("n_random", 0),
                          ("n_hard", 0), ("max_chars", 20), ("n_shown", 2)):  # fmt: skip
        value = getattr(args, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise invalid(f"--{name.replace('_', '-')}", _OWNER, f"an integer ≥ {minimum}", value)
    from xaimetrics.models import CLASSIFIERS

    named = args.model == "demo" or args.model in CLASSIFIERS.names()
    if not named and args.providers is None and not os.path.isdir(args.model):
        raise invalid("--model", _OWNER, "'demo', " + ", ".join(CLASSIFIERS.names()) + " or a saved classifier "
                      "directory", args.model,
                      "Fine-tune one with 'xaimetrics finetune --output DIR'.")  # fmt: skip
    return readers


def _check_data(args: argparse.Namespace, providers: Providers) -> None:
    """Refuse an unknown ``--method`` and a data file that cannot be read, before anything loads or is written."""
    from xaimetrics.concepts import EXTRACTORS
    from xaimetrics.data import check_dataset

    EXTRACTORS.canonical(args.method, owner=_OWNER, argument="--method")
    if args.dataset not in providers.datasets:
        check_dataset(
            args.dataset, owner=_OWNER, argument="--dataset", text_column=args.text_column,
            label_column=args.label_column, encoding=args.encoding or "utf-8", drop_empty_rows=args.drop_empty_rows,
        )  # fmt: skip


def _reader(spec: str, args: argparse.Namespace, folder: DetectionFolder) -> Simulator:
    """The reader ``spec``; LLM readers answer through the folder's answer store (kept answer by answer)."""
    if spec == LEXICAL:
        from xaimetrics.detection._reader import WordOverlapReader

        reader = WordOverlapReader()
        folder.check_reader(spec, reader.cache_identity())
        return reader
    from xaimetrics._arguments import response_cache
    from xaimetrics.detection._results import FolderAnswers
    from xaimetrics.simulators import make_simulator

    made = make_simulator(
        spec, base_url=args.base_url, api_key_env=getattr(args, "api_key_env", None), cache=response_cache(args),
        owner=_OWNER, argument="--readers",
    )  # fmt: skip
    identity = getattr(made, "cache_identity", lambda: {"simulator": spec})()
    folder.check_reader(spec, identity)
    return FolderAnswers(made, folder.output / "responses.sqlite")


def _identity(spec: str, args: argparse.Namespace) -> dict[str, object]:
    """What reader ``spec`` answers with (server URL without credentials, model, sampling), nothing loaded."""
    from xaimetrics.detection._reader import WordOverlapReader

    if spec == LEXICAL:
        return WordOverlapReader().cache_identity()
    from xaimetrics.simulators import make_simulator

    made = make_simulator(spec, base_url=args.base_url, api_key_env=getattr(args, "api_key_env", None),
                          owner=_OWNER, argument="--readers")  # fmt: skip
    return dict(getattr(made, "cache_identity", lambda: {"simulator": spec})())


def run_detection(args: argparse.Namespace, providers: Providers | None = None) -> dict[str, Any]:
    """Run (or resume) the detection of ``args`` and return ``{"frame", "interpretations", "output", ...}``.

    ``providers`` (a :class:`~xaimetrics.benchmark.Providers`) adds datasets and models to the built-in ones.
    ``"failed"`` maps each (dataset, method, n_concepts, seed, reader, task, concept) whose reader calls failed
    to the reason: those concepts have no rows (never a score) and the next run tries them again.
    """
    started = time.perf_counter()  # the run's wall time: loading, fitting and every call
    import numpy as np
    import pandas as pd

    from xaimetrics._arguments import data_options
    from xaimetrics.benchmark import Artefacts, ConceptFit, Providers
    from xaimetrics.benchmark._grid import ArtefactConfig
    from xaimetrics.detection._results import DetectionFolder, key_of, split_records

    readers = _check_args(args)
    seeds = _ints(args.seeds, "--seeds") or [0]
    providers = providers or Providers.load(args.providers, owner=_OWNER, progress=not args.no_progress)
    _check_data(args, providers)
    # what the artefact cache reads: the concept-fit draw and how the data file is read (the grid's defaults else)
    config = ArtefactConfig(n_fit=args.n_fit, dataset_options=data_options(args))
    output = Path(args.output)
    if output.exists() and not output.is_dir():
        raise invalid("--output", _OWNER, "a folder", str(output), "Name a folder (created if needed).")
    folder = DetectionFolder(output, _settings(args))  # refuses other settings before anything loads
    records = folder.records()  # a damaged results file is refused before any work
    for note in folder.notes:
        _say(f"Note: {note}")
    done = {key_of(r) for r in records if r["status"] == "ok"}
    output.mkdir(parents=True, exist_ok=True)
    artefacts = Artefacts(config, providers, output / "artefacts")
    dataset, model_name = args.dataset, _model_name(args)
    if args.no_progress:
        with _quiet_import():
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()
    _say(f"Loading the classifier and its activations on {dataset} (fine-tuned once, then cached)...")
    model = artefacts.model(dataset, model_name)
    if args.no_progress and hasattr(model, "progress"):
        model.progress = False
    fit, pool = artefacts.data(dataset)
    arrays = artefacts.activations(dataset, model_name)
    texts = list(pool.texts)
    all_interpretations: dict[int, dict[int, ConceptInterpretation]] = {}
    simulators: dict[str, Simulator] = {}
    failed: dict[tuple[str, ...], str] = {}
    for seed in seeds:
        concept_fit = ConceptFit(dataset, model_name, args.method, args.n_concepts, seed)
        extractor = artefacts.extractor(concept_fit)
        interpretations = artefacts.interpretation(concept_fit, "top_words")
        all_interpretations[seed] = interpretations
        U = np.asarray(extractor.encode(arrays["pool"]), dtype=np.float64)
        wanted = _wanted(args, interpretations)
        base = {"dataset": dataset, "method": args.method, "n_concepts": args.n_concepts, "seed": seed}
        job = _Job(args, folder, base, interpretations, U, texts, arrays["pool"], done, failed)
        word_scores: dict[int, dict[str, float]] | None = None
        for spec in readers:
            tasks = [
                "detection",
                *(["intruder"] if args.intruder else []),
                *(["fuzzing"] if args.fuzzing else []),
            ]
            if any(job.todo(spec, task, wanted) for task in tasks):
                simulators.setdefault(spec, _reader(spec, args, folder))
            else:  # nothing to ask: still the same server, or its stored rows are not this reader's
                folder.check_reader(spec, _identity(spec, args))
            job.detection(simulators.get(spec), spec, wanted)
            if args.intruder:
                job.intruder(simulators.get(spec), spec, wanted)
            if args.fuzzing and job.todo(spec, "fuzzing", wanted):
                if word_scores is None:
                    word_scores = _word_scores(artefacts, dataset, model_name, extractor, fit, wanted)
                job.fuzzing(simulators[spec], spec, wanted, word_scores)
        if args.embedding:
            job.embedding(wanted)
    rows, stored_failures = split_records(folder.records())
    frame = pd.DataFrame(rows)
    if len(frame):
        _export_csv(frame, output / "rows.csv")
    usage = {spec: sim.usage.summary() for spec, sim in simulators.items() if hasattr(sim, "usage")}
    return {"frame": frame, "interpretations": all_interpretations, "output": output, "failed": stored_failures,
            "wall_time_s": time.perf_counter() - started, "usage": usage}  # fmt: skip


def _wanted(args: argparse.Namespace, interpretations: dict[int, ConceptInterpretation]) -> list[int]:
    from xaimetrics.detection._detection import describe_or_none

    wanted = _ints(args.concepts, "--concepts")
    if len(wanted) == 1 and "," not in str(args.concepts):
        return [c for c in sorted(interpretations) if describe_or_none(interpretations[c])][: wanted[0]]
    return wanted


def _word_scores(artefacts: Artefacts, dataset: str, model_name: str, extractor: ConceptExtractor, fit: TextDataset,
                 wanted: list[int]) -> dict[int, dict[str, float]]:  # fmt: skip
    from xaimetrics.concepts import TopWords

    words = artefacts.words(dataset, model_name)
    top = TopWords(words, extractor, min_frequency=5, stop_words="english").fit(list(fit.texts))
    return {c: dict(zip(top.vocabulary_, top.scores_[:, c], strict=True)) for c in wanted}


def _export_csv(frame: pd.DataFrame, path: Path) -> None:
    temporary = path.with_suffix(".csv.tmp")
    frame.to_csv(temporary, index=False)
    os.replace(temporary, path)


class _Job:
    """One seed's scoring: each concept's rows (or its failure) stored as soon as it is scored."""

    def __init__(self, args: argparse.Namespace, folder: DetectionFolder, base: dict[str, object],
                 interpretations: dict[int, ConceptInterpretation], U: np.ndarray, texts: list[str], embeddings: np.ndarray,
                 done: set[tuple[str, ...]], failed: dict[tuple[str, ...], str]) -> None:  # fmt: skip
        self.args, self.folder, self.base, self.interpretations = args, folder, base, interpretations
        self.U, self.texts, self.embeddings, self.done, self.failed = U, texts, embeddings, done, failed
        self.seed = int(str(base["seed"]))

    def setting(self, reader: str, task: str, concept: int) -> dict[str, object]:
        return {**self.base, "reader": reader, "task": task, "concept": int(concept)}

    def todo(self, reader: str, task: str, wanted: list[int]) -> list[int]:
        from xaimetrics.detection._results import key_of

        return [c for c in wanted if key_of(self.setting(reader, task, c)) not in self.done]

    def words(self, concept: int) -> str:
        from xaimetrics.detection._detection import describe_or_none

        described = (
            describe_or_none(self.interpretations[concept]) if concept in self.interpretations else None
        )
        return ", ".join(described[0]) if described else ""

    def store(self, reader: str, task: str, concept: int, rows: list[dict[str, object]],
              answers: list[dict[str, object]]) -> None:  # fmt: skip
        self.folder.add(self.setting(reader, task, concept), rows, answers, self.words(concept))

    def fail(
        self, reader: str, task: str, concept: int, reason: str, answers: list[dict[str, object]]
    ) -> None:
        from xaimetrics.detection._results import key_of

        setting = self.setting(reader, task, concept)
        self.folder.fail(setting, reason, answers)
        self.failed[key_of(setting)] = reason
        _say(f"  FAILED: concept {concept}, {task}, reader {reader!r}: {reason}")

    def sample(self, concept: int, **counts: int) -> DetectionSample:
        from xaimetrics.detection._sampling import sample_texts

        args = self.args
        options = {"n_top": args.n_top, "n_quantile": args.n_quantile, "n_random": args.n_random,
                   "n_hard": args.n_hard, **counts}  # fmt: skip
        return sample_texts(self.U, concept, embeddings=self.embeddings, seed=self.seed, **options)

    def detection(self, reader: Simulator | None, spec: str, wanted: list[int]) -> None:
        from xaimetrics.detection._detection import Detection

        todo = self.todo(spec, "detection", wanted)
        if not todo or reader is None:
            return
        args = self.args
        _say(f"Detection: seed {self.base['seed']}, reader {spec!r}, {len(todo)} concept(s) to score "
             f"({len(wanted) - len(todo)} stored)...")  # fmt: skip
        detection = Detection(
            reader, prompt=args.prompt, n_top=args.n_top, n_quantile=args.n_quantile, n_random=args.n_random,
            n_hard=args.n_hard, max_chars=args.max_chars, shuffled=not args.no_controls, seed=self.seed,
        )  # fmt: skip
        result = detection.evaluate(
            self.U, self.texts, self.interpretations, embeddings=self.embeddings, concept_ids=todo,
            on_concept=lambda c, rows, answers: self.store(spec, "detection", c, rows, answers),
            on_failure=lambda c, reason, answers: self.fail(spec, "detection", c, reason, answers),
            progress=not args.no_progress,
        )  # fmt: skip
        for concept, reason in result.skipped.items():
            _say(f"  concept {concept} left out: {reason}")

    def intruder(self, reader: Simulator | None, spec: str, wanted: list[int]) -> None:
        from xaimetrics.detection._detection import failure_reason
        from xaimetrics.detection._intruder import intrude_concept

        todo = self.todo(spec, "intruder", wanted)
        if not todo or reader is None:
            return
        _say(f"Intruder: seed {self.base['seed']}, reader {spec!r}, {len(todo)} concept(s)...")
        for concept in todo:
            try:
                sample = self.sample(concept)
                rows, answers = intrude_concept(reader, concept, self.texts, sample, n_shown=self.args.n_shown,
                                                max_chars=self.args.max_chars, seed=self.seed)  # fmt: skip
            except ValueError as error:
                _say(f"  concept {concept} left out: {error}")
                continue
            reason = failure_reason(answers)
            if reason is not None:
                self.fail(spec, "intruder", concept, reason, answers)
            elif rows:
                self.store(spec, "intruder", concept, rows, answers)

    def fuzzing(self, reader: Simulator, spec: str, wanted: list[int],
                word_scores: dict[int, dict[str, float]]) -> None:  # fmt: skip
        from xaimetrics.detection._detection import failure_reason
        from xaimetrics.detection._fuzzing import fuzz_concept

        todo = self.todo(spec, "fuzzing", wanted)
        _say(f"Fuzzing: seed {self.base['seed']}, reader {spec!r}, {len(todo)} concept(s)...")
        for concept in todo:
            sample = self.sample(concept, n_random=1, n_hard=0)
            active = [self.texts[i] for i in sample.indices[sample.active == 1]]
            row, answers = fuzz_concept(reader, concept, self.interpretations[concept], active, word_scores[concept],
                                        max_chars=self.args.max_chars, seed=self.seed)  # fmt: skip
            reason = failure_reason(answers)
            if reason is not None:
                self.fail(spec, "fuzzing", concept, reason, answers)
            elif row is not None:
                self.store(spec, "fuzzing", concept, [row], answers)

    def embedding(self, wanted: list[int]) -> None:
        from xaimetrics.detection._embedding import ExampleEmbedding

        todo = self.todo(EMBEDDING_READER, "embedding", wanted)
        if not todo:
            return
        args = self.args
        _say(f"Example embedding: seed {self.base['seed']}, {len(todo)} concept(s)...")
        scorer = ExampleEmbedding(n_top=args.n_top, n_quantile=args.n_quantile, n_random=args.n_random,
                                  n_hard=args.n_hard, seed=self.seed)  # fmt: skip
        result = scorer.evaluate(self.U, self.texts, embeddings=self.embeddings, concept_ids=todo)
        for concept in todo:
            rows = [r for r in result.rows if r["concept"] == concept]
            if rows:
                answers = [a for a in result.answers if a["concept"] == concept]
                self.store(EMBEDDING_READER, "embedding", concept, rows, answers)
        for concept, reason in result.skipped.items():
            _say(f"  concept {concept} left out: {reason}")


class _quiet_import:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return exc[0] is ImportError


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _interrupted(output: str) -> int:
    """The first Ctrl-C: no call starts after it; the calls in flight finish and are kept while the process
    exits. A second Ctrl-C stops at once (one line, no traceback; those calls are asked again next time)."""

    def at_once(signum: int, frame: object) -> None:
        print("Interrupted again: stopped at once; the calls still in flight are asked again by the next run.",
              file=sys.stderr, flush=True)  # fmt: skip
        sys.stdout.flush()
        os._exit(130)

    signal.signal(signal.SIGINT, at_once)
    print(
        f"Interrupted: no call started after Ctrl-C; every answer received and every scored concept is kept in "
        f"{output} (Ctrl-C again to stop without waiting for the calls in flight). Resume with the same command.",
        file=sys.stderr, flush=True,
    )  # fmt: skip
    return 130


def _sections(
    frame: pd.DataFrame, out: dict[str, Any], args: argparse.Namespace
) -> list[tuple[str, str, pd.DataFrame]]:
    from xaimetrics.detection._statistics import compare_groups, legibility_table, summarise

    sections = []
    summary = summarise(frame, by=("reader", "task", "description", "negatives"))
    sections.append((
        "Mean score per reader",
        ("AUROC of P(Yes) (balanced accuracy for text-only readers; intruder: accuracy of the pick; embedding: "
         "AUROC of the similarity to the top texts); concepts averaged within each seed, then a t interval over "
         "seeds (over concepts when there is one seed: these concepts of this fit only)."),
        summary,
    ))  # fmt: skip
    first = sorted(out["interpretations"])[0]
    for task in ("detection", "intruder", "embedding"):
        for spec, part in frame[frame.task == task].groupby("reader", sort=False):
            table = legibility_table(part[part.seed == first], out["interpretations"][first])
            sections.append((
                f"Which concepts are legible — {task}, reader {spec} (seed {first})",
                ("Score against random non-activating texts (95% interval), against hard negatives, and with "
                 "another concept's words (shuffled, detection only); p: one-sided test, Holm-corrected over "
                 "concepts."),
                table.drop(columns=["metric"], errors="ignore"),
            ))  # fmt: skip
    detection = frame[frame.task == "detection"]
    if len(detection) and not args.no_controls:
        for spec, part in detection.groupby("reader", sort=False):
            control = compare_groups(part, "description", baseline="shuffled", where={"negatives": "random"})
            sections.append((f"Own words against shuffled words — reader {spec}", "Paired, Holm-corrected.",
                             control))  # fmt: skip
    if len(detection) and detection.reader.nunique() > 1:
        readers = compare_groups(
            detection[detection.description == "own"], "reader", where={"negatives": "random"}
        )
        sections.append(
            ("Readers compared (own words, random negatives)", "Paired, Holm-corrected.", readers)
        )
    if out["failed"]:
        sections.append(_failure_section(out))
    return sections


def run(args: argparse.Namespace, providers: Providers | None = None) -> int:
    """Execute ``xaimetrics detection``; prints the tables and writes the report (exit 1 when a concept failed)."""
    from xaimetrics._demo import each_warning_once
    from xaimetrics._reporting import markdown_table
    from xaimetrics.detection._report import write_detection_report

    started = time.perf_counter()  # the printed wall time is the whole command's
    try:
        with each_warning_once():
            out = run_detection(args, providers)
    except KeyboardInterrupt:
        return _interrupted(str(args.output))
    frame = out["frame"]
    if not len(frame) and not out["failed"]:
        print("No concept could be scored.")
        return 1
    sections = _sections(frame, out, args) if len(frame) else [_failure_section(out)]
    title = f"xaimetrics detection — {args.method} (k = {args.n_concepts}) on {args.dataset}"
    paths = write_detection_report(out["output"], title, sections)
    for heading, sentence, table in sections:
        print(f"\n## {heading}\n{sentence}\n\n{markdown_table(table, index=False, missing='')}")
    for spec, usage in out["usage"].items():
        print(
            f"Reader {spec}: {usage.calls} calls ({usage.cached_calls} cached), {usage.total_tokens:,} tokens"
        )
    print(f"\nWall time {time.perf_counter() - started:.1f} s. Rows: {out['output'] / 'rows.jsonl'}; report: "
          f"{paths['report_html']} ({paths['report_md'].name} beside it)")  # fmt: skip
    if out["failed"]:
        print(f"{len(out['failed'])} concept(s) FAILED (reader calls failed; no score stored). Rerun the same "
              "command to ask them again.", file=sys.stderr)  # fmt: skip
        return 1
    return 0


def _failure_section(out: dict[str, Any]) -> tuple[str, str, pd.DataFrame]:
    """The concepts whose reader calls failed, with the reasons (no score is stored for them)."""
    import pandas as pd

    from xaimetrics.detection._results import KEY

    failures = pd.DataFrame(
        [{**dict(zip(KEY, key, strict=True)), "reason": reason} for key, reason in out["failed"].items()]
    )
    sentence = (
        "Reader calls that failed: no score is stored for these concepts; the next run asks them again."
    )
    return ("FAILED — not scored", sentence, failures)
