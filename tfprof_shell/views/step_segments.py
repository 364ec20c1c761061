"""What one part of one step holds: the device work and host events behind a segment
of the `steps` breakdown (the Steps page's click on a bar segment).

A device part (compute, communication, memory, other, sync, the idle parts) is
the set of pieces of the device's span that :func:`views.steps.device_segments`
labels with it; its *device events* are the step's events on the device
overlapping those pieces (for sync, the device-side syncs: ``Event Sync``, ...),
and its *host events* the host intervals overlapping them (what the host did
while the device idled or waited). A host part (sync, launch, ops, ...) is
the step's host events of that kind. Each list is grouped by name, with the
count and the time inside the part (ns), largest first.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any, Sequence

from ..model.intervals import HAS_LAUNCH, HostEvent, Intervals
from .interval_math import Span, length, union
from .steps import HOST_PARTS, device_segments

#: Device part (as the steps document names it) -> device_segments' labels.
PART_LABELS = {"compute": ("compute",), "communication_exposed": ("communication",),
               "memory_exposed": ("memory",), "other": ("other",), "sync": ("sync",),
               "idle": ("idle", "idle: host wait", "idle: queued"),
               "idle_host_wait": ("idle: host wait",), "idle_queued": ("idle: queued",)}
#: At most this many names per list.
LIMIT = 100


def _grouped(items: Sequence[tuple[str, str, int]]) -> list[dict[str, Any]]:
    """(name, kind, ns) items -> [{name, kind, count, time}] by time, largest first."""
    rows: dict[tuple[str, str], list[int]] = {}
    for name, kind, ns in items:
        row = rows.setdefault((name, kind), [0, 0])
        row[0] += 1
        row[1] += ns
    ranked = sorted(rows.items(), key=lambda kv: (-kv[1][1], kv[0]))
    return [{"name": n, "kind": k, "count": c, "time": t} for (n, k), (c, t) in ranked[:LIMIT]]


def _inside(start: int, end: int, pieces: list[Span], starts: list[int]) -> int:
    """How much of [start, end) lies in the sorted, disjoint ``pieces``."""
    k = max(bisect_right(starts, start) - 1, 0)
    total = 0
    while k < len(pieces) and pieces[k][0] < end:
        a, b = pieces[k]
        total += max(0, min(b, end) - max(a, start))
        k += 1
    return total


def segment_contents(iv: Intervals, step: int, device: str, part: str) -> dict[str, Any]:
    """The device events and host events of one part of one step (see module doc);
    ``device`` empty for a host part. Raises KeyError for a step or device that
    the intervals do not have."""
    mark = next((m for m in iv.marks if m.step == step), None)
    if mark is None:
        raise KeyError("step %d" % step)
    if not device:
        return _host_part(iv, step, mark.start, mark.end, part)
    events = [e for e in iv.devices if e.step == step and e.device == device]
    syncs = [y for y in iv.syncs if y.step == step and y.device == device]
    if not events and not syncs:
        raise KeyError("device %s in step %d" % (device, step))
    labels = PART_LABELS.get(part)
    if labels is None:  # a part this module does not know: the events of that kind
        chosen = [e for e in events if e.kind == part]
        pieces = union((e.start, e.end) for e in chosen)
    else:
        pieces = union((a, b) for a, b, label
                       in device_segments(events, HAS_LAUNCH in iv.has, syncs)
                       if label in labels)
    starts = [a for a, _ in pieces]
    work = []
    for e in events:
        t = _inside(e.start, e.end, pieces, starts)
        if t > 0:
            work.append((e.name, e.kind, t))
    if part == "sync":
        for y in syncs:
            t = _inside(y.start, y.end, pieces, starts)
            if t > 0:
                work.append((y.name, "sync", t))
    host = []
    if part.startswith("idle") or part == "sync":
        lo = pieces[0][0] if pieces else 0
        hi = pieces[-1][1] if pieces else 0
        for h in _host_between(iv.host, lo, hi):
            t = _inside(h.start, h.end, pieces, starts)
            if t > 0:
                host.append((str(h.name), h.kind, t))
    return {"step": step, "device": device, "part": part, "time": length(pieces),
            "pieces": len(pieces), "device_events": _grouped(work), "host_events": _grouped(host)}


def _host_between(host: Sequence[HostEvent], lo: int, hi: int) -> list[HostEvent]:
    """Host events (sorted by start) that may overlap [lo, hi)."""
    first = bisect_right(host, (lo - 10 ** 12,))
    return [h for h in host[first:bisect_right(host, (hi,))] if h.end > lo]


def _host_part(iv: Intervals, step: int, lo: int, hi: int, part: str) -> dict[str, Any]:
    items = []
    if part in HOST_PARTS:
        for h in _host_between(iv.host, lo, hi):
            if h.kind == part:
                t = max(0, min(h.end, hi) - max(h.start, lo))
                if t > 0:
                    items.append((str(h.name), h.kind, t))
    return {"step": step, "device": "", "part": part, "time": sum(t for *_, t in items), "pieces": 0,
            "device_events": [], "host_events": _grouped(items)}
