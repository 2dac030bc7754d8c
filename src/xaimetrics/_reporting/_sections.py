"""Extra sections of a grid's report that a family above ``benchmark`` contributes, one registry entry each
(each written with :class:`~xaimetrics._reporting.Section`).

``benchmark`` writes the report but sits below the families that read its results (``studies`` compares human
and LLM simulators on the same rows): a family registers a section here when it is imported, and
``xaimetrics benchmark report`` asks every entry, so no import runs from ``benchmark`` up to it. The command line
imports every family's command module (and so its package) before it runs a command.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from xaimetrics._registry import Registry

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["REPORT_SECTIONS", "ReportSection", "report_sections"]

#: ``section(results_path, rows)`` → ``{"md": ..., "html": ...}``, or ``None`` where it has nothing to say
ReportSection: TypeAlias = Callable[[Path, "pd.DataFrame"], "dict[str, str] | None"]

#: the report sections registered by families above ``benchmark``
REPORT_SECTIONS: Registry[ReportSection] = Registry("report section", argument="section")


def report_sections(results: Path, frame: pd.DataFrame) -> list[dict[str, str]]:
    """The sections every registered entry writes for the store at ``results`` and its rows ``frame``.

    Example:
        >>> import pandas as pd
        >>> def note(path, frame):
        ...     return {"md": f"{len(frame)} rows", "html": ""} if len(frame) else None
        >>> with REPORT_SECTIONS.temporarily("row_count", note):
        ...     report_sections(Path("results.sqlite"), pd.DataFrame({"score": [0.5, 0.7]}))[-1]["md"]
        '2 rows'
    """
    found = (section(results, frame) for section in REPORT_SECTIONS.values())
    return [section for section in found if section is not None]
