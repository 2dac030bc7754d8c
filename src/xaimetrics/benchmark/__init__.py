"""The ConSim evaluation framework: rankings across settings (Copeland voting, paired t-tests).

Example:
    >>> import pandas as pd
    >>> from xaimetrics.benchmark import rank_methods
    >>> rank_methods(pd.DataFrame({"NMF": [0.8, 0.7], "PCA": [0.6, 0.7]}))["rank"].tolist()
    [1, 2]
"""

from xaimetrics.benchmark._ranking import (
    PairwiseDifferences,
    copeland_ranks,
    pairwise_differences,
    pivot_scores,
    rank_methods,
    win_matrix,
)

__all__ = [
    "PairwiseDifferences",
    "copeland_ranks",
    "pairwise_differences",
    "pivot_scores",
    "rank_methods",
    "win_matrix",
]
