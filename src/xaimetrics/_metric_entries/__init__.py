""":data:`METRICS` (exported as ``xaimetrics.METRICS``): every metric of the library, by name.

The entries are data: one table per family (``fidelity.txt``, ``conceptmetrics.txt``, ``concepts.txt``,
``representation.txt``, ``detection.txt``, ``consim.txt``), one block of ``field: value`` lines per metric
(:func:`~xaimetrics._metric_registry.read_entries`: name, direction, range, data, category, reference, the
callables' names in the family, a line). To add a metric, export its callable from the family's ``__init__`` and
add one block to that family's table::

    name: sensitivity_max
    direction: lower
    range: 0, inf
    data: tensor, image, text
    category: robustness
    reference: captum
    callables: sensitivity_max
    description: largest change of the explanation under small input perturbations

then paste ``xaimetrics metrics`` (the regenerated table) between the markers of ``docs/metrics.md``.
``tests/test_metric_registry.py`` fails while an exported metric has no entry or the docs table is stale.
Registering happens here, in the module that defines ``METRICS``, so that the registry is complete whichever
way the module is imported.
"""

from __future__ import annotations

from importlib.resources import files

from xaimetrics._metric_registry import new_registry, read_entries

__all__ = ["METRICS"]

#: the families whose tables are read, in this order
_FAMILIES = ("fidelity", "conceptmetrics", "concepts", "representation", "detection", "consim")

#: every metric of the library, by name, in the order of the families above
METRICS = new_registry()
for _family in _FAMILIES:
    _table = files(__name__).joinpath(f"{_family}.txt").read_text(encoding="utf-8")
    for _entry in read_entries(_family, _table):
        METRICS.register(_entry.name, _entry.info, description=_entry.description, builtin=True)
