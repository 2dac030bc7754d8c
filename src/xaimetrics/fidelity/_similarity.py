"""Similarity and distance functions between two batches of explanations (or inputs), one value per row.

The functions Quantus' robustness and randomisation metrics use (``quantus.functions.similarity_func``), with
the same definitions, vectorised over a batch: ``a`` and ``b`` have shape ``(n, *features)`` and the result has
shape ``(n,)`` (float64). Rows are flattened. scipy computes what it computes per row anyway (ranks, Kendall's
τ-b); the rest is a few numpy reductions. NaN in a row gives NaN for that row; a correlation of a constant row is
undefined (NaN), as in scipy.

SSIM is Wang et al. (2004) with scikit-image's defaults (Quantus calls ``skimage.metrics.structural_similarity``):
a 7 × 7 uniform window, sample covariances (``N / (N − 1)``), ``K1 = 0.01``, ``K2 = 0.03``, the mean over the
windows that fit inside the image, and ``data_range`` the range of both images together (Quantus and Xplique);
torchmetrics' SSIM pads the image and uses population covariances, so its values differ and it is not reused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from xaimetrics._validation import Check, Interval, caller, invalid, validate_params

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike

# The public functions are listed once, in xaimetrics.fidelity's __all__; the helpers here are private.


def _array(value: ArrayLike) -> np.ndarray:
    """A float64 numpy copy of an array-like or a (detached, CPU) torch tensor."""
    detach = getattr(value, "detach", None)
    if callable(detach):
        return np.asarray(detach().cpu().numpy(), dtype=np.float64)
    return np.array(value, dtype=np.float64)


def _rows(a: ArrayLike, b: ArrayLike, *, min_features: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Both batches as float64 arrays of shape ``(n, features)`` after checking they match."""
    owner = caller()
    x, y = _array(a), _array(b)
    if x.ndim < 2:
        raise invalid(
            "a", owner, "a batch of shape (n, *features)", f"shape {x.shape}", "Add a batch axis: a[None]."
        )
    if x.shape != y.shape:
        raise invalid("b", owner, f"the shape of 'a' {x.shape}", f"shape {y.shape}")
    x = x.reshape(x.shape[0], -1)
    y = y.reshape(y.shape[0], -1)
    if x.shape[1] < min_features:
        raise invalid("a", owner, f"rows of at least {min_features} features", f"{x.shape[1]} features")
    return x, y


def _pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row-wise Pearson correlation; NaN where a row is constant (relative tolerance, as scipy warns)."""
    x = x - x.mean(axis=1, keepdims=True)
    y = y - y.mean(axis=1, keepdims=True)
    sx = np.sqrt((x * x).sum(axis=1))
    sy = np.sqrt((y * y).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (x * y).sum(axis=1) / (sx * sy)
    return np.where((sx > 0) & (sy > 0), np.clip(r, -1.0, 1.0), np.nan)


@validate_params({})
def correlation_pearson(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Pearson correlation between each row of ``a`` and the same row of ``b``: shape ``(n,)``, in [−1, 1].

    NaN where a row is constant (undefined). Equal to ``scipy.stats.pearsonr`` row by row.

    Example:
        >>> correlation_pearson([[1.0, 2.0, 4.0], [0.0, 1.0, 0.0]], [[1.0, 3.0, 2.0], [2.0, 0.0, 1.0]]).round(4)
        array([ 0.3273, -0.866 ])
    """
    return _pearson(*_rows(a, b, min_features=2))


@validate_params({})
def correlation_spearman(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Spearman rank correlation per row (ties get their average rank): shape ``(n,)``, in [−1, 1].

    The Pearson correlation of the rows' ranks (``scipy.stats.rankdata``, ``method="average"``); equal to
    ``scipy.stats.spearmanr`` row by row; NaN where a row is constant.

    Example:
        >>> correlation_spearman([[1.0, 2.0, 2.0, 5.0]], [[4.0, 3.0, 1.0, 0.0]]).round(4)
        array([-0.9487])
    """
    from scipy.stats import rankdata

    x, y = _rows(a, b, min_features=2)
    return _pearson(rankdata(x, axis=1), rankdata(y, axis=1))


@validate_params({})
def correlation_kendall_tau(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Kendall's τ-b per row (``scipy.stats.kendalltau``, ties corrected): shape ``(n,)``, in [−1, 1].

    Example:
        >>> correlation_kendall_tau([[1.0, 2.0, 2.0, 5.0]], [[4.0, 3.0, 1.0, 0.0]]).round(4)
        array([-0.9129])
    """
    from scipy.stats import kendalltau

    x, y = _rows(a, b, min_features=2)
    out = np.empty(x.shape[0])
    for i, (row_a, row_b) in enumerate(zip(x, y, strict=True)):
        if (
            np.ptp(row_a) == 0
            or np.ptp(row_b) == 0
            or not np.isfinite(row_a).all()
            or not np.isfinite(row_b).all()
        ):
            out[i] = np.nan
        else:
            out[i] = kendalltau(row_a, row_b).statistic
    return out


@validate_params({})
def distance_euclidean(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Euclidean (L2) distance per row: shape ``(n,)``, ≥ 0.

    Example:
        >>> distance_euclidean([[0.0, 3.0], [1.0, 1.0]], [[4.0, 0.0], [1.0, 2.0]])
        array([5., 1.])
    """
    x, y = _rows(a, b)
    return np.sqrt(((x - y) ** 2).sum(axis=1))


@validate_params({})
def distance_manhattan(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Manhattan (L1) distance per row: shape ``(n,)``, ≥ 0.

    Example:
        >>> distance_manhattan([[0.0, 3.0], [1.0, 1.0]], [[4.0, 0.0], [1.0, 2.0]])
        array([7., 1.])
    """
    x, y = _rows(a, b)
    return np.abs(x - y).sum(axis=1)


@validate_params({})
def distance_chebyshev(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Chebyshev (L∞) distance per row: shape ``(n,)``, ≥ 0.

    Example:
        >>> distance_chebyshev([[0.0, 3.0], [1.0, 1.0]], [[4.0, 0.0], [1.0, 2.0]])
        array([4., 1.])
    """
    x, y = _rows(a, b)
    return np.abs(x - y).max(axis=1)


@validate_params({})
def mse(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Mean squared difference per row: shape ``(n,)``, ≥ 0.

    Example:
        >>> mse([[0.0, 3.0], [1.0, 1.0]], [[4.0, 0.0], [1.0, 2.0]])
        array([12.5,  0.5])
    """
    x, y = _rows(a, b)
    return ((x - y) ** 2).mean(axis=1)


_DISTANCES: dict[str, Callable[[ArrayLike, ArrayLike], np.ndarray]] = {
    "euclidean": distance_euclidean,
    "manhattan": distance_manhattan,
    "chebyshev": distance_chebyshev,
}


@validate_params({})
def lipschitz_constant(
    a: ArrayLike,
    b: ArrayLike,
    c: ArrayLike,
    d: ArrayLike,
    *,
    norm_numerator: str = "manhattan",
    norm_denominator: str = "euclidean",
    eps: float = 1e-10,
) -> np.ndarray:
    """Local Lipschitz estimate per row: ``‖a − b‖ / (‖c − d‖ + eps)``, shape ``(n,)``, ≥ 0.

    ``a, b`` are explanations (or outputs) of the inputs ``c, d``. The defaults are Quantus'
    (``lipschitz_constant``: Manhattan over Euclidean, ``eps = 1e-10``); each norm is ``"euclidean"``,
    ``"manhattan"`` or ``"chebyshev"``.

    Example:
        >>> lipschitz_constant([[1.0, 2.0]], [[2.0, 0.0]], [[0.0, 0.0]], [[3.0, 4.0]]).round(6)
        array([0.6])
    """
    for name, value in (("norm_numerator", norm_numerator), ("norm_denominator", norm_denominator)):
        if value not in _DISTANCES:
            raise invalid(name, "lipschitz_constant", "one of 'euclidean', 'manhattan', 'chebyshev'", value)
    x, y = _rows(a, b)
    u, v = _rows(c, d)
    if u.shape[0] != x.shape[0]:
        raise invalid(
            "c", "lipschitz_constant", f"{x.shape[0]} rows (one input per explanation)", f"{u.shape[0]} rows"
        )
    return _DISTANCES[norm_numerator](x, y) / (_DISTANCES[norm_denominator](u, v) + eps)


@validate_params(
    {
        "win_size": Check(
            lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 3 and v % 2 == 1,
            "an odd integer ≥ 3",
        ),
        "data_range": (Interval(float, 0, closed="neither"), None),
    }
)
def ssim(
    a: ArrayLike,
    b: ArrayLike,
    *,
    win_size: int = 7,
    data_range: float | None = None,
    k1: float = 0.01,
    k2: float = 0.03,
) -> np.ndarray:
    """Structural similarity of two batches of images ``(n, H, W)`` or ``(n, C, H, W)``: shape ``(n,)``.

    ``SSIM = (2 μa μb + C1)(2 σab + C2) / ((μa² + μb² + C1)(σa² + σb² + C2))`` in every ``win_size × win_size``
    window (uniform weights, sample covariances), averaged over the windows inside the image and over channels;
    ``C1 = (k1 L)²``, ``C2 = (k2 L)²`` with ``L = data_range``, by default the range of both images of the row
    (1 where both are one constant, as Xplique). Range [−1, 1]; 1 for identical images.

    Example:
        >>> import numpy as np
        >>> image = np.arange(49.0).reshape(1, 7, 7)
        >>> float(ssim(image, image)[0]), round(float(ssim(image, image[:, ::-1])[0]), 4)
        (1.0, -0.9501)
    """
    import torch

    owner = caller()
    x, y = _array(a), _array(b)
    if x.ndim not in (3, 4):
        raise invalid("a", owner, "images of shape (n, H, W) or (n, C, H, W)", f"shape {x.shape}")
    if x.shape != y.shape:
        raise invalid("b", owner, f"the shape of 'a' {x.shape}", f"shape {y.shape}")
    if min(x.shape[-2:]) < win_size:
        raise invalid(
            "win_size",
            owner,
            f"at most the image side ({min(x.shape[-2:])})",
            win_size,
            "Pass a smaller odd win_size.",
        )
    if x.ndim == 3:
        x, y = x[:, None], y[:, None]
    n = x.shape[0]
    if data_range is None:
        both = np.concatenate([x.reshape(n, -1), y.reshape(n, -1)], axis=1)
        ranges = both.max(axis=1) - both.min(axis=1)
    else:
        ranges = np.full(n, float(data_range))
    constant = ranges == 0
    scale = torch.as_tensor(np.where(constant, 1.0, ranges))[:, None, None, None]
    tx, ty = torch.as_tensor(x), torch.as_tensor(y)

    def local_mean(t: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.avg_pool2d(t.flatten(0, 1)[:, None], win_size, stride=1).view(
            t.shape[0], t.shape[1], *(s - win_size + 1 for s in t.shape[-2:])
        )

    mx, my = local_mean(tx), local_mean(ty)
    correction = win_size**2 / (win_size**2 - 1)
    vx = correction * (local_mean(tx * tx) - mx * mx)
    vy = correction * (local_mean(ty * ty) - my * my)
    cxy = correction * (local_mean(tx * ty) - mx * my)
    c1 = (k1 * scale) ** 2
    c2 = (k2 * scale) ** 2
    index = ((2 * mx * my + c1) * (2 * cxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
    values = index.mean(dim=(1, 2, 3)).numpy()
    return np.where(constant, 1.0, values)
