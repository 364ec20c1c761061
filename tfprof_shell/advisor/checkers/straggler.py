"""StragglerChecker: with several profiles loaded (ranks of one job), the profile
that is the slowest in most steps, by how much, and what it waited on."""

from __future__ import annotations

from typing import Mapping

from ...model import Model
from ...views.step_values import waited_on
from ..catalog import STRAGGLER as NAME
from .arrivals import arrival_reports
from .base import Checker, Findings, Subject
from .step_figures import step_figures

#: A profile slower than the median of the others by at least this share is reported.
SLOWER_SHARE = 0.1


def peers_of(subject: Subject) -> Mapping[str, Model]:
    """The loaded profiles (name -> model) the subject carries, if any."""
    return getattr(subject, "peers", {}) or {}


def check(subject: Subject) -> Findings:
    """One report per straggling profile: steps it was slowest in, how much slower than
    the median of the others, and the largest non-compute category of its steps."""
    findings = Findings()
    peers = peers_of(subject)
    if len(peers) < 2:
        return findings
    by_arrival = arrival_reports(peers)
    if by_arrival is not None:
        findings.reports.extend(by_arrival)
        return findings
    walls: dict[int, dict[str, int]] = {}
    figures = {}
    for name, model in peers.items():
        fig = step_figures(model)
        if fig is None:
            continue
        figures[name] = fig
        for s in fig.result.steps:
            walls.setdefault(s.step, {})[name] = s.wall
    slowest: dict[str, list[tuple[int, float]]] = {}
    for step, by_name in sorted(walls.items()):
        if len(by_name) < 2:
            continue
        name = max(by_name, key=lambda n: by_name[n])
        others = sorted(v for n, v in by_name.items() if n != name)
        median = others[len(others) // 2]
        if median and by_name[name] >= (1 + SLOWER_SHARE) * median:
            slowest.setdefault(name, []).append((step, by_name[name] / median - 1))
    for name, steps in sorted(slowest.items()):
        fig = figures[name]
        mine = [s for s in fig.result.steps if s.step in {st for st, _ in steps}]
        waits = [waited_on(s, fig.result.has) for s in mine]
        what = max(set(w for w, _ in waits), key=lambda w: sum(v for x, v in waits if x == w))
        value = sum(v for w, v in waits if w == what) // len(mine)
        where = ("its largest non-compute time there is %s (%dus per step)" % (what, value)
                 if value else "it spends that time in %s, waiting on nothing" % what)
        findings.reports.append(
            "straggler: %s is the slowest profile in %d of %d steps, %.0f%% slower than the "
            "median of the others on average; %s. See steps -profiles all."
            % (name, len(steps), len(walls), 100 * sum(r for _, r in steps) / len(steps),
               where))
    return findings


CHECKER = Checker(NAME, check)
