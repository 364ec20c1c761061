"""The straggler advice from collectives aligned across ranks: which rank arrives last,
how late, and what it did before (see views/collectives.py for the rules)."""

from __future__ import annotations

from collections import Counter
from statistics import median
from typing import Mapping, Optional

from ...model import Model
from ...views.collective_causes import NO_EVENT
from ...views.collectives import CollectivesResult, align_models

#: At most this many straggling ranks are reported (the others are counted).
MOST_RANKS = 3
_READABLE = {"allreduce": "all-reduce", "allgather": "all-gather",
             "_allgather_base": "all-gather", "reduce_scatter": "reduce-scatter",
             "_reduce_scatter_base": "reduce-scatter", "alltoall": "all-to-all",
             "alltoall_base": "all-to-all"}


def arrival_reports(peers: Mapping[str, Model]) -> Optional[list[str]]:
    """One report per straggling rank, by arrival lateness at the collectives; None when
    fewer than two profiles have collectives that could be matched."""
    result = align_models(peers)
    if result is None:
        return None
    steps: dict[str, list[int]] = {}
    for v in result.steps:
        if v.straggler is not None:
            steps.setdefault(v.straggler, []).append(v.step)
    ranked = sorted(steps, key=lambda n: (-len(steps[n]), n))
    reports = [_report(result, name) for name in ranked[:MOST_RANKS]]
    if len(ranked) > MOST_RANKS:
        more = len(ranked) - MOST_RANKS
        reports.append("straggler: %d more rank%s the straggler of a step; see "
                       "collectives." % (more, " is" if more == 1 else "s are"))
    return reports


def _report(result: CollectivesResult, name: str) -> str:
    verdicts = [v for v in result.steps if v.straggler == name]
    ops = Counter(i.op for i in result.instances)
    op = _READABLE.get(ops.most_common(1)[0][0], ops.most_common(1)[0][0]) if len(ops) == 1 \
        else "collective"
    last = sum(1 for i in result.instances if i.last == name)
    charged = [result.instances[v.charged] for v in verdicts if v.charged >= 0]
    late = [i.lateness[name] for i in charged]
    first_of_step = all(i.index == min(j.index for j in result.instances
                                       if j.step == i.step and name in j.arrival)
                        for i in charged)
    where = ("at each step's first %s" % op if first_of_step and len(charged) > 1
             else "at the first %s of step %d" % (op, charged[0].step)
             if first_of_step else "at the %s where its lateness starts" % op)
    text = ("straggler: %s arrives last at %d of %d %ss and is the straggler of %d of %d "
            "steps, %s late %s" % (name, last, len(result.instances), op, len(verdicts),
                                   len(result.steps), _span(late), where))
    causes = [v.cause for v in verdicts if v.cause is not None]
    if not causes:
        return text + "; no region before it stands out. See collectives."
    region = Counter(c.region for c in causes).most_common(1)[0][0]
    mine = [c for c in causes if c.region == region]
    rank_us = median(c.rank_us for c in mine)
    others = median(c.others_us for c in mine)
    steps = ("" if len(mine) == len(verdicts) else
             " (in %d of those steps)" % len(mine))
    if region == NO_EVENT:
        return (text + "; before it, it spends %s in no event at all (Python code without "
                "ops, a sleep, a blocking read) against %s on the other ranks%s. See "
                "collectives." % (_time(rank_us), _time(others), steps))
    return (text + "; before it, its `%s` region takes %s against %s on the other ranks%s. "
            "See collectives." % (region, _time(rank_us), _time(others), steps))


def _span(values: list[float]) -> str:
    lo, hi = _time(min(values)), _time(max(values))
    if lo == hi:
        return lo
    if lo.endswith(" ms") and hi.endswith(" ms"):
        return "%s–%s" % (lo[:-3], hi)
    return "%s to %s" % (lo, hi)


def _time(us: float) -> str:
    """Microseconds as the advice says them: 30 ms, 2.5 ms, 0.3 ms, 40 us."""
    if us >= 10_000:
        return "%.0f ms" % (us / 1000)
    if us >= 100:
        return "%.1f ms" % (us / 1000)
    return "%.0f us" % us
