"""ConceptMetrics inside a LightningModule: ``self.log_dict(metrics.compute())`` logs the hand-computed values."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics.classification import BinaryAccuracy, MulticlassAccuracy

from xaimetrics.conceptmetrics import Annotations, ConceptMetrics

L = pytest.importorskip("lightning")

ANN = Annotations(["has.wings", "color", "training"], cardinalities=[1, 3, 1])


class ConceptHead(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.head = nn.Linear(6, ANN.size)
        metrics = ConceptMetrics(
            ANN,
            binary={"acc": BinaryAccuracy},
            categorical={"acc": (MulticlassAccuracy, {"average": "micro"})},
            per_concept=["color"],
        )
        self.train_metrics = metrics.clone(prefix="train")
        self.val_metrics = metrics.clone(prefix="val")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(x)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, c = batch
        logits = self(x)
        self.train_metrics.update(logits, c)
        return nn.functional.binary_cross_entropy_with_logits(logits[:, [0, 4]], c[:, [0, 2]])

    def on_train_epoch_end(self) -> None:
        self.log_dict(self.train_metrics.compute())
        self.train_metrics.reset()

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        x, c = batch
        self.val_metrics.update(self(x), c)

    def on_validation_epoch_end(self) -> None:
        self.log_dict(self.val_metrics.compute())
        self.val_metrics.reset()

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)


@pytest.mark.filterwarnings("ignore:You defined a `validation_step` but have no `val_dataloader`")
@pytest.mark.filterwarnings("ignore:.*LeafSpec.*is deprecated")
def test_log_dict_inside_lightning() -> None:
    g = torch.Generator().manual_seed(4)
    x = torch.randn(30, 6, generator=g)
    c = torch.stack(
        [
            (torch.rand(30, generator=g) < 0.5).float(),
            torch.randint(0, 3, (30,), generator=g).float(),
            (torch.rand(30, generator=g) < 0.4).float(),
        ],
        dim=1,
    )
    loader = DataLoader(TensorDataset(x, c), batch_size=8)
    model = ConceptHead()
    trainer = L.Trainer(
        max_epochs=1,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(model, loader)
    assert {"train/SUMMARY-binary_acc", "train/SUMMARY-categorical_acc", "train/color_acc"} <= set(
        trainer.callback_metrics
    )
    (logged,) = trainer.validate(model, loader, verbose=False)

    with torch.no_grad():
        logits = model(x)
    binary = ((torch.sigmoid(logits[:, [0, 4]]) > 0.5).float() == c[:, [0, 2]]).float().mean().item()
    color = (logits[:, 1:4].argmax(dim=1) == c[:, 1].long()).float().mean().item()
    assert logged == pytest.approx(
        {"val/SUMMARY-binary_acc": binary, "val/SUMMARY-categorical_acc": color, "val/color_acc": color},
        abs=1e-6,
    )
    assert all(not m.update_called for m in model.val_metrics.metrics())
