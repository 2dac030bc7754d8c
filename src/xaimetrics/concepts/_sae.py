"""SAE concepts: a sparse autoencoder trained on the activations (torch)."""

from __future__ import annotations

import math
import secrets
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np

from xaimetrics._arrays import is_tensor
from xaimetrics._device import resolve_device
from xaimetrics._validation import Interval, Kind, Options, Rule, invalid
from xaimetrics.concepts._base import ConceptExtractor

if TYPE_CHECKING:
    from xaimetrics._typing import Array, DeviceLike
    from xaimetrics.concepts._sae_training import SAEConfig

__all__ = ["SAE"]

_ACTIVATIONS = ("relu", "topk", "batchtopk")
_FINITE_NON_NEGATIVE = Interval(float, 0, math.inf, closed="left", text="a finite number ≥ 0")


class SAE(ConceptExtractor):
    """Sparse autoencoder concepts (ConSim paper, App. A.3, after Bricken et al. 2023).

    Model, in activation units (``a`` of width ``p``, ``k`` concepts)::

        u = act((a − b_dec) W_encᵀ + b_enc)        # encode: pre-bias subtracted first
        â = u W_dec + b_dec                        # decode: components_ = W_dec, bias_ = b_dec

    with unit-norm decoder atoms (rows of ``W_dec``, renormalised after every step and with the radial part
    of their gradient removed). Training first scales the activations by one scalar ``scale_`` so that their
    mean squared deviation from the mean is 1, which makes ``l1_coefficient`` independent of the activation
    scale; learned tensors are converted back, so ``encode``/``decode`` work on raw activations. The loss is

        ``‖a − â‖² / p + l1_coefficient · ‖u‖₁``   (mean over the batch; the ℓ1 term only for ``"relu"``)

    minimised with Adam. Neurons that never fired since the last check are **resampled** every
    ``resample_interval`` steps during the first half of training: their atom becomes an input drawn with
    probability ∝ its squared reconstruction error (Bricken et al.). Training stops after ``max_steps`` or
    when the held-out loss has not improved by ``tol`` (relative) for ``n_iter_no_change`` evaluations.

    Activations: ``"relu"`` (ℓ1-sparse); ``"topk"`` keeps the ``k_active`` largest pre-activations of each
    row (Gao et al. 2024), so at most ``k_active`` concepts are active per sample; ``"batchtopk"`` keeps the
    ``k_active × batch`` largest of a training batch and encodes new data with the learnt threshold
    ``threshold_`` (Bussmann et al. 2024). Training is deterministic for a given ``random_state`` on the CPU.

    Args:
        n_concepts: dictionary size ``k`` (any size, overcomplete allowed); ``None`` uses ``n_features``.
        random_state: seed of the initialisation, batches, validation split and resampling.
        activation: ``"relu"``, ``"topk"`` or ``"batchtopk"``.
        k_active: active concepts per sample for the TopK variants; ``None`` uses ``max(1, n_concepts // 10)``.
        l1_coefficient: weight of the ℓ1 sparsity penalty (``"relu"`` only).
        learning_rate: Adam learning rate.
        max_steps: maximum number of optimisation steps.
        batch_size: samples per step.
        early_stopping: hold out ``validation_fraction`` of the samples and stop when their loss stalls
            (skipped when that would leave no sample on either side).
        validation_fraction: share of samples held out for early stopping.
        n_iter_no_change: evaluations without improvement before stopping.
        tol: relative improvement of the held-out loss that counts.
        eval_interval: steps between evaluations (history entries).
        resample_interval: steps between dead-neuron checks; ``None`` disables resampling.
        device: ``"auto"`` (CUDA, then MPS, then CPU), ``"cpu"``, ``"cuda"``, … for training.
        progress: show a tqdm bar (``None``: only on a terminal).

    Attributes:
        components_ (numpy.ndarray): unit-norm decoder atoms, shape ``(n_concepts_, n_features_in_)``.
        bias_ (numpy.ndarray): decoder bias (the pre-bias), shape ``(n_features_in_,)``.
        encoder_weights_ (numpy.ndarray): shape ``(n_concepts_, n_features_in_)``.
        encoder_bias_ (numpy.ndarray): shape ``(n_concepts_,)``.
        threshold_ (float): BatchTopK inference threshold (0 otherwise).
        scale_ (float): the training scale of the activations.
        k_active_ (int | None): active concepts per sample for the TopK variants.
        training_history_ (dict): per evaluation ``step``, ``train_loss``, ``validation_loss``,
            ``relative_error`` (held-out ‖a − â‖² / ‖a − ā‖²), ``dead_fraction``; ``resample_steps`` and
            ``resampled`` (neurons re-initialised at each), ``n_steps``, ``stopped_early``, ``seconds``.

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> A = rng.random(size=(300, 4)) @ rng.normal(size=(4, 6))
        >>> sae = SAE(n_concepts=8, max_steps=200, batch_size=64, random_state=0, device="cpu").fit(A)
        >>> U = sae.encode(A)
        >>> U.shape, bool((U >= 0).all())
        ((300, 8), True)
        >>> history = sae.training_history_
        >>> bool(history["train_loss"][-1] < history["train_loss"][0])
        True
    """

    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        **ConceptExtractor._parameter_constraints,
        "activation": Options(_ACTIVATIONS),
        "k_active": (Interval(int, 1, text="an integer ≥ 1 (or None: a tenth of n_concepts)"), None),
        "l1_coefficient": _FINITE_NON_NEGATIVE,
        "learning_rate": Interval(float, 0, math.inf, closed="neither", text="a finite number > 0"),
        "max_steps": Interval(int, 1),
        "batch_size": Interval(int, 1),
        "early_stopping": Kind(bool, "True or False"),
        "validation_fraction": Interval(float, 0.0, 0.5, text="a number in [0.0, 0.5]"),
        "n_iter_no_change": Interval(int, 1),
        "tol": _FINITE_NON_NEGATIVE,
        "eval_interval": Interval(int, 1),
        "resample_interval": (Interval(int, 1, text="an integer ≥ 1 (or None: never resample)"), None),
        "progress": (Kind(bool, "None, True or False"), None),
    }

    def __init__(
        self,
        *,
        n_concepts: int | None = None,
        random_state: int | None = None,
        activation: Literal["relu", "topk", "batchtopk"] = "relu",
        k_active: int | None = None,
        l1_coefficient: float = 1e-3,
        learning_rate: float = 1e-3,
        max_steps: int = 1000,
        batch_size: int = 256,
        early_stopping: bool = True,
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 5,
        tol: float = 1e-3,
        eval_interval: int = 100,
        resample_interval: int | None = 250,
        device: DeviceLike = "auto",
        progress: bool | None = None,
    ) -> None:
        super().__init__(n_concepts=n_concepts, random_state=random_state)
        self.activation = activation
        self.k_active = k_active
        self.l1_coefficient = l1_coefficient
        self.learning_rate = learning_rate
        self.max_steps = max_steps
        self.batch_size = batch_size
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.eval_interval = eval_interval
        self.resample_interval = resample_interval
        self.device = device
        self.progress = progress

    def _config(self, n_features: int) -> SAEConfig:
        from xaimetrics.concepts._sae_training import SAEConfig

        n_concepts = self._resolve_n_concepts(None, default=n_features)
        activation = self.activation
        k_active = 0
        if activation != "relu":
            if self.k_active is None:
                k_active = max(1, n_concepts // 10)
            else:
                k_active = int(self.k_active)
                if k_active > n_concepts:
                    raise invalid(
                        "k_active",
                        "SAE",
                        f"≤ n_concepts ({n_concepts})",
                        k_active,
                        "Use fewer active concepts.",
                    )
        seed = secrets.randbits(32) if self.random_state is None else int(self.random_state)
        return SAEConfig(
            n_concepts=n_concepts,
            activation=activation,
            k_active=k_active,
            l1_coefficient=float(self.l1_coefficient),
            learning_rate=float(self.learning_rate),
            max_steps=int(self.max_steps),
            batch_size=int(self.batch_size),
            early_stopping=self.early_stopping,
            validation_fraction=float(self.validation_fraction),
            n_iter_no_change=int(self.n_iter_no_change),
            tol=float(self.tol),
            eval_interval=int(self.eval_interval),
            resample_interval=self.resample_interval,
            seed=seed,
            progress=self.progress,
        )

    def _fit(self, A: Array) -> None:
        import torch

        from xaimetrics.concepts._sae_training import train_sparse_autoencoder

        config = self._config(int(A.shape[1]))
        device = resolve_device(self.device, "SAE")
        if is_tensor(A):
            data = A.detach().to(device=device, dtype=torch.float32)
        else:
            data = torch.from_numpy(np.ascontiguousarray(A, dtype=np.float32)).to(device)
        scale = float((data - data.mean(dim=0)).pow(2).mean().sqrt())
        if not scale > 0:
            scale = 1.0
        result = train_sparse_autoencoder(data / scale, config)

        def numpy(tensor: torch.Tensor, factor: float = 1.0) -> np.ndarray:
            return (tensor * factor).cpu().numpy().astype(np.float32)

        self.encoder_weights_ = numpy(result.encoder_weight)
        self.encoder_bias_ = numpy(result.encoder_bias, scale)
        self.threshold_ = float(result.threshold * scale)
        self.scale_ = scale
        self.activation_ = config.activation
        self.k_active_ = config.k_active or None
        self.device_ = device
        self.training_history_ = result.history
        self._set_decoder(numpy(result.decoder_weight), numpy(result.decoder_bias, scale))

    def _encode(self, A: Array) -> Array:
        import torch

        from xaimetrics.concepts._sae_training import activate

        values = A if is_tensor(A) else torch.from_numpy(np.ascontiguousarray(A))
        pre = (values - self._as(values, "bias_")) @ self._as(values, "encoder_weights_").T + self._as(
            values, "encoder_bias_"
        )
        codes = activate(pre, self.activation_, self.k_active_ or 0, self.threshold_)
        return codes if is_tensor(A) else codes.numpy()
