"""ConceptMetrics under DDP: a 2-process gloo run on CPU gives the numbers of one process."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torchmetrics.classification import BinaryAccuracy, BinaryAUROC, MulticlassAccuracy, MulticlassF1Score
from torchmetrics.regression import MeanSquaredError

from xaimetrics.conceptmetrics import Annotations, ConceptAlignmentScore, ConceptMetrics

# Uneven shards: torchmetrics pads the "cat" states of BinaryAUROC when gathering.
SHARDS = (slice(0, 17), slice(17, 41))


def build() -> ConceptMetrics:
    ann = Annotations(
        ["is.round", "color", "training", "shape", "weight"],
        cardinalities=[1, 3, 1, 4, 1],
        types=["binary", "categorical", "binary", "categorical", "continuous"],
    )
    return ConceptMetrics(
        ann,
        binary={"acc": BinaryAccuracy, "auroc": BinaryAUROC, "cas": ConceptAlignmentScore},
        categorical={"f1": MulticlassF1Score, "acc": (MulticlassAccuracy, {"average": "micro"})},
        continuous={"mse": MeanSquaredError},
        per_concept=True,
        prefix="val",
    )


def data() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(7)
    n = 41
    logits = torch.randn(n, 10, generator=g) * 1.5
    target = torch.stack(
        [
            (torch.rand(n, generator=g) < 0.6).float(),
            torch.randint(0, 3, (n,), generator=g).float(),
            (torch.rand(n, generator=g) < 0.3).float(),
            torch.randint(0, 4, (n,), generator=g).float(),
            torch.randn(n, generator=g),
        ],
        dim=1,
    )
    return logits, target


def _worker(rank: int, world_size: int, init_method: str, out: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world_size)
    try:
        logits, target = data()
        rows = SHARDS[rank]
        metrics = build()
        # Two updates per rank, as in a real epoch.
        middle = rows.start + 5
        metrics.update(logits[rows.start : middle], target[rows.start : middle])
        metrics.update(logits[middle : rows.stop], target[middle : rows.stop])
        results = {key: value.detach().clone() for key, value in metrics.compute().items()}
        torch.save(results, Path(out) / f"rank{rank}.pt")
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow  # two fresh interpreters importing torch: ~10 s idle, much more on a loaded machine
def test_two_process_gloo_run_equals_one_process(tmp_path: Path) -> None:
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("torch.distributed with gloo is not available")
    init_method = f"tcp://127.0.0.1:{_free_port()}"
    mp.spawn(_worker, args=(2, init_method, str(tmp_path)), nprocs=2, join=True)

    logits, target = data()
    single = build()
    single.update(logits, target)
    expected = single.compute()
    assert len(expected) == 3 + 2 + 1 + 2 * 3 + 2 * 2 + 1
    for rank in (0, 1):
        got = torch.load(tmp_path / f"rank{rank}.pt")
        assert got.keys() == expected.keys()
        for key in expected:
            assert got[key].item() == pytest.approx(expected[key].item(), abs=1e-6), (rank, key)
    # The shards alone give different numbers: the agreement above comes from the state reduction.
    shard = build()
    shard.update(logits[SHARDS[0]], target[SHARDS[0]])
    assert shard.compute()["val/SUMMARY-binary_auroc"].item() != pytest.approx(
        expected["val/SUMMARY-binary_auroc"].item()
    )
