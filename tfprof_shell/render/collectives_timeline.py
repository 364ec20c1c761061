"""`collectives -output timeline`: the ranks on one time axis, each instance's
arrivals linked by a flow arrow from the first to the last.

One process per rank (its calls, its top-level regions, its collective
kernels); process 0 has one slice per instance, from its first arrival to
its last. Times are µs on the common clock, from the first arrival shown.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from ..views.collectives import CollectivesResult

_CALLS, _REGIONS, _DEVICE = 0, 1, 2


def collectives_trace(result: CollectivesResult, step: Optional[int] = None) -> str:
    """The Chrome-trace JSON text of the instances (of ``step``, or all)."""
    instances = [i for i in result.instances if step is None or i.step == step]
    if not instances:
        return json.dumps({"traceEvents": [], "displayTimeUnit": "ns"}) + "\n"
    lo = min(min(i.arrival.values()) for i in instances)
    hi = max(max(i.end.values()) for i in instances)
    # the regions in the instances' span (one that began earlier sets the origin)
    shown = {name: [(r.start + result.shift[name], r.end + result.shift[name], r.name)
                    for r in result.data[name].regions
                    if r.end + result.shift[name] >= lo and r.start + result.shift[name] <= hi]
             for name in result.ranks}
    origin = min([lo] + [a for regions in shown.values() for a, _, _ in regions[:1]])
    events: list[dict[str, Any]] = [_meta("process_name", 0, 0, "Instances")]
    for i in instances:
        first = min(i.arrival.values())
        events.append({"ph": "X", "name": "%s #%d" % (i.op, i.index), "cat": "instance",
                       "pid": 0, "tid": 0, "ts": first - origin, "dur": i.skew,
                       "args": {"step": i.step, "size": i.size, "skew_us": round(i.skew, 3),
                                "last": i.last}})
    pid_of = {name: n + 1 for n, name in enumerate(result.ranks)}
    for name, pid in pid_of.items():
        events.append(_meta("process_name", pid, 0, name))
        events.append(_meta("process_sort_index", pid, 0, pid))
        for tid, label in ((_CALLS, "collective calls"), (_REGIONS, "top-level regions"),
                           (_DEVICE, "collective kernels")):
            events.append(_meta("thread_name", pid, tid, label))
        for a, b, region in shown[name]:
            events.append({"ph": "X", "name": region, "cat": "region", "pid": pid,
                           "tid": _REGIONS, "ts": a - origin, "dur": b - a})
    for i in instances:
        for name, call in i.calls.items():
            pid, shift = pid_of[name], result.shift[name]
            events.append({"ph": "X", "name": "%s #%d" % (i.op, i.index), "cat": "collective",
                           "pid": pid, "tid": _CALLS, "ts": call.start + shift - origin,
                           "dur": call.end - call.start,
                           "args": {"instance": i.index, "step": i.step, "size": i.size,
                                    "wait_us": round(i.wait[name], 3),
                                    "lateness_us": round(i.lateness.get(name, 0.0), 3)}})
            if call.device_start >= 0:
                events.append({"ph": "X", "name": "%s #%d" % (i.op, i.index),
                               "cat": "collective kernel", "pid": pid, "tid": _DEVICE,
                               "ts": call.device_start + shift - origin,
                               "dur": call.device_end - call.device_start})
        order = sorted(i.arrival, key=lambda n: (i.arrival[n], n))
        for k, name in enumerate(order):
            phase = "s" if k == 0 else "f" if k == len(order) - 1 else "t"
            events.append({"ph": phase, "id": i.index, "name": "arrivals", "cat": "arrival",
                           "pid": pid_of[name], "tid": _CALLS, "bp": "e",
                           "ts": i.arrival[name] - origin})
    return json.dumps({"traceEvents": events, "displayTimeUnit": "ns"}) + "\n"


def _meta(kind: str, pid: int, tid: int, value: Any) -> dict[str, Any]:
    key = "sort_index" if kind.endswith("sort_index") else "name"
    return {"ph": "M", "name": kind, "pid": pid, "tid": tid, "args": {key: value}}
