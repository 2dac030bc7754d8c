"""A sub-command that waits as ``xaimetrics detection`` does on a slow reader: its main thread waits for a call
running in a pool thread (not a daemon: the interpreter joins it at exit). For the real-signal tests of
``tests/test_interrupts.py``; added to the parser by ``run_cli``."""

from __future__ import annotations

import concurrent.futures
import sys
import time


def _call() -> None:
    print("call started", flush=True)
    time.sleep(60)


def _wait(args: object) -> int:
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    pool.submit(_call).result()
    return 0


def register(subparsers) -> None:
    subparsers.add_parser("wait-for-call").set_defaults(func=_wait)


def run_cli() -> None:
    from xaimetrics import cli

    cli.COMMAND_MODULES = (*cli.COMMAND_MODULES, "waiting_command")
    sys.exit(cli.main(["wait-for-call"]))


if __name__ == "__main__":
    run_cli()
