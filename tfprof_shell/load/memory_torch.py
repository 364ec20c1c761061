"""PyTorch ``[memory]`` events (``profile_memory=True``) -> per-op memory and the memory profile.

Each event is one allocation (``Bytes`` > 0) or free (< 0) of the block at
``Addr`` on a device (``Device Type`` 0 the CPU, 1 CUDA ``Device Id``, ...), with the
allocator's counters after it (``Total Allocated``, ``Total Reserved``; on the
CPU they count only what was allocated while profiling). The event belongs to
the innermost event open around it on its thread, as PyTorch's ``key_averages``
counts an op's self memory: a cpu op, a ``record_function`` or module scope, or
a Python frame; only a cpu op makes it the op's. An op's columns, per step:

* ``bytes``: the sum of its events' sizes (allocations minus frees): exactly
  ``key_averages``' self memory of the op;
* ``peak_bytes``: the most its own allocations held at once while it ran;
* ``residual_bytes``: its allocations still alive when it returned;
* ``output_bytes``: the same (PyTorch does not mark outputs; what an op still
  holds when it returns is what it returned).

The events are attributed while loading (:class:`TorchMemory`, fed by
:mod:`.torch_trace` file by file); the memory profile is built from them when
first asked (:class:`TorchMemorySource`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from ..model.intervals import StepMark
from ..model.memory import (HAS_CODE, HAS_COUNTER, HAS_FREES, HAS_OWNER, HAS_RESERVED,
                            DeviceEvents, MemoryProfile, Tables, build_device, sorted_marks)
from ..model.node import Frame

_CPU = 0
#: c10::DeviceType numbers of accelerators -> their family as the steps table names
#: devices (.torch_devices.FAMILIES): CUDA and HIP, XPU, HPU, MTIA, PrivateUse1.
_FAMILY = {1: "gpu", 6: "gpu", 12: "xpu", 15: "hpu", 19: "mtia", 20: "privateuse1"}
_SPAN, _MEMORY = 0, 1
#: What an open span is: a cpu op (its node's name), a scope (its path) or a frame.
_OP, _SCOPE, _FRAME = 0, 1, 2


def _ns(value: Any) -> int:
    try:
        return int(round(float(value) * 1000))
    except (TypeError, ValueError, OverflowError):
        return 0


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return 0


def device_name(device_type: Any, device_id: Any) -> str:
    """``cpu`` or ``gpu:N`` (``mtia:N``, ``xpu:N``, ...), as the steps table names devices
    (other types by number)."""
    kind = _int(device_type)
    if kind == _CPU:
        return "cpu"
    family = _FAMILY.get(kind)
    if family is not None:
        return "%s:%d" % (family, max(_int(device_id), 0))
    return "device%d:%d" % (kind, _int(device_id))


@dataclass
class _Exec:
    """One cpu op execution that owns memory events: its node, step and end (µs), and
    its own allocations' running bytes and high watermark."""

    node: str
    step: Optional[int]
    end: float
    own: int = 0
    peak: int = 0
    residual: int = 0
    net: int = 0


@dataclass
class _Event:
    time: float
    device: str
    size: int
    addr: Any
    owner: int
    code: int
    allocated: Optional[int]
    reserved: Optional[int]
    ex: Optional[_Exec] = None


@dataclass
class TorchMemory:
    """The ``[memory]`` events of a model's PyTorch traces, attributed file by file."""

    tables: Tables = field(default_factory=Tables)
    events: list[_Event] = field(default_factory=list)
    marks: list[StepMark] = field(default_factory=list)
    #: executions that own events, whose columns :meth:`finish` hands out
    execs: list[_Exec] = field(default_factory=list)
    #: whether any file's events had stacks open around them
    with_frames: bool = False
    files: int = 0

    def add(self, memory: dict[Any, list[Any]], scoped: dict[Any, list[tuple]],
            framed: dict[Any, list[tuple[float, float, Frame]]], ops: Sequence[list[Any]],
            marks: Sequence[tuple[float, float, int]],
            step_at: Callable[[float], Optional[int]]) -> None:
        """One trace's memory events (per thread), with its scopes and ops per thread
        (sorted, as :func:`.torch_trace._ops` leaves them), Python frames, op records
        ([start, self, node name, op type, ...]), step markers and step look-up."""
        self.files += 1
        self.marks.extend(StepMark(step, _ns(a), _ns(b)) for a, b, step in marks)
        if not memory:
            return
        if not marks:  # the file is one step: the span of its memory events
            times = [float(ev.ts) for events in memory.values() for ev in events]
            step = step_at(min(times))
            if step is not None:
                self.marks.append(StepMark(step, _ns(min(times)), _ns(max(times)) + 1))
        node_of = {(rec[0], rec[3]): rec[2] for rec in ops}
        for key, events in memory.items():
            self._thread(events, scoped.get(key, ()), framed.get(key, ()), node_of, step_at)

    def _thread(self, events: list[Any], scoped: Sequence[tuple], framed: Sequence[tuple],
                node_of: dict[tuple[float, str], str],
                step_at: Callable[[float], Optional[int]]) -> None:
        # (time, 0 span | 1 memory, -end, what): spans open before events at the same
        # time, the outer of two spans starting together first
        items: list[tuple[float, int, float, Any]] = []
        for start, neg_dur, _, label, op, _ in scoped:
            items.append((start, _SPAN, neg_dur - start,
                          (_OP, (start, op)) if op is not None else (_SCOPE, label)))
        for start, end, frame in framed:
            items.append((start, _SPAN, -end, (_FRAME, frame)))
        for ev in events:
            items.append((float(ev.ts), _MEMORY, 0.0, ev))
        items.sort(key=lambda it: (it[0], it[1], it[2]))
        tables = self.tables
        # the open spans: (end, kind, op type or label or frame, node or scope path,
        # execution, start)
        stack: list[tuple[float, int, Any, str, Optional[_Exec], float]] = []
        for t, kind, neg_end, what in items:
            if kind == _SPAN:
                while stack and stack[-1][0] <= t:
                    stack.pop()
                span_kind, payload = what
                path = next((s[3] for s in reversed(stack) if s[1] != _FRAME), "")
                if span_kind == _OP:
                    node = node_of.get(payload, "")
                    stack.append((-neg_end, _OP, payload[1], node, None, t))
                elif span_kind == _SCOPE:
                    stack.append((-neg_end, _SCOPE, payload,
                                  path + "/" + payload if path else payload, None, t))
                else:
                    stack.append((-neg_end, _FRAME, payload, path, None, t))
                continue
            while stack and stack[-1][0] < t:  # a span's end is inside it (key_averages)
                stack.pop()
            args = what.args
            if args is None or args.nbytes is None:
                continue
            owner, ex = -1, None
            scope = next((s for s in reversed(stack) if s[1] != _FRAME), None)
            if stack and stack[-1][1] == _OP:
                top = stack[-1]
                ex = top[4]
                if ex is None and top[3]:
                    ex = _Exec(top[3], step_at(top[5]), top[0])
                    self.execs.append(ex)
                    stack[-1] = top[:4] + (ex, top[5])
                owner = tables.owner(top[2], top[3])
            elif scope is not None:
                owner = tables.owner(scope[2] if scope[1] == _OP else "", scope[3])
            frames = [s[2] for s in stack if s[1] == _FRAME]
            code = -1
            if frames:
                self.with_frames = True
                code = tables.trace(frames)
            self.events.append(_Event(t, device_name(args.device_type, args.device_id),
                                      _int(args.nbytes), args.addr, owner, code,
                                      None if args.total_allocated is None
                                      else _int(args.total_allocated),
                                      None if args.total_reserved is None
                                      else _int(args.total_reserved), ex))

    def finish(self, add_memory: Callable[[str, int, Sequence[int]], None]) -> None:
        """Hand each op its columns for each step (``add_memory(node, step, values)``)."""
        if not self.events:
            return
        self.events.sort(key=lambda e: e.time)
        open_at: dict[tuple[str, Any], _Event] = {}
        for ev in self.events:
            ex = ev.ex
            if ex is not None:
                ex.net += ev.size
            if ev.size >= 0:
                open_at[(ev.device, ev.addr)] = ev
                if ex is not None:
                    ex.own += ev.size
                    ex.peak = max(ex.peak, ex.own)
                    ex.residual += ev.size
                continue
            block = open_at.pop((ev.device, ev.addr), None)
            if block is None or block.ex is None:
                continue
            owner = block.ex
            if ev.time <= owner.end:  # freed before its op returned
                owner.own += ev.size
                owner.residual += ev.size
        totals: dict[tuple[str, int], list[int]] = {}
        for ex in self.execs:
            if ex.step is None:
                continue
            values = totals.setdefault((ex.node, ex.step), [0, 0, 0, 0])
            values[0] += ex.net
            values[1] += ex.peak
            values[2] += ex.residual
            values[3] += ex.residual
        for (node, step), values in totals.items():
            add_memory(node, step, values)

    def source(self) -> "TorchMemorySource":
        """What the model keeps to build its memory profile when asked."""
        return TorchMemorySource(self.tables, self.events, self.marks, self.with_frames)


class TorchMemorySource:
    """Builds the memory profile of a model's PyTorch traces (see :class:`TorchMemory`)."""

    def __init__(self, tables: Tables, events: list[_Event], marks: list[StepMark],
                 with_frames: bool) -> None:
        self.tables, self.events, self.marks = tables, events, marks
        self.with_frames = with_frames

    def __call__(self) -> MemoryProfile:
        devices: dict[str, DeviceEvents] = {}
        for ev in self.events:
            raw = devices.get(ev.device)
            if raw is None:
                raw = devices[ev.device] = DeviceEvents(ev.device, allocated=[], reserved=[])
            raw.add(_ns_of(ev.time), ev.size, ev.addr, owner=ev.owner, code=ev.code)
            raw.allocated.append(ev.allocated or 0)  # type: ignore[union-attr]
            raw.reserved.append(ev.reserved or 0)  # type: ignore[union-attr]
        has = {HAS_COUNTER, HAS_FREES, HAS_OWNER}
        if self.with_frames:
            has.add(HAS_CODE)
        built = [build_device(raw) for _, raw in sorted(devices.items())]
        if any(d.name != "cpu" for d in built):
            has.add(HAS_RESERVED)
        for d in built:
            if d.name == "cpu":  # the CPU allocator reserves nothing apart
                d.reserved = None
        notes = []
        if not self.events:
            notes.append("this PyTorch trace holds no memory events: record it with "
                         "torch.profiler.profile(profile_memory=True)")
        elif "cpu" in devices:
            notes.append("cpu: PyTorch counts CPU memory from the start of profiling only "
                         "(blocks allocated before it are not in the level)")
        return self.tables.profile(built, sorted_marks(self.marks), frozenset(has), notes,
                                   "PyTorch [memory] events")


def _ns_of(micros: float) -> int:
    return int(round(micros * 1000))
