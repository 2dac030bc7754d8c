"""xaimetrics: evaluate explanations of machine-learning models.

Families (import from them, e.g. ``from xaimetrics.concepts import NMF``):

- ``xaimetrics.data``: offline text-classification datasets and augmentation.
- ``xaimetrics.models``: ``SplitClassifier`` (f = g∘h) and the demo classifier.
- ``xaimetrics.concepts``: concept extractors, interpretation, importance and metrics.

Every metric of every family is listed, with its direction, range, data types and category, in
:data:`METRICS` (``xaimetrics.metrics()`` as a DataFrame; ``xaimetrics metrics`` on the command line).

Importing ``xaimetrics`` is cheap: heavy dependencies load when first used.
"""

from __future__ import annotations

from xaimetrics import _logging  # noqa: F401  (a NullHandler on the "xaimetrics" logger: silent by default)
from xaimetrics._metric_entries import METRICS
from xaimetrics._metric_listing import metrics
from xaimetrics._metric_registry import MetricInfo

__version__ = "0.1.0"

__all__ = ["METRICS", "MetricInfo", "__version__", "metrics"]
