"""Every dependency range in pyproject.toml has an upper bound, and the versions installed here (the tested
ones) satisfy every range."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import pytest

packaging_requirements = pytest.importorskip("packaging.requirements")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")

PYPROJECT = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8"))


def _requirements():
    project = PYPROJECT["project"]
    yield from project["dependencies"]
    for extra in project["optional-dependencies"].values():
        yield from (r for r in extra if not r.startswith("xaimetrics["))
    yield from PYPROJECT["build-system"]["requires"]


REQUIREMENTS = [packaging_requirements.Requirement(text) for text in _requirements()]


@pytest.mark.parametrize("requirement", REQUIREMENTS, ids=str)
def test_every_range_has_an_upper_bound(requirement):
    operators = {spec.operator for spec in requirement.specifier}
    assert operators & {"<", "<=", "==", "~=", "==="}, f"{requirement} has no upper bound"


@pytest.mark.parametrize("requirement", REQUIREMENTS, ids=str)
def test_installed_versions_satisfy_the_ranges(requirement):
    if requirement.marker is not None and not requirement.marker.evaluate():
        pytest.skip(f"{requirement.marker} does not apply here")
    try:
        installed = metadata.version(requirement.name)
    except metadata.PackageNotFoundError:
        pytest.skip(f"{requirement.name} is not installed here")
    assert requirement.specifier.contains(installed, prereleases=True), f"{requirement.name} {installed}"
