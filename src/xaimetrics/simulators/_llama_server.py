"""llama.cpp's OpenAI-compatible server (extra ``server``) under xaimetrics' weights policy.

``python -m llama_cpp.server`` loads models with llama.cpp's default weight buffers, which crash at the first
decode on some AMX machines (issue #20). This entry point takes the same arguments and applies
:func:`~xaimetrics.simulators._llama_weights.weights_policy` first (portable on AMX CPUs, or as
``XAIMETRICS_LLAMA_PORTABLE`` says)::

    python -m xaimetrics.simulators._llama_server --model model.gguf --host 127.0.0.1 --port 8080

The server is its own process, so a crash there never ends the caller's; the policy keeps it serving.
"""

from __future__ import annotations

import runpy
import sys

from xaimetrics._optional import import_optional
from xaimetrics.simulators._llama_weights import llama_weights, weights_policy

__all__ = ["main"]


def main() -> None:
    """Run ``llama_cpp.server`` with the weights policy in force (arguments from ``sys.argv``)."""
    llama_cpp = import_optional("llama_cpp", extra="server", caller="the llama.cpp server")
    policy = weights_policy(None)
    print(f"xaimetrics: llama.cpp weights {policy.label} ({policy.reason})", file=sys.stderr, flush=True)
    with llama_weights(llama_cpp, portable=policy.portable):
        runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
