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


def test_a_grid_sends_one_cache_key_per_seed_and_a_breakpoint_after_the_shared_block(
    tmp_path: Path, fake_openai_server
) -> None:
    from xaimetrics.benchmark import Grid
    from xaimetrics.simulators import OpenAICompatibleSimulator

    server = fake_openai_server(constant_responder("Sample_0: sports"))

    def hinted() -> OpenAICompatibleSimulator:
        return OpenAICompatibleSimulator(
            "m", base_url=server.base_url, api_key="sk-x", prompt_cache_key=True, cache_control=True
        )

    providers = Providers(**{**PROVIDER_KWARGS, "simulators": {"hinted": hinted}})
    grid = Grid(
        datasets=("toy",), models=("toy",), methods=("NMF", "PCA", "NoExplanation"), n_concepts=3,
        default_n_concepts=3, prompt_types=("NE2", "E2", "E3"), seeds=(0, 1), simulators=("hinted",), n_lp=9,
        n_ep=9, n_fit=200, prompt_layout="cache", concurrency=1, **providers.grid_extras(),
    )  # fmt: skip
    run_grid(grid, tmp_path / "r.sqlite", providers=providers, progress=False)
    by_key: dict[str, set[str]] = {}
    for request in server.chat_requests:
        shared, *rest = request.body["messages"][0]["content"]  # a baseline's system message is all shared
        assert shared["cache_control"] == {"type": "ephemeral"} and all(
            "cache_control" not in r for r in rest
        )
        assert "Here are examples of samples" in shared["text"] and "concept_" not in shared["text"]
        by_key.setdefault(request.body["prompt_cache_key"], set()).add(shared["text"])
    assert len(server.chat_requests) == 10 and len(by_key) == 2  # one key per seed
    assert all(len(texts) == 1 for texts in by_key.values())  # every prompt of a seed shares the marked block
