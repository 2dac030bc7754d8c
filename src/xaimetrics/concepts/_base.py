"""The shared shell of every concept extractor: parameters, input checks, array conversion and decoding.

A concept extractor learns a concept transformation ``t: H → C`` (:meth:`ConceptExtractor.encode`) and its
(approximate) inverse ``t⁻¹: C → H`` (:meth:`ConceptExtractor.decode`) from activations ``A`` of shape
``(n_samples, n_features)`` (ConSim paper, App. A.3). Every extractor decodes with one affine dictionary,

    ``decode(u) = u @ components_ + bias_``

with ``components_`` of shape ``(n_concepts, n_features)`` (one decoder atom per row) and ``bias_`` of shape
``(n_features,)``, so that code downstream (interpretation, importance, metrics) treats every method alike.

Arrays in, same arrays out: ``fit``/``encode``/``decode`` accept a 2-D ``numpy.ndarray`` or ``torch.Tensor``
and return the kind they were given (torch on the same device and dtype). Learned arrays are stored as numpy;
their torch copies are made once per device and dtype. ``decode`` on torch is differentiable, as is ``encode``
wherever the map is closed-form.
"""

from __future__ import annotations

import inspect
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, TypeVar, cast, overload

import numpy as np

from xaimetrics._arrays import is_tensor
from xaimetrics._validation import Interval, Rule, check_fitted, check_params, invalid

T = TypeVar("T")

if TYPE_CHECKING:
    import torch

    from xaimetrics._typing import Array

__all__ = ["ConceptExtractor", "IterativeExtractor"]


def _shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def check_array(
    value: object,
    name: str,
    owner: str,
    *,
    n_columns: int | None = None,
    columns_meaning: str = "",
) -> Array:
    """Return ``value`` as a finite 2-D float ``numpy.ndarray`` or ``torch.Tensor`` (kept as given).

    Integer and boolean arrays become float (``float64`` for numpy, torch's default dtype for tensors);
    array-likes such as nested lists become numpy arrays.

    Args:
        value: the array to check.
        name: the argument's name, shown in errors (``"A"`` or ``"U"``).
        owner: who checks, shown in errors (``"PCA.encode"``).
        n_columns: the required number of columns, if any.
        columns_meaning: why that number, shown in the error (``"the width PCA was fitted on"``).

    Raises:
        InvalidParameterError: not 2-D, empty, not numeric, wrong width, or with NaN/infinite entries.
    """
    if is_tensor(value):
        import torch

        tensor = value
        if tensor.is_complex():
            raise invalid(name, owner, "a real-valued array", f"a tensor of dtype {tensor.dtype}")
        if not tensor.is_floating_point():
            tensor = tensor.to(torch.get_default_dtype())
        array: Array = tensor
    else:
        try:
            array = np.asarray(value)
        except (TypeError, ValueError) as error:
            raise invalid(name, owner, "a 2-D numeric array", type(value).__name__) from error
        if array.dtype.kind in "iub":
            array = array.astype(np.float64)
        elif array.dtype.kind != "f":
            raise invalid(
                name,
                owner,
                "a 2-D array of real numbers",
                f"an array of dtype {array.dtype}",
                "Convert it to float.",
            )
    shape = tuple(array.shape)
    if len(shape) != 2:
        fix = None
        if len(shape) == 1:
            fix = f"Reshape a single sample with {name}.reshape(1, -1)."
        elif len(shape) == 3:
            fix = "Token-level activations (n_texts, n_tokens, n_features) must be flattened to (n_texts * n_tokens, n_features) first."
        raise invalid(
            name,
            owner,
            "a 2-D array of shape (n_samples, n_columns)",
            f"an array of shape {_shape_text(shape)}",
            fix,
        )
    if shape[0] == 0 or shape[1] == 0:
        raise invalid(name, owner, "a non-empty 2-D array", f"an array of shape {_shape_text(shape)}")
    if n_columns is not None and shape[1] != n_columns:
        raise invalid(
            name,
            owner,
            f"an array with {n_columns} columns ({columns_meaning})",
            f"{shape[1]} columns",
            "Pass arrays of the same layer and width as the ones used for fitting, or fit again.",
        )
    n_bad = int((~array.isfinite()).sum()) if is_tensor(array) else int(array.size - np.isfinite(array).sum())
    if n_bad:
        raise invalid(
            name,
            owner,
            "finite (no NaN or infinity)",
            f"{n_bad} NaN or infinite entries",
            "Remove or impute those rows first.",
        )
    return array


class ConceptExtractor(ABC):
    """Base class of the concept extractors (scikit-learn estimator contract).

    ``__init__`` only stores its keyword arguments; :meth:`fit` checks them and learns attributes that end in
    ``_``; :meth:`encode` and :meth:`decode` raise :class:`~xaimetrics.exceptions.NotFittedError` before
    :meth:`fit`. Subclasses implement ``_fit(A)`` (``A`` already checked) and ``_encode(A)`` (``A`` checked
    and of the kind to return); decoding is shared.

    Attributes (after :meth:`fit`):
        n_features_in_ (int): the activation width ``p``.
        n_concepts_ (int): the effective number of concepts ``k``.
        components_ (numpy.ndarray): decoder atoms, shape ``(n_concepts_, n_features_in_)``.
        bias_ (numpy.ndarray): decoder offset, shape ``(n_features_in_,)`` (zeros where there is none).

    Example:
        >>> import numpy as np
        >>> from xaimetrics.concepts import SVD
        >>> A = np.array([[3.0, 0.0, 1.0], [0.0, 2.0, 0.0]])
        >>> extractor = SVD(n_concepts=2).fit(A)
        >>> isinstance(extractor, ConceptExtractor), extractor.n_concepts_, extractor.n_features_in_
        (True, 2, 3)
        >>> U = extractor.encode(A)
        >>> bool(np.allclose(extractor.decode(U), U @ extractor.components_ + extractor.bias_))
        True
    """

    #: Keyword arguments accepted by ``__init__`` (shared by every subclass that calls ``super().__init__``).
    n_concepts: int | None
    random_state: int | None
    #: What each ``__init__`` argument may be, checked by :meth:`fit` (scikit-learn's ``_parameter_constraints``);
    #: a subclass extends it with ``{**Parent._parameter_constraints, ...}``.
    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        "n_concepts": (Interval(int, 1), None),
        "random_state": (
            Interval(
                int,
                0,
                2**32 - 1,
                text="an integer in [0, 2**32 - 1]",
                fix="Pass an integer seed for reproducible results.",
            ),
            None,
        ),
    }

    def __init__(self, *, n_concepts: int | None = None, random_state: int | None = None) -> None:
        self.n_concepts = n_concepts
        self.random_state = random_state

    # ----------------------------------------------------------------------------------- sklearn plumbing
    @classmethod
    def _param_names(cls) -> list[str]:
        signature = inspect.signature(cls.__init__)
        return [p.name for p in signature.parameters.values() if p.kind is p.KEYWORD_ONLY]

    def get_params(self, deep: bool = True) -> dict[str, object]:
        """The constructor's keyword arguments (scikit-learn ``get_params``, so ``sklearn.base.clone`` works)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: object) -> ConceptExtractor:
        """Set constructor arguments (scikit-learn ``set_params``); returns ``self``."""
        valid = self._param_names()
        for key, value in params.items():
            if key not in valid:
                raise invalid(key, type(self).__name__, "one of " + ", ".join(valid), "an unknown parameter")
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        defaults = {
            p.name: p.default
            for p in inspect.signature(type(self).__init__).parameters.values()
            if p.name != "self"
        }
        shown = [f"{k}={v!r}" for k, v in self.get_params().items() if not _same(v, defaults.get(k))]
        return f"{type(self).__name__}({', '.join(shown)})"

    # ----------------------------------------------------------------------------------- public verbs
    def fit(self, A: Array) -> ConceptExtractor:
        """Learn the concept space from activations ``A`` of shape ``(n_samples, n_features)``; returns ``self``.

        Raises:
            InvalidParameterError: a constructor argument is invalid, or ``A`` is not a finite 2-D float array
                with at least two rows, or ``n_concepts`` exceeds what ``A`` allows.
        """
        self._checked_fit(A)
        return self

    def _checked_fit(self, A: Array) -> tuple[Array, np.ndarray | None]:
        owner = f"{type(self).__name__}.fit"
        array = check_array(A, "A", owner)
        if array.shape[0] < 2:
            raise invalid("A", owner, "an array with at least 2 samples (rows)", f"{array.shape[0]} row")
        check_params(type(self).__name__, self._parameter_constraints, self.get_params())
        self._torch_cache_: dict[tuple[str, str, str], torch.Tensor] = {}
        concepts = self._fit(array)
        self.n_features_in_ = int(array.shape[1])
        return array, concepts

    def encode(self, A: Array) -> Array:
        """Concept activations ``U = t(A)``, shape ``(n_samples, n_concepts_)``, same kind as ``A``.

        Raises:
            NotFittedError: before :meth:`fit`.
            InvalidParameterError: ``A`` is not a finite 2-D array with ``n_features_in_`` columns.
        """
        array = self._checked_input(
            A, "A", "encode", "n_features_in_", f"the width {type(self).__name__} was fitted on"
        )
        return self._encode(array)

    def decode(self, U: Array) -> Array:
        """Activations ``Â = t⁻¹(U) = U @ components_ + bias_``, shape ``(n_samples, n_features_in_)``.

        Differentiable with respect to ``U`` when ``U`` is a tensor (concept importance takes gradients here).

        Raises:
            NotFittedError: before :meth:`fit`.
            InvalidParameterError: ``U`` is not a finite 2-D array with ``n_concepts_`` columns.
        """
        array = self._checked_input(U, "U", "decode", "n_concepts_", "the number of concepts n_concepts_")
        return array @ self._as(array, "components_") + self._as(array, "bias_")

    def fit_encode(self, A: Array) -> Array:
        """``fit(A)`` then ``encode(A)`` in one call (methods that find the training concepts while fitting,
        like NMF, return those)."""
        array, concepts = self._checked_fit(A)
        return self._encode(array) if concepts is None else like(concepts, array)

    # ----------------------------------------------------------------------------------- subclass hooks
    @abstractmethod
    def _fit(self, A: Array) -> np.ndarray | None:
        """Learn the method's state from checked activations (numpy or torch, 2-D, finite, ≥ 2 rows).

        Returns the training concepts if fitting computed them anyway (used by :meth:`fit_encode`), else None.
        """

    @abstractmethod
    def _encode(self, A: Array) -> Array:
        """Concepts of checked activations ``A``, returned as the same kind, dtype and device as ``A``."""

    # ----------------------------------------------------------------------------------- helpers
    def _check_fitted(self, verb: str) -> None:
        check_fitted(self, "components_", f"with activations before '{verb}'")

    def _checked_input(self, value: Array, name: str, verb: str, width: str, meaning: str) -> Array:
        """``value`` checked for :meth:`encode` / :meth:`decode` (``verb``): fitted first, then a finite 2-D
        array whose number of columns is the fitted attribute ``width``."""
        self._check_fitted(verb)
        owner = f"{type(self).__name__}.{verb}"
        return check_array(value, name, owner, n_columns=getattr(self, width), columns_meaning=meaning)

    def _resolve_n_concepts(self, limit: int | None, reason: str = "", *, default: int | None = None) -> int:
        """Check ``n_concepts`` (``None`` → ``default``, else ``limit``) against ``limit`` and return it."""
        value = self.n_concepts
        name = type(self).__name__
        if value is None:  # callers give a default whenever they give no limit
            return default if default is not None else cast(int, limit)
        if limit is not None and value > limit:
            raise invalid(
                "n_concepts",
                name,
                f"≤ {limit} ({reason})",
                int(value),
                "Use a smaller value or NoProjection.",
            )
        return int(value)

    @overload
    def _as(self, reference: np.ndarray, attribute: str) -> np.ndarray: ...
    @overload
    def _as(self, reference: torch.Tensor, attribute: str) -> torch.Tensor: ...
    @overload
    def _as(self, reference: Array, attribute: str) -> Array: ...
    def _as(self, reference: Array, attribute: str) -> Array:
        """The learned numpy ``attribute`` as the same kind, dtype (and device) as ``reference``."""
        value = getattr(self, attribute)
        if not is_tensor(reference):
            return value.astype(reference.dtype, copy=False)
        import torch

        key = (attribute, str(reference.device), str(reference.dtype))
        cache = self.__dict__.setdefault("_torch_cache_", {})
        if key not in cache:
            cache[key] = torch.as_tensor(np.ascontiguousarray(value)).to(
                device=reference.device, dtype=reference.dtype
            )
        return cache[key]

    def _set_decoder(self, components: np.ndarray, bias: np.ndarray | None = None) -> None:
        self.components_ = np.ascontiguousarray(components)
        self.bias_ = np.zeros(components.shape[1], dtype=components.dtype) if bias is None else bias
        self.n_concepts_ = int(components.shape[0])


class IterativeExtractor(ConceptExtractor):
    """A concept extractor fitted by an iterative scikit-learn solver (ICA, NMF): adds its ``max_iter`` and
    ``tol``.

    Args:
        n_concepts, random_state: as :class:`ConceptExtractor`.
        max_iter: solver iterations (scikit-learn's default, 200).
        tol: solver convergence tolerance.

    After ``fit``, ``converged_`` says whether the solver reached ``tol`` within ``max_iter`` (when it did not,
    one ``ConvergenceWarning`` names the option to raise).
    """

    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        **ConceptExtractor._parameter_constraints,
        "max_iter": Interval(int, 1),
        "tol": Interval(float, 0, closed="neither", text="a positive number"),
    }

    def __init__(
        self,
        *,
        n_concepts: int | None = None,
        random_state: int | None = None,
        max_iter: int = 200,
        tol: float = 1e-4,
    ) -> None:
        super().__init__(n_concepts=n_concepts, random_state=random_state)
        self.max_iter = max_iter
        self.tol = tol

    def _solve(self, fit: Callable[[], T]) -> T:
        """``fit()`` with scikit-learn's ``ConvergenceWarning`` caught: ``converged_`` records it, and one warning
        of ours names the option to raise (scikit-learn's names neither the extractor nor the option)."""
        from sklearn.exceptions import ConvergenceWarning

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = fit()
        unconverged = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
        for other in caught:
            if other not in unconverged:
                warnings.warn_explicit(other.message, other.category, other.filename, other.lineno)
        self.converged_ = not unconverged
        if unconverged:
            name = type(self).__name__
            warnings.warn(
                f"{name} stopped at max_iter={self.max_iter} before reaching tol={self.tol:g}: the concepts are "
                f"usable but may still move. Raise it with {name}(max_iter=...), or in a grid file with "
                f"[extractor_options.{name}] max_iter = {4 * int(self.max_iter)}.",
                ConvergenceWarning,
                stacklevel=4,
            )
        return result

    def _solver_options(self) -> tuple[int, float]:
        """The checked ``(max_iter, tol)``."""
        return int(self.max_iter), float(self.tol)


def _same(value: object, default: object) -> bool:
    try:
        return bool(value == default) and type(value) is type(default)
    except (TypeError, ValueError):
        return False


def to_numpy(array: Array) -> np.ndarray:
    """A numpy view/copy of ``array``: detached and on the CPU if it is a tensor, and ``float32`` or
    ``float64`` (half precision is widened to ``float32``, as LAPACK-backed solvers need)."""
    if is_tensor(array):
        import torch

        tensor = array.detach().cpu()
        if tensor.dtype not in (torch.float32, torch.float64):
            tensor = tensor.float()
        return tensor.numpy()
    array = np.asarray(array)
    return array if array.dtype in (np.float32, np.float64) else array.astype(np.float32)


@overload
def like(result: np.ndarray, reference: np.ndarray) -> np.ndarray: ...
@overload
def like(result: np.ndarray, reference: torch.Tensor) -> torch.Tensor: ...
@overload
def like(result: np.ndarray, reference: Array) -> Array: ...
def like(result: np.ndarray, reference: Array) -> Array:
    """``result`` as the same kind as ``reference`` (a tensor on its device and dtype, or a numpy array)."""
    if is_tensor(reference):
        import torch

        return torch.as_tensor(result).to(device=reference.device, dtype=reference.dtype)
    return result.astype(reference.dtype, copy=False)
