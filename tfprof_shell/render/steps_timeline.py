"""`steps -output timeline:outfile=F`: a Chrome trace of each device's step
categories (compute, communication, memory, other, idle: host wait / queued)
at their real times, one process per device, with a row of step markers."""

from __future__ import annotations

import json
from typing import Any

from ..model import Model
from ..model.intervals import HAS_LAUNCH
from ..views.steps import StepsResult, device_segments


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
        for e in iv.devices:
            if e.device == device and e.step in wanted:
                by_step.setdefault(e.step, []).append(e)
        for step, evs in sorted(by_step.items()):
            for a, b, label in device_segments(evs, has_launch):
                events.append({"ph": "X", "name": label, "cat": "step category", "pid": pid,
                               "tid": 0, "ts": (a - origin) / 1000, "dur": (b - a) / 1000,
                               "args": {"step": step}})
    return json.dumps({"traceEvents": events, "displayTimeUnit": "ns"}) + "\n"
