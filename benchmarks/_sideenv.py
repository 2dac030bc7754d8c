"""Side environments for reference libraries (Interpreto, Quantus, PyC) that never install a second torch.

``python -m venv --system-site-packages`` inherits the packages of the *base* interpreter: run from inside a
virtual environment, the side environment does not see that environment's torch and pip installs another
one (1.2 GB, and a different version). Instead the side environment gets no inherited packages and a ``.pth``
file that adds the *active* interpreter's site-packages (through ``site.addsitedir``, so that their own
``.pth`` files — editable installs — work too), and pip runs under a constraints file made from
``pip freeze`` of the active environment, so nothing it already has can change version. The result is
checked (torch and transformers must be the active ones, and no torch may sit in the side environment);
every failure raises ``SystemExit`` with the step and pip's message.
"""

from __future__ import annotations

import contextlib
import site
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path


def active_site_dirs() -> list[str]:
    """The site-packages of the running interpreter (a virtual environment's, when it runs in one)."""
    dirs = [*site.getsitepackages(), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return list(dict.fromkeys(d for d in dirs if Path(d).is_dir()))


def frozen_requirements() -> list[str]:
    """``name==version`` of every distribution of the active environment (``pip freeze``), as constraints."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "freeze", "--exclude-editable", "--disable-pip-version-check"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [line for line in done.stdout.splitlines() if "==" in line and not line.startswith("-")]


def _versions() -> dict[str, str]:
    import importlib.metadata

    versions = {}
    for name in ("torch", "transformers"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            versions[name] = importlib.metadata.version(name)
    return versions


def side_environment(
    venv: Path, *, no_deps: Sequence[str], requirements: Sequence[str] = (), check: str = "pass"
) -> Path:
    """Create (once) a side environment on top of the active one and return its python.

    Args:
        venv: where to create it (a folder under /tmp or a git-ignored one).
        no_deps: packages installed with ``--no-deps`` (the reference libraries, whose pins would fight ours).
        requirements: their run-time dependencies, installed with dependencies, under the constraints.
        check: Python code that must run in the side environment (the imports the benchmark needs).
    """
    python = venv / "bin" / "python"
    marker = venv / ".xaimetrics-ready"
    versions = _versions()
    signature = f"{sys.executable} {sorted(versions.items())} {list(no_deps)} {list(requirements)}\n"
    if marker.exists() and marker.read_text() == signature:
        return python
    step, purelib = "creating the virtual environment", ""
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        step = "linking the active environment"
        purelib = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        lines = [f"import site; site.addsitedir({d!r})" for d in active_site_dirs()]
        (Path(purelib) / "_xaimetrics_active_env.pth").write_text("\n".join(lines) + "\n")
        step = "freezing the active environment's versions"
        constraints = venv / "constraints.txt"
        constraints.write_text("\n".join(frozen_requirements()) + "\n")
        pip = [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-c",
            str(constraints),
        ]
        step = f"installing {' '.join(no_deps)}"
        subprocess.run([*pip, "--no-deps", *no_deps], check=True, capture_output=True, text=True)
        if requirements:
            step = f"installing {' '.join(requirements)}"
            subprocess.run([*pip, *requirements], check=True, capture_output=True, text=True)
        step = "checking the environment"
        probe = (
            "import importlib.metadata as m, json\n"
            f"{check}\n"
            "import torch, transformers\n"
            "print(json.dumps({'torch': m.version('torch'), 'transformers': m.version('transformers'),"
            " 'file': torch.__file__}))"
        )
        seen = subprocess.run([str(python), "-c", probe], check=True, capture_output=True, text=True)
    except (subprocess.CalledProcessError, OSError) as error:
        detail = (getattr(error, "stderr", None) or "").strip()[-3000:]
        raise SystemExit(
            f"The side environment {venv} could not be built while {step}: {error}\n{detail}"
        ) from error
    import json

    found = json.loads(seen.stdout.strip().splitlines()[-1])
    second = sorted(p.name for p in Path(purelib).glob("torch-*.dist-info"))
    inside = str(Path(found["file"]).resolve()).startswith(str(venv.resolve()))
    expected = {name: versions.get(name) for name in ("torch", "transformers")}
    if {name: found[name] for name in expected} != expected or second or inside:
        raise SystemExit(
            f"The side environment {venv} sees torch {found['torch']} from {found['file']} and transformers "
            f"{found['transformers']}; the active environment has {expected}. A second torch was installed "
            f"there ({second or 'torch imported from inside it'}): delete {venv} and report this."
        )
    marker.write_text(signature)
    return python
