"""Where a step's time goes: each step split into device and host categories.

Definitions (HTA's, per step, on exact times; see docs/steps.md):

* a device event belongs to the step of the host call that launched it (else
  the step its start falls in); a device's *span* in a step runs from its
  first event's start to its last event's end;
* *busy* is the union of its events on all streams; *compute*, *memory*
  (per copy kind) and *communication* are the unions of their kinds;
  *overlap* is communication during compute;
* the span splits into parts that add up to it exactly: compute, then
  communication outside compute, memory outside both, other device work,
  *sync* (a device-side synchronisation open with no work running: Kineto's
  ``cuda_sync`` events, where the trace has them), and idle (the rest);
  idle splits into *host wait* (before the host started the call that
  launched the event ending the gap) and *queued*;
* device events launched outside their step's marker (before the first
  ``ProfilerStep``, between steps) or with no launch in the trace count where
  they ran; they are counted apart (HTA leaves them out of every step);
* the host side of a step (its marker) splits the same way, each instant
  labelled by the first kind present: sync, communication, input, launch,
  ops, and the rest (no host event at all).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Optional, Sequence

from ..model.intervals import (COMMUNICATION, COMPUTE, HAS_LAUNCH,
                               HOST_KINDS, MEMORY_KINDS, OTHER, DeviceEvent, DeviceSync,
                               HostEvent, Intervals, StepMark)
from .interval_math import Span, clip, gaps, intersect, length, subtract, union

#: The parts of a device's span, in the order they are taken (each outside the ones before).
DEVICE_PARTS = ("compute", "communication_exposed", "memory_exposed", "other_exposed",
                "sync_exposed", "idle_host_wait", "idle_queued")
#: The parts of a step's host wall, in label order.
HOST_PARTS = HOST_KINDS + ("rest",)


@dataclass
class MemoryKind:
    """One copy kind on one device in one step."""

    count: int = 0
    time: int = 0
    nbytes: int = 0


@dataclass
class DeviceBreakdown:
    """One device in one step; times in ns. ``idle_host_wait`` and
    ``idle_queued`` are None where the format records no launch times."""

    start: int = 0
    end: int = 0
    events: int = 0
    busy: int = 0
    compute: int = 0
    communication: int = 0
    overlap: int = 0
    memory: int = 0
    other: int = 0
    communication_exposed: int = 0
    memory_exposed: int = 0
    other_exposed: int = 0
    idle: int = 0
    idle_host_wait: Optional[int] = None
    idle_queued: Optional[int] = None
    memory_kinds: dict[str, MemoryKind] = field(default_factory=dict)
    kernel_count: int = 0
    short_kernels: int = 0
    #: device-side syncs: their union, its part with no work running, their count,
    #: and the syncs themselves (with what each waited for)
    sync: int = 0
    sync_exposed: int = 0
    sync_count: int = 0
    syncs: list[DeviceSync] = field(default_factory=list)
    #: events launched outside the step's marker, or with no launch in the trace
    #: (where the format records launches): count and the union of their time
    outside_count: int = 0
    outside_time: int = 0

    @property
    def span(self) -> int:
        return self.end - self.start


@dataclass
class HostBreakdown:
    """The host side of one step; times in ns, ``parts`` by HOST_PARTS."""

    wall: int = 0
    parts: dict[str, int] = field(default_factory=dict)
    #: Distinct launching calls (one call may launch several kernels: a CUDA graph,
    #: an XLA command buffer) and their summed durations.
    launch_count: int = 0
    launch_total: int = 0
    #: Device events with a known launch, and the sum of their launch delays.
    launched: int = 0
    launch_delay_total: int = 0


@dataclass
class StepBreakdown:
    """One step: its marker, gap since the previous step, devices and host."""

    step: int
    start: int
    end: int
    gap_before: Optional[int]
    devices: dict[str, DeviceBreakdown]
    host: HostBreakdown

    @property
    def wall(self) -> int:
        return self.end - self.start


@dataclass
class StepsResult:
    """Every step's breakdown of one profile, and what its format can say."""

    steps: list[StepBreakdown]
    has: frozenset[str]
    origin: str
    devices: list[str]
    notes: list[str] = field(default_factory=list)


#: Kernels shorter than this (ns) count as tiny (launch overhead dominates).
SHORT_KERNEL_NS = 10_000


def _device_breakdown(events: Sequence[DeviceEvent], has_launch: bool,
                      syncs: Sequence[DeviceSync] = (),
                      mark: Optional[StepMark] = None) -> DeviceBreakdown:
    spans = [(e.start, e.end) for e in events] + [(y.start, y.end) for y in syncs]
    d = DeviceBreakdown(start=min(a for a, _ in spans), end=max(b for _, b in spans),
                        events=len(events))
    by_kind: dict[str, list[Span]] = {}
    for e in events:
        by_kind.setdefault(e.kind, []).append((e.start, e.end))
    busy = union((e.start, e.end) for e in events)
    compute = union(by_kind.get(COMPUTE, ()))
    comm = union(by_kind.get(COMMUNICATION, ()))
    memory = union(s for k in MEMORY_KINDS for s in by_kind.get(k, ()))
    d.busy, d.compute, d.communication = length(busy), length(compute), length(comm)
    d.overlap = length(intersect(comm, compute))
    d.memory, d.other = length(memory), length(union(by_kind.get(OTHER, ())))
    comm_x = subtract(comm, compute)
    d.communication_exposed = length(comm_x)
    both = union(compute + comm)
    d.memory_exposed = length(subtract(memory, both))
    d.other_exposed = d.busy - d.compute - d.communication_exposed - d.memory_exposed
    covered = busy
    if syncs:
        waits = union((y.start, y.end) for y in syncs)
        d.sync, d.sync_count, d.syncs = length(waits), len(syncs), list(syncs)
        d.sync_exposed = length(subtract(waits, busy))
        covered = union(busy + waits)
    d.idle = d.span - d.busy - d.sync_exposed
    for kind in MEMORY_KINDS:
        spans = by_kind.get(kind)
        if spans:
            sizes = [e.nbytes for e in events if e.kind == kind]
            d.memory_kinds[kind] = MemoryKind(len(spans), length(union(spans)),
                                              sum(b for b in sizes if b > 0))
    kernels = [e for e in events if e.kind == COMPUTE]
    d.kernel_count = len(kernels)
    d.short_kernels = sum(1 for e in kernels if e.end - e.start < SHORT_KERNEL_NS)
    if has_launch:
        d.idle_host_wait, d.idle_queued = _idle_split(events, covered, syncs)
        if mark is not None:
            outside = [(e.start, e.end) for e in events
                       if not mark.start <= e.launch < mark.end]
            d.outside_count, d.outside_time = len(outside), length(union(outside))
    return d


def _launch_at(events: Sequence[DeviceEvent], syncs: Sequence[DeviceSync]) -> dict[int, int]:
    """Start -> the earliest host call that launched an event (or made a sync) starting
    then."""
    launch_at: dict[int, int] = {}
    for e in [*events, *syncs]:
        if e.launch >= 0:
            prev = launch_at.get(e.start)
            if prev is None or e.launch < prev:
                launch_at[e.start] = e.launch
    return launch_at


def _idle_split(events: Sequence[DeviceEvent], covered: list[Span],
                syncs: Sequence[DeviceSync] = ()) -> tuple[int, int]:
    """(host wait, queued) of the gaps in ``covered``: a gap is host wait until the
    host started the call that launched the event ending it, queued after."""
    launch_at = _launch_at(events, syncs)
    wait = queued = 0
    for a, b in gaps(covered):
        launch = launch_at.get(b, -1)
        if launch < 0:
            queued += b - a
            continue
        cut = min(max(launch, a), b)
        wait += cut - a
        queued += b - cut
    return wait, queued


def _host_breakdown(mark: StepMark, merged: dict[str, list[Span]],
                    devices: Sequence[DeviceEvent]) -> HostBreakdown:
    h = HostBreakdown(wall=mark.end - mark.start)
    left = [(mark.start, mark.end)] if mark.end > mark.start else []
    for kind in HOST_KINDS:
        part = intersect(_window(merged.get(kind, []), mark.start, mark.end), left)
        h.parts[kind] = length(part)
        left = subtract(left, part)
    h.parts["rest"] = length(left)
    calls = set()
    for e in devices:
        if e.launch >= 0:
            calls.add((e.launch, e.launch_end))
            h.launched += 1
            h.launch_delay_total += max(e.start - e.launch_end, 0)
    h.launch_count = len(calls)
    h.launch_total = sum(max(end - start, 0) for start, end in calls)
    return h


def _window(merged: list[Span], lo: int, hi: int) -> list[Span]:
    """A merged list cut to [lo, hi), found by bisection."""
    i = max(bisect_right(merged, (lo, lo)) - 1, 0)
    j = bisect_right(merged, (hi, hi))
    return clip(merged[i:j], lo, hi)


def _host_unions(host: Sequence[HostEvent]) -> dict[str, list[Span]]:
    """Each kind's merged list of the host events (one pass when they are sorted)."""
    spans: dict[str, list[Span]] = {}
    open_: dict[str, list[int]] = {}  # kind -> the [start, end] being merged
    last = None
    for e in host:
        start, end, kind = e[0], e[1], e[2]
        if last is not None and start < last:
            return {kind: union(evs) for kind, evs in _by_kind(host).items()}
        last = start
        if end <= start:
            continue
        cur = open_.get(kind)
        if cur is None:
            open_[kind] = [start, end]
            spans[kind] = []
        elif start <= cur[1]:
            if end > cur[1]:
                cur[1] = end
        else:
            spans[kind].append((cur[0], cur[1]))
            cur[0], cur[1] = start, end
    for kind, (start, end) in open_.items():
        spans[kind].append((start, end))
    return spans


def _by_kind(host: Sequence[HostEvent]) -> dict[str, list[Span]]:
    out: dict[str, list[Span]] = {}
    for e in host:
        out.setdefault(e.kind, []).append((e.start, e.end))
    return out


def step_breakdowns(iv: Intervals, steps: Optional[Sequence[int]] = None,
                    device: str = "") -> StepsResult:
    """The breakdown of each step of ``iv`` (those in ``steps`` if given), on
    ``device`` only if given (a name from :meth:`Intervals.device_names`)."""
    marks = sorted(iv.marks, key=lambda m: (m.start, m.step))
    by_step: dict[int, dict[str, list[DeviceEvent]]] = {}
    for e in iv.devices:
        if e.step is not None and (not device or e.device == device):
            by_step.setdefault(e.step, {}).setdefault(e.device, []).append(e)
    syncs_of: dict[int, dict[str, list[DeviceSync]]] = {}
    for y in iv.syncs:
        if y.step is not None and (not device or y.device == device):
            syncs_of.setdefault(y.step, {}).setdefault(y.device, []).append(y)
    host = _host_unions(iv.host)
    has_launch = HAS_LAUNCH in iv.has
    wanted = set(steps) if steps is not None else None
    out: list[StepBreakdown] = []
    prev_end: Optional[int] = None
    for mark in marks:
        gap = None if prev_end is None else max(mark.start - prev_end, 0)
        prev_end = mark.end
        if wanted is not None and mark.step not in wanted:
            continue
        devs = by_step.get(mark.step, {})
        syncs = syncs_of.get(mark.step, {})
        breakdowns = {name: _device_breakdown(devs.get(name, ()), has_launch,
                                              syncs.get(name, ()), mark)
                      for name in sorted(set(devs) | set(syncs))}
        all_events = [e for evs in devs.values() for e in evs]
        out.append(StepBreakdown(mark.step, mark.start, mark.end, gap, breakdowns,
                                 _host_breakdown(mark, host, all_events)))
    names = [device] if device else iv.device_names()
    return StepsResult(out, iv.has, iv.origin, names)


def average(steps: Sequence[StepBreakdown]) -> StepBreakdown:
    """A step whose every figure is the mean over ``steps`` (a device's over the
    steps it ran in); times stay integers (ns)."""
    n = len(steps)
    gaps_ = [s.gap_before for s in steps if s.gap_before is not None]
    wall = sum(s.wall for s in steps) // n if n else 0
    host = HostBreakdown(wall=wall)
    for part in HOST_PARTS:
        host.parts[part] = _mean([s.host.parts.get(part, 0) for s in steps])
    host.parts["rest"] += wall - sum(host.parts.values())  # integer means add up to the wall
    host.launch_count = _mean([s.host.launch_count for s in steps])
    host.launch_total = _mean([s.host.launch_total for s in steps])
    host.launched = _mean([s.host.launched for s in steps])
    host.launch_delay_total = _mean([s.host.launch_delay_total for s in steps])
    devices: dict[str, DeviceBreakdown] = {}
    names = sorted({d for s in steps for d in s.devices})
    for name in names:
        ds = [s.devices[name] for s in steps if name in s.devices]
        devices[name] = _mean_device(ds)
    return StepBreakdown(-1, 0, wall, _mean(gaps_) if gaps_ else None, devices, host)


def _mean(values: Sequence[int]) -> int:
    return int(round(sum(values) / len(values))) if values else 0


def _mean_device(ds: Sequence[DeviceBreakdown]) -> DeviceBreakdown:
    m = DeviceBreakdown()
    span = _mean([d.span for d in ds])
    m.end = span
    for name in ("events", "busy", "compute", "communication", "overlap", "memory", "other",
                 "communication_exposed", "memory_exposed", "other_exposed", "kernel_count",
                 "short_kernels", "sync", "sync_exposed", "sync_count", "outside_count",
                 "outside_time"):
        setattr(m, name, _mean([getattr(d, name) for d in ds]))
    known = [d for d in ds if d.idle_host_wait is not None]
    m.busy = m.compute + m.communication_exposed + m.memory_exposed + m.other_exposed
    m.sync_exposed = min(m.sync_exposed, max(span - m.busy, 0))
    m.idle = span - m.busy - m.sync_exposed
    if known and len(known) == len(ds):
        m.idle_host_wait = min(_mean([d.idle_host_wait or 0 for d in ds]), m.idle)
        m.idle_queued = m.idle - m.idle_host_wait
    kinds = sorted({k for d in ds for k in d.memory_kinds})
    for k in kinds:
        items = [d.memory_kinds.get(k, MemoryKind()) for d in ds]
        m.memory_kinds[k] = MemoryKind(_mean([i.count for i in items]),
                                       _mean([i.time for i in items]),
                                       _mean([i.nbytes for i in items]))
    return m


def device_parts(d: DeviceBreakdown) -> list[tuple[str, int]]:
    """The device parts that add up to its span (idle whole if it is not split)."""
    parts = [("compute", d.compute), ("communication_exposed", d.communication_exposed),
             ("memory_exposed", d.memory_exposed), ("other_exposed", d.other_exposed),
             ("sync_exposed", d.sync_exposed)]
    if d.idle_host_wait is None or d.idle_queued is None:
        return parts + [("idle", d.idle)]
    return parts + [("idle_host_wait", d.idle_host_wait), ("idle_queued", d.idle_queued)]


def micros_parts(parts: Sequence[tuple[str, int]]) -> dict[str, int]:
    """ns parts -> whole µs that still add up to the rounded total (cumulative rounding)."""
    out: dict[str, int] = {}
    cum = prev = 0
    for name, ns in parts:
        cum += ns
        now = _us(cum)
        out[name] = now - prev
        prev = now
    return out


def _us(ns: int) -> int:
    return (ns + 500) // 1000


__all__ = ["DEVICE_PARTS", "HOST_PARTS", "DeviceBreakdown",
           "HostBreakdown", "StepBreakdown", "StepsResult", "average", "device_parts",
           "device_segments", "micros_parts", "step_breakdowns"]


def device_segments(events: Sequence[DeviceEvent], has_launch: bool,
                    syncs: Sequence[DeviceSync] = ()) -> list[tuple[int, int, str]]:
    """The span of ``events`` (and ``syncs``) cut into labelled pieces (the parts of
    :func:`device_parts`, at their real times), sorted by start."""
    by_kind: dict[str, list[Span]] = {}
    for e in events:
        by_kind.setdefault(e.kind, []).append((e.start, e.end))
    busy = union((e.start, e.end) for e in events)
    compute = union(by_kind.get(COMPUTE, ()))
    comm = subtract(union(by_kind.get(COMMUNICATION, ())), compute)
    taken = union(compute + comm)
    memory = subtract(union(s for k in MEMORY_KINDS for s in by_kind.get(k, ())), taken)
    other = subtract(busy, union(taken + memory))
    waits = subtract(union((y.start, y.end) for y in syncs), busy)
    out = [(a, b, label) for label, spans in (("compute", compute), ("communication", comm),
                                              ("memory", memory), ("other", other),
                                              ("sync", waits))
           for a, b in spans]
    launch_at = _launch_at(events, syncs)
    for a, b in gaps(union(busy + waits)):
        launch = launch_at.get(b, -1) if has_launch else -1
        if launch < 0:
            out.append((a, b, "idle" if not has_launch else "idle: queued"))
            continue
        cut = min(max(launch, a), b)
        if cut > a:
            out.append((a, cut, "idle: host wait"))
        if b > cut:
            out.append((cut, b, "idle: queued"))
    return sorted(out)
