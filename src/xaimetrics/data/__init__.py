"""Text-classification datasets that load offline, and the paper's punctuation-split augmentation.

Example:
    >>> from xaimetrics.data import load_dataset
    >>> load_dataset("rotten_tomatoes", split="validation").class_names
    ['negative', 'positive']
"""

from xaimetrics.data._augmentation import augment_with_punctuation_splits, split_on_punctuation
from xaimetrics.data._dataset import TextDataset
from xaimetrics.data._loading import OFFLINE_DATASETS, load_dataset

__all__ = [
    "OFFLINE_DATASETS",
    "TextDataset",
    "augment_with_punctuation_splits",
    "load_dataset",
    "split_on_punctuation",
]
