"""Does the LLM rank explanations like people? Human vs LLM simulators on the same settings.

Reads a results store holding human rows (simulator ``"human"``, from :func:`export_results`) and LLM rows
(from ``xaimetrics benchmark run`` on the grid the study was created from, or :func:`simulate_study` on the
same study), matched on every setting column (dataset, model, method, number of concepts, interpretation,
prompt type, anonymisation, seed) **and on the samples both sides were shown** (:func:`shown_samples`: the
``Sample_i`` lines of the prompt, so the LP and EP texts and ids and f's answers on LP). Two rows of the same
names but other samples (another ``n_lp``/``n_ep``, balance, pool or data) are never compared: the report
counts them (:attr:`AgreementReport.overlap`), and refuses when no LLM row was shown the people's samples.

- **scores per method**, side by side: the mean eq. 5 accuracy of people and of each LLM over the shared
  settings, and the methods' ranks by it;
- **rank correlation** of the two method orders: Spearman's ρ and Kendall's τ with their p-values (few methods
  give wide p-values: the table says how many methods there are), and the benchmark's Copeland ranks of both;
- **per-sample agreement**: on each evaluation sample, does a person give the LLM's answer? The rate and
  Cohen's κ (chance-corrected), with each side's accuracy at predicting the model;
- **agreement between people**: Krippendorff's α (nominal) over the samples answered by several people in the
  same arm, and over the same texts whatever the arm.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from xaimetrics._digest import json_digest
from xaimetrics._reporting import REPORT_SECTIONS, Bullets, Document, Section, Table, write_outputs
from xaimetrics._validation import invalid
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.studies._results import HUMAN

if TYPE_CHECKING:
    from xaimetrics.benchmark import ResultsStore
    from xaimetrics.representation import AlphaResult

__all__ = ["SETTING_COLUMNS", "AgreementReport", "agreement_report", "agreement_section", "shown_samples"]

#: the columns that make two rows the same setting (simulator aside)
SETTING_COLUMNS: tuple[str, ...] = (
    "dataset", "model", "method", "n_concepts", "interpretation", "prompt_type", "anonymized", "seed",
)  # fmt: skip
TITLE = "Does the LLM rank explanations like people?"
_SECTION_ID = "human-llm-agreement"
_SAMPLE_LINE = re.compile(r"^Sample_[0-9]+:.*$", re.MULTILINE)


def shown_samples(result: Mapping[str, Any]) -> str:
    """What a ConSim result's reader was shown, as a digest: every ``Sample_i: ...`` line of its prompt (the LP
    and EP texts with their ids, and f's answers on the LP samples), else its EP ids and f's answers on them.

    Two rows with equal digests asked the same questions about the same texts; the explanation lines (concepts,
    importances) are left out, so that two methods on one seed share it.

    Args:
        result: a result's record (``ConSimResult.to_dict()``, as the results store keeps it).

    Example:
        >>> from xaimetrics.consim import render_prompt, score_response
        >>> def shown(ep, n_lp=2):
        ...     prompt = render_prompt("NE2", class_names=["a", "b"], lp_samples=["x", "y", "z"][:n_lp],
        ...                            lp_predictions=[0, 1, 0][:n_lp], ep_samples=ep, ep_predictions=[1] * len(ep))
        ...     return shown_samples(score_response(prompt, None).to_dict())
        >>> shown(["p", "q"]) == shown(["p", "q"]), shown(["p", "q"]) == shown(["p", "r"])
        (True, False)
        >>> shown(["p", "q"]) == shown(["p", "q"], n_lp=3)  # another LP block: other ids, other texts
        False
    """
    lines = [
        line
        for message in result.get("messages") or []
        for line in _SAMPLE_LINE.findall(
            str(message.get("content", "")) if isinstance(message, Mapping) else ""
        )
    ]
    if not lines:  # a record without its prompt: the EP ids and f's answers on them
        lines = [f"{i}: {result.get('references', {}).get(i)}" for i in result.get("sample_ids") or []]
    return json_digest(lines, length=16)


@dataclass
class AgreementReport:
    """The comparison of human and LLM simulators (see the module docstring).

    Attributes:
        human: the human simulator name; simulators: the LLM simulators compared.
        scores: one row per (simulator, method): ``human``, ``llm`` (mean accuracies), ``difference``,
            ``n_settings``, ``human_rank``, ``llm_rank``.
        correlations: one row per simulator: ``spearman``, ``spearman_p``, ``kendall``, ``kendall_p``,
            ``n_methods``.
        copeland: ``methods × simulators`` Copeland ranks (the benchmark's rankings), NaN where not ranked.
        samples: one row per simulator: ``pairs``, ``agreement``, ``kappa``, ``human_accuracy``,
            ``llm_accuracy``; ``samples_by_method`` the same per method.
        alpha_same_arm, alpha_same_text: Krippendorff's α between people (``AlphaResult`` or ``None``).
        overlap: one row per LLM simulator: ``same_names`` (human settings it has a row of the same setting
            names for), ``same_samples`` (of those, shown the same samples: compared), ``other_samples``
            (left out), ``human_settings``.
        grid: the study's grid file and its selection options, when the report was given it.
        notes: what could not be computed, and why.
        n_participants, n_answers: people and answers behind the human rows.
    """

    human: str
    simulators: tuple[str, ...]
    scores: pd.DataFrame
    correlations: pd.DataFrame
    copeland: pd.DataFrame
    samples: pd.DataFrame
    samples_by_method: pd.DataFrame
    alpha_same_arm: AlphaResult | None = None
    alpha_same_text: AlphaResult | None = None
    overlap: pd.DataFrame = field(default_factory=pd.DataFrame)
    grid: str | None = None
    notes: list[str] = field(default_factory=list)
    n_participants: int = 0
    n_answers: int = 0

    # -- text ------------------------------------------------------------------------------------------------
    def summary(self) -> list[str]:
        """One sentence per LLM: does it order the methods like people?"""
        lines = []
        for simulator, row in self.correlations.iterrows():
            rho, p, n = row["spearman"], row["spearman_p"], int(row["n_methods"])
            if math.isnan(rho):
                lines.append(
                    f"{simulator}: the method orders cannot be correlated ({n} methods with scores on both sides)."
                )
            elif p < 0.05:
                way = "like" if rho > 0 else "opposite to"
                lines.append(
                    f"{simulator} ranks the {n} methods {way} people (Spearman ρ = {rho:.2f}, p = {p:.3f})."
                )
            else:
                lines.append(
                    f"{simulator}: no detectable relation between its method order and people's (Spearman ρ = "
                    f"{rho:.2f}, p = {p:.3f}, {n} methods; with few methods only a near-perfect agreement is significant)."
                )
        return lines

    def _alpha_lines(self) -> list[str]:
        out = []
        for what, alpha in (("same arm", self.alpha_same_arm), ("same text, any arm", self.alpha_same_text)):
            if alpha is None:
                out.append(f"{what}: not measurable (fewer than two people).")
            elif math.isnan(alpha.alpha):
                out.append(f"{what}: not measurable ({alpha.reason}).")
            else:
                out.append(f"{what}: α = {alpha.alpha:.3f} ({alpha.band}; {alpha.n_coders} people, "
                           f"{alpha.n_pairable} pairable answers).")  # fmt: skip
        return out

    def _tables(self) -> dict[str, pd.DataFrame]:
        return {
            "Settings compared (same seed, samples shown and prompt setting)": self.overlap.reset_index(),
            "Scores per method (mean accuracy at predicting the model, eq. 5)": self.scores.reset_index(
                drop=True
            ),
            "Rank correlation of the method orders": self.correlations.reset_index(),
            "Copeland ranks (the benchmark's ranking)": self.copeland.reset_index(),
            "Per-sample agreement between people and the LLM": self.samples.reset_index(),
            "Per-sample agreement by method": self.samples_by_method.reset_index(drop=True),
        }

    def _intro(self) -> str:
        return (
            f"Human answers (simulator `{self.human}`: {self.n_participants} people, {self.n_answers} answers) "
            f"against {', '.join(f'`{s}`' for s in self.simulators) or 'no LLM'}, on the settings both have with "
            "the same samples shown (seed, LP/EP texts and prompt setting)."
            + (f" The study's grid: {self.grid}." if self.grid else "")
        )

    def section(self) -> Section:
        """The comparison as a report section (:class:`~xaimetrics._reporting.Section`)."""
        tables = [
            Section(title, [Table(table, index=False, empty="none")])
            for title, table in self._tables().items()
        ]
        alpha = Section(
            "Agreement between people (Krippendorff's α, nominal)", [Bullets(self._alpha_lines())]
        )
        notes = [Section("Notes", [Bullets(self.notes)])] if self.notes else []
        return Section(
            TITLE, [self._intro(), Bullets(self.summary()), *tables, alpha, *notes], id=_SECTION_ID
        )

    def to_markdown(self, level: int = 2) -> str:
        """The section as Markdown (``level`` is the heading level of its title)."""
        return self.section().markdown(level) + "\n"

    def to_html(self, level: int = 2) -> str:
        """The section as an HTML ``<section>`` (every value escaped)."""
        return self.section().html(level)

    def to_dict(self) -> dict[str, object]:
        def records(frame: pd.DataFrame) -> list[dict[str, object]]:
            return list(json.loads(frame.reset_index().to_json(orient="records")))

        return {
            "human": self.human, "simulators": list(self.simulators), "summary": self.summary(),
            "scores": records(self.scores), "correlations": records(self.correlations),
            "copeland": records(self.copeland), "samples": records(self.samples),
            "samples_by_method": records(self.samples_by_method), "overlap": records(self.overlap),
            "alpha_same_arm": None if self.alpha_same_arm is None else self.alpha_same_arm.to_dict(),
            "alpha_same_text": None if self.alpha_same_text is None else self.alpha_same_text.to_dict(),
            "notes": list(self.notes), "n_participants": self.n_participants, "n_answers": self.n_answers,
        }  # fmt: skip

    def save(self, directory: str | os.PathLike[str]) -> dict[str, Path]:
        """Write ``agreement.md``, ``agreement.html`` (a page around the section) and ``agreement.json``."""
        page = Document("Human vs LLM agreement", [self.section()], heading=False)
        return write_outputs(
            directory, "agreement", markdown=page.markdown(), html=page.html(), data=self.to_dict()
        )


def _normalise(frame: pd.DataFrame) -> pd.DataFrame:
    rows = frame[(frame["phase"] == "evaluation") & (frame["is_upper_bound"].fillna(0).astype(int) == 0)]
    rows = rows[rows["score"].notna()].copy()
    rows["anonymized"] = rows["anonymized"].fillna(0).astype(int).astype(bool)
    rows["n_concepts"] = rows["n_concepts"].fillna(0).astype(int)
    rows["interpretation"] = rows["interpretation"].fillna("").astype(str)
    rows["seed"] = rows["seed"].astype(int)
    rows["score"] = rows["score"].astype(float)
    return rows


def _grid_line(path: str | Path) -> str:
    """``PATH (n_lp=…, n_ep=…, balance=…, seeds=…)``: the study's grid file and what draws its samples."""
    from xaimetrics.benchmark._grid import read_grid_file

    data = read_grid_file(path)  # errors name the file
    shown = ", ".join(
        f"{k}={data[k]}" for k in ("n_lp", "n_ep", "balance", "pool_size", "seeds") if k in data
    )
    return f"{path} ({shown})" if shown else str(path)


def _row_shown(payload: Mapping[str, Any]) -> str:
    """:func:`shown_samples` of a stored row: its result, or its first participant's (one arm, one prompt)."""
    result = payload.get("result")
    if not isinstance(result, Mapping):
        participants = payload.get("participants") or [{}]
        result = participants[0].get("result") if isinstance(participants[0], Mapping) else None
    return shown_samples(result) if isinstance(result, Mapping) else ""


def _ranks(values: pd.Series) -> pd.Series:
    return values.rank(ascending=False, method="min")


def _correlation(human: pd.Series, llm: pd.Series) -> dict[str, float]:
    from scipy import stats

    ok = human.notna() & llm.notna()
    n = int(ok.sum())
    out = {
        "spearman": math.nan,
        "spearman_p": math.nan,
        "kendall": math.nan,
        "kendall_p": math.nan,
        "n_methods": n,
    }
    if n >= 3 and human[ok].nunique() > 1 and llm[ok].nunique() > 1:
        spearman = stats.spearmanr(human[ok], llm[ok])
        kendall = stats.kendalltau(human[ok], llm[ok])
        out.update(spearman=float(spearman.statistic), spearman_p=float(spearman.pvalue),
                   kendall=float(kendall.statistic), kendall_p=float(kendall.pvalue))  # fmt: skip
    return out


def _kappa(first: Sequence[object], second: Sequence[object]) -> float:
    """Cohen's κ of two raters' nominal answers (``None`` is a category of its own: no answer), by
    :func:`sklearn.metrics.cohen_kappa_score`; NaN when there is nothing to compare or a single category.

    Example:
        >>> round(_kappa(["a", "b", None, "b"], ["a", "a", None, "b"]), 4)
        0.6364
    """
    from sklearn.metrics import cohen_kappa_score

    shown_first, shown_second = [repr(a) for a in first], [repr(b) for b in second]
    categories = sorted({*shown_first, *shown_second})
    if len(categories) < 2:  # no answers, or one category for both: chance agreement is 1, κ undefined
        return math.nan
    return float(cohen_kappa_score(shown_first, shown_second, labels=categories))


def agreement_report(
    results: ResultsStore | str | Path,
    *,
    human: str = HUMAN,
    simulators: list[str] | None = None,
    grid: str | Path | None = None,
) -> AgreementReport:
    """Compare the human rows of a results store with its LLM rows on the shared settings and samples.

    Args:
        results: a :class:`~xaimetrics.benchmark.ResultsStore` or its path, holding both kinds of rows.
        human: the simulator name of the human rows.
        simulators: the LLM simulators to compare (default: every other simulator in the store).
        grid: the grid file the study was made from (``STUDY.grid.toml``, written by ``study create``): the
            report names it and its selection options, and a refusal says to run the LLMs on it.

    Returns:
        An :class:`AgreementReport` (``to_markdown``, ``to_html``, ``save``).

    Raises:
        InvalidParameterError: the store has no human rows, or none of the LLMs shares a setting with them.
    """
    from xaimetrics.benchmark import ResultsStore

    owner = "agreement_report"
    grid_line = None if grid is None else _grid_line(grid)
    store = results if isinstance(results, ResultsStore) else ResultsStore(results)
    owned = store is not results
    try:
        rows = _normalise(store.to_frame())
        people = rows[rows["simulator"] == human]
        if people.empty:
            raise invalid("results", owner, f"a store with rows of simulator {human!r}", "none",
                          "Export the study's answers first: xaimetrics study export STUDY.toml --results-store ...")  # fmt: skip
        llms = (
            tuple(simulators) if simulators is not None else tuple(sorted(set(rows["simulator"]) - {human}))
        )
        payloads = {
            key: store.payload(key) for key in (*people["key"], *rows[rows["simulator"].isin(llms)]["key"])
        }
    finally:
        if owned:
            store.close()
    rows = rows.assign(shown=[_row_shown(payloads.get(key, {})) for key in rows["key"]])
    people = rows[rows["simulator"] == human]
    keys = [*SETTING_COLUMNS, "shown"]
    score_tables, correlations, pairs, notes, matched_frames = [], {}, [], [], []
    overlap: dict[str, dict[str, int]] = {}
    for llm in llms:
        theirs = rows[rows["simulator"] == llm]
        named = people[list(SETTING_COLUMNS)].merge(theirs[list(SETTING_COLUMNS)].drop_duplicates())
        merged = people.merge(theirs, on=keys, suffixes=("_human", "_llm"))
        counts = {"human_settings": len(people), "same_names": len(named), "same_samples": len(merged)}
        overlap[llm] = {**counts, "other_samples": counts["same_names"] - counts["same_samples"]}
        if counts["same_names"] > counts["same_samples"]:
            notes.append(
                f"{llm}: {overlap[llm]['other_samples']} of the {counts['same_names']} settings named like human "
                "ones were shown other samples (another n_lp/n_ep, balance, pool or data): left out, "
                f"{counts['same_samples']} compared."
            )
        if merged.empty:
            if not counts["same_names"]:
                notes.append(f"{llm} shares no setting with the human rows: left out.")
            continue
        matched_frames.append(
            pd.concat([people.merge(merged[keys], on=keys), theirs.merge(merged[keys], on=keys)])
        )
        table = merged.groupby("method").agg(
            human=("score_human", "mean"), llm=("score_llm", "mean"), n_settings=("score_llm", "size")
        )
        table["difference"] = table["human"] - table["llm"]
        table["human_rank"], table["llm_rank"] = _ranks(table["human"]), _ranks(table["llm"])
        table.insert(0, "simulator", llm)
        score_tables.append(table.reset_index())
        correlations[llm] = _correlation(table["human"], table["llm"])
        for _, row in merged.iterrows():
            pairs += _sample_pairs(llm, row, payloads)
    compared = tuple(c for c in llms if c in correlations)
    if not compared:
        named = {llm: o["same_names"] for llm, o in overlap.items() if o["same_names"]}
        got = (
            "; ".join(f"{llm}: {n} settings of the same names, 0 on the same samples" for llm, n in named.items())
            if named else f"simulators {list(llms)}: no setting of the same names"
        )  # fmt: skip
        raise invalid(
            "results", owner, "LLM rows on the same settings and samples as the human rows", got,
            (f"Run the LLMs on the study's grid: xaimetrics benchmark run {grid} --output FOLDER, "
             if grid is not None else "Run the benchmark on the grid file the study was created from (study create "
             "writes it beside the bundle: STUDY.grid.toml), ")
            + "or ask the LLM the study's own prompts: xaimetrics study simulate STUDY.toml.",
        )  # fmt: skip
    scores = pd.concat(score_tables, ignore_index=True)
    scores = scores[
        ["simulator", "method", "human", "llm", "difference", "n_settings", "human_rank", "llm_rank"]
    ]
    corr = pd.DataFrame.from_dict(correlations, orient="index")
    corr.index.name = "simulator"
    overlap_table = pd.DataFrame.from_dict(overlap, orient="index")[
        ["human_settings", "same_names", "same_samples", "other_samples"]
    ]
    overlap_table.index.name = "simulator"
    copeland = _copeland(
        pd.concat(matched_frames, ignore_index=True).drop_duplicates("key"), human, compared, notes
    )
    samples, by_method = _sample_tables(pairs)
    same_arm, same_text = _alphas(people, payloads, notes)
    n_answers = int(people["n_samples"].fillna(0).sum())
    participants = {p["participant"] for key in people["key"] for p in payloads[key].get("participants", [])}
    return AgreementReport(
        human=human, simulators=compared, scores=scores, correlations=corr, copeland=copeland, samples=samples,
        samples_by_method=by_method, alpha_same_arm=same_arm, alpha_same_text=same_text, overlap=overlap_table,
        grid=grid_line, notes=notes,
        n_participants=len(participants), n_answers=n_answers,
    )  # fmt: skip


def _copeland(frame: pd.DataFrame, human: str, llms: tuple[str, ...], notes: list[str]) -> pd.DataFrame:
    """The benchmark's Copeland rank of each method, per simulator, on the shared settings."""
    from xaimetrics.benchmark import ranking_frame, rankings_by

    columns = {}
    try:
        long = ranking_frame(frame)
        for (simulator,), table in rankings_by(long, ["simulator"]).items():
            columns[simulator] = table["rank"]
    except InvalidParameterError as error:
        notes.append(f"Copeland ranks not computed: {error}")
    out = pd.DataFrame({s: columns.get(s, pd.Series(dtype=float)) for s in (human, *llms)})
    out.index.name = "method"
    if out.empty or out.isna().all().all():
        notes.append(
            "Copeland ranks need two methods answered on the same seed and prompt type by each simulator."
        )
    return out


def _sample_pairs(llm: str, row: pd.Series, payloads: dict[str, dict[str, Any]]) -> list[dict[str, object]]:
    """One record per (person, EP sample) of a shared setting: the person's, the LLM's and f's answers."""
    theirs = payloads[row["key_llm"]].get("result", {})
    llm_answers, references = theirs.get("answers", {}), theirs.get("references", {})
    out = []
    for entry in payloads[row["key_human"]].get("participants", []):
        result = entry["result"]
        for sample, answer in result["answers"].items():
            out.append({
                "simulator": llm, "method": row["method"], "participant": entry["participant"], "sample": sample,
                "human": answer, "llm": llm_answers.get(sample), "model": result["references"].get(sample),
                "llm_model": references.get(sample),
            })  # fmt: skip
    return out


def _sample_tables(pairs: list[dict[str, object]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    columns = ["pairs", "agreement", "kappa", "human_accuracy", "llm_accuracy"]
    if not pairs:
        empty = pd.DataFrame(columns=columns)
        empty.index.name = "simulator"
        return empty, pd.DataFrame(columns=["simulator", "method", *columns])
    frame = pd.DataFrame(pairs)

    def summary(part: pd.DataFrame) -> pd.Series:
        return pd.Series({
            "pairs": len(part), "agreement": float((part["human"] == part["llm"]).mean()),
            "kappa": _kappa(list(part["human"]), list(part["llm"])),
            "human_accuracy": float((part["human"] == part["model"]).mean()),
            "llm_accuracy": float((part["llm"] == part["model"]).mean()),
        })  # fmt: skip

    overall = pd.DataFrame({s: summary(part) for s, part in frame.groupby("simulator")}).T
    overall.index.name = "simulator"
    by_method = pd.DataFrame(
        [
            {"simulator": s, "method": m, **summary(part)}
            for (s, m), part in frame.groupby(["simulator", "method"])
        ]
    )
    for table in (overall, by_method):
        table["pairs"] = table["pairs"].astype(int)
    return overall, by_method


def _alphas(
    people: pd.DataFrame, payloads: dict[str, dict[str, Any]], notes: list[str]
) -> tuple[AlphaResult | None, AlphaResult | None]:
    """Krippendorff's α (nominal) between people: units (arm, sample), then (text, whatever the arm)."""
    from xaimetrics.representation import krippendorff_alpha

    same_arm: dict[tuple[object, ...], dict[str, str]] = {}
    same_text: dict[tuple[object, ...], dict[str, str]] = {}
    for _, row in people.iterrows():
        for entry in payloads[row["key"]].get("participants", []):
            for sample, answer in entry["result"]["answers"].items():
                if answer is None:
                    continue
                arm = tuple(row[c] for c in SETTING_COLUMNS)
                same_arm.setdefault((*arm, sample), {})[entry["participant"]] = answer
                same_text.setdefault((row["dataset"], row["model"], row["seed"], sample), {})[
                    entry["participant"]
                ] = answer
    results: list[AlphaResult | None] = []
    for name, units in (("same arm", same_arm), ("same text", same_text)):
        coders = sorted({p for unit in units.values() for p in unit})
        codes = {c: i for i, c in enumerate(sorted({a for unit in units.values() for a in unit.values()}))}
        matrix = np.array(
            [[codes[unit[p]] if p in unit else np.nan for p in coders] for unit in units.values()]
        )
        if len(coders) < 2:
            results.append(None)
            continue
        try:
            results.append(krippendorff_alpha(matrix, orientation="units_coders", level="nominal"))
        except InvalidParameterError as error:  # pragma: no cover - guarded by the coder count
            notes.append(f"α ({name}) not computed: {error}")
            results.append(None)
    return results[0], results[1]


def agreement_section(results: ResultsStore | str | Path, *, human: str = HUMAN) -> dict[str, str]:
    """``{"md": ..., "html": ...}``: the report's section for a results store, or a one-line note when the
    store has no human rows (so a benchmark report can always include it)."""
    try:
        return agreement_report(results, human=human).section().parts()
    except InvalidParameterError as error:
        return Section(TITLE, [f"No human-vs-LLM comparison: {error}"]).parts()


@REPORT_SECTIONS.register("human_agreement", description="human vs LLM simulators on the same settings")
def _human_section(results: Path, frame: pd.DataFrame) -> dict[str, str] | None:
    """The comparison, where a human study exported rows into the store (``None`` otherwise)."""
    if len(frame) and "simulator" in frame.columns and (frame["simulator"] == HUMAN).any():
        return agreement_section(results)
    return None
