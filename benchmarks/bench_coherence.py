"""Dim-Coherence@20 of 50 dimensions on 20,000 IMDB reviews: xaimetrics vs gensim ``c_npmi``, like for like.

The 50 dimensions are the components of a non-negative matrix factorisation of the review × word counts
(a small topic model), so their top words are realistic. Both libraries get the same tokenised documents and
the same top-20 word lists; gensim runs single-process (``processes=1``, the path xaimetrics' gensim mode
reproduces). Tokenisation is shared and untimed. The headline times **index + coherence on both sides**
(xaimetrics: ``ReferenceCorpus.from_tokens`` + ``dim_coherence``; gensim: ``Dictionary`` +
``CoherenceModel``), warmed up, alternated, the same number of rounds; coherence alone is also printed.

Peak memory: each side runs once more in a fresh subprocess that loads the tokenised documents, resets the
process's peak resident set (``/proc/self/clear_refs``), runs index + coherence and reads the peak
(``VmHWM``) minus the resident set before the run: the memory the computation itself needed.

    PYTHONPATH=src python benchmarks/bench_coherence.py [--quick] [--documents 20000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from _harness import Report, common_arguments, measure, ratio, set_threads


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def ours_index_and_coherence(documents: list[list[str]], topics: list[list[str]], window_size: int) -> Any:
    from xaimetrics.representation import ReferenceCorpus, topic_coherence

    corpus = ReferenceCorpus.from_tokens(documents)
    return topic_coherence(topics, corpus, window_size=window_size, mode="gensim")


def gensim_index_and_coherence(documents: list[list[str]], topics: list[list[str]], window_size: int) -> Any:
    from gensim.corpora import Dictionary
    from gensim.models.coherencemodel import CoherenceModel

    dictionary = Dictionary(documents)
    model = CoherenceModel(
        topics=topics, texts=documents, dictionary=dictionary, coherence="c_npmi",
        window_size=window_size, processes=1,
    )  # fmt: skip
    return np.asarray(model.get_coherence_per_topic())


def memory_worker(side: str, inputs: Path, output: Path) -> None:
    """Peak resident memory of one side's index + coherence, above the loaded documents (KiB)."""
    import gc

    with open(inputs, "rb") as handle:
        documents, topics, window_size = pickle.load(handle)
    import gensim.corpora  # noqa: F401  (imports are not the computation: load both libraries first)

    import xaimetrics.representation  # noqa: F401

    gc.collect()
    before = _status_kib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM (the peak) to the current RSS
    function = ours_index_and_coherence if side == "ours" else gensim_index_and_coherence
    values = function(documents, topics, window_size)
    peak = _status_kib("VmHWM")
    output.write_text(json.dumps({"peak_kib": peak - before, "values": np.asarray(values).tolist()}))


def peak_memory(side: str, inputs: Path) -> dict[str, Any]:
    output = inputs.with_name(f"memory-{side}.json")
    command = [
        sys.executable,
        __file__,
        "--memory-worker",
        side,
        "--inputs",
        str(inputs),
        "--output",
        str(output),
    ]
    subprocess.run(command, check=True)
    return json.loads(output.read_text())


def main() -> None:
    parser = common_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--dataset", default="imdb")
    parser.add_argument("--documents", type=int, default=None, help="default 20,000 (--quick: 2,000)")
    parser.add_argument("--dimensions", type=int, default=50)
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--window-size", type=int, default=10)
    parser.add_argument("--memory-only", action="store_true", help="only the peak-memory comparison")
    parser.add_argument("--measures-only", action="store_true", help="only gensim's other measures")
    parser.add_argument("--keep-inputs", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--memory-worker", choices=["ours", "gensim"], help=argparse.SUPPRESS)
    parser.add_argument("--inputs", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    set_threads(args.threads)
    if args.memory_worker:
        memory_worker(args.memory_worker, args.inputs, args.output)
        return
    n_documents = args.documents or (1_000 if args.quick else 20_000)
    report = Report("coherence", "NPMI coherence vs gensim c_npmi (representation)")

    import warnings

    import gensim
    from sklearn.decomposition import NMF
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.feature_extraction.text import CountVectorizer

    from xaimetrics.data import load_dataset
    from xaimetrics.representation import ReferenceCorpus, dim_coherence
    from xaimetrics.representation._corpus import tokenize

    texts = load_dataset(args.dataset, "all").texts[:n_documents]
    documents = [tokenize(text) for text in texts]
    corpus = ReferenceCorpus.from_tokens(documents, name=args.dataset)
    vocabulary = corpus.frequent_words(min_count=20 if n_documents >= 10_000 else 5, max_words=5000)
    counts = CountVectorizer(vocabulary=vocabulary, analyzer=lambda doc: doc).fit_transform(documents)
    warnings.simplefilter("ignore", ConvergenceWarning)  # 100 iterations are enough for realistic top words
    nmf = NMF(args.dimensions, init="nndsvda", max_iter=100, random_state=0).fit(counts)
    word_vectors = nmf.components_.T  # (n_words, n_dimensions): how much each word activates each dimension
    topics = dim_coherence(word_vectors, vocabulary, corpus, k=args.k, window_size=args.window_size).top_words
    distinct = len({word for topic in topics for word in topic})
    report.settings = {
        "dataset": args.dataset, "documents": len(documents), "tokens": corpus.n_tokens,
        "dimensions": len(topics), "k": args.k, "distinct_words": distinct, "window_size": args.window_size,
        "gensim": gensim.__version__, "repeats": args.repeats, "warmup": args.warmup, "threads": args.threads,
    }  # fmt: skip
    print(f"{len(documents):,} {args.dataset} documents, {corpus.n_tokens:,} tokens, {len(topics)} dimensions "
          f"× top-{args.k} ({distinct} distinct words), window {args.window_size}", flush=True)  # fmt: skip

    ws = args.window_size
    if not (args.memory_only or args.measures_only):
        speed(report, documents, topics, word_vectors, vocabulary, corpus, args)
    if not args.memory_only:
        other_measures(report, documents, topics, corpus, args)
    if not args.measures_only:
        memory(report, documents, topics, ws, args.keep_inputs)
    report.finish(args.json)


def speed(report: Report, documents: Any, topics: Any, word_vectors: Any, vocabulary: Any, corpus: Any,
          args: argparse.Namespace) -> None:  # fmt: skip
    """Index + coherence on both sides (the headline), then coherence alone."""
    from gensim.corpora import Dictionary
    from gensim.models.coherencemodel import CoherenceModel

    from xaimetrics.representation import dim_coherence

    ws = args.window_size
    timings, results = measure(
        {
            "gensim": lambda: gensim_index_and_coherence(documents, topics, ws),
            "ours": lambda: ours_index_and_coherence(documents, topics, ws),
        },
        repeats=args.repeats,
        warmup=args.warmup,
    )
    difference = float(np.abs(np.asarray(results["gensim"]) - np.asarray(results["ours"])).max())
    speedup = ratio(timings["gensim"], timings["ours"])
    report.row("gensim: Dictionary + CoherenceModel(c_npmi, processes=1)", timings["gensim"])
    report.row("xaimetrics: ReferenceCorpus.from_tokens + coherence (gensim mode)", timings["ours"])
    report.row("speed-up, index + coherence (per-round ratio)", speedup, "×", 1)
    report.row("max |xaimetrics − gensim| over the dimensions", f"{difference:.1e}")

    # coherence alone (index built once outside the timer), both sides alternated as well
    dictionary = Dictionary(documents)

    def gensim_only() -> Any:
        return CoherenceModel(topics=topics, texts=documents, dictionary=dictionary, coherence="c_npmi",
                              window_size=ws, processes=1).get_coherence_per_topic()  # fmt: skip

    def ours_only(mode: str) -> Any:
        return dim_coherence(word_vectors, vocabulary, corpus, k=args.k, window_size=ws, mode=mode)

    only, _ = measure(
        {"gensim": gensim_only, "gensim mode": lambda: ours_only("gensim"), "default": lambda: ours_only("xaimetrics")},
        repeats=args.repeats,
        warmup=args.warmup,
    )  # fmt: skip
    report.row("coherence only: gensim", only["gensim"])
    report.row("coherence only: xaimetrics mode='gensim'", only["gensim mode"])
    report.row("coherence only: xaimetrics mode='xaimetrics' (default)", only["default"])
    report.row("speed-up, coherence only (gensim mode)", ratio(only["gensim"], only["gensim mode"]), "×", 1)

    equal = difference <= 1e-9
    report.goal(
        "coherence-speed",
        f"{speedup.median:.1f}× (range {speedup.min:.1f}–{speedup.max:.1f}), max diff {difference:.1e}",
        bool(speedup.median >= 20 and equal),
        "" if equal else "values differ",
    )


def other_measures(
    report: Report, documents: Any, topics: Any, corpus: Any, args: argparse.Namespace
) -> None:
    """gensim's c_uci, u_mass and c_v at their default windows, coherence only (each side's index is built once
    outside the timer: gensim's Dictionary, our ReferenceCorpus), both sides alternated in the same run."""
    from gensim.corpora import Dictionary
    from gensim.models.coherencemodel import CoherenceModel

    from xaimetrics.representation import topic_coherence

    dictionary = Dictionary(documents)
    for name in ("c_uci", "u_mass", "c_v"):

        def gensim_measure(name: str = name) -> Any:
            return CoherenceModel(topics=topics, texts=documents, dictionary=dictionary, coherence=name,
                                  processes=1, topn=args.k).get_coherence_per_topic()  # fmt: skip

        def ours_measure(name: str = name) -> Any:
            return topic_coherence(topics, corpus, measure=name, mode="gensim")

        timings, results = measure(
            {"gensim": gensim_measure, "ours": ours_measure}, repeats=args.repeats, warmup=args.warmup
        )
        difference = float(np.nanmax(np.abs(np.asarray(results["gensim"]) - np.asarray(results["ours"]))))
        report.row(f"{name}: gensim CoherenceModel (processes=1)", timings["gensim"])
        report.row(f"{name}: xaimetrics topic_coherence (gensim mode)", timings["ours"])
        report.row(f"{name}: speed-up (per-round ratio)", ratio(timings["gensim"], timings["ours"]), "×", 1)
        report.row(f"{name}: max |xaimetrics − gensim| over the dimensions", f"{difference:.1e}")


def memory(report: Report, documents: Any, topics: Any, ws: int, keep: Path | None) -> None:
    """Peak memory of index + coherence, each side in a fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        inputs = keep or Path(tmp) / "inputs.pkl"
        with open(inputs, "wb") as handle:
            pickle.dump((documents, topics, ws), handle)
        memory = {side: peak_memory(side, inputs) for side in ("gensim", "ours")}
    mib = {side: memory[side]["peak_kib"] / 1024 for side in memory}
    report.row("peak memory above the documents: gensim", f"{mib['gensim']:.0f} MiB (n=1, fresh process)")
    report.row("peak memory above the documents: xaimetrics", f"{mib['ours']:.0f} MiB (n=1, fresh process)")
    same = np.allclose(memory["gensim"]["values"], memory["ours"]["values"], rtol=0, atol=1e-9)
    report.goal(
        "coherence-memory",
        f"{mib['ours']:.0f} MiB vs gensim {mib['gensim']:.0f} MiB ({mib['ours'] / mib['gensim']:.2f}×) "
        f"at {len(documents):,} documents",
        bool(mib["ours"] <= mib["gensim"] and same) if len(documents) >= 20_000 else None,
        "" if len(documents) >= 20_000 else "the goal is stated at 20,000 documents (this run is smaller)",
    )


if __name__ == "__main__":
    main()
