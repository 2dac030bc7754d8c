""":data:`METRICS` (exported as ``xaimetrics.METRICS``): every metric of the library, by name.

The entries are data, one module per family (``fidelity.py``, ``conceptmetrics.py``, ``concepts.py``,
``representation.py``, ``detection.py``, ``consim.py``), each a tuple ``ENTRIES`` of
:class:`~xaimetrics._metric_registry.Entry`. To add a metric, export its callable from the family's
``__init__`` and add one row to that family's ``ENTRIES``
(:func:`~xaimetrics._metric_registry.family_entries`: name, direction, range, data, category, reference, the
callables' names in the family, a line)::

    ("sensitivity_max", "lower", (0, inf), ("tensor", "image", "text"), "robustness", "captum",
     ("sensitivity_max",),
     "largest change of the explanation under small input perturbations"),

then paste ``xaimetrics metrics`` (the regenerated table) between the markers of ``docs/metrics.md``.
``tests/test_metric_registry.py`` fails while an exported metric has no entry or the docs table is stale.
Registering happens here, in the module that defines ``METRICS``, so that the registry is complete whichever
way the module is imported.
"""

from __future__ import annotations

from xaimetrics._metric_entries import conceptmetrics, concepts, consim, detection, fidelity, representation
from xaimetrics._metric_registry import new_registry

__all__ = ["METRICS"]

#: every metric of the library, by name, in the order of the families below
METRICS = new_registry()
for _family in (fidelity, conceptmetrics, concepts, representation, detection, consim):
    for _entry in _family.ENTRIES:
        METRICS.register(_entry.name, _entry.info, description=_entry.description, builtin=True)
