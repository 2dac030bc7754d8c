"""``xaimetrics detection``: per-concept detection scores of a concept method, offline, cached and resumable.

Reuses the ConSim grid's artefacts (:class:`~xaimetrics.benchmark.Artefacts`: the demo classifier, its
activations, the fitted extractor and its top words, saved under ``OUTPUT/artefacts``) and the simulators'
response cache. Every finished concept is appended to ``OUTPUT/rows.csv`` (scores) and
``OUTPUT/answers.jsonl`` (per-text answers) at once, so an interrupted run resumes where it stopped and a
rerun only rebuilds the tables; ``OUTPUT/settings.json`` refuses a rerun with different settings.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xaimetrics._validation import invalid

if TYPE_CHECKING:
    from collections.abc import Mapping

    from xaimetrics.benchmark import Providers
    from xaimetrics.concepts import ConceptInterpretation
    from xaimetrics.detection._prompts import Interpretation
    from xaimetrics.simulators import Simulator

__all__ = ["register", "run", "run_detection"]

_OWNER = "xaimetrics detection"
#: the reference reader's name on the command line
LEXICAL = "lexical"
ROW_KEYS = ("dataset", "method", "n_concepts", "seed", "reader", "task", "concept")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add the ``detection`` sub-command."""
    from xaimetrics._arguments import add_simulator_arguments

    parser = subparsers.add_parser(
        "detection",
        help="per-concept simulatability: does each concept's interpretation predict where it is active?",
        description=(
            "For each concept of a fitted concept method, ask readers (the word-overlap reference reader and "
            "LLM simulators) whether texts where the concept is active and texts where it is not match the "
            "concept's top words, one text per prompt, and score each concept by the AUROC of P(Yes), with "
            "a shuffled-words control. Writes rows.csv, answers.jsonl, detection.md and detection.html."
        ),
    )
    parser.add_argument(
        "--output", default="xaimetrics-detection", help="results folder (default: %(default)s)"
    )
    parser.add_argument("--dataset", default="bbc_news", help="offline dataset (default: %(default)s)")
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
    parser.add_argument("--no-controls", action="store_true", help="leave out the shuffled-words control")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)
    return parser


def _ints(text: str, name: str) -> list[int]:
    try:
        return [int(v) for v in str(text).split(",") if v.strip()]
    except ValueError:
        raise invalid(name, _OWNER, "integers separated by commas", text) from None


def _settings(args: argparse.Namespace) -> dict[str, object]:
    keys = (
        "dataset",
        "method",
        "n_concepts",
        "n_fit",
        "prompt",
        "n_top",
        "n_quantile",
        "n_random",
        "n_hard",
        "max_chars",
    )
    return {key: getattr(args, key) for key in keys}


def _reader(spec: str, args: argparse.Namespace) -> Simulator:
    if spec == LEXICAL:
        from xaimetrics.detection._reader import WordOverlapReader

        return WordOverlapReader()
    from xaimetrics._arguments import response_cache
    from xaimetrics.simulators import make_simulator

    return make_simulator(
        spec, base_url=args.base_url, api_key_env=getattr(args, "api_key_env", None), cache=response_cache(args),
        owner=_OWNER, argument="--readers",
    )  # fmt: skip


def _done(path: Path) -> set[tuple[str, ...]]:
    if not path.is_file():
        return set()
    with open(path, newline="", encoding="utf-8") as handle:
        return {tuple(str(row[k]) for k in ROW_KEYS) for row in csv.DictReader(handle)}


def _append(path: Path, rows: list[dict[str, object]]) -> None:
    if not rows:
        return
    new = not path.is_file()
    with open(path, "a", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        if new:
            writer.writeheader()
        writer.writerows(rows)
        handle.flush()


def run_detection(args: argparse.Namespace, providers: Providers | None = None) -> dict[str, Any]:
    """Run (or resume) the detection of ``args`` and return ``{"frame", "interpretations", "output", ...}``.

    ``providers`` (a :class:`~xaimetrics.benchmark.Providers`) adds datasets and models to the built-in ones.
    """
    import numpy as np
    import pandas as pd

    from xaimetrics.benchmark import Artefacts, ConceptFit, Grid, Providers
    from xaimetrics.concepts import TopWords
    from xaimetrics.detection._detection import Detection, describe_or_none
    from xaimetrics.detection._fuzzing import fuzz_concept
    from xaimetrics.detection._prompts import PROMPTS
    from xaimetrics.detection._sampling import sample_texts

    if args.prompt not in PROMPTS:
        raise invalid("--prompt", _OWNER, "one of " + ", ".join(PROMPTS), args.prompt)
    seeds = _ints(args.seeds, "--seeds") or [0]
    readers = [r.strip() for r in str(args.readers).split(",") if r.strip()]
    if not readers:
        raise invalid("--readers", _OWNER, "one or more readers", args.readers)
    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    settings_path = output / "settings.json"
    settings = _settings(args)
    if settings_path.is_file():
        stored = json.loads(settings_path.read_text(encoding="utf-8"))
        if stored != settings:
            raise invalid(
                "--output", _OWNER, "a folder whose stored settings match this run's", str(output),
                f"It holds a run with {stored}; use another --output.",
            )  # fmt: skip
    else:
        settings_path.write_text(json.dumps(settings, indent=1), encoding="utf-8")
    providers = providers or Providers(progress=not args.no_progress)
    extras: dict[str, Any] = providers.grid_extras()  # Grid keyword arguments (datasets, models)
    grid = Grid(datasets=(args.dataset,), methods=(args.method,), n_concepts=args.n_concepts, seeds=tuple(seeds),
                simulators=(LEXICAL,), prompt_types=("E2-a",), pool_size=None, n_fit=args.n_fit,
                **extras)  # fmt: skip
    artefacts = Artefacts(grid, providers, output / "artefacts")
    dataset, model_name = grid.datasets[0], grid.models[0]
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
    rows_path, answers_path = output / "rows.csv", output / "answers.jsonl"
    done = _done(rows_path)
    all_interpretations: dict[int, dict[int, ConceptInterpretation]] = {}
    simulators: dict[str, Simulator] = {}
    started = time.perf_counter()
    for seed in seeds:
        concept_fit = ConceptFit(dataset, model_name, args.method, args.n_concepts, seed)
        extractor = artefacts.extractor(concept_fit)
        interpretations = artefacts.interpretation(concept_fit, "top_words")
        all_interpretations[seed] = interpretations
        U = np.asarray(extractor.encode(arrays["pool"]), dtype=np.float64)
        wanted = _ints(args.concepts, "--concepts")
        if len(wanted) == 1 and "," not in str(args.concepts):
            wanted = [c for c in sorted(interpretations) if describe_or_none(interpretations[c])][: wanted[0]]
        word_scores: dict[int, dict[str, float]] | None = None
        for spec in readers:
            base = {"dataset": dataset, "method": args.method, "n_concepts": args.n_concepts, "seed": seed,
                    "reader": spec}  # fmt: skip
            todo = [c for c in wanted if _key(base, "detection", c) not in done]
            fuzz_todo = [c for c in wanted if _key(base, "fuzzing", c) not in done] if args.fuzzing else []
            if todo or fuzz_todo:
                simulators.setdefault(spec, _reader(spec, args))
            if todo:
                _say(f"Detection: seed {seed}, reader {spec!r}, {len(todo)} concept(s) to score "
                     f"({len(wanted) - len(todo)} stored)...")  # fmt: skip
                detection = Detection(
                    simulators[spec], prompt=args.prompt, n_top=args.n_top, n_quantile=args.n_quantile,
                    n_random=args.n_random, n_hard=args.n_hard, max_chars=args.max_chars,
                    shuffled=not args.no_controls, seed=seed,
                )  # fmt: skip
                store = _Store(rows_path, answers_path, {**base, "task": "detection"}, interpretations)
                result = detection.evaluate(
                    U, texts, interpretations, embeddings=arrays["pool"], concept_ids=todo, on_concept=store,
                    progress=not args.no_progress,
                )  # fmt: skip
                for concept, reason in result.skipped.items():
                    _say(f"  concept {concept} left out: {reason}")
            if fuzz_todo:
                if word_scores is None:
                    words = artefacts.words(dataset, model_name)
                    top = TopWords(words, extractor, min_frequency=5, stop_words="english").fit(
                        list(fit.texts)
                    )
                    word_scores = {
                        c: dict(zip(top.vocabulary_, top.scores_[:, c], strict=True)) for c in wanted
                    }
                _say(f"Fuzzing: seed {seed}, reader {spec!r}, {len(fuzz_todo)} concept(s)...")
                store = _Store(rows_path, answers_path, {**base, "task": "fuzzing"}, interpretations)
                for concept in fuzz_todo:
                    sample = sample_texts(U, concept, n_top=args.n_top, n_quantile=args.n_quantile, n_random=1,
                                          n_hard=0, seed=seed)  # fmt: skip
                    active = [texts[i] for i in sample.indices[sample.active == 1]]
                    row, answers = fuzz_concept(simulators[spec], concept, interpretations[concept], active,
                                                word_scores[concept], max_chars=args.max_chars, seed=seed)  # fmt: skip
                    if row is not None:
                        store(concept, [row], answers)
    frame = pd.read_csv(rows_path) if rows_path.is_file() else pd.DataFrame()
    usage = {spec: sim.usage.summary() for spec, sim in simulators.items() if hasattr(sim, "usage")}
    return {"frame": frame, "interpretations": all_interpretations, "output": output,
            "wall_time_s": time.perf_counter() - started, "usage": usage}  # fmt: skip


def _key(setting: dict[str, object], task: str, concept: int) -> tuple[str, ...]:
    return tuple(str(v) for v in (*(setting[k] for k in ROW_KEYS[:5]), task, concept))


class _Store:
    """Append one finished concept's rows and answers to the results files (the resume points)."""

    def __init__(
        self,
        rows: Path,
        answers: Path,
        setting: dict[str, object],
        interpretations: Mapping[int, Interpretation],
    ) -> None:
        self.rows, self.answers, self.setting, self.interpretations = rows, answers, setting, interpretations

    def __call__(self, concept: int, rows: list[dict[str, object]], answers: list[dict[str, object]]) -> None:
        from xaimetrics.detection._detection import describe_or_none

        described = describe_or_none(self.interpretations[concept])
        words = ", ".join(described[0]) if described else ""
        with open(self.answers, "a", encoding="utf-8") as handle:
            for answer in answers:
                handle.write(json.dumps({**self.setting, **answer}) + "\n")
        _append(
            self.rows, [{**self.setting, **row, "words": words} for row in rows]
        )  # rows last: the resume mark


class _quiet_import:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return exc[0] is ImportError


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run(args: argparse.Namespace, providers: Providers | None = None) -> int:
    """Execute ``xaimetrics detection``; prints the tables and writes the report."""
    from xaimetrics._demo import each_warning_once
    from xaimetrics.detection._report import markdown_table, write_detection_report
    from xaimetrics.detection._statistics import compare_groups, legibility_table, summarise

    with each_warning_once():
        out = run_detection(args, providers)
    frame = out["frame"]
    if not len(frame):
        print("No concept could be scored.")
        return 1
    detection = frame[frame.task == "detection"]
    sections = []
    summary = summarise(frame, by=("reader", "task", "description", "negatives"))
    sections.append((
        "Mean score per reader",
        ("AUROC of P(Yes) (balanced accuracy for text-only readers); concepts averaged within each seed, then a "
         "t interval over seeds (over concepts when there is one seed: these concepts of this fit only)."),
        summary,
    ))  # fmt: skip
    if len(detection):
        for spec, part in detection.groupby("reader", sort=False):
            first = sorted(out["interpretations"])[0]
            table = legibility_table(part[part.seed == first], out["interpretations"][first])
            sections.append((
                f"Which concepts are legible — reader {spec} (seed {first})",
                ("AUROC against random non-activating texts (BCa 95% interval), against hard negatives, and with "
                 "another concept's words (shuffled); p: one-sided Mann–Whitney, Holm-corrected over concepts."),
                table.drop(columns=["metric"], errors="ignore"),
            ))  # fmt: skip
        if not args.no_controls:
            for spec, part in detection.groupby("reader", sort=False):
                control = compare_groups(
                    part, "description", baseline="shuffled", where={"negatives": "random"}
                )
                sections.append((f"Own words against shuffled words — reader {spec}", "Paired, Holm-corrected.",
                                 control))  # fmt: skip
        if detection.reader.nunique() > 1:
            readers = compare_groups(detection[detection.description == "own"], "reader",
                                     where={"negatives": "random"})  # fmt: skip
            sections.append(
                ("Readers compared (own words, random negatives)", "Paired, Holm-corrected.", readers)
            )
    title = f"xaimetrics detection — {args.method} (k = {args.n_concepts}) on {args.dataset}"
    paths = write_detection_report(out["output"], title, sections)
    for heading, sentence, table in sections:
        print(f"\n## {heading}\n{sentence}\n\n{markdown_table(table)}")
    for spec, usage in out["usage"].items():
        print(
            f"Reader {spec}: {usage.calls} calls ({usage.cached_calls} cached), {usage.total_tokens:,} tokens"
        )
    print(f"\nWall time {out['wall_time_s']:.1f} s. Rows: {out['output'] / 'rows.csv'}; report: {paths['report_html']} "
          f"({paths['report_md'].name} beside it)")  # fmt: skip
    return 0
