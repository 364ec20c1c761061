"""Step categories (compute, communication, memory, other, sync, idle: host wait /
queued) as Chrome-trace tracks at their real times: the file of `steps -output
timeline:outfile=F` (one process per device, a row of step markers), and the
tracks `-output timeline:...,merge=true` adds to graph-view timelines."""

from __future__ import annotations

import json
from typing import Any

from ..model import Model
from ..model.intervals import HAS_LAUNCH
from ..views.steps import StepsResult, device_segments
from .chrome_trace import ProcessName, Region, Trace


def steps_trace(model: Model, result: StepsResult) -> str:
    """The Chrome-trace JSON text; times in µs from the first step's start."""
    iv = model.intervals()
    wanted = {s.step for s in result.steps}
    origin = min((s.start for s in result.steps), default=0)
    events: list[dict[str, Any]] = [{"ph": "M", "name": "process_name", "pid": 0,
                                     "args": {"name": "Steps (host)"}}]
    for s in result.steps:
        events.append({"ph": "X", "name": "step %d" % s.step, "cat": "step", "pid": 0,
                       "tid": 0, "ts": (s.start - origin) / 1000, "dur": s.wall / 1000,
                       "args": {"step": s.step}})
    has_launch = HAS_LAUNCH in iv.has
    for pid, device in enumerate(result.devices, start=1):
        events.append({"ph": "M", "name": "process_name", "pid": pid,
                       "args": {"name": "Steps %s" % device}})
        by_step: dict[int, list[Any]] = {}
        syncs: dict[int, list[Any]] = {}
        for e in iv.devices:
            if e.device == device and e.step in wanted:
                by_step.setdefault(e.step, []).append(e)
        for y in iv.syncs:
            if y.device == device and y.step in wanted:
                syncs.setdefault(y.step, []).append(y)
                by_step.setdefault(y.step, [])
        for step, evs in sorted(by_step.items()):
            for a, b, label in device_segments(evs, has_launch, syncs.get(step, ())):
                events.append({"ph": "X", "name": label, "cat": "step category", "pid": pid,
                               "tid": 0, "ts": (a - origin) / 1000, "dur": (b - a) / 1000,
                               "args": {"step": step}})
    return json.dumps({"traceEvents": events, "displayTimeUnit": "ns"}) + "\n"


def add_step_categories(trace: Trace, model: Model, step: int) -> None:
    """Add to a graph-view trace of ``step`` one process per device ("Step categories
    gpu:0") with its breakdown at the real times (µs, the trace's own clock)."""
    iv = model.intervals()
    has_launch = HAS_LAUNCH in iv.has
    by_device: dict[str, list[Any]] = {}
    syncs: dict[str, list[Any]] = {}
    for e in iv.devices:
        if e.step == step:
            by_device.setdefault(e.device, []).append(e)
    for y in iv.syncs:
        if y.step == step:
            syncs.setdefault(y.device, []).append(y)
            by_device.setdefault(y.device, [])
    pid = 1 + max((e.pid for e in trace.all_events()
                   if isinstance(e, (ProcessName, Region))), default=0)
    for device, events in sorted(by_device.items()):
        trace.metadata.append(ProcessName(pid, "Step categories %s" % device))
        for a, b, label in device_segments(events, has_launch, syncs.get(device, ())):
            start, end = (a + 500) // 1000, (b + 500) // 1000
            trace.metadata.append(Region(label, pid, 0, start, end - start,
                                         {"step": step, "category": label}))
        pid += 1
