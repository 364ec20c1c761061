"""Chrome trace timelines (`-output timeline`) of the scope, graph and code views.

The events and their JSON form live in chrome_trace.py. The
scope and code views give a stacked layout of the displayed tree; the graph
view gives the real per-device schedule of one step, with cross-device
flows and accelerator memory counters. Files are named ``<outfile>_<step>``;
with ``merge=true`` all steps go end to end into ``<outfile>`` itself.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Iterator, Optional

from ..load.runmeta import is_canonical_device
from ..model import GraphNode
from ..model import stats as S
from ..options import Options
from ..views.base import DisplayNode, ViewResult
from .base import Rendered
from .chrome_trace import Counter, Flow, ProcessName, Region, Trace, merge_traces

#: The engine warns when a trace gets this big (Chrome struggles beyond it).
LARGE_TRACE_BYTES = 200 * 1024 * 1024
_STARS = "******************************************************"
#: Memory counters closer than this (microseconds) to the previous one are skipped.
_COUNTER_SPACING = 100
_TOP_ALLOCATIONS = 10


# -- scope and code views: stacked layout of the displayed tree --------------

def tree_trace(root: DisplayNode) -> Trace:
    """One region per displayed node: pid = depth, children laid end to end.

    Children with no execution time are skipped, as in the engine.
    """
    trace = Trace()
    seen_depths: set[int] = set()
    stack = [(root, 0, root.total[S.EXEC], 0)]
    while stack:
        node, start, dur, depth = stack.pop()
        if depth not in seen_depths:
            seen_depths.add(depth)
            trace.metadata.append(ProcessName(depth, "Scope:%d" % depth))
        trace.metadata.append(Region(node.name, depth, 0, start, dur,
                                     {"name": node.name, "op": node.name}))
        placed = []
        cursor = start
        for child in node.children:
            micros = child.total[S.EXEC]
            if micros <= 0:
                continue
            placed.append((child, cursor, micros, depth + 1))
            cursor += micros
        stack.extend(reversed(placed))
    return trace


# -- graph view: the schedule of one step -------------------------------------

class _TimeNode:
    __slots__ = ("display", "pid", "start", "dur", "tid", "next")

    def __init__(self, display: DisplayNode, pid: int, start: int, dur: int) -> None:
        self.display = display
        self.pid = pid
        self.start = start
        self.dur = dur
        self.tid = -1
        self.next: list[_TimeNode] = []


class _MemoryDevice:
    """Allocator samples and per-node cumulative allocations on one device."""

    def __init__(self) -> None:
        self.tensor_allocs: dict[str, dict[int, int]] = {}
        self.allocations: dict[int, int] = {}


def _track_memory(devices: dict[str, _MemoryDevice], gnode: GraphNode, step: int) -> None:
    dev = devices.setdefault(gnode.canonical_device, _MemoryDevice())
    rec = gnode.exec_step(step)
    allocs: dict[int, int] = {}
    for micros, nbytes in rec.allocations:
        allocs[micros] = allocs.get(micros, 0) + nbytes
    allocs[0] = allocs.get(0, 0) + gnode.accelerator_persistent_bytes()
    cumulative = dev.tensor_allocs.setdefault(gnode.name, {})
    running = 0
    for micros in sorted(allocs):
        running += allocs[micros]
        cumulative[micros] = running
    in_use: dict[int, int] = {}
    for mem in rec.memory_execs:
        in_use[mem.memory_micros] = mem.allocator_bytes_in_use
    for micros, nbytes in in_use.items():
        if micros > 0:
            dev.allocations[micros] = nbytes


def _lane_for(lanes: list[dict[int, int]], start: int) -> int:
    """First lane whose latest entries end no later than ``start`` (the engine's scan)."""
    for i, lane in enumerate(lanes):
        free = True
        # Lanes are filled in ascending start order: reversed() is descending.
        for lane_start in reversed(lane):
            end = lane[lane_start]
            if end > start:
                free = False
                break
            if start > end:
                break
        if free:
            return i
    return -1


def _format_g6(value: float) -> str:
    return "%.6g" % value


def _top_allocations(in_use: int, tensor_mem: dict[int, list[str]]) -> dict[str, object]:
    args: dict[str, object] = {"Top Allocation %02d" % i: "N/A"
                               for i in range(1, _TOP_ALLOCATIONS)}
    count = 0
    remaining = in_use
    for nbytes in sorted(tensor_mem, reverse=True):
        for name in tensor_mem[nbytes]:
            if remaining < nbytes or count >= _TOP_ALLOCATIONS:
                break
            args["Top Allocation %02d" % count] = "%s MB from %s" % (
                _format_g6(nbytes / 1000000.0), name)
            count += 1
            remaining -= nbytes
    args["Not Displayed"] = "%.2f MB" % (remaining / 1000000.0)
    return args


def graph_trace(result: ViewResult, step: int) -> tuple[Trace, str]:
    """The trace of the displayed graph nodes in ``step``, and the engine's stdout lines."""
    trace = Trace()
    next_pid = [0]

    def allocate_pid() -> int:
        pid = next_pid[0]
        next_pid[0] += 1
        return pid

    pids: dict[str, int] = {}
    tnodes: dict[str, dict[int, _TimeNode]] = {}
    memory: dict[str, _MemoryDevice] = {}
    stack = list(reversed(result.root.children))
    while stack:
        node = stack.pop()
        gnode = node.graph_node
        if gnode is not None and gnode.trackable(step):
            _track_memory(memory, gnode, step)
            execs = gnode.exec_step(step).op_execs()
            for device in sorted(execs):
                if device not in pids:
                    pids[device] = allocate_pid()
                    kind = "execution" if "stream" in device else "scheduling"
                    trace.metadata.append(ProcessName(
                        pids[device], "Op %s threads: %s" % (kind, device)))
                by_start = tnodes.setdefault(device, {})
                for start, dur in execs[device]:
                    if start not in by_start:
                        by_start[start] = _TimeNode(node, pids[device], start, dur)
        stack.extend(reversed(node.children))

    _link_flows(tnodes, step)
    lanes_by_pid: dict[int, dict[int, dict[int, _TimeNode]]] = {}
    for device in sorted(tnodes):
        lanes: list[dict[int, int]] = []
        for start in sorted(tnodes[device]):
            tnode = tnodes[device][start]
            lane = _lane_for(lanes, start)
            if lane < 0:
                lane = len(lanes)
                lanes.append({})
            lanes[lane][start] = start + tnode.dur
            tnode.tid = lane
            lanes_by_pid.setdefault(tnode.pid, {}).setdefault(lane, {})[start] = tnode

    out = ["generating trace file.\n"]
    flow_id = 1
    for pid in sorted(lanes_by_pid):
        for lane in sorted(lanes_by_pid[pid]):
            row = lanes_by_pid[pid][lane]
            for start in sorted(row):
                tnode = row[start]
                name = tnode.display.name
                trace.metadata.append(Region(name, pid, lane, start, tnode.dur, {"name": name}))
                for nxt in tnode.next:
                    trace.events.append(Flow("s", name + "_flow", pid, lane,
                                             tnode.start + tnode.dur, flow_id))
                    trace.events.append(Flow("t", name + "_flow", nxt.pid, nxt.tid,
                                             nxt.start, flow_id))
                    flow_id += 1

    for device in sorted(memory):
        if "cpu" in device:
            continue
        pid = allocate_pid()
        trace.metadata.append(ProcessName(pid, "mem usage on:" + device))
        trace.metadata.append(ProcessName(allocate_pid(), "mem usage on:%s allocations" % device))
        peak = _memory_counters(trace, memory[device], pid)
        if "gpu" in device:
            out.append("%s peak memory: %.2f MB\n" % (device, peak / 1000000.0))
    return trace, "".join(out)


def _link_flows(tnodes: dict[str, dict[int, _TimeNode]], step: int) -> None:
    """Arrows from an input's run on one canonical device to its consumer on another."""
    for device in sorted(tnodes):
        if not is_canonical_device(device):
            continue
        for start in sorted(tnodes[device]):
            tnode = tnodes[device][start]
            view_node = tnode.display.view_node
            for inp in (view_node.children if view_node is not None else ()):
                gin = inp.gnode
                if not inp.account or gin is None or not gin.trackable(step):
                    continue
                cpu_execs = gin.exec_step(step).cpu_execs
                for other in sorted(cpu_execs):
                    if not is_canonical_device(other) or other == device:
                        continue
                    for in_start, _ in cpu_execs[other]:
                        source = tnodes.get(other, {}).get(in_start)
                        if source is not None:
                            source.next.append(tnode)


def _memory_counters(trace: Trace, dev: _MemoryDevice, pid: int) -> int:
    """Emit the allocator counters of one device; returns its peak bytes in use."""
    peak = 0
    last_point = 0
    curves = [(name, sorted(curve), curve) for name, curve in sorted(dev.tensor_allocs.items())]
    for ts in sorted(dev.allocations):
        in_use = dev.allocations[ts]
        peak = max(peak, in_use)
        if ts - last_point < _COUNTER_SPACING:
            continue
        last_point = ts
        tensor_mem: dict[int, list[str]] = {}
        for name, times, curve in curves:
            i = bisect_left(times, ts)
            if i != 0:
                i -= 1
            value = curve[times[i]]
            if value > 0:
                tensor_mem.setdefault(value, []).append(name)
        trace.events.append(Counter("Allocated Bytes", pid, ts,
                                    {"Allocator Bytes in Use": in_use}))
        trace.events.append(Counter("Top Allocations", pid + 1, ts,
                                    _top_allocations(in_use, tensor_mem)))
    return peak


# -- delivery --------------------------------------------------------------------

def notice(path: str) -> str:
    """What the engine prints after writing a timeline file."""
    return ("\n%s\nTimeline file is written to %s.\nOpen a Chrome browser, enter URL "
            "chrome://tracing and load the timeline file.\n%s\n" % (_STARS, path, _STARS))


class _Part:
    """One run of a timeline command, rendered: its step, trace (if any), text and notes."""

    __slots__ = ("step", "trace", "text", "notes")

    def __init__(self, step: int, trace: Optional[Trace], text: str, notes: list[str]) -> None:
        self.step = step
        self.trace = trace
        self.text = text
        self.notes = notes


def _render(result: ViewResult) -> _Part:
    step = result.options.step
    if result.view in ("scope", "code"):
        return _Part(step, tree_trace(result.root), "", list(result.notes))
    if step < 0:
        steps = result.model.steps if result.model is not None else ()
        return _Part(step, None, "", list(result.notes) + [
            "graph view timelines need a step: give -step N (recorded steps: %s)"
            % (" ".join(str(s) for s in steps) or "none")])
    trace, text = graph_trace(result, step)
    return _Part(step, trace, text, list(result.notes))


def _serialize(files: list[tuple[str, Trace]], rendered: Rendered
               ) -> Iterator[tuple[str, str]]:
    """Each file's JSON in turn, so only one is held in memory at a time."""
    for path, trace in files:
        data = trace.to_json()
        if len(data) > LARGE_TRACE_BYTES:
            rendered.notes.append("timeline %s is over 200MB; Chrome may not load it. Narrow "
                                  "it with filters such as -min_micros 1000 or "
                                  "-account_type_regexes '.*gpu:0.*'" % path)
        yield path, data


class TimelineRenderer:
    """`-output timeline:outfile=F[,merge=true]`: one file per run, or all merged.

    Each run is rendered as soon as it is added, since the view's nodes are
    reused by the next run. No run at all (no recorded steps) means no file.
    """

    def __init__(self, opts: Options) -> None:
        self.opts = opts
        self.parts: list[_Part] = []
        self.last: Optional[ViewResult] = None

    def add(self, result: ViewResult) -> None:
        self.parts.append(_render(result))
        self.last = result

    def finish(self) -> Rendered:
        if not self.parts:
            return Rendered(notes=["no steps recorded in this profile: no timeline written"])
        outfile = self.opts.output.outfile or ""
        rendered = Rendered(result=self.last)
        for part in self.parts:
            for note in part.notes:
                if note not in rendered.notes:
                    rendered.notes.append(note)
        files: list[tuple[str, Trace]] = []
        if self.opts.output.flag("merge"):
            model = self.last.model if self.last is not None else None
            if model is not None and self.last is not None and self.last.view == "graph":
                from .steps_timeline import add_step_categories
                for p in self.parts:
                    if p.trace is not None:
                        add_step_categories(p.trace, model, p.step)
            traces = [(p.step, p.trace) for p in self.parts if p.trace is not None]
            rendered.text = "".join(p.text for p in self.parts)
            if traces:
                files.append((outfile, merge_traces(traces)))
                rendered.text += notice(outfile)
        else:
            for part in self.parts:
                if part.trace is not None:
                    path = "%s_%d" % (outfile, part.step)
                    files.append((path, part.trace))
                    rendered.text += part.text + notice(path)
        rendered.writes = _serialize(files, rendered)
        return rendered
