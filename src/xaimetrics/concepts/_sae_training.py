"""The training loop of :class:`~xaimetrics.concepts.SAE`: Adam, unit-norm atoms, dead-neuron resampling,
early stopping. Works on activations already scaled to unit mean-squared deviation (see ``SAE``)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Literal, TypedDict

import torch

from xaimetrics._progress import bars_disabled

__all__ = ["SAEConfig", "SAEParameters", "train_sparse_autoencoder"]

Activation = Literal["relu", "topk", "batchtopk"]

#: Inputs scored when choosing where to resample dead neurons (a random subset of the training set).
_RESAMPLE_POOL = 8192
#: Encoder rows of resampled neurons get this fraction of the mean norm of the living encoder rows (Bricken).
_RESAMPLE_ENCODER_SCALE = 0.2
#: Momentum of the running estimate of the BatchTopK inference threshold.
_THRESHOLD_MOMENTUM = 0.99


class TrainingHistory(TypedDict, total=False):
    """What an SAE's training recorded: per evaluation, and once at the end."""

    step: list[int]
    train_loss: list[float]
    validation_loss: list[float]
    relative_error: list[float]
    dead_fraction: list[float]
    resample_steps: list[int]
    resampled: list[int]
    stopped_early: bool
    n_steps: int
    seconds: float
    n_validation: int


@dataclass(frozen=True)
class SAEConfig:
    """Validated training settings (built by ``SAE.fit``)."""

    n_concepts: int
    activation: Activation
    k_active: int
    l1_coefficient: float
    learning_rate: float
    max_steps: int
    batch_size: int
    early_stopping: bool
    validation_fraction: float
    n_iter_no_change: int
    tol: float
    eval_interval: int
    resample_interval: int | None
    seed: int
    progress: bool | None


@dataclass
class SAEParameters:
    """Learned tensors in the scaled space: ``f = act((x − b_dec)W_encᵀ + b_enc)``, ``x̂ = f W_dec + b_dec``."""

    encoder_weight: torch.Tensor  # (k, p)
    encoder_bias: torch.Tensor  # (k,)
    decoder_weight: torch.Tensor  # (k, p), unit-norm rows
    decoder_bias: torch.Tensor  # (p,)
    threshold: float = 0.0  # BatchTopK inference threshold (0 otherwise)
    history: TrainingHistory = field(default_factory=lambda: TrainingHistory())


def activate(pre: torch.Tensor, activation: Activation, k_active: int, threshold: float) -> torch.Tensor:
    """Concept codes from pre-activations at inference (BatchTopK uses its learnt threshold, a JumpReLU)."""
    if activation == "relu":
        return torch.relu(pre)
    if activation == "topk":
        return _row_topk(pre, k_active)
    return pre * (pre > threshold).to(pre.dtype)


def _row_topk(pre: torch.Tensor, k_active: int) -> torch.Tensor:
    values, indices = pre.topk(k_active, dim=1)
    return torch.zeros_like(pre).scatter(1, indices, torch.relu(values))


def _batch_topk(pre: torch.Tensor, k_active: int) -> tuple[torch.Tensor, float | None]:
    """Keep the ``k_active × batch`` largest positive pre-activations of the whole batch (Bussmann et al. 2024)."""
    flat = torch.relu(pre).flatten()
    n_keep = min(k_active * pre.shape[0], flat.numel())
    values, indices = flat.topk(n_keep)
    codes = torch.zeros_like(flat).scatter(0, indices, values).view_as(pre)
    positive = values[values > 0]
    return codes, (float(positive.min().detach()) if positive.numel() else None)


class _Trainer:
    def __init__(self, data: torch.Tensor, config: SAEConfig) -> None:
        self.config = config
        self.generator = torch.Generator().manual_seed(config.seed)
        n_samples, n_features = data.shape
        order = torch.randperm(n_samples, generator=self.generator).to(data.device)
        n_valid = math.floor(config.validation_fraction * n_samples) if config.early_stopping else 0
        if n_valid < 1 or n_samples - n_valid < 1:
            n_valid = 0
        self.valid = data[order[:n_valid]]
        self.train = data[order[n_valid:]]
        k, device = config.n_concepts, data.device
        decoder = torch.randn(k, n_features, generator=self.generator).to(device)
        decoder /= decoder.norm(dim=1, keepdim=True)
        self.decoder_weight = decoder.clone().requires_grad_()
        self.encoder_weight = decoder.clone().requires_grad_()
        self.encoder_bias = torch.zeros(k, device=device, requires_grad=True)
        self.decoder_bias = self.train.mean(dim=0).clone().requires_grad_()
        self.parameters = [self.encoder_weight, self.encoder_bias, self.decoder_weight, self.decoder_bias]
        self.optimizer = torch.optim.Adam(self.parameters, lr=config.learning_rate)
        self.threshold: float | None = None
        self.fired = torch.zeros(k, dtype=torch.bool, device=device)
        self.fired_since_eval = torch.zeros(k, dtype=torch.bool, device=device)
        self._epoch = self.train[:0]
        self._position = 0

    # ------------------------------------------------------------------ model
    def pre_activations(self, x: torch.Tensor) -> torch.Tensor:
        return torch.addmm(self.encoder_bias, x - self.decoder_bias, self.encoder_weight.T)

    def codes(self, pre: torch.Tensor, *, training: bool) -> torch.Tensor:
        config = self.config
        if config.activation == "batchtopk" and training:
            codes, minimum = _batch_topk(pre, config.k_active)
            if minimum is not None:
                self.threshold = (
                    minimum
                    if self.threshold is None
                    else _THRESHOLD_MOMENTUM * self.threshold + (1 - _THRESHOLD_MOMENTUM) * minimum
                )
            return codes
        return activate(pre, config.activation, config.k_active, self.threshold or 0.0)

    def loss(self, x: torch.Tensor, *, training: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        codes = self.codes(self.pre_activations(x), training=training)
        reconstruction = torch.addmm(self.decoder_bias, codes, self.decoder_weight)
        squared_error = (reconstruction - x).pow(2).sum(dim=1)
        loss = squared_error.mean() / x.shape[1]
        if self.config.activation == "relu" and self.config.l1_coefficient:
            loss = loss + self.config.l1_coefficient * codes.sum(dim=1).mean()
        return loss, codes, squared_error

    # ------------------------------------------------------------------ steps
    def next_batch(self) -> torch.Tensor:
        """The next slice of a per-epoch shuffled copy of the training set (one gather per epoch)."""
        n_train = self.train.shape[0]
        size = min(self.config.batch_size, n_train)
        if self._position + size > self._epoch.shape[0]:
            order = torch.randperm(n_train, generator=self.generator).to(self.train.device)
            self._epoch = self.train[order]
            self._position = 0
        batch = self._epoch[self._position : self._position + size]
        self._position += size
        return batch

    def step(self, batch: torch.Tensor) -> float:
        loss, codes, _ = self.loss(batch, training=True)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        with torch.no_grad():
            weight, grad = self.decoder_weight, self.decoder_weight.grad
            if grad is not None:  # keep atoms on the unit sphere: drop the radial part of the gradient
                grad -= (grad * weight).sum(dim=1, keepdim=True) * weight
        self.optimizer.step()
        with torch.no_grad():
            self.decoder_weight /= self.decoder_weight.norm(dim=1, keepdim=True).clamp_min(1e-12)
            active = (codes > 0).any(dim=0)
            self.fired |= active
            self.fired_since_eval |= active
        return float(loss.detach())

    @torch.no_grad()
    def evaluate(self) -> tuple[float, float]:
        """Loss and relative squared reconstruction error on the validation set (or a training subset)."""
        data = self.valid if self.valid.shape[0] else self.train[:_RESAMPLE_POOL]
        total_loss, total_error = 0.0, 0.0
        for chunk in data.split(4096):
            loss, _, squared_error = self.loss(chunk, training=False)
            total_loss += float(loss) * chunk.shape[0]
            total_error += float(squared_error.sum())
        variance = float((data - data.mean(dim=0)).pow(2).sum()) or 1.0
        return total_loss / data.shape[0], total_error / variance

    @torch.no_grad()
    def resample_dead(self) -> int:
        """Re-initialise neurons that never fired since the last resampling (Bricken et al. 2023).

        Inputs are drawn with probability ∝ their squared reconstruction error; a dead neuron's decoder atom
        becomes the drawn input (minus the decoder bias) at unit norm, its encoder row the same direction at
        0.2 × the mean norm of the living encoder rows, its encoder bias zero, and its Adam moments are reset.
        """
        dead = (~self.fired).nonzero().flatten()
        self.fired.zero_()
        if dead.numel() == 0:
            return 0
        pool_size = min(_RESAMPLE_POOL, self.train.shape[0])
        pool = self.train[
            torch.randperm(self.train.shape[0], generator=self.generator)[:pool_size].to(self.train.device)
        ]
        _, _, squared_error = self.loss(pool, training=False)
        weights = squared_error.pow(2).cpu().double()
        if not float(weights.sum()) > 0:
            weights = torch.ones_like(weights)
        chosen = torch.multinomial(weights, dead.numel(), replacement=True, generator=self.generator)
        directions = pool[chosen.to(pool.device)] - self.decoder_bias
        directions /= directions.norm(dim=1, keepdim=True).clamp_min(1e-12)
        alive = torch.ones(self.config.n_concepts, dtype=torch.bool, device=dead.device)
        alive[dead] = False
        encoder_norm = float(self.encoder_weight[alive].norm(dim=1).mean()) if bool(alive.any()) else 1.0
        self.decoder_weight[dead] = directions
        self.encoder_weight[dead] = directions * (_RESAMPLE_ENCODER_SCALE * encoder_norm)
        self.encoder_bias[dead] = 0.0
        for parameter in (self.encoder_weight, self.encoder_bias, self.decoder_weight):
            for moment in self.optimizer.state.get(parameter, {}).values():
                if isinstance(moment, torch.Tensor) and moment.dim() > 0:
                    moment[dead] = 0.0
        return int(dead.numel())


def train_sparse_autoencoder(data: torch.Tensor, config: SAEConfig) -> SAEParameters:
    """Train on ``data`` (float32, shape ``(n_samples, n_features)``, already on the training device)."""
    from tqdm.auto import tqdm

    start = time.perf_counter()
    trainer = _Trainer(data, config)
    history: TrainingHistory = {
        "step": [],
        "train_loss": [],
        "validation_loss": [],
        "relative_error": [],
        "dead_fraction": [],
        "resample_steps": [],
        "resampled": [],
        "stopped_early": False,
    }
    # Resample only in the first half so that the last resampled neurons have time to settle.
    resample_until = config.max_steps // 2
    best, since_best, running, counted = math.inf, 0, 0.0, 0
    # progress=None lets tqdm decide (shown on a terminal only).
    disable = None if config.progress is None else not config.progress
    if (
        bars_disabled()
    ):  # TQDM_DISABLE=1, --no-progress: an explicit disable= would override tqdm's own switch
        disable = True
    bar = tqdm(total=config.max_steps, desc="SAE", unit="step", disable=disable, leave=False)
    step = 0
    for step in range(1, config.max_steps + 1):
        running += trainer.step(trainer.next_batch())
        counted += 1
        bar.update(1)
        if config.resample_interval and step % config.resample_interval == 0 and step <= resample_until:
            count = trainer.resample_dead()
            if count:
                history["resample_steps"].append(step)
                history["resampled"].append(count)
                best, since_best = math.inf, 0
        if step % config.eval_interval == 0 or step == config.max_steps:
            validation_loss, relative_error = trainer.evaluate()
            dead_fraction = float((~trainer.fired_since_eval).float().mean())
            trainer.fired_since_eval.zero_()
            history["step"].append(step)
            history["train_loss"].append(running / counted)
            history["validation_loss"].append(validation_loss)
            history["relative_error"].append(relative_error)
            history["dead_fraction"].append(dead_fraction)
            running, counted = 0.0, 0
            bar.set_postfix(loss=f"{validation_loss:.4g}", rel_err=f"{relative_error:.3g}")
            if trainer.valid.shape[0]:
                if validation_loss < best * (1 - config.tol):
                    best, since_best = validation_loss, 0
                else:
                    since_best += 1
                    if since_best >= config.n_iter_no_change:
                        history["stopped_early"] = True
                        break
    bar.close()
    history["n_steps"] = step
    history["seconds"] = time.perf_counter() - start
    history["n_validation"] = int(trainer.valid.shape[0])
    return SAEParameters(
        encoder_weight=trainer.encoder_weight.detach(),
        encoder_bias=trainer.encoder_bias.detach(),
        decoder_weight=trainer.decoder_weight.detach(),
        decoder_bias=trainer.decoder_bias.detach(),
        threshold=float(trainer.threshold or 0.0),
        history=history,
    )
