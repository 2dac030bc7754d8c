"""``xaimetrics study``: create, serve and export human studies, and compare people with LLM simulators.

    xaimetrics study create simulatability --grid grid.toml --output studies/consim.json
    xaimetrics study create simulatability --dataset bbc_news --methods NMF NoExplanation --balance relaxed \
        --output studies/bbc.json                                 # the grid's selection options on the CLI
    xaimetrics study create likert --grid grid.toml --method NMF --n-examples 50 --output annotations/study.json
    xaimetrics study invite studies/consim.toml --count 4       # prints one private link per participant
    xaimetrics study serve studies/consim.toml                   # http://127.0.0.1:8765, prints the admin token
    xaimetrics study export studies/consim.toml --results-store results/results.sqlite
    xaimetrics study export annotations/study.toml --output annotations/ratings.json
    xaimetrics study simulate studies/consim.toml --simulator local --results-store results/results.sqlite
    xaimetrics study report --results-store results/results.sqlite --output results/agreement

``create`` does the heavy work once (data, model, concepts, importances, LP/EP selection, through the same
artefacts as ``xaimetrics benchmark run``) and writes a self-contained bundle (``.json``) and its server
configuration (``.toml``); ``serve`` loads no model.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

from xaimetrics._arguments import (
    add_data_arguments,
    add_portable_argument,
    add_progress_argument,
    add_registry_argument,
    data_options,
)
from xaimetrics._validation import invalid
from xaimetrics.exceptions import InvalidParameterError

if TYPE_CHECKING:
    from xaimetrics.benchmark import Grid, Providers
    from xaimetrics.simulators import Simulator
    from xaimetrics.studies import SimulatabilityStudy, StudyConfig, StudyStore
    from xaimetrics.studies._bundle import Study
    from xaimetrics.studies._likert import LikertOptions, LikertStudy

__all__ = ["register"]

_OWNER = "xaimetrics study"


class _Keywords(TypedDict, total=False):
    """The keywords of ``add_argument`` the plain options use."""

    type: Callable[[str], object]
    nargs: str
    default: object
    action: str
    help: str


#: ``study create``'s plain options, group by group: ``(flag, add_argument keywords)``
_Options = tuple[tuple[str, _Keywords], ...]
_SOURCE: _Options = (
    ("--grid", {"type": Path, "help": "a benchmark grid (TOML): its data, model, concepts and selections (without "
                "it: --dataset, --model and --methods or --method describe one)"}),
    ("--providers", {"help": "'module:attribute' of a Providers object (the grid's extra names)"}),
    ("--artefacts", {"type": Path, "help": "the benchmark's artefact folder, to reuse its fits"}),
    ("--dataset", {"help": "which of the grid's datasets (when it lists several); without --grid: an offline "
                   "dataset, a data file (any column names with --text-column/--label-column) or a hub id"}),
    ("--model", {"help": "which of the grid's models (when it lists several; default minilm+)"}),
    ("--n-concepts", {"type": int, "help": "concepts per method (default: the grid's, else 20)"}),
    ("--items", {"type": Path, "help": "likert: texts and dimension values, JSON lines {id, text, values}"}),
    ("--dimensions", {"type": Path, "help": "likert: the dimensions, a JSON list of {name, property, ...}"}),
)  # fmt: skip
_SELECTION: _Options = (
    ("--n-lp", {"type": int, "help": "learning-phase samples (default: the grid's, else 20)"}),
    ("--n-ep", {"type": int, "help": "evaluation-phase samples (default: the grid's, else 20)"}),
    ("--pool-size", {"type": int, "help": "draw LP/EP samples from this many test texts (default: the whole split)"}),
    ("--max-sample-chars", {"type": int, "help": "cut longer sample texts, in the LLM's prompt and on screen"}),
    ("--n-fit", {"type": int, "help": "training texts the concepts are fitted on (default: 2000)"}),
)  # fmt: skip
_DESIGN: _Options = (
    ("--title", {"help": "the title participants see"}),
    ("--seeds", {"type": int, "nargs": "+", "help": "simulatability: the grid's seeds to use"}),
    ("--methods", {"nargs": "+", "help": "simulatability: the grid's methods to use"}),
    ("--prompt-types", {"nargs": "+", "help": "simulatability: the grid's prompt types to use"}),
    ("--arms-per-participant", {"type": int, "default": 1,
     "help": "simulatability: arms per participant, each on another seed (default: %(default)s)"}),
    ("--method", {"help": "likert: the grid's concept method whose concepts are rated"}),
    ("--seed", {"type": int, "help": "likert: the concept fit's seed (default: the grid's first)"}),
    ("--concepts", {"type": int, "nargs": "+", "help": "likert: the concept ids to rate (default: all)"}),
    ("--n-examples", {"type": int, "default": 50, "help": "likert: texts to rate (default: %(default)s)"}),
    ("--n-annotators", {"type": int, "default": 3, "help": "likert: planned annotators (default: %(default)s)"}),
    ("--no-shuffle", {"action": "store_true", "help": "likert: same text order for every annotator"}),
)  # fmt: skip


def _add_options(group: argparse._ArgumentGroup, options: _Options) -> None:
    for flag, keywords in options:
        group.add_argument(flag, **keywords)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add the ``study`` sub-command (``create``, ``invite``, ``serve``, ``export``, ``simulate``, ``report``)."""
    from xaimetrics.consim import BALANCES
    from xaimetrics.studies._kinds import STUDY_KINDS

    parser = subparsers.add_parser(
        "study",
        help="human studies: simulatability (ConSim protocol) and Likert ratings in the browser",
        description=__doc__.split("\n\n")[0],
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser(
        "create", help="build a study bundle (.json) and its server configuration (.toml)"
    )
    create.add_argument("kind", choices=STUDY_KINDS.names())
    create.add_argument("--output", required=True, type=Path, help="the bundle to write (.json)")
    source = create.add_argument_group("source")
    _add_options(source, _SOURCE[:4])
    add_data_arguments(source)
    _add_options(source, _SOURCE[4:])
    selection = create.add_argument_group(
        "selection (the grid's fields; given with --grid, they replace the grid file's values)"
    )
    _add_options(selection, _SELECTION)
    add_registry_argument(
        selection, "--balance", BALANCES, default=None, default_help="the grid's, else strict"
    )
    design = create.add_argument_group("design")
    _add_options(design, _DESIGN)
    add_progress_argument(design)
    server = create.add_argument_group("server (written to the .toml)")
    server.add_argument("--host", default="127.0.0.1", help="default: %(default)s")
    server.add_argument("--port", type=int, default=8765, help="default: %(default)s")
    create.set_defaults(func=_create)

    invite = actions.add_parser("invite", help="add participants and print their private links")
    invite.add_argument("study", type=Path, help="STUDY.toml (or the bundle .json)")
    invite.add_argument("--count", type=int, default=1)
    invite.add_argument(
        "--arms", nargs="+", help="simulatability: these arm ids (default: the next balanced ones)"
    )
    invite.add_argument("--base-url", help="the address participants use (default: http://HOST:PORT)")
    invite.set_defaults(func=_invite)

    serve = actions.add_parser("serve", help="serve the study (127.0.0.1 by default)")
    serve.add_argument("study", type=Path, help="STUDY.toml (or the bundle .json)")
    serve.add_argument("--host", help="override the configuration's host")
    serve.add_argument("--port", type=int, help="override the configuration's port")
    serve.add_argument("--new-admin-token", action="store_true", help="replace the admin token")
    serve.set_defaults(func=_serve)

    export = actions.add_parser("export", help="write the answers, ratings or results-store rows")
    export.add_argument("study", type=Path, help="STUDY.toml (or the bundle .json)")
    export.add_argument("--output", type=Path,
                        help="likert: ratings .json (examples × annotators × dimensions) or .csv; "
                             "simulatability: answers .csv or .json")  # fmt: skip
    export.add_argument(
        "--results-store", type=Path, help="simulatability: add the 'human' rows to this store"
    )
    export.set_defaults(func=_export)

    simulate = actions.add_parser("simulate", help="ask an LLM the study's own prompts; store its rows")
    simulate.add_argument("study", type=Path, help="STUDY.toml (or the bundle .json)")
    simulate.add_argument(
        "--simulator", default="local", help="'local', 'local:<gguf name>' or 'openai:<model>'"
    )
    simulate.add_argument("--base-url", help="server URL of 'openai:' simulators")
    add_portable_argument(simulate)
    simulate.add_argument("--api-key-env", default="OPENAI_API_KEY")
    simulate.add_argument("--results-store", type=Path, required=True)
    simulate.set_defaults(func=_simulate)

    report = actions.add_parser(
        "report", help="'Does the LLM rank explanations like people?' from a results store"
    )
    report.add_argument("--results-store", type=Path, required=True)
    report.add_argument("--output", type=Path, default=Path("agreement-report"))
    report.add_argument("--human", default="human", help="the simulator name of the human rows")
    report.add_argument(
        "--study", type=Path, help="STUDY.toml (or the bundle): the report reads the grid it was made from"
    )
    report.set_defaults(func=_report)
    return parser


def _grid(args: argparse.Namespace, providers: Providers | None) -> Grid:
    """The grid of ``--grid``, or one described by ``--dataset``, ``--model``, ``--methods`` / ``--method``."""
    from xaimetrics.benchmark import Grid, load_grid

    extras = providers.grid_extras() if providers is not None else {}
    chosen = {
        name: getattr(args, name)
        for name in ("n_lp", "n_ep", "balance", "pool_size", "max_sample_chars", "n_fit", "n_concepts")
        if getattr(args, name) is not None
    }
    chosen.update(data_options(args))  # --text-column ... (override the grid file's keys of the same names)
    if args.grid is not None:
        grid = load_grid(args.grid, **extras)
        return grid.replace(**chosen) if chosen else grid
    methods = args.methods or ([args.method] if args.method else None)
    if args.dataset is None or not methods:
        raise invalid("--grid", _OWNER, f"given for a {args.kind} study (or --dataset with --methods)", None,
                      "Pass --grid GRID.toml, or --dataset NAME --methods NMF ..."
                      + (" (or --items and --dimensions)." if args.kind == "likert" else "."))  # fmt: skip
    options: dict[str, Any] = {  # the Grid's keyword arguments, several types
        "datasets": (args.dataset,), "models": (args.model or "minilm+",), "methods": tuple(methods),
        "n_concepts": 20, "seeds": tuple(args.seeds or (args.seed or 0,)), "simulators": ("perfect",), **chosen,
    }  # fmt: skip
    if args.prompt_types:
        options["prompt_types"] = tuple(args.prompt_types)
    return Grid(**{**options, **extras})


def _create(args: argparse.Namespace) -> int:
    from xaimetrics.benchmark import Providers
    from xaimetrics.studies import StudyConfig, save_study
    from xaimetrics.studies._config import write_config
    from xaimetrics.studies._from_grid import write_grid
    from xaimetrics.studies._kinds import study_kind

    if args.output.suffix != ".json":
        raise invalid("--output", _OWNER, "a .json file (the study bundle)", str(args.output))
    # the built-in models show their fine-tuning (minutes to hours on first use) unless --no-progress
    providers = Providers.load(args.providers, owner=_OWNER, progress=not args.no_progress)
    title: str | None = args.title
    if args.kind == "simulatability":
        from xaimetrics.studies import simulatability_study_from_grid

        grid = _grid(args, providers)
        try:
            study: Study = simulatability_study_from_grid(
                grid, providers, artefact_dir=args.artefacts, dataset=args.dataset,
                model=args.model, seeds=args.seeds, methods=args.methods, prompt_types=args.prompt_types,
                arms_per_participant=args.arms_per_participant, title=args.title,
            )  # fmt: skip
        except InvalidParameterError as error:
            if "balance='relaxed'" not in str(error) or "--balance" in str(error):
                raise
            raise InvalidParameterError(  # the selection's own message speaks Python: add the CLI spelling
                f"{error} On the command line: --balance relaxed, --n-lp N, --n-ep N or --pool-size N "
                "(with --artefacts DIR the model's predictions are kept for the next try)."
            ) from error
    elif args.items is not None or args.dimensions is not None:
        study = _likert_from_files(args, title)
    else:
        from xaimetrics.studies import likert_study_from_grid

        settings: LikertOptions = {"n_annotators": args.n_annotators, "shuffle": not args.no_shuffle}
        if title:
            settings["title"] = title
        study = likert_study_from_grid(
            _grid(args, providers), providers, artefact_dir=args.artefacts, dataset=args.dataset, model=args.model,
            method=args.method, seed=args.seed, n_examples=args.n_examples, concept_ids=args.concepts,
            **settings,
        )  # fmt: skip
    bundle = save_study(study, args.output)
    config = write_config(StudyConfig(bundle, host=args.host, port=args.port), bundle.with_suffix(".toml"))
    kind = study_kind(study)
    print(f"Study ({args.kind}, {kind.summary}): {bundle}")
    print(f"Configuration: {config}")
    if kind.results_rows:  # the LLM's rows on the people's samples come from the study's grid
        path = write_grid(
            _study_grid(grid, cast("SimulatabilityStudy", study), args),
            grid_path(bundle),
            header=_GRID_HEADER.format(bundle=bundle),
        )
        print(f"Grid of the study (its data, model, selection and prompts): {path}")
        print(
            f"  LLM rows on the people's samples: xaimetrics benchmark run {path} --output FOLDER (set its simulators)"
        )
    print(f"Next: xaimetrics study invite {config} --count N, then xaimetrics study serve {config}")
    return 0


_GRID_HEADER = (
    "The grid the study {bundle} was made from (written by xaimetrics study create, with its options).\n"
    "Run the LLM simulators on it (xaimetrics benchmark run THIS_FILE --output FOLDER): their rows are then shown the\n"
    "people's samples and meet them in the agreement report. Changing n_lp, n_ep, balance, pool_size or the data\n"
    "here gives other samples, which the report does not compare."
)


def grid_path(bundle: Path) -> Path:
    """Where ``study create`` writes the grid of the study ``bundle`` (``STUDY.grid.toml`` beside it)."""
    return bundle.with_suffix(".grid.toml")


def _study_grid(grid: Grid, study: SimulatabilityStudy, args: argparse.Namespace) -> Grid:
    """``grid`` narrowed to what the study shows: its dataset, model, seeds, and the chosen methods and prompts."""
    changes: dict[str, Any] = {"datasets": (study.dataset,), "models": (study.model,),
                               "seeds": tuple(s.seed for s in study.samples)}  # fmt: skip
    if args.methods:
        changes["methods"] = tuple(m for m in args.methods if m in grid.methods)
    if args.prompt_types:
        changes["prompt_types"] = tuple(args.prompt_types)
    return grid.replace(**changes)


def _likert_from_files(args: argparse.Namespace, title: str | None) -> LikertStudy:
    from xaimetrics.studies import LikertStudy
    from xaimetrics.studies._build import choose_examples

    if args.items is None or args.dimensions is None:
        raise invalid("--items", _OWNER, "given together with --dimensions", None)
    for name, path in (("--items", args.items), ("--dimensions", args.dimensions)):
        if not path.is_file():
            raise invalid(name, _OWNER, "an existing file", str(path))
    try:
        lines = [line for line in args.items.read_text(encoding="utf-8").splitlines() if line.strip()]
        items = [json.loads(line) for line in lines]
        dimensions = json.loads(args.dimensions.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise invalid("--items", _OWNER, "JSON lines and a JSON list of dimensions", str(error)) from error
    for i, item in enumerate(items):
        if isinstance(item, dict) and "id" not in item:
            item["id"] = str(i)
    chosen = choose_examples(len(items), min(args.n_examples, len(items)), seed=args.seed or 0)
    return LikertStudy(tuple(dimensions), tuple(items[i] for i in chosen), n_annotators=args.n_annotators,
                       shuffle=not args.no_shuffle, title=title or LikertStudy.title)  # fmt: skip


def _base_url(config: StudyConfig, override: str | None, store: StudyStore | None = None) -> str:
    """``--base-url``, else the address the study was last served on, else the configuration's."""
    if override:
        return override
    if store is not None and store.served_url is not None:
        return str(store.served_url)
    host = f"[{config.host}]" if ":" in config.host and not config.host.startswith("[") else config.host
    return f"http://{host}:{config.port}"


def _invite(args: argparse.Namespace) -> int:
    from xaimetrics.studies._config import load_config, open_study

    if args.count < 1:
        raise invalid("--count", _OWNER, "an integer ≥ 1", args.count)
    config = load_config(args.study)
    _, store = open_study(config)
    with store:
        for _ in range(args.count):
            invite = store.invite(arms=args.arms)
            print(f"{invite.participant.label}\t{invite.url(_base_url(config, args.base_url, store))}")
    print("Each link is shown only once (only a hash of its token is stored): send each person their own.")
    return 0


def _serve(args: argparse.Namespace) -> int:
    import dataclasses

    from xaimetrics.studies import serve
    from xaimetrics.studies._config import bind, load_config, open_study

    config = load_config(args.study)
    changes = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    config = dataclasses.replace(config, **changes)
    _, store = open_study(config)
    with store:
        # the port first: a busy port must fail before the "shown once" token is printed (and lost)
        sock = bind(config.host, config.port, argument="--port")
        try:
            base = _base_url(config, None)
            if base != store.served_url:
                old = store.served_url
                store.remember_url(base)  # later `study invite` links point here
                if old is not None and store.participants():
                    print(f"Note: this study was served on {old} before; links printed for it point there. "
                          f"Use {base}/s/TOKEN instead (same token).")  # fmt: skip
            if args.new_admin_token or not store.has_admin_token:
                token = store.new_admin_token()
                print(f"Admin token (shown once): {token}")
            print(f"Serving on {base} (admin: {base}/admin/login). Stop with Ctrl+C.", flush=True)
        except BaseException:
            sock.close()
            raise
    serve(config, sock=sock)
    return 0


def _export(args: argparse.Namespace) -> int:
    from xaimetrics.studies import export_results
    from xaimetrics.studies._config import load_config, open_study
    from xaimetrics.studies._kinds import study_kind

    if args.output is None and args.results_store is None:
        raise invalid("--output", _OWNER, "given (or --results-store)", None)
    study, store = open_study(load_config(args.study))
    kind = study_kind(study)
    with store:
        if args.results_store is not None:
            if not kind.results_rows:
                raise invalid("--results-store", _OWNER, "used with a simulatability study", f"a {kind.name} study",
                              "Export its answers with --output (a Likert study's ratings: ratings.json).")  # fmt: skip
            written = export_results(cast("SimulatabilityStudy", study), store, args.results_store)
            print(f"{written} human rows written to {args.results_store}")
        if args.output is not None:
            print(f"Written: {kind.write_answers(store, args.output)}")
    return 0


def _simulate(args: argparse.Namespace) -> int:
    from xaimetrics.simulators import OpenAICompatibleSimulator, default_simulator
    from xaimetrics.studies import SimulatabilityStudy, load_study, simulate_study
    from xaimetrics.studies._config import load_config
    from xaimetrics.studies._kinds import study_kind

    study = load_study(load_config(args.study).study)
    kind = study_kind(study)
    if not kind.results_rows:
        raise invalid("study", _OWNER, "a simulatability study", f"a {kind.name} study")
    spec: str = args.simulator
    simulator: Simulator
    if spec == "local" or spec.startswith("local:"):
        simulator = default_simulator(*(spec.split(":", 1)[1:]))
    elif spec.startswith("openai:") and len(spec) > len("openai:"):
        simulator = OpenAICompatibleSimulator(
            spec[len("openai:") :], base_url=args.base_url, api_key_env=args.api_key_env
        )
    else:
        raise invalid("--simulator", _OWNER, "'local', 'local:<gguf name>' or 'openai:<model>'", spec)
    counts = simulate_study(cast(SimulatabilityStudy, study), simulator, args.results_store, name=spec)
    print(
        f"{spec}: {counts['written']} rows written, {counts['skipped']} already stored, {counts['failed']} failed"
    )
    return 0 if counts["failed"] == 0 else 1


def _report(args: argparse.Namespace) -> int:
    from xaimetrics.studies import agreement_report

    if not args.results_store.is_file():
        raise invalid("--results-store", _OWNER, "an existing results store", str(args.results_store))
    grid = None
    if args.study is not None:
        from xaimetrics.studies._config import load_config

        grid = grid_path(Path(load_config(args.study).study))
        if not grid.is_file():
            raise invalid("--study", _OWNER, f"a study with its grid file beside it ({grid.name})", str(args.study),
                          "Create the study again with this version (study create writes it), or leave --study out.")  # fmt: skip
    report = agreement_report(args.results_store, human=args.human, grid=grid)
    paths = report.save(args.output)
    for line in report.summary():
        print(line)
    print(f"Report: {paths['markdown']}, {paths['html']}")
    return 0
