"""What the processor can do, as far as a native kernel's choice (and crash) depends on it.

llama.cpp picks its CPU kernels and weight layouts from the processor's features: AVX2 and AVX-512 vector
kernels, and on Intel CPUs with AMX a separate AMX weight buffer. A crash report that names the CPU and these
features can be tied to a machine; :func:`cpu_info` reads them once (``/proc/cpuinfo`` on Linux).
"""

from __future__ import annotations

import functools
import platform
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CpuInfo", "cpu_info"]

#: the features whose presence changes which llama.cpp kernels or weight buffers run
_FEATURES = {
    "AVX2": ("avx2",),
    "AVX-512": ("avx512f",),
    "AMX": ("amx_tile", "amx_int8", "amx_bf16"),
}


@dataclass(frozen=True)
class CpuInfo:
    """A processor's model name and feature flags (lower case, as Linux spells them).

    Example:
        >>> cpu = CpuInfo("Intel Xeon", frozenset({"avx2", "avx512f", "amx_tile", "amx_int8"}))
        >>> cpu.amx, cpu.summary()
        (True, 'Intel Xeon: AVX2 yes, AVX-512 yes, AMX yes (amx_int8 amx_tile)')
    """

    model: str
    flags: frozenset[str]

    @property
    def amx(self) -> bool:
        """Whether the CPU reports any AMX feature (llama.cpp then offers its AMX weight buffer)."""
        return any(flag in self.flags for flag in _FEATURES["AMX"])

    def summary(self) -> str:
        """One line: the model and, for each relevant feature, yes or no (AMX with its flags)."""
        parts = []
        for name, flags in _FEATURES.items():
            present = sorted(flag for flag in flags if flag in self.flags)
            detail = f" ({' '.join(present)})" if name == "AMX" and present else ""
            parts.append(f"{name} {'yes' if present else 'no'}{detail}")
        return f"{self.model}: {', '.join(parts)}"


def _parse_cpuinfo(text: str) -> CpuInfo:
    model, flags = "", ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and not model:
            model = value.strip()
        elif key == "flags" and not flags:
            flags = value
    return CpuInfo(model or platform.processor() or platform.machine(), frozenset(flags.split()))


@functools.cache
def cpu_info(path: str = "/proc/cpuinfo") -> CpuInfo:
    """This machine's CPU (model name and flags); flags are empty where ``/proc/cpuinfo`` does not exist.

    Example:
        >>> isinstance(cpu_info().flags, frozenset)
        True
    """
    try:
        return _parse_cpuinfo(Path(path).read_text(errors="replace"))
    except OSError:
        return CpuInfo(platform.processor() or platform.machine() or "unknown CPU", frozenset())
