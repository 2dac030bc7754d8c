"""The interpretability report: every result in one object, rendered in Markdown and HTML (jinja2) following
the document's template, saved with a JSON of the results and a flat ``metrics`` map for regression checks."""

from __future__ import annotations

import datetime as _dt
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np

from xaimetrics._reporting import render_template, write_outputs
from xaimetrics.representation import _bands as bands
from xaimetrics.representation._agreement import HumanEvaluation
from xaimetrics.representation._coherence import CoherenceResult
from xaimetrics.representation._composite import CompositeScore, composite_score
from xaimetrics.representation._counterfactual import ConsistencyResult
from xaimetrics.representation._purity import PurityResult
from xaimetrics.representation._regression import RegressionReport
from xaimetrics.representation._stability import ClusteringStability, DictionaryStability

__all__ = ["InterpretabilityReport"]


def _f(value: float | None, digits: int = 2) -> str:
    return (
        "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"
    )


def _measured(check: bands.TargetCheck) -> str:
    if check.value is None:
        return " (not measured)"
    if check.target.metric in ("coherence", "consistency"):
        return f" ({check.value:.0%} of the dimensions pass)"
    return f" (measured {check.value:.2f})"


def _nan_to_none(value: object) -> object:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _nan_to_none(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_nan_to_none(v) for v in value]
    if isinstance(value, np.generic):
        return _nan_to_none(value.item())
    return value


@dataclass
class InterpretabilityReport:
    """The results of an interpretability evaluation and their report.

    Every result is optional; the composite score is computed from those present unless given.

    Attributes:
        model: what was evaluated (e.g. ``"NMF(10) on rotten_tomatoes"``); version: its version.
        dataset: evaluation data description; date: ISO date (today by default).
        target_version: which targets of ``targets`` the report checks (``"v0.1"``, ``"v0.2"``, ``"v0.3"``).
        targets: per version, the :class:`Target` list (default :data:`DEFAULT_TARGETS`).
        coherence, consistency, stability, dictionary, purity, human, composite, regression: the results.
        notes: free text lines added to the recommendations.

    Example:
        >>> from xaimetrics.representation import composite_score
        >>> report = InterpretabilityReport(model="demo", version="0.1.0", composite=composite_score(stability=0.9))
        >>> report.metrics()
        {'composite.score': 0.9}
        >>> "**Overall Interpretability: 0.90** (Excellent) ✓" in report.to_markdown()
        True
    """

    model: str = "model"
    version: str = "unversioned"
    dataset: str = "n/a"
    date: str = field(default_factory=lambda: _dt.date.today().isoformat())
    target_version: str = "v0.2"
    targets: Mapping[str, Sequence[bands.Target]] | None = None
    title: str = "Interpretability Report"
    coherence: CoherenceResult | None = None
    consistency: ConsistencyResult | None = None
    stability: ClusteringStability | None = None
    dictionary: DictionaryStability | None = None
    purity: PurityResult | None = None
    human: HumanEvaluation | None = None
    composite: CompositeScore | None = None
    regression: RegressionReport | None = None
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.composite is None:
            coherence = None if self.coherence is None else self.coherence.scores
            consistency = None if self.consistency is None else self.consistency.scores
            stability = None if self.stability is None else self.stability.ari
            human = None if self.human is None else self.human.means
            if any(v is not None for v in (coherence, consistency, stability, human)):
                self.composite = composite_score(
                    coherence=coherence, consistency=consistency, stability=stability, human=human
                )

    # ------------------------------------------------------------------ numbers
    def metrics(self) -> dict[str, float]:
        """Flat ``{name: value}`` of the headline numbers (for regression checks and experiment trackers)."""
        out: dict[str, float] = {}
        if self.coherence is not None:
            out["coherence.mean"] = self.coherence.mean
            for name, score in zip(self.coherence.dimension_names, self.coherence.scores, strict=True):
                out[f"coherence.dim.{name}"] = float(score)
        if self.consistency is not None:
            out["consistency.mean"] = self.consistency.mean
            for name, score in zip(self.consistency.dimension_names, self.consistency.scores, strict=True):
                out[f"consistency.dim.{name}"] = float(score)
        if self.stability is not None:
            out["stability.ari"] = self.stability.ari
            out["stability.nmi"] = self.stability.nmi
        if self.dictionary is not None:
            out["dictionary_stability.score"] = self.dictionary.score
            out["dictionary_stability.excess"] = self.dictionary.excess
        if self.purity is not None:
            out["purity.mean"] = self.purity.mean
        if self.human is not None:
            out["agreement.alpha"] = self.human.alpha.alpha
            summary = self.human.summary
            out["human.mean_rating"] = float(np.nanmean(summary["mean_rating"]))
            out["human.pct_agree"] = float(np.nanmean(summary["pct_agree"]))
            out["human.pct_disagree"] = float(np.nanmean(summary["pct_disagree"]))
        if self.composite is not None:
            out["composite.score"] = self.composite.score
        return out

    def target_checks(self) -> list[bands.TargetCheck]:
        """The checks of :attr:`target_version`'s targets against the measured metrics."""
        measured: dict[str, float | Sequence[float] | np.ndarray] = {}
        if self.coherence is not None:
            measured["coherence"] = self.coherence.scores
        if self.consistency is not None:
            measured["consistency"] = self.consistency.scores
        if self.stability is not None:
            measured["ari"], measured["nmi"] = self.stability.ari, self.stability.nmi
        if self.human is not None:
            measured["alpha"] = self.human.alpha.alpha
        if self.composite is not None:
            measured["composite"] = self.composite.score
        return bands.check_targets(measured, self.target_version, self.targets)

    def _threshold(self, metric: str) -> float | None:
        targets = bands.DEFAULT_TARGETS if self.targets is None else self.targets
        for target in targets.get(self.target_version, ()):
            if target.metric == metric:
                return target.threshold
        return None

    def _target_text(self, metric: str, value: float) -> tuple[str, str]:
        threshold = self._threshold(metric)
        if threshold is None:
            return f"no {self.target_version} target", ""
        if math.isnan(value):
            return f"Target: > {threshold:.2f}", "–"
        return f"Target: > {threshold:.2f}", "✓" if value > threshold else "✗"

    def recommendations(self) -> list[dict[str, object]]:
        """The weakest dimensions with suggested actions, then global remarks (``{"title", "actions"}``)."""
        items: list[dict[str, object]] = []
        weak: dict[str, list[str]] = {}
        actions: dict[str, list[str]] = {}
        coherence_limit = self._threshold("coherence") or 0.3
        if self.coherence is not None:
            for name, score, words in zip(
                self.coherence.dimension_names, self.coherence.scores, self.coherence.top_words, strict=True
            ):
                if math.isnan(score) or score <= coherence_limit:
                    weak.setdefault(name, []).append(
                        f"coherence {_f(score)} ({bands.band('coherence', score)})"
                    )
                    actions.setdefault(name, []).append(
                        f"Inspect its top words ({', '.join(words[:6])}): split or merge the concept, or "
                        "regularise it towards sparser, more specific words"
                    )
        consistency_limit = self._threshold("consistency") or 0.6
        if self.consistency is not None:
            for name, score in zip(self.consistency.dimension_names, self.consistency.scores, strict=True):
                if math.isnan(score) or score <= consistency_limit:
                    weak.setdefault(name, []).append(f"counterfactual consistency {_f(score)}")
                    actions.setdefault(name, []).append(
                        "Its effect on the outputs does not follow its expected direction: check the sign and "
                        "size of its importance, or add counterfactual pairs for it to the training data"
                    )
        if self.human is not None:
            for row in self.human.summary.itertuples():
                if not math.isnan(row.mean_rating) and row.mean_rating < 3.5:
                    weak.setdefault(str(row.dimension), []).append(f"human rating {row.mean_rating:.1f}/5")
                    actions.setdefault(str(row.dimension), []).append(
                        "Annotators do not recognise its description: relabel it from its top examples"
                    )
        ranked = sorted(weak, key=lambda name: -len(weak[name]))
        for name in ranked[:3]:
            items.append(
                {
                    "title": f"Dimension {name} shows weak {', '.join(weak[name])}",
                    "actions": list(dict.fromkeys(actions[name])),
                }
            )
        if len(ranked) > 3:
            items.append(
                {
                    "title": f"{len(ranked) - 3} more dimension(s) below target: {', '.join(ranked[3:13])}",
                    "actions": [],
                }
            )
        if self.stability is not None and min(self.stability.ari, self.stability.nmi) < 0.6:
            items.append(
                {
                    "title": f"Clusterings vary across seeds (ARI {_f(self.stability.ari)})",
                    "actions": ["Fix seeds, train longer or on more data, or average several runs"],
                }
            )
        if self.dictionary is not None and self.dictionary.excess < 0.5:
            items.append(
                {
                    "title": f"Concept atoms are not reproducible across seeds "
                    f"({_f(self.dictionary.score)} vs random {_f(self.dictionary.baseline)})",
                    "actions": ["Use fewer concepts or a more constrained extractor"],
                }
            )
        if (
            self.human is not None
            and not math.isnan(self.human.alpha.alpha)
            and self.human.alpha.alpha < 0.67
        ):
            items.append(
                {
                    "title": f"Annotators agree only tentatively (α {_f(self.human.alpha.alpha)})",
                    "actions": [
                        "Clarify the rating guidelines and add worked examples before the next round"
                    ],
                }
            )
        if self.regression is not None and self.regression.detected:
            items.append(
                {
                    "title": f"{len(self.regression.regressions)} metric(s) regressed against the baseline",
                    "actions": self.regression.lines()[:5],
                }
            )
        checks = self.target_checks()
        if not ranked:
            items.append({"title": "All dimensions meet or exceed targets", "actions": []})
        measured = [c for c in checks if c.passed is not None]
        if (
            measured
            and all(c.passed for c in measured)
            and not (self.regression and self.regression.detected)
        ):
            items.append({"title": f"Model ready for the {self.target_version} release", "actions": []})
        items.extend({"title": note, "actions": []} for note in self.notes)
        return items

    # ------------------------------------------------------------------ rendering
    def _context(self) -> dict[str, object]:
        ctx: dict[str, object] = {
            "title": self.title,
            "model": self.model,
            "version": self.version,
            "date": self.date,
            "dataset": self.dataset,
            "target_version": self.target_version,
        }
        if self.coherence is not None:
            c = self.coherence
            target, mark = self._target_text("coherence", c.mean)
            ctx["coherence"] = {
                "k": c.k,
                "average": _f(c.mean),
                "target": target,
                "mark": mark,
                "window": c.window_size,
                "corpus": c.corpus_name,
                "n_windows": f"{c.n_windows:,}",
                "mode": c.mode,
                "rows": [
                    {
                        "name": n,
                        "score": _f(s),
                        "status": bands.status_mark("coherence", s),
                        "words": ", ".join(w[:8]),
                    }
                    for n, s, w in zip(c.dimension_names, c.scores, c.top_words, strict=True)
                ],
            }
        if self.consistency is not None:
            r = self.consistency
            target, mark = self._target_text("consistency", r.mean)
            ctx["consistency"] = {
                "average": _f(r.mean),
                "target": target,
                "mark": mark,
                "rows": [
                    {"name": n, "score": _f(s), "status": bands.status_mark("consistency", s)}
                    for n, s in zip(r.dimension_names, r.scores, strict=True)
                ],
            }
        if self.stability is not None or self.dictionary is not None:
            block: dict[str, object] = {"ari": None, "dictionary": None}
            if self.stability is not None:
                for key in ("ari", "nmi"):
                    value = getattr(self.stability, key)
                    block[key] = _f(value)
                    block[f"{key}_target"], block[f"{key}_mark"] = self._target_text(key, value)
            if self.dictionary is not None:
                d = self.dictionary
                block["dictionary"] = {
                    "score": _f(d.score),
                    "baseline": _f(d.baseline),
                    "excess": "n/a" if math.isnan(d.excess) else f"{d.excess:.0%}",
                }
            ctx["stability"] = block
        if self.purity is not None:
            p = self.purity
            ctx["purity"] = {
                "average": _f(p.mean),
                "rows": [
                    {
                        "name": n,
                        "score": _f(s),
                        "status": bands.status_mark("purity", s),
                        "factor": f or "n/a",
                    }
                    for n, s, f in zip(p.dimension_names, p.purity, p.dominant_factor, strict=True)
                ],
            }
        if self.human is not None:
            h = self.human
            target, mark = self._target_text("alpha", h.alpha.alpha)
            ctx["human"] = {
                "n_annotators": h.n_annotators,
                "n_examples": h.n_examples,
                "level": h.alpha.level,
                "alpha": _f(h.alpha.alpha),
                "alpha_band": h.alpha.band,
                "alpha_target": target,
                "alpha_mark": mark,
                "alpha_reason": h.alpha.reason,
                "rows": [
                    {
                        "name": row.dimension,
                        "mean": _f(row.mean_rating, 1),
                        "std": _f(row.std_rating, 1),
                        "agree": "n/a" if math.isnan(row.pct_agree) else f"{row.pct_agree:.0%}",
                        "alpha": _f(row.alpha),
                    }
                    for row in h.summary.itertuples()
                ],
            }
        if self.composite is not None:
            comp = self.composite
            ctx["composite"] = {
                "score": _f(comp.score),
                "band": comp.band,
                "mark": comp.status.split(" ")[0],
                "components": ", ".join(
                    f"{k} {v:.2f} × {comp.weights[k]:.2f}" for k, v in comp.components.items()
                ),
                "missing": ", ".join(comp.missing),
            }
        ctx["checks"] = [
            {"mark": c.mark, "text": c.target.describe() + _measured(c)} for c in self.target_checks()
        ]
        if self.regression is not None:
            reg = self.regression
            ctx["regression"] = {
                "detected": reg.detected,
                "lines": reg.lines(),
                "checked": len(reg.checked),
                "threshold": reg.threshold,
            }
        ctx["recommendations"] = self.recommendations()
        return ctx

    def _render(self, template: str, *, html: bool) -> str:
        return render_template(
            "xaimetrics.representation", template, self._context(), html=html, compact=True
        )

    def to_markdown(self) -> str:
        """The report in Markdown, following the document's template."""
        return self._render("report.md.jinja", html=False)

    def to_html(self) -> str:
        """The report as a standalone HTML page (every value escaped)."""
        return self._render("report.html.jinja", html=True)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: metadata, each result's ``to_dict()``, ``metrics`` (flat) and target checks."""
        results = {
            name: getattr(self, name).to_dict()
            for name in (
                "coherence",
                "consistency",
                "stability",
                "dictionary",
                "purity",
                "human",
                "composite",
                "regression",
            )
            if getattr(self, name) is not None
        }
        checks = [
            {"target": c.target.describe(), "value": c.value, "passed": c.passed}
            for c in self.target_checks()
        ]
        return cast(
            "dict[str, object]",
            _nan_to_none(
                {
                    "model": self.model,
                    "version": self.version,
                    "dataset": self.dataset,
                    "date": self.date,
                    "target_version": self.target_version,
                    "metrics": self.metrics(),
                    "results": results,
                    "targets": checks,
                }
            ),
        )

    def save(self, directory: str | os.PathLike[str], stem: str = "interpretability") -> dict[str, Path]:
        """Write ``<stem>.json``, ``<stem>.md`` and ``<stem>.html`` into ``directory`` (created)."""
        return write_outputs(
            directory, stem, markdown=self.to_markdown(), html=self.to_html(), data=self.to_dict()
        )
