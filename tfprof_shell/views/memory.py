"""Will it fit: each device's memory peak, what is alive at it, and growth over steps.

Definitions (on a :class:`~tfprof_shell.model.memory.MemoryProfile`):

* the *level* after each event is the allocator's counter where the format
  records it, else the bytes of the blocks alive; the *peak* is its largest
  value, with the first time it is reached, how many separate times the level
  rises to it, and the step that time falls in;
* what is *alive at the peak* (the first time it is reached) is every block
  allocated at or before that event and freed after it, matched over the whole
  profile; where the level is the allocator's counter, what those blocks do
  not explain was allocated before the profile began, and is its own line;
* *per step*: the highest level within the step and the level at its end; the
  *slope* is the least-squares slope of the end levels over the steps;
* a *leak suspect* is a key (an op, a line, ...) whose blocks allocated in a
  step are never freed while profiled, in at least two of the steps before the
  last and in two thirds of them, at least 0.1% of the peak (and 1 KiB) per step (what the last step allocates may be freed by
  the next, unprofiled one; memory that changes hands every step, as a
  variable's buffers do, is freed a step or a few later, and is no suspect).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from ..model import Model
from ..model.intervals import StepMark
from ..model.memory import BEFORE, DeviceMemory, MemoryProfile, step_at
from ..model.node import Frame
from .memory_keys import KEYS, KeyOf, key_function

#: The live set's line for what was allocated before the profile began.
BEFORE_PROFILE = "(allocated before the profile)"
#: A leak suspect leaves at least this share of the peak per step (tiny survivors are
#: what formats without every free record, TF1's, show of fetched results).
SUSPECT_FLOOR = 0.001


@dataclass
class Peak:
    """A device's peak: its bytes, the first event reaching it (index, time ns), how
    many separate times the level rises to it, and the step of the first."""

    nbytes: int
    index: int
    time: int
    times_reached: int
    step: Optional[int]
    reserved: Optional[int] = None
    fragmentation: Optional[float] = None


@dataclass
class LiveRow:
    """One key of the live set: bytes, blocks, requested bytes (None unknown), the
    steps its blocks were allocated in (None: outside any step) and the age of the
    oldest at the peak (ns; None for blocks older than the profile)."""

    key: str
    nbytes: int
    count: int
    requested: Optional[int]
    steps: tuple[Optional[int], ...]
    age: Optional[int]


@dataclass
class StepLevel:
    """One step of a device: its highest level and the level at its end."""

    step: int
    peak: int
    end: int


@dataclass
class Suspect:
    """A key whose blocks are never freed: allocated in ``steps`` of the ``judged``
    steps (those before the last), ``nbytes`` in all, ``per_step`` the median over the
    judged steps (the first step's share may hold state made once)."""

    key: str
    steps: int
    judged: int
    nbytes: int
    per_step: int


@dataclass
class DeviceResult:
    """What `memory` says of one device."""

    name: str
    counted: bool
    events: int
    peak: Peak
    live: list[LiveRow]
    #: bytes at the peak no block of the profile explains (counted levels only)
    unexplained: int
    steps: list[StepLevel]
    slope: Optional[float]
    suspects: list[Suspect]
    capacity: int
    #: the level over time: (times ns, allocated, reserved or None), at most a few
    #: thousand points (the largest of each stretch)
    timeline: tuple[list[int], list[int], Optional[list[int]]]
    first: int
    last: int
    #: the largest single block alive at the peak: (bytes, key), None if none
    largest: Optional[tuple[int, str]] = None
    #: the most the allocator reserved at any time (None where not recorded)
    reserved_max: Optional[int] = None


@dataclass
class MemoryResult:
    """`memory` on one profile: each device, the steps, and what the format says."""

    by: str
    devices: list[DeviceResult]
    marks: list[StepMark]
    has: frozenset[str]
    notes: list[str] = field(default_factory=list)
    origin: str = ""
    start: int = 0
    #: the step whose peak is shown (None: the whole profile's)
    step: Optional[int] = None


def memory_result(model: Model, by: str, step: Optional[int] = None,
                  device: str = "", points: int = 2000) -> MemoryResult:
    """The memory of ``model``: every device's (or ``device``'s) peak (the peak of
    ``step`` with one), its live set by key ``by`` (one of KEYS), per-step levels
    and growth."""
    profile = model.memory()
    key_of = key_function(by, profile, model)
    chosen = [d for d in profile.devices if not device or d.name == device]
    span = _step_span(profile.marks, step)
    results = [_device(d, profile, key_of, span, points) for d in chosen if len(d.times)]
    starts = [d.times[0] for d in chosen if len(d.times)] + [m.start for m in profile.marks]
    return MemoryResult(by, results, profile.marks, profile.has, list(profile.notes),
                        profile.origin, min(starts) if starts else 0, step)


def _step_span(marks: Sequence[StepMark], step: Optional[int]) -> Optional[tuple[int, int]]:
    if step is None:
        return None
    spans = [(m.start, m.end) for m in marks if m.step == step]
    return (min(s for s, _ in spans), max(e for _, e in spans)) if spans else (0, 0)


def _device(d: DeviceMemory, profile: MemoryProfile, key_of: KeyOf,
            span: Optional[tuple[int, int]], points: int) -> DeviceResult:
    times, level = d.times, d.allocated
    lo, hi = 0, len(times)
    if span is not None:
        lo, hi = bisect_left(times, span[0]), bisect_left(times, span[1])
    peak = _peak(d, profile.marks, lo, hi)
    live, unexplained, largest = _live(d, peak, key_of, profile.marks)
    steps = _step_levels(d, profile.marks)
    return DeviceResult(d.name, d.counted, len(times), peak, live, unexplained, steps,
                        _slope([s.end for s in steps]),
                        _suspects(d, profile.marks, key_of, peak.nbytes),
                        d.capacity, _timeline(d, points), times[0], times[-1], largest,
                        max(d.reserved) if d.reserved is not None and len(d.reserved) else None)


def _peak(d: DeviceMemory, marks: Sequence[StepMark], lo: int, hi: int) -> Peak:
    level = d.allocated
    if hi <= lo:
        return Peak(0, -1, 0, 0, None)
    top = max(level[lo:hi])
    first = level.index(top, lo, hi)
    reached, was_at = 0, False
    for i in range(lo, hi):
        at = level[i] == top
        reached += at and not was_at
        was_at = at
    t = d.times[first]
    return Peak(top, first, t, reached, step_at(marks, t),
                None if d.reserved is None else d.reserved[first],
                None if d.fragmentation is None else d.fragmentation[first])


def _live(d: DeviceMemory, peak: Peak, key_of: KeyOf, marks: Sequence[StepMark]
          ) -> tuple[list[LiveRow], int, Optional[tuple[int, str]]]:
    """The blocks alive at the peak event, by key, largest first; the bytes they leave
    unexplained (counted levels); and the largest block (bytes, key)."""
    if peak.index < 0:
        return [], 0, None
    b = d.blocks
    p = peak.index
    rows: dict[str, list] = {}
    total = 0
    times = d.times
    largest: Optional[tuple[int, str]] = None
    for i, (first, last) in enumerate(zip(b.first, b.last)):
        if first > p or last <= p:
            continue
        n = b.nbytes[i]
        total += n
        if first == BEFORE:
            key, step, age = BEFORE_PROFILE, None, None
        else:
            key = key_of(b, i, d)
            t = times[first]
            step, age = step_at(marks, t), peak.time - t
        row = rows.get(key)
        if row is None:
            row = rows[key] = [0, 0, 0, True, set(), None]
        row[0] += n
        row[1] += 1
        req = b.requested[i]
        if req >= 0:
            row[2] += req
        else:
            row[3] = False
        row[4].add(step)
        if age is not None and (row[5] is None or age > row[5]):
            row[5] = age
        if largest is None or n > largest[0]:
            largest = (n, key)
    unexplained = max(peak.nbytes - total, 0) if d.counted else 0
    if unexplained:
        row = rows.setdefault(BEFORE_PROFILE, [0, 0, 0, False, {None}, None])
        row[0] += unexplained
        row[3] = False
    out = [LiveRow(key, r[0], r[1], r[2] if r[3] else None,
                   tuple(sorted(r[4], key=lambda s: (s is None, s or 0))), r[5])
           for key, r in rows.items()]
    out.sort(key=lambda r: (-r.nbytes, r.key))
    return out, unexplained, largest


def _step_levels(d: DeviceMemory, marks: Sequence[StepMark]) -> list[StepLevel]:
    times, level = d.times, d.allocated
    out = []
    for m in marks:
        lo, hi = bisect_left(times, m.start), bisect_left(times, m.end)
        before = level[lo - 1] if lo > 0 else (level[0] - _first_delta(d) if len(level) else 0)
        top = max(level[lo:hi]) if hi > lo else before
        end = level[hi - 1] if hi > 0 else before
        out.append(StepLevel(m.step, max(top, before), end))
    return out


def _first_delta(d: DeviceMemory) -> int:
    """What the first event changed (the level before it is the first level minus this)."""
    b = d.blocks
    for i, (first, last) in enumerate(zip(b.first, b.last)):
        if first == 0:
            return b.nbytes[i]
        if last == 0:
            return -b.nbytes[i]
    return 0


def _slope(values: Sequence[int]) -> Optional[float]:
    """Least-squares slope of ``values`` over their index (None for fewer than 2)."""
    n = len(values)
    if n < 2:
        return None
    mean_x = (n - 1) / 2.0
    mean_y = sum(values) / float(n)
    num = sum((i - mean_x) * (v - mean_y) for i, v in enumerate(values))
    den = sum((i - mean_x) ** 2 for i in range(n))
    return num / den


def _suspects(d: DeviceMemory, marks: Sequence[StepMark], key_of: KeyOf, peak: int
              ) -> list[Suspect]:
    """Keys whose blocks allocated step after step are never freed (see the module),
    at least :data:`SUSPECT_FLOOR` of the peak (and 1 KiB) per step."""
    if len(marks) < 3:
        return []
    times = d.times
    starts = [m.start for m in marks]
    judged = len(marks) - 1
    survivors: dict[str, dict[int, int]] = defaultdict(dict)
    b = d.blocks
    n = len(times)
    for i, (first, last) in enumerate(zip(b.first, b.last)):
        if first == BEFORE or last < n:
            continue
        t = times[first]
        s = bisect_right(starts, t) - 1
        if s < 0 or s >= judged or t >= marks[s].end:
            continue
        per = survivors[key_of(b, i, d)]
        per[s] = per.get(s, 0) + b.nbytes[i]
    need = max(2, -(-2 * judged // 3))
    out = [Suspect(key, len(per), judged, sum(per.values()),
                   median([per.get(s, 0) for s in range(judged)]))
           for key, per in survivors.items() if len(per) >= need]
    floor = max(1024, int(peak * SUSPECT_FLOOR))
    out = [s for s in out if s.per_step >= floor]
    out.sort(key=lambda s: (-s.nbytes, s.key))
    return out


def median(values: Sequence[int]) -> int:
    """The median of ``values`` (the lower of the middle two)."""
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2] if ordered else 0


def _timeline(d: DeviceMemory, points: int
              ) -> tuple[list[int], list[int], Optional[list[int]]]:
    """At most ``points`` events: each stretch's highest level (all of them if few)."""
    n = len(d.times)
    if n <= points:
        return (list(d.times), list(d.allocated),
                None if d.reserved is None else list(d.reserved))
    picks = []
    level = d.allocated
    for k in range(points):
        lo, hi = k * n // points, (k + 1) * n // points
        if hi <= lo:
            continue
        top = max(range(lo, hi), key=level.__getitem__)
        picks.append(top)
    return ([d.times[i] for i in picks], [level[i] for i in picks],
            None if d.reserved is None else [d.reserved[i] for i in picks])


def sparkline(result: DeviceResult, start: int, end: int, width: int
              ) -> tuple[str, int, int]:
    """The level over [start, end) as ``width`` bar characters, each the highest level
    in its stretch (the level carried where nothing happened, blank before the first
    event), scaled from the lowest of them (the floor) to the highest; and the floor
    and the top."""
    times, level, _ = result.timeline
    highs: list[Optional[int]] = []
    i, n = 0, len(times)
    carried: Optional[int] = None
    span = max(end - start, 1)
    for col in range(width):
        until = start + (col + 1) * span // width
        high = carried
        while i < n and times[i] < until:
            high = level[i] if high is None else max(high, level[i])
            carried = level[i]
            i += 1
        highs.append(high)
    known = [h for h in highs if h is not None]
    floor, top = min(known, default=0), max(known, default=0)
    bars = "▁▂▃▄▅▆▇█"
    scale = len(bars) - 1
    out = "".join(" " if h is None else
                  bars[(h - floor) * scale // (top - floor)] if top > floor else bars[-1]
                  for h in highs)
    return out, floor, top


def columns_of(times: Sequence[int], start: int, end: int, width: int) -> list[int]:
    """The sparkline column of each time in ``times``."""
    span = max(end - start, 1)
    return [min(width - 1, max(0, (t - start) * width // span)) for t in times]


def alive_at(d: DeviceMemory, index: int) -> list[int]:
    """The blocks of ``d`` alive right after its event ``index``."""
    b = d.blocks
    return [i for i, (first, last) in enumerate(zip(b.first, b.last))
            if first <= index < last]


def device_memory(model: Model, name: str) -> Optional[DeviceMemory]:
    """The memory of ``model``'s device ``name`` (None if it has none)."""
    return next((d for d in model.memory().devices if d.name == name), None)


def innermost(frames: Sequence[Frame], own: Callable[[Frame], bool]) -> Optional[Frame]:
    """The innermost frame ``own`` accepts, else the innermost one (None if none)."""
    for frame in reversed(frames):
        if own(frame):
            return frame
    return frames[-1] if frames else None


__all__ = ["BEFORE_PROFILE", "KEYS", "DeviceResult", "LiveRow", "MemoryResult", "Peak",
           "StepLevel", "Suspect", "alive_at", "columns_of", "device_memory", "innermost",
           "memory_result", "sparkline"]
