"""The CPU description read from /proc/cpuinfo: model name and the flags that matter to llama.cpp."""

from __future__ import annotations

from pathlib import Path

from xaimetrics.simulators._cpu import CpuInfo, _parse_cpuinfo, cpu_info

ZEN = CpuInfo("AMD EPYC 7B13", frozenset({"avx2", "fma", "sse4a"}))


def test_cpuinfo_is_parsed_from_the_first_processor() -> None:
    text = (
        "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nflags\t\t: fpu avx2 avx512f amx_tile "
        "amx_int8\n\nprocessor\t: 1\nmodel name\t: other\nflags\t\t: fpu\n"
    )
    cpu = _parse_cpuinfo(text)
    assert cpu.model == "Intel(R) Xeon(R) Platinum 8480+" and cpu.amx
    assert cpu.summary() == (
        "Intel(R) Xeon(R) Platinum 8480+: AVX2 yes, AVX-512 yes, AMX yes (amx_int8 amx_tile)"
    )
    assert ZEN.summary() == "AMD EPYC 7B13: AVX2 yes, AVX-512 no, AMX no" and not ZEN.amx


def test_cpu_info_reads_a_file_and_survives_a_missing_one(tmp_path: Path) -> None:
    path = tmp_path / "cpuinfo"
    path.write_text("processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: sse2 avx2\n", encoding="utf-8")
    cpu = cpu_info(str(path))
    assert cpu == CpuInfo("Test CPU", frozenset({"sse2", "avx2"})) and not cpu.amx
    assert cpu.summary() == "Test CPU: AVX2 yes, AVX-512 no, AMX no"
    missing = cpu_info(str(tmp_path / "absent"))
    assert missing.flags == frozenset() and missing.model
