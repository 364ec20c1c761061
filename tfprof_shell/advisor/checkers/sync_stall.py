"""SyncStallChecker: the host blocked on the device inside the step."""

from __future__ import annotations

from ...model.intervals import SYNC
from ..catalog import SYNC_STALL as NAME
from .base import Checker, Findings, Subject
from ...views.interval_math import union
from .step_figures import share, step_figures

#: Sync waits at or above this share of the wall time are reported.
SYNC_SHARE = 0.05


def check(subject: Subject) -> Findings:
    """One report naming the waits that took longest and the host ops they ran in."""
    figures = step_figures(subject.model)
    findings = Findings()
    if figures is None:
        return findings
    steps = figures.result.steps
    sync = sum(figures.host(s)["sync"] or 0 for s in steps)
    wall = sum(figures.host(s)["wall"] or 0 for s in steps)
    if share(sync, wall) < SYNC_SHARE:
        return findings
    lo, hi = min(s.start for s in steps), max(s.end for s in steps)
    by_name: dict[str, int] = {}
    for e in figures.intervals.host:
        if e.kind == SYNC and e.end > lo and e.start < hi:
            by_name[e.name] = by_name.get(e.name, 0) + e.end - e.start
    top = sorted(by_name.items(), key=lambda kv: -kv[1])[:3]
    waits = union((e.start, e.end) for e in figures.intervals.host
                  if e.kind == SYNC and e.end > lo and e.start < hi)
    callers, lines = figures.host_ops_over(waits), figures.python_lines_over(waits)
    findings.reports.append(
        "sync stalls: the host waits on the device %.0f%% of the step (%dus per step): %s. "
        "Each wait empties the device queue; avoid .item(), .cpu(), printing tensors and "
        "explicit synchronize calls inside the step.%s"
        % (100 * share(sync, wall), sync // len(steps),
           ", ".join("%s %dus" % (n, t // 1000) for n, t in top),
           " The waits ran inside: %s." % ", ".join(callers) if callers else "")
        + (" Your Python lines: %s." % ", ".join(lines) if lines else ""))
    return findings


CHECKER = Checker(NAME, check)
