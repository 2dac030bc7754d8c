"""xaimetrics: evaluate explanations of machine-learning models.

Families (import from them, e.g. ``from xaimetrics.concepts import NMF``):

- ``xaimetrics.data``: offline text-classification datasets and augmentation.
- ``xaimetrics.models``: ``SplitClassifier`` (f = g∘h) and the demo classifier.
- ``xaimetrics.concepts``: concept extractors, interpretation, importance and metrics.

Importing ``xaimetrics`` is cheap: heavy dependencies load when first used.
"""

from __future__ import annotations

from xaimetrics import _logging  # noqa: F401  (a NullHandler on the "xaimetrics" logger: silent by default)

__version__ = "0.1.0"

__all__ = ["__version__"]
