"""The Timeline page's data: a profile's lanes, cut to what one screen can show.

A profile loaded from a trace (PyTorch and Chrome traces, XSpace files) shows
its own events: one lane per host thread and per device stream, slices nested
in rows, launches joined to their kernels (load/lanes.py). Other formats show
the trace `-output timeline` writes for the line (render/timeline.py): the
graph view's per-device schedule, or the stacked layout of the code view.

The browser never gets the whole trace: for a time window and a width in
pixels, each row sends its slices longer than a pixel, and runs of shorter
ones as one block that says how many it holds (level of detail). Every lane
is listed at every zoom, with its full number of rows, so lanes never move.
Times on the wire are integer ns from the trace's first slice.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING, Any, Optional, Sequence

from .. import commands
from ..combine.result import MultiResult
from ..errors import UsageError
from ..load.lanes import has_lanes, read_lanes
from ..model.lanes import HOST, LanesBuilder, TraceLanes
from ..render.chrome_trace import Flow, ProcessName, Region, Trace, merge_traces
from ..render.timeline import graph_trace, tree_trace
from .columns import Strings

if TYPE_CHECKING:
    from .runner import LineRunner

#: A graph line without -step shows at most this many steps.
STEP_LIMIT = 20
#: At most this many blocks are sent for one window; lanes after are sent empty.
MAX_BLOCKS = 60000
_MAX_WIDTH = 8000
#: A range lists at most this many names.
RANGE_ROWS = 300


class Prepared:
    """What a window is cut from: the lanes, the step regions, where they came from."""

    def __init__(self, lanes: TraceLanes, steps: list[tuple[int, int, int]], source: str,
                 download: Optional[str]) -> None:
        self.lanes = lanes
        self.steps = steps
        self.source = source
        self.download = download


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


def trace_to_lanes(trace: Trace) -> tuple[TraceLanes, list[tuple[int, int, int]]]:
    """A view's Chrome trace as lanes (one per process: a device, a scope depth; its
    packing rows become the lane's rows) and the step regions of a "Steps" lane."""
    names = {e.pid: e.name for e in trace.metadata if isinstance(e, ProcessName)}
    b = LanesBuilder("the view's schedule")
    steps: list[tuple[int, int, int]] = []
    stacked = names and all(n.startswith("Scope:") for n in names.values())
    lane_of: dict[int, int] = {}
    regions: list[tuple[int, int, int, int]] = []  # pid, start, end, event
    for e in trace.all_events():
        if not isinstance(e, Region):
            continue
        name = names.get(e.pid, "pid %d" % e.pid)
        if name == "Steps" and isinstance(e.args.get("step"), int) and e.pid == 0:
            steps.append((e.args["step"], e.ts * 1000, (e.ts + e.dur) * 1000))
            continue
        if stacked:
            lane = b.lane("stacked", "stacked tree (time = total)", "view", HOST, (0,))
        else:
            lane = lane_of.get(e.pid)
            if lane is None:
                lane = lane_of[e.pid] = b.lane(e.pid, name, name, HOST, (e.pid, 0))
        event = b.add(lane, e.ts * 1000, e.dur * 1000, e.name, "op")
        regions.append((e.pid, e.ts, e.ts + e.dur, event))
    _view_flows(b, trace, regions)
    return b.finish(), steps


def _view_flows(b: LanesBuilder, trace: Trace, regions: list[tuple[int, int, int, int]]) -> None:
    """Join the regions a view trace's flow arrows start and end on."""
    ends: dict[int, dict[str, tuple[int, int]]] = {}
    for e in trace.events:
        if isinstance(e, Flow):
            ends.setdefault(e.flow_id, {})[e.phase] = (e.pid, e.ts)
    if not ends:
        return
    by_pid: dict[int, list[tuple[int, int, int]]] = {}
    for pid, start, end, event in regions:
        by_pid.setdefault(pid, []).append((start, end, event))
    for events in by_pid.values():
        events.sort()

    def at(pid: int, ts: int) -> Optional[int]:
        """The innermost region of ``pid`` holding ``ts`` (the latest to start)."""
        events = by_pid.get(pid, [])
        k = bisect_left(events, (ts + 1,)) - 1
        for start, end, event in reversed(events[max(0, k - 64):k + 1]):
            if start <= ts <= end:
                return event
        return None

    for pair in ends.values():
        if "s" in pair and "t" in pair:
            a, z = at(*pair["s"]), at(*pair["t"])
            if a is not None and z is not None and a != z:
                b.flow(a, z)


def trace_lanes(runner: "LineRunner", name: str) -> Optional[Prepared]:
    """The trace lanes of loaded profile ``name`` (None if its format has none), kept
    for the next window."""
    model = runner.session.profiles[name].model
    if not has_lanes(model.source):
        return None
    key: tuple = ("lanes", name, id(model))
    kept = runner.timelines.get(key)
    if kept is None:
        with runner.lock:
            lanes = read_lanes(model.source)
            marks = model.intervals().marks
        assert lanes is not None
        steps = sorted((m.step, m.start, m.end) for m in marks)
        kept = Prepared(lanes, steps, lanes.origin, None)
    _keep(runner, key, kept)
    return kept


def _keep(runner: "LineRunner", key: tuple, kept: Prepared) -> None:
    runner.timelines[key] = kept
    runner.timelines.move_to_end(key)
    while len(runner.timelines) > 2:
        runner.timelines.popitem(last=False)


def prepare(runner: "LineRunner", line: str) -> Prepared:
    """The lanes for a line, kept for the next window (trace lanes per profile, a view's
    schedule per line and session state)."""
    request = runner.check(line)
    session = runner.session
    traced = trace_lanes(runner, session.current)
    if traced is not None:
        return traced
    if request.command.kind != commands.VIEW:
        line = "graph"
    key = ("view", line, session.current, session.options)
    kept = runner.timelines.get(key)
    if kept is None:
        trace, _ = view_trace(runner, line)
        lanes, steps = trace_to_lanes(trace)
        kept = Prepared(lanes, steps, "the %s view's trace" % runner.view_result(line).view,
                        line)
    _keep(runner, key, kept)
    return kept


def _row_blocks(lanes: TraceLanes, row: Sequence[int], starts: Sequence[int], first: int,
                last: int, pixel: float, origin: int, strings: Strings) -> dict[str, list]:
    """One row's window: slices of a pixel or more alone, runs of shorter ones merged."""
    start, dur, name = lanes.start, lanes.dur, lanes.name
    ts: list[int] = []
    ds: list[int] = []
    label: list[int] = []
    count: list[int] = []
    ev: list[int] = []
    table = lanes.strings
    k = first
    while k < last:
        e = row[k]
        if dur[e] >= pixel:
            ts.append(start[e] - origin)
            ds.append(dur[e])
            label.append(strings.id(table[name[e]]))
            count.append(1)
            ev.append(e)
            k += 1
            continue
        j = bisect_left(starts, start[e] + pixel, k + 1, last)
        tail = row[j - 1]
        upto = j - 1 if j - 1 > k and dur[tail] >= pixel else j
        a, z = start[e], start[row[upto - 1]] + dur[row[upto - 1]]
        n = upto - k
        if n > 1 and count and count[-1] > 1 and ts[-1] + ds[-1] + origin >= a - pixel:
            ds[-1] = z - origin - ts[-1]
            count[-1] += n
        else:
            ts.append(a - origin)
            ds.append(z - a)
            label.append(strings.id(table[name[e]]))
            count.append(n)
            ev.append(e if n == 1 else -1)
        k = upto
    return {"ts": ts, "dur": ds, "label": label, "count": count, "ev": ev}


def timeline_window(runner: "LineRunner", line: str, t0: Optional[float], t1: Optional[float],
                    width: int, collapsed: Sequence[str] = ()) -> dict[str, Any]:
    """The lanes of the window [t0, t1] (ns from the first slice; the whole trace, or
    the line's -step, if not given) at ``width`` pixels."""
    prep = prepare(runner, line)
    lanes = prep.lanes
    origin = lanes.begin
    end = lanes.end - origin
    if t0 is None and t1 is None:
        step = runner.check(line).options.step
        found = [s for s in prep.steps if s[0] == step]
        if step >= 0 and found and prep.download is None:
            t0, t1 = found[0][1] - origin, found[0][2] - origin
    lo = 0 if t0 is None else max(int(t0), 0)
    hi = end if t1 is None else min(int(t1), end)
    if hi <= lo:
        hi = lo + 1
    width = max(1, min(width, _MAX_WIDTH))
    pixel = (hi - lo) / width
    strings = Strings()
    hidden = set(collapsed)
    out_lanes, blocks, merged, cut = [], 0, 0, 0
    for index, lane in enumerate(lanes.lanes):
        rows = []
        if lane.group not in hidden and blocks <= MAX_BLOCKS:
            for depth, row in enumerate(lane.rows):
                first, last = lanes.window(index, depth, lo + origin, hi + origin)
                got = _row_blocks(lanes, row, lane.starts[depth], first, last, pixel, origin,
                                  strings)
                blocks += len(got["ts"])
                merged += sum(c for c in got["count"] if c > 1)
                rows.append(got)
        elif lane.group not in hidden:
            cut += 1
        out_lanes.append({"name": lane.name, "group": lane.group, "kind": lane.kind,
                          "rows": lane.depth, "blocks": rows})
    groups = [{"name": g, "kind": kind,
               "lanes": [k for k, lane in enumerate(lanes.lanes) if lane.group == g]}
              for g, kind in lanes.groups]
    notes = []
    if merged:
        notes.append("%d slices merged at this zoom (shorter than a pixel); zoom in to see "
                     "them" % merged)
    if cut:
        notes.append("more than %d blocks in this window: %d lanes left empty; zoom in or "
                     "collapse groups" % (MAX_BLOCKS, cut))
    return {"source": prep.source, "download": prep.download, "start": 0, "end": end,
            "t0": lo, "t1": hi, "groups": groups, "lanes": out_lanes,
            "steps": [{"step": s, "start": a - origin, "end": z - origin}
                      for s, a, z in prep.steps], "strings": strings.table,
            "merged": merged, "notes": notes}


def _describe(lanes: TraceLanes, event: int, origin: int) -> dict[str, Any]:
    lane = lanes.lanes[lanes.lane[event]]
    return {"event": event, "name": lanes.text(event), "category": lanes.category(event),
            "lane": lanes.lane[event], "lane_name": lane.name, "group": lane.group,
            "kind": lane.kind, "row": lanes.depth[event],
            "start": lanes.start[event] - origin, "dur": lanes.dur[event],
            "args": dict(lanes.args.get(event, {})),
            "stack": [{"event": e, "name": lanes.text(e), "category": lanes.category(e)}
                      for e in lanes.enclosing(event)]}


def timeline_event(runner: "LineRunner", line: str, event: int) -> dict[str, Any]:
    """One slice: where it is, its arguments, the slices enclosing it, and the slice a
    flow joins it to (a kernel's launch, a launch's kernel) with that one's stack."""
    lanes = prepare(runner, line).lanes
    if not 0 <= event < len(lanes):
        raise UsageError("timeline: no slice %d" % event)
    origin = lanes.begin
    out = _describe(lanes, event, origin)
    partner = lanes.flows.get(event)
    out["flow"] = _describe(lanes, partner, origin) if partner is not None else None
    return out


def timeline_range(runner: "LineRunner", line: str, t0: float, t1: float,
                   lane_ids: Optional[Sequence[int]] = None) -> dict[str, Any]:
    """What [t0, t1] holds: slices overlapping it by name and lane kind, with their
    count, summed duration, and the part of it inside the range."""
    lanes = prepare(runner, line).lanes
    origin = lanes.begin
    lo, hi = int(min(t0, t1)) + origin, int(max(t0, t1)) + origin
    chosen = range(len(lanes.lanes)) if not lane_ids else \
        [k for k in lane_ids if 0 <= k < len(lanes.lanes)]
    totals: dict[tuple[int, str], list[int]] = {}
    start, dur, name = lanes.start, lanes.dur, lanes.name
    events = 0
    for k in chosen:
        kind = lanes.lanes[k].kind
        for e in lanes.overlapping(k, lo, hi):
            a, z = start[e], start[e] + dur[e]
            inside = max(0, min(z, hi) - max(a, lo))
            row = totals.get((name[e], kind))
            if row is None:
                row = totals[(name[e], kind)] = [0, 0, 0]
            row[0] += 1
            row[1] += z - a
            row[2] += inside
            events += 1
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1][2], -kv[1][0]))
    rows = [{"name": lanes.strings[n], "kind": kind, "count": c, "total": t, "inside": i}
            for (n, kind), (c, t, i) in ranked[:RANGE_ROWS]]
    return {"t0": lo - origin, "t1": hi - origin, "slices": events, "names": len(ranked),
            "rows": rows, "lanes": len(chosen)}


__all__ = ["MAX_BLOCKS", "STEP_LIMIT", "prepare", "timeline_event", "timeline_range",
           "timeline_window", "trace_json", "trace_lanes", "trace_to_lanes", "view_trace"]
