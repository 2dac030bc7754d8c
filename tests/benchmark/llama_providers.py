"""Providers whose ``hanging`` simulator is the crash-test model of ``tests/crashing_llama.py`` (in its worker
process, ``CRASH_AT`` chooses the fault), for real ``xaimetrics benchmark run`` processes:
``--providers llama_providers:PROVIDERS`` with ``FAKE_GGUF`` naming a file for its ``model_path``."""

from __future__ import annotations

import os

from toy_grid import PROVIDER_KWARGS

from crashing_llama import CrashingLlama, register
from xaimetrics.benchmark import Providers

register()


def _hanging() -> CrashingLlama:
    return CrashingLlama(os.environ["FAKE_GGUF"], portable=True, max_tokens=8)  # call_timeout: the CLI's


PROVIDERS = Providers(**{**PROVIDER_KWARGS, "simulators": {"hanging": _hanging}})
