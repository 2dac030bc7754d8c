"""Text-classification datasets: offline ones, recipes for hub datasets, the user's own files, and the paper's
punctuation-split augmentation.

Example:
    >>> from xaimetrics.data import load_dataset
    >>> load_dataset("rotten_tomatoes", split="validation").class_names
    ['negative', 'positive']
"""

from xaimetrics.data._augmentation import augment_with_punctuation_splits
from xaimetrics.data._dataset import TextDataset
from xaimetrics.data._files import read_table
from xaimetrics.data._loading import OFFLINE_DATASETS, check_dataset, load_dataset
from xaimetrics.data._recipes import DATASET_RECIPES

__all__ = [
    "DATASET_RECIPES",
    "OFFLINE_DATASETS",
    "TextDataset",
    "augment_with_punctuation_splits",
    "check_dataset",
    "load_dataset",
    "read_table",
]
