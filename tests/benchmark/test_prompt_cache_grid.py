"""A grid against a server with a prompt cache: cached prompt tokens per row, in the summary and the totals; the
cache layout makes the server read more of each prompt from its cache than App. E's layout."""

from __future__ import annotations

from pathlib import Path

from toy_grid import PROVIDER_KWARGS, toy_grid

from fake_openai_server import constant_responder
from xaimetrics.benchmark import Providers, ResultsStore, run_grid
from xaimetrics.benchmark._analysis import totals


def _run(tmp_path: Path, server, layout: str):
    grid = toy_grid(
        simulators=("openai:toy-llm",), base_url=server.base_url, prompt_layout=layout, seeds=(0, 1),
        methods=("NMF", "PCA", "NoExplanation"), prompt_types=("NE2", "E2", "E3"), concurrency=1,
    )  # fmt: skip
    folder = tmp_path / layout
    summary = run_grid(
        grid, folder / "results.sqlite", providers=Providers(**PROVIDER_KWARGS), artefact_dir=folder / "a",
        progress=False,
    )  # fmt: skip
    with ResultsStore(folder / "results.sqlite", read_only=True) as store:
        frame = store.to_frame()
    return summary, frame


def test_cached_prompt_tokens_are_stored_per_row_and_summed(tmp_path: Path, fake_openai_server) -> None:
    answer = "\n".join(f"Sample_{i}: sports" for i in range(40))
    shares = {}
    for layout in ("paper", "cache"):
        server = fake_openai_server(constant_responder(answer))
        summary, frame = _run(tmp_path, server, layout)
        assert summary.completed == len(frame) == 2 * (1 + 2 * 2)  # per seed: NE2, and E2 + E3 per method
        assert summary.cached_prompt_tokens == frame["cached_prompt_tokens"].sum() > 0
        assert totals(frame)["cached_prompt_tokens"] == summary.cached_prompt_tokens
        assert (frame["cached_prompt_tokens"] <= frame["prompt_tokens"]).all()
        shares[layout] = summary.cached_prompt_tokens / summary.prompt_tokens
    assert shares["cache"] > shares["paper"] + 0.1, shares
