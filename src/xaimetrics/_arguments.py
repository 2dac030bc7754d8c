"""Command-line arguments shared by the sub-commands (``consim``, ``demo``…), written once.

Choices come from the registries when the parser is built, so that a registered simulator kind shows in every
``--help``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "add_scoring_argument",
    "add_simulator_arguments",
    "add_tracking_arguments",
    "grid_trackers",
    "response_cache",
    "track_grid",
]


def add_simulator_arguments(
    parser: argparse.ArgumentParser | Any, *, default: str, local: str, api_key_env: bool = True
) -> None:
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


def response_cache(args: argparse.Namespace) -> Any:
    """The response cache file the parsed ``--no-cache`` asks for (``None``: no cache)."""
    from xaimetrics._cache import cache_dir

    return None if args.no_cache else cache_dir("simulators") / "responses.sqlite"


def add_scoring_argument(parser: argparse.ArgumentParser | Any, *, default: str) -> None:
    """Add ``--scoring``: ``accuracy`` (eq. 5 on the answer text) or ``probability`` (class probabilities).

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_scoring_argument(parser, default="accuracy")
        >>> parser.parse_args(["--scoring", "probability"]).scoring
        'probability'
    """
    from xaimetrics.consim import SCORINGS

    parser.add_argument(
        "--scoring",
        default=default,
        choices=SCORINGS,
        help="'probability': the simulator's class probabilities (expected accuracy, log-loss, Brier; needs a "
        "local or logprobs simulator); 'accuracy': eq. 5 on the answer text (default: %(default)s)",
    )


def add_tracking_arguments(parser: argparse.ArgumentParser | Any) -> None:
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


def grid_trackers(args: argparse.Namespace, experiment: str, directory: Any) -> list[Any]:
    """The trackers the parsed ``--mlflow-uri`` / ``--wandb`` ask for (W&B files under ``directory``), each
    checked (:meth:`~xaimetrics.tracking.Tracker.check`): call it before a long run to fail first."""
    trackers: list[Any] = []
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
    args: argparse.Namespace, frame: Any, grid: Mapping[str, Any], artifacts: Sequence[Any], output: Any
) -> None:
    """Log the rows (and the report files) to the trackers ``--mlflow-uri`` / ``--wandb`` ask for."""
    from xaimetrics.tracking import log_consim_grid

    for tracker in grid_trackers(args, "xaimetrics-consim", output):
        params = {f"grid.{k}": v for k, v in grid.items() if not isinstance(v, dict | list)}
        run_id = log_consim_grid(frame, tracker, params=params, artifacts=artifacts)
        print(f"Logged to {type(tracker).__name__.removesuffix('Tracker')} run {run_id}")
