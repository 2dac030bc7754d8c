"""Command-line arguments shared by the sub-commands (``consim``, ``demo``…), written once.

Choices come from the registries when the parser is built, so that a registered simulator kind shows in every
``--help``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from xaimetrics._registry import Registry

if TYPE_CHECKING:
    import pandas as pd

    from xaimetrics.tracking import Tracker

#: what ``add_argument`` is called on: a parser or one of its argument groups (argparse's common base class)
Arguments = argparse._ActionsContainer
_T = TypeVar("_T")

__all__ = [
    "add_data_arguments",
    "add_portable_argument",
    "add_progress_argument",
    "add_registry_argument",
    "add_simulator_arguments",
    "add_tracking_arguments",
    "apply_portable_argument",
    "data_options",
    "described",
    "grid_trackers",
    "response_cache",
    "track_grid",
]

#: the options that read a dataset file, spelled as :func:`xaimetrics.data.load_dataset`'s keywords and the grid
#: file's keys; the command line spells them with dashes (``--text-column``)
DATA_OPTIONS: tuple[str, ...] = ("text_column", "label_column", "encoding", "drop_empty_rows")


#: what ``--dataset`` reads, wherever a command takes one
DATASET_HELP = (
    "an offline dataset, a recipe, a data file (.csv, .tsv, .jsonl, .json, .parquet; any column names with "
    "--text-column/--label-column) or a hub id (default: %(default)s)"
)


def add_data_arguments(parser: Arguments, *, dataset: str | None = None, help: str = DATASET_HELP) -> None:
    """Add ``--text-column``, ``--label-column``, ``--encoding`` and ``--drop-empty-rows``: how a dataset file is
    read, with the names of :func:`xaimetrics.data.load_dataset`'s keywords and of the grid file's keys; with a
    default ``dataset``, ``--dataset`` first (described by ``help``).

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_data_arguments(parser, dataset="bbc_news")
        >>> args = parser.parse_args(["--text-column", "Content", "--label-column", "Author"])
        >>> args.dataset, data_options(args)
        ('bbc_news', {'text_column': 'Content', 'label_column': 'Author'})
    """
    if dataset is not None:
        parser.add_argument("--dataset", default=dataset, help=help)
    parser.add_argument(
        "--text-column", default=None, help="the column of a data file holding the texts (default: text, ...)"
    )
    parser.add_argument(
        "--label-column",
        default=None,
        help="the column of a data file holding the labels (default: label, ...)",
    )
    parser.add_argument(
        "--encoding", default=None, help="the text encoding of a data file, e.g. latin-1 (default: utf-8)"
    )
    parser.add_argument(
        "--drop-empty-rows",
        action="store_true",
        help="drop the rows of a data file with an empty text or label (default: refuse them, naming their lines)",
    )


def data_options(args: argparse.Namespace) -> dict[str, object]:
    """The :func:`~xaimetrics.data.load_dataset` keywords the parsed data arguments set (only those given)."""
    values = {name: getattr(args, name, None) for name in DATA_OPTIONS}
    return {name: value for name, value in values.items() if value not in (None, False)}


def add_progress_argument(parser: Arguments) -> None:
    """Add ``--no-progress`` (alias ``--quiet``): no progress bar at all, transformers' and huggingface_hub's
    included (the command line calls :func:`xaimetrics._progress.silence_progress_bars`; ``TQDM_DISABLE=1``
    does the same).

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_progress_argument(parser)
        >>> parser.parse_args(["--quiet"]).no_progress, parser.parse_args([]).no_progress
        (True, False)
    """
    parser.add_argument(
        "--no-progress", "--quiet", dest="no_progress", action="store_true", help="no progress bars at all"
    )


def add_simulator_arguments(parser: Arguments, *, default: str, local: str, api_key_env: bool = True) -> None:
    """Add ``--simulator`` (choices from :data:`~xaimetrics.simulators.SIMULATORS`), ``--base-url``,
    ``--no-cache`` and, with ``api_key_env``, ``--api-key-env`` to ``parser`` (or an argument group).

    ``local`` says what ``'local'`` stands for in this command.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_simulator_arguments(parser, default="perfect", local="the offline GGUF model")
        >>> args = parser.parse_args(["--simulator", "openai:m", "--base-url", "http://127.0.0.1:8080/v1"])
        >>> args.simulator, args.base_url, args.api_key_env, args.no_cache
        ('openai:m', 'http://127.0.0.1:8080/v1', 'OPENAI_API_KEY', False)
    """
    from xaimetrics.simulators import simulator_choices

    parser.add_argument(
        "--simulator",
        default=default,
        help=f"{', '.join(simulator_choices())}: 'local' is {local}, 'openai:<model>' any OpenAI-compatible "
        "server (with --base-url), 'perfect' answers the model's predictions (a pipeline check), 'lexical' is "
        "a literal reader of the prompt's words (a reference, no LLM), 'human' asks you at the terminal "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--base-url", default=None, help="server URL for 'openai:' simulators, e.g. http://127.0.0.1:8080/v1"
    )
    if api_key_env:
        parser.add_argument(
            "--api-key-env",
            default="OPENAI_API_KEY",
            help="environment variable holding the API key (default: %(default)s)",
        )
    parser.add_argument("--no-cache", action="store_true", help="do not use the persistent response cache")
    add_portable_argument(parser)


def add_portable_argument(parser: Arguments) -> None:
    """Add ``--portable-llm``: keep local llama.cpp weights in the portable CPU buffer (no AMX / repacking), and
    ``--llm-call-timeout``: the base deadline of a local model's call.

    ``xaimetrics`` applies them before the command runs by setting ``XAIMETRICS_LLAMA_PORTABLE=1`` and
    ``XAIMETRICS_LLM_CALL_TIMEOUT`` for this process and its workers (:func:`apply_portable_argument`).

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_portable_argument(parser)
        >>> parser.parse_args(["--portable-llm"]).portable_llm
        True
    """
    parser.add_argument(
        "--portable-llm",
        action="store_true",
        help="load local GGUF models with llama.cpp's portable weights (no AMX or repacked buffers); the same "
        "as XAIMETRICS_LLAMA_PORTABLE=1. Use it if a local model crashes on this CPU",
    )
    parser.add_argument(
        "--llm-call-timeout",
        type=_call_timeout,
        default=None,
        metavar="SECONDS",
        help="the deadline of a local model's call: SECONDS plus 0.01 s per prompt character and 0.25 s per answer "
        "token; a worker past it is killed, the call fails with the reason and the next one starts a new worker "
        "('none': no deadline; default 120, or XAIMETRICS_LLM_CALL_TIMEOUT)",
    )


def _call_timeout(text: str) -> str:
    from xaimetrics._call_timeout import resolve_call_timeout

    if text.strip().lower() != "none":
        try:
            resolve_call_timeout(float(text), owner="the command line")
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a number of seconds > 0 or 'none', got {text!r}"
            ) from None
    return text.strip()


def apply_portable_argument(args: argparse.Namespace) -> None:
    """Set ``XAIMETRICS_LLAMA_PORTABLE=1`` when the parsed arguments hold ``--portable-llm``, and
    ``XAIMETRICS_LLM_CALL_TIMEOUT`` from ``--llm-call-timeout`` (for this process and its workers)."""
    if getattr(args, "portable_llm", False):
        from xaimetrics.simulators._llama_weights import PORTABLE_ENV

        os.environ[PORTABLE_ENV] = "1"
    timeout = getattr(args, "llm_call_timeout", None)
    if timeout is not None:
        from xaimetrics._call_timeout import CALL_TIMEOUT_ENV

        os.environ[CALL_TIMEOUT_ENV] = str(timeout)


def response_cache(args: argparse.Namespace) -> Path | None:
    """The response cache file the parsed ``--no-cache`` asks for (``None``: no cache)."""
    from xaimetrics._cache import cache_dir

    return None if args.no_cache else cache_dir("simulators") / "responses.sqlite"


def add_registry_argument(
    parser: Arguments,
    flag: str,
    registry: Registry[_T],
    *,
    default: str | None,
    default_help: str = "%(default)s",
) -> None:
    """Add an option ``flag`` whose choices are ``registry``'s names, each described in ``--help``.

    ``default_help`` says what the default is, where it is not ``default`` itself (``None``: decided later).

    Example:
        >>> modes = Registry[int]("mode", argument="mode")
        >>> _ = modes.register("strict", 0, description="raise"), modes.register("relaxed", 1, description="fill")
        >>> parser = argparse.ArgumentParser()
        >>> add_registry_argument(parser, "--mode", modes, default="strict")
        >>> parser.parse_args([]).mode, parser.parse_args(["--mode", "relaxed"]).mode
        ('strict', 'relaxed')
    """
    parser.add_argument(
        flag,
        default=default,
        choices=registry.names(),
        help=f"{described(registry)} (default: {default_help})",
    )


def described(registry: Registry[_T]) -> str:
    """A registry's names with their descriptions, for ``--help`` (``%`` escaped for argparse).

    Example:
        >>> modes = Registry[int]("mode", argument="mode")
        >>> _ = modes.register("strict", 0, description="raise"), modes.register("relaxed", 1, description="fill 5%")
        >>> described(modes)
        "'strict': raise; 'relaxed': fill 5%%"
    """
    text = "; ".join(f"{entry.name!r}: {entry.description}" for entry in registry.entries())
    return text.replace("%", "%%")


def add_tracking_arguments(parser: Arguments) -> None:
    """Add ``--mlflow-uri`` and ``--wandb`` (log the results to an experiment tracker as well).

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_tracking_arguments(parser)
        >>> args = parser.parse_args(["--mlflow-uri", "file:///tmp/mlruns"])
        >>> args.mlflow_uri, args.wandb
        ('file:///tmp/mlruns', False)
    """
    parser.add_argument(
        "--mlflow-uri", default=None, help="also log to this MLflow tracking URI (extra 'tracking')"
    )
    parser.add_argument(
        "--wandb", action="store_true", help="also log to Weights & Biases, offline mode (extra 'tracking')"
    )


def grid_trackers(
    args: argparse.Namespace, experiment: str, directory: str | os.PathLike[str]
) -> list[Tracker]:
    """The trackers the parsed ``--mlflow-uri`` / ``--wandb`` ask for (W&B files under ``directory``), each
    checked (:meth:`~xaimetrics.tracking.Tracker.check`): call it before a long run to fail first."""
    trackers: list[Tracker] = []
    if getattr(args, "mlflow_uri", None):
        from xaimetrics.tracking import MLflowTracker

        trackers.append(MLflowTracker(tracking_uri=args.mlflow_uri, experiment=experiment))
    if getattr(args, "wandb", False):
        from xaimetrics.tracking import WandbTracker

        trackers.append(WandbTracker(project=experiment, directory=directory))
    for tracker in trackers:
        tracker.check()
    return trackers


def track_grid(
    args: argparse.Namespace,
    frame: pd.DataFrame,
    grid: Mapping[str, object],
    artifacts: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
) -> None:
    """Log the rows (and the report files) to the trackers ``--mlflow-uri`` / ``--wandb`` ask for."""
    from xaimetrics.tracking import log_consim_grid

    for tracker in grid_trackers(args, "xaimetrics-consim", output):
        params = {f"grid.{k}": v for k, v in grid.items() if not isinstance(v, dict | list)}
        run_id = log_consim_grid(frame, tracker, params=params, artifacts=artifacts)
        print(f"Logged to {type(tracker).__name__.removesuffix('Tracker')} run {run_id}")
