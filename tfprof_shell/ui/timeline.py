"""The Timeline page's data: a view line's Chrome trace, cut to what one screen can show.

The trace is the one `-output timeline` writes (render/timeline.py): the
graph view's per-device schedule of one step, or the stacked layout of the
scope and code views. The browser never gets the whole trace: for a time
window and a width in pixels, events shorter than a pixel that fall in the
same pixel of a lane are merged into one block that says how many it holds.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, Any, Optional

from ..combine.result import MultiResult
from ..errors import UsageError
from ..render.chrome_trace import ProcessName, Region, Trace, merge_traces
from ..render.timeline import graph_trace, tree_trace
from .columns import Strings

if TYPE_CHECKING:
    from .runner import LineRunner

#: A graph line without -step shows at most this many steps.
STEP_LIMIT = 20
#: At most this many blocks are sent for one window.
MAX_BLOCKS = 20000
_MAX_WIDTH = 8000


def view_trace(runner: "LineRunner", line: str) -> tuple[Trace, str]:
    """The Chrome trace of a view line, and a file name for it.

    A graph line without -step gives every recorded step (the first
    STEP_LIMIT) end to end with a "Steps" lane, as `-output
    timeline:merge=true` writes it.
    """
    result = runner.view_result(line)
    if isinstance(result, MultiResult):
        raise UsageError("timeline: not available for -base or -profiles views")
    view, step = result.view, result.options.step
    if view in ("scope", "code"):
        return tree_trace(result.root), "tfprof_%s.json" % view
    if view != "graph":
        raise UsageError("timeline: the op view has no timeline; use graph -step N, "
                         "scope or code")
    if step >= 0:
        with runner.lock:
            trace, _ = graph_trace(result, step)
        return trace, "tfprof_graph_step%d.json" % step
    steps = list(result.model.steps)[:STEP_LIMIT] if result.model is not None else []
    if not steps:
        raise UsageError("graph view timelines need recorded steps; this profile has none")
    parts = []
    with runner.lock:
        for each in steps:
            shown = runner.session.show("graph", result.options.replace(step=each))
            parts.append((each, graph_trace(shown, each)[0]))
    return merge_traces(parts), "tfprof_graph_steps.json"


def trace_json(runner: "LineRunner", line: str) -> tuple[str, str]:
    """The whole trace as the Chrome-trace JSON text `-output timeline` writes."""
    trace, name = view_trace(runner, line)
    return trace.to_json(), name


class _Lanes:
    """A trace's regions by lane (pid, tid), each lane sorted by start, for windowing."""

    def __init__(self, trace: Trace) -> None:
        self.names = {e.pid: e.name for e in trace.metadata if isinstance(e, ProcessName)}
        by_lane: dict[tuple[int, int], list[Region]] = {}
        for e in trace.all_events():
            if isinstance(e, Region):
                by_lane.setdefault((e.pid, e.tid), []).append(e)
        self.lanes = {k: sorted(v, key=lambda r: (r.ts, -r.dur)) for k, v in by_lane.items()}
        self.starts = {k: [r.ts for r in v] for k, v in self.lanes.items()}
        self.longest = {k: max(r.dur for r in v) for k, v in self.lanes.items()}
        everything = [r for v in self.lanes.values() for r in v]
        self.start = min((r.ts for r in everything), default=0)
        self.end = max((r.ts + r.dur for r in everything), default=0)

    def window(self, key: tuple[int, int], lo: float, hi: float) -> list[Region]:
        """The lane's regions that overlap [lo, hi], in start order."""
        starts = self.starts[key]
        first = bisect_left(starts, lo - self.longest[key])
        last = bisect_right(starts, hi)
        return [r for r in self.lanes[key][first:last] if r.ts + r.dur >= lo]


def _lanes(runner: "LineRunner", line: str) -> _Lanes:
    """The line's lanes, kept for the next window of the same line and session state."""
    key = (line, runner.session.current, runner.session.options)
    kept = runner.timelines.get(key)
    if kept is None:
        kept = runner.timelines[key] = _Lanes(view_trace(runner, line)[0])
        while len(runner.timelines) > 2:
            runner.timelines.pop(next(iter(runner.timelines)))
    return kept


def timeline_lanes(runner: "LineRunner", line: str, t0: Optional[float],
                   t1: Optional[float], width: int) -> dict[str, Any]:
    """Lanes of the window [t0, t1] at ``width`` pixels, small events merged per pixel."""
    prepared = _lanes(runner, line)
    start, end = prepared.start, prepared.end
    lo = start if t0 is None else max(float(t0), start)
    hi = end if t1 is None else min(float(t1), end)
    if hi <= lo:
        hi = lo + 1
    width = max(1, min(width, _MAX_WIDTH))
    pixel = (hi - lo) / width
    strings = Strings()
    out_lanes, merged_total, blocks = [], 0, 0
    for (pid, tid) in sorted(prepared.lanes):
        events = prepared.window((pid, tid), lo, hi)
        if not events:
            continue
        ts, dur, name, count = [], [], [], []
        joinable = False  # the last block is made of events shorter than a pixel
        for r in events:
            small = r.dur < pixel
            if small and joinable and ts[-1] + dur[-1] >= r.ts - pixel:
                dur[-1] = max(dur[-1], r.ts + r.dur - ts[-1])
                count[-1] += 1
                merged_total += 1
                continue
            ts.append(r.ts)
            dur.append(r.dur)
            name.append(strings.id(r.name))
            count.append(1)
            joinable = small
        blocks += len(ts)
        out_lanes.append({"name": "%s / %d" % (prepared.names.get(pid, "pid %d" % pid), tid),
                          "ts": ts, "dur": dur, "label": name, "count": count})
        if blocks > MAX_BLOCKS:
            break
    notes = []
    if merged_total:
        notes.append("%d events merged at this zoom (shorter than one pixel); zoom in to "
                     "see them" % merged_total)
    if blocks > MAX_BLOCKS:
        notes.append("more than %d blocks in this window: lanes after the first %d are "
                     "left out; zoom in" % (MAX_BLOCKS, len(out_lanes)))
    return {"start": start, "end": end, "t0": lo, "t1": hi, "lanes": out_lanes,
            "strings": strings.table, "merged": merged_total, "notes": notes}
