"""Memory as counter tracks on the Timeline page: each device's level over time.

The level is the memory profile's (model.memory: the allocator's counter, or the
bytes of the blocks the profile saw alive), the one `memory` charts. Its times are
on the profile's own axis, which for XSpace files is not the trace's: they are
placed on the timeline by the step markers both have (their starts differ by one
constant), else taken as they are when they fall inside the trace.

Like the slices, a window sends at most a few points per pixel: where more events
fall into one pixel, the pixel's highest level (and reserved bytes) stand for them.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from statistics import median
from typing import Any, Optional, Sequence

from ..errors import UserError
from ..model.model import Model

#: The lane group of the counters, and their height in timeline rows.
GROUP = "memory"
ROWS = 3


@dataclass
class Counter:
    """One device's level on the timeline's axis (ns): times, allocated bytes after
    each, reserved bytes (None where the format does not record them), the peak."""

    device: str
    times: list[int]
    allocated: Sequence[int]
    reserved: Optional[Sequence[int]]
    peak: int
    peak_time: int
    top: int


def memory_counters(model: Model, steps: Sequence[tuple[int, int, int]], begin: int,
                    end: int) -> tuple[list[Counter], list[str]]:
    """The counters of ``model``'s memory on a timeline of ``steps`` ((step, start, end)
    ns) spanning [begin, end] ns, and notes; none where the profile has no memory."""
    if not model.has_memory_source:
        return [], []
    try:
        profile = model.memory()
    except UserError as exc:
        return [], ["memory counters: %s" % exc.message]
    devices = [d for d in profile.devices if len(d.times)]
    if not devices:
        return [], []
    on_timeline = {s: a for s, a, _ in steps}
    shifts = [on_timeline[m.step] - m.start for m in profile.marks if m.step in on_timeline]
    if shifts:
        shift = int(median(shifts))
    else:
        first = min(d.times[0] for d in devices)
        last = max(d.times[-1] for d in devices)
        if first < begin or last > end:
            return [], ["memory counters left out: the memory events' times cannot be "
                        "placed on the trace's (no step marker in both)"]
        shift = 0
    out = []
    for d in devices:
        allocated = d.allocated
        peak = max(allocated)
        at = allocated.index(peak)
        reserved = d.reserved
        top = max(peak, max(reserved) if reserved is not None and len(reserved) else 0)
        out.append(Counter(d.name, [t + shift for t in d.times], allocated, reserved, peak,
                           d.times[at] + shift, top))
    return out, []


def _window(c: Counter, lo: int, hi: int, width: int, origin: int) -> dict[str, Any]:
    """The points of [lo, hi] (the level before lo first), at most two per pixel."""
    times = c.times
    first = max(bisect_left(times, lo) - 1, 0)
    last = bisect_right(times, hi)
    pixel = max((hi - lo) / max(width, 1), 1.0)
    t: list[int] = []
    v: list[int] = []
    r: Optional[list[int]] = [] if c.reserved is not None else None
    k = first
    while k < last:
        j = bisect_left(times, times[k] + pixel, k + 1, last) if last - first > 2 * width \
            else k + 1
        if j - k == 1:
            t.append(times[k] - origin)
            v.append(c.allocated[k])
            if r is not None:
                r.append(c.reserved[k])  # type: ignore[index]
        else:  # the pixel's highest, then where it ends
            t.append(times[k] - origin)
            v.append(max(c.allocated[k:j]))
            t.append(times[j - 1] - origin)
            v.append(c.allocated[j - 1])
            if r is not None:
                r.append(max(c.reserved[k:j]))  # type: ignore[index]
                r.append(c.reserved[j - 1])  # type: ignore[index]
        k = j
    return {"t": t, "v": v, "r": r, "top": c.top, "peak": [c.peak_time - origin, c.peak]}


def counter_lanes(counters: Sequence[Counter], lo: int, hi: int, width: int,
                  origin: int) -> list[dict[str, Any]]:
    """The window's counter lanes (``kind`` "counter"): [lo, hi] are ns on the
    trace's axis, times sent as ns from ``origin``."""
    return [{"name": "%s memory" % c.device, "group": GROUP, "kind": "counter", "rows": ROWS,
             "blocks": [], "counter": _window(c, lo, hi, width, origin)} for c in counters]


__all__ = ["Counter", "GROUP", "counter_lanes", "memory_counters"]
