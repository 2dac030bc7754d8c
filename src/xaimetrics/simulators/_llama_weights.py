"""Where llama.cpp keeps a model's weights: the portable CPU buffer, or its "extra" (repacked / AMX) buffers.

By default llama.cpp stores quantised weights in extra buffer types when the CPU backend offers them: weights
repacked for its AVX2 / AVX-512 kernels, and on CPUs with AMX an AMX buffer. On Intel CPUs with AMX in some
virtual machines the AMX path dies with a general-protection fault at the first decode (issue #20): the whole
process ends with SIGSEGV. Keeping the weights in the plain CPU buffer (the model parameter
``use_extra_bufts = false``, llama.cpp's ``--no-repack``) avoids it.

The policy (:func:`weights_policy`):

- ``portable=True`` / ``XAIMETRICS_LLAMA_PORTABLE=1`` / ``--portable-llm``: always the plain buffer;
- ``portable=False`` / ``XAIMETRICS_LLAMA_PORTABLE=0``: always llama.cpp's default (extra buffers);
- ``None`` (default, ``auto``): the plain buffer on CPUs that report AMX, llama.cpp's default elsewhere
  (there the extra buffer is the repacked layout, measured in ``benchmarks/bench_llama_weights.py``).

Whatever the policy, :class:`LlamaCppSimulator` loads the model and runs its first decode in a worker process
(:mod:`xaimetrics.simulators._worker`): a crash there falls back to the plain buffer once (automatic policy)
or becomes a :class:`~xaimetrics.exceptions.LocalModelCrashed` error naming the CPU and the switch.

llama-cpp-python has no constructor argument for ``use_extra_bufts``; :func:`llama_weights` sets it on the
default model parameters while a model is constructed (the only place ``Llama`` reads them).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType

from xaimetrics._validation import invalid
from xaimetrics.simulators._cpu import CpuInfo, cpu_info

__all__ = ["PORTABLE_ENV", "WeightsPolicy", "llama_weights", "weights_policy"]

#: environment variable that forces the portable weights (``1``) or llama.cpp's default (``0``)
PORTABLE_ENV = "XAIMETRICS_LLAMA_PORTABLE"
_TRUE, _FALSE, _AUTO = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}, {"", "auto"}
_PATCH_LOCK = threading.Lock()


@dataclass(frozen=True)
class WeightsPolicy:
    """Whether to keep the weights in the plain CPU buffer, why, and whether the user chose it.

    Example:
        >>> weights_policy(True)
        WeightsPolicy(portable=True, reason='portable=True', chosen=True)
    """

    portable: bool
    reason: str
    #: chosen by the user (argument or environment): no automatic fallback overrides it
    chosen: bool

    @property
    def label(self) -> str:
        """``"portable"`` (plain CPU buffer) or ``"accelerated"`` (llama.cpp's extra buffers)."""
        return "portable" if self.portable else "accelerated"


def weights_policy(portable: bool | None, cpu: CpuInfo | None = None) -> WeightsPolicy:
    """Resolve the weights policy from the argument, then :data:`PORTABLE_ENV`, then the CPU.

    Args:
        portable: ``True`` / ``False`` to choose; ``None`` reads :data:`PORTABLE_ENV`, and when it is unset or
            ``auto``, picks the plain buffer exactly on CPUs that report AMX.
        cpu: the processor (default: this machine's, :func:`cpu_info`).

    Raises:
        InvalidParameterError: ``portable`` is not a bool or ``None``, or the environment variable holds
            something other than 1/0/true/false/yes/no/on/off/auto.

    Example:
        >>> amx = CpuInfo("Xeon", frozenset({"amx_tile", "amx_int8"}))
        >>> import os; os.environ.pop(PORTABLE_ENV, None) and None
        >>> weights_policy(None, amx).label, weights_policy(None, amx).reason[:26]
        ('portable', 'auto: this CPU has AMX (ll')
        >>> weights_policy(None, CpuInfo("EPYC", frozenset({"avx2"}))).portable
        False
    """
    if portable is not None and not isinstance(portable, bool):
        raise invalid("portable", "LlamaCppSimulator", "True, False or None (automatic)", portable)
    if portable is not None:
        return WeightsPolicy(portable, f"portable={portable}", chosen=True)
    value = os.environ.get(PORTABLE_ENV, "").strip().lower()
    if value in _TRUE | _FALSE:
        return WeightsPolicy(value in _TRUE, f"{PORTABLE_ENV}={value}", chosen=True)
    if value not in _AUTO:
        raise invalid(
            PORTABLE_ENV, "the environment", "1, 0 or auto", os.environ[PORTABLE_ENV],
            f"Set {PORTABLE_ENV}=1 for the portable weights, 0 for llama.cpp's default, or unset it.",
        )  # fmt: skip
    cpu = cpu or cpu_info()
    if cpu.amx:
        return WeightsPolicy(
            True,
            "auto: this CPU has AMX (llama.cpp's AMX weight buffer crashed at the first decode on such machines)",
            chosen=False,
        )
    return WeightsPolicy(False, "auto: no AMX on this CPU", chosen=False)


@contextlib.contextmanager
def llama_weights(llama_cpp: ModuleType, *, portable: bool) -> Iterator[None]:
    """Within the block, models constructed by ``llama_cpp.Llama`` keep their weights out of extra buffers.

    ``Llama.__init__`` copies ``llama_model_default_params()`` and loads the model at once; the block replaces
    that function (of the ``llama_cpp.llama_cpp`` bindings) by one with ``use_extra_bufts = False``. A lock keeps
    two threads from patching at once. With ``portable=False`` nothing changes.

    Raises:
        InvalidParameterError: the installed bindings have no ``use_extra_bufts`` field (an older
            llama-cpp-python), so the portable weights cannot be chosen; the message names the tested version.
    """
    if not portable:
        yield
        return
    bindings = llama_cpp.llama_cpp
    original = bindings.llama_model_default_params
    probe = original()
    if not hasattr(probe, "use_extra_bufts"):
        raise invalid(
            "portable", "LlamaCppSimulator", "False with this llama-cpp-python (no use_extra_bufts field)", True,
            "Install the tested version: pip install 'llama-cpp-python==0.3.36'.",
        )  # fmt: skip

    def portable_defaults():
        params = original()
        params.use_extra_bufts = False
        return params

    with _PATCH_LOCK:
        bindings.llama_model_default_params = portable_defaults
        try:
            yield
        finally:
            bindings.llama_model_default_params = original
