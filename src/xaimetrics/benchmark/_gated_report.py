"""What a gated run (:func:`~xaimetrics.benchmark.run_gated`) shows: its verdict tables in the terminal
(:func:`print_gated`) and in the report (:func:`gated_sections`), for ``xaimetrics demo`` and ``xaimetrics benchmark
run --sequential`` alike."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TextIO

from xaimetrics.benchmark._report import report_section

if TYPE_CHECKING:
    from xaimetrics.benchmark._gated import GatedDesign, GatedResult

__all__ = ["forecast_text", "gated_sections", "print_gated", "seed_span"]


#: what the twin table of a gated run says (terminal and report)
TWINS_NOTE = (
    "each concept method against the same extractor and interpretation fitted on a copy of the classifier with "
    "re-drawn weights ('all': every weight; 'top': the head), read while the simulator predicts the trained "
    "classifier, on the seeds the methods ran (no seed added for them). gain: over NoExplanation; over_twin: "
    "over the twin, 95% t-interval over seeds; p_twin: one-sided exact sign-flip test that the method beats its "
    "twin; p_twin_holm: Holm over every method × twin, which decides beats_twin."
)
_TWIN_COLUMNS = ["method", "twin", "n_units", "gain", "twin_gain", "over_twin", "over_twin_low", "over_twin_high",
                 "p_twin", "p_twin_holm", "beats_twin"]  # fmt: skip


def seed_span(seeds: Sequence[int]) -> str:
    """``"0–7"``, ``"3"`` or ``"none"``.

    Example:
        >>> seed_span((8, 9, 10)), seed_span((3,)), seed_span(())
        ('8–10', '3', 'none')
    """
    return f"{seeds[0]}–{seeds[-1]}" if len(seeds) > 1 else (str(seeds[0]) if seeds else "none")


def _three_digits(value: float) -> str:
    return f"{value:.3f}"


def forecast_text(result: GatedResult) -> str:
    """The planner's forecast made before the methods ran, and what happened.

    Example:
        >>> from types import SimpleNamespace
        >>> from xaimetrics.benchmark._sentences import Forecast
        >>> text = forecast_text(SimpleNamespace(forecast=Forecast(0.05, 0.05, 9, 6, 16, seeds_used=11, decided=True)))
        >>> text.endswith("What happened: every method was decided after 11 fresh seeds.")
        True
    """
    from xaimetrics.benchmark._sentences import forecast_sentence

    return forecast_sentence(result.forecast) if result.forecast is not None else ""


def print_gated(
    results: Sequence[GatedResult], names: Mapping[str, str] | None = None, file: TextIO | None = None
) -> None:
    """Print each simulator's gate and (when measured) methods verdict tables, with 95 % t-intervals."""
    names = names or {}
    out = file or sys.stdout
    for result in results:
        name = names.get(result.simulator, result.simulator)
        gate = result.gate.verdicts
        print(f"\nGate of {name}: the controls, seeds {seed_span(result.gate.seeds)} (exact group-sequential "
              "sign-flip tests; positive: beats NoExplanation or shown below +margin; negative: within or outside "
              "±margin)", file=out)  # fmt: skip
        print(gate.to_string(float_format=_three_digits), file=out)
        print(result.gate.sentence, file=out)
        if result.methods is not None:
            table = result.methods.verdicts
            label = " — exploratory" if result.exploratory else ""
            print(f"\nConcept methods read by {name}{label}: seeds {seed_span(result.methods.seeds)} "
                  "(Holm–Shaffer over the methods, group-sequential; 95% t-intervals at the last look)",
                  file=out)  # fmt: skip
            print(table.to_string(float_format=_three_digits), file=out)
            print(result.methods.sentence, file=out)
            if result.forecast:
                print(forecast_text(result), file=out)
        if result.twins is not None:
            print(f"\nRandomised twins read by {name}: {TWINS_NOTE}", file=out)
            print(result.twins[_TWIN_COLUMNS].to_string(index=False, float_format=_three_digits), file=out)


def gated_sections(
    results: Sequence[GatedResult], names: Mapping[str, str] | None, design: GatedDesign
) -> list[dict[str, str]]:
    """The report's sections of a gated run: each simulator's gate (verdicts, then each look), its methods when
    measured, then the design (:func:`~xaimetrics.benchmark.write_report`'s ``sections``)."""
    names = names or {}
    sections = []
    for result in results:
        name = names.get(result.simulator, result.simulator)
        sections.append(report_section(
            f"Gate: {name}", f"Seeds {seed_span(result.gate.seeds)}. " + result.gate.sentence,
            result.gate.verdicts,
        ))  # fmt: skip
        sections.append(report_section(f"Gate looks: {name}", "Each look's verdicts.", result.gate.table))
        if result.methods is not None:
            label = " (exploratory)" if result.exploratory else ""
            sections.append(report_section(
                f"Concept methods: {name}{label}", f"Fresh seeds {seed_span(result.methods.seeds)}. "
                + result.methods.sentence + (" " + forecast_text(result) if result.forecast else ""),
                result.methods.verdicts,
            ))  # fmt: skip
            sections.append(
                report_section(f"Method looks: {name}", "Each look's verdicts.", result.methods.table)
            )
        if result.twins is not None:
            sections.append(report_section(
                f"Randomised twins: {name}", f"Fresh seeds {seed_span(result.methods.seeds if result.methods else ())}: "
                + TWINS_NOTE, result.twins.set_index("method").round(4),
            ))  # fmt: skip
    sections.append(report_section(
        "The design", f"Gate: looks at {design.gate.looks()} seeds, α = {design.gate.alpha:g} spent as "
        f"α·t^{design.gate.rho:g}; methods: looks at {design.methods.looks()} fresh seeds, α = "
        f"{design.methods.alpha:g} family-wise (Holm–Shaffer); margin ±{design.margin:g}.",
    ))  # fmt: skip
    return sections
