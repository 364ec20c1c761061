"""The memory profile of PyTorch ``[memory]`` events, built when first asked.

Loading attributes each event to its op (:mod:`.memory_torch`); the ``memory``
command also needs each allocation's owner (the innermost cpu op or scope open
around it on its thread: op type and node, or the scope's path) and code trace
(the Python frames open around it, outermost first). Both come from one sweep
over each thread's scopes, ops, Python frames and events together, in time
order, with spans opening before events at the same time and the outer of two
spans starting together first; a span is closed at an event once it ended
before it (its end is inside it, as ``key_averages`` counts), and at a span once
it ended by its start.
"""

from __future__ import annotations

from itertools import islice
from typing import Any, Optional, Sequence

from ..model.intervals import StepMark
from ..model.memory import (HAS_CODE, HAS_COUNTER, HAS_FREES, HAS_OWNER, HAS_RESERVED,
                            DeviceEvents, MemoryProfile, Tables, build_device, sorted_marks)

_CPU = 0
#: c10::DeviceType numbers of accelerators -> their family as the steps table names
#: devices (.torch_devices.FAMILIES): CUDA and HIP, XPU, HPU, MTIA, PrivateUse1.
_FAMILY = {1: "gpu", 6: "gpu", 12: "xpu", 15: "hpu", 19: "mtia", 20: "privateuse1"}
#: What an open span is: a cpu op (its node's name), a scope (its path) or a frame.
_OP, _SCOPE, _FRAME = 0, 1, 2
_SPAN, _MEMORY = 0, 1


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return 0


def _device(device_type: Any, device_id: Any) -> str:
    kind = _int(device_type)
    if kind == _CPU:
        return "cpu"
    family = _FAMILY.get(kind)
    if family is not None:
        return "%s:%d" % (family, max(_int(device_id), 0))
    return "device%d:%d" % (kind, _int(device_id))


def device_name(device_type: Any, device_id: Any, seen: Optional[dict[Any, str]] = None
                ) -> str:
    """``cpu`` or ``gpu:N`` (``mtia:N``, ``xpu:N``, ...), as the steps table names devices
    (other types by number); ``seen`` keeps the names worked out."""
    if seen is None:
        return _device(device_type, device_id)
    key = (device_type, device_id)
    try:
        return seen[key]
    except KeyError:
        found = seen[key] = _device(device_type, device_id)
        return found
    except TypeError:  # a field that is no JSON scalar
        return _device(device_type, device_id)


def nbytes_of(args: Any) -> int:
    """A memory event's signed size (0 for a broken one)."""
    value = args.nbytes
    return value if value.__class__ is int else _int(value)


class TorchThread:
    """One thread's ``[memory]`` events, in time order (equal times in input order), and
    their times (µs)."""

    __slots__ = ("events", "times")

    def __init__(self, events: list[Any], times: list[float]) -> None:
        self.events, self.times = events, times


#: One memory event of the profile: (time µs, device, signed bytes, address, owner,
#: code, allocated, reserved)
_Row = tuple[float, str, int, Any, int, int, Optional[int], Optional[int]]


class TorchMemorySource:
    """Builds the memory profile of a model's PyTorch traces.

    ``files`` holds per trace with memory events, per thread with some: its events,
    its scopes and ops (sorted: :data:`.torch_code.Scoped`), its Python frames
    (:data:`.torch_code.Framed`), and the trace's op records with the index of the
    thread's first (the records of its ops follow in the order of its sorted ops).
    """

    def __init__(self, files: list[list[tuple[TorchThread, Sequence[tuple], Sequence[tuple],
                                              Sequence[list[Any]], int]]],
                 marks: list[StepMark]) -> None:
        self.files, self.marks = files, marks

    def __call__(self) -> MemoryProfile:
        tables = Tables()
        rows: list[_Row] = []
        with_frames = False
        seen: dict[Any, str] = {}
        for threads in self.files:
            for thread, scoped, framed, ops, first in threads:
                with_frames |= _sweep(thread, scoped, framed, islice(ops, first, None),
                                      tables, rows, seen)
        rows.sort(key=_time)
        devices: dict[str, DeviceEvents] = {}
        for t, device, size, addr, owner, code, allocated, reserved in rows:
            raw = devices.get(device)
            if raw is None:
                raw = devices[device] = DeviceEvents(device, allocated=[], reserved=[])
            raw.add(int(round(t * 1000)), size, addr, owner=owner, code=code)
            raw.allocated.append(allocated or 0)  # type: ignore[union-attr]
            raw.reserved.append(reserved or 0)  # type: ignore[union-attr]
        has = {HAS_COUNTER, HAS_FREES, HAS_OWNER}
        if with_frames:
            has.add(HAS_CODE)
        built = [build_device(raw) for _, raw in sorted(devices.items())]
        if any(d.name != "cpu" for d in built):
            has.add(HAS_RESERVED)
        for d in built:
            if d.name == "cpu":  # the CPU allocator reserves nothing apart
                d.reserved = None
        notes = []
        if not rows:
            notes.append("this PyTorch trace holds no memory events: record it with "
                         "torch.profiler.profile(profile_memory=True)")
        elif "cpu" in devices:
            notes.append("cpu: PyTorch counts CPU memory from the start of profiling only "
                         "(blocks allocated before it are not in the level)")
        return tables.profile(built, sorted_marks(self.marks), frozenset(has), notes,
                              "PyTorch [memory] events")


def _time(row: _Row) -> float:
    return row[0]


def _sweep(thread: TorchThread, scoped: Sequence[tuple], framed: Sequence[tuple],
           records: Any, tables: Tables, out: list[_Row], seen: dict[Any, str]) -> bool:
    """Add one thread's events to ``out`` with their owners and code traces (see the
    module); whether any had Python frames open around it."""
    items: list[tuple[float, int, float, int, Any]] = []
    add = items.append
    k = 0
    for start, neg_dur, _, label, op, _ in scoped:
        add((start, _SPAN, neg_dur - start, k,
             (_OP, op, next(records)[2]) if op is not None else (_SCOPE, label, None)))
        k += 1
    for start, end, frame in framed:
        add((start, _SPAN, -end, k, (_FRAME, frame, None)))
        k += 1
    for t, ev in zip(thread.times, thread.events):
        add((t, _MEMORY, 0.0, k, ev))
        k += 1
    items.sort()  # k is unique: no tie reaches the payload
    # the open spans: (end, kind, op type or label or frame, node or scope path, the
    # innermost op or scope at or below it as (kind, op type or label, path) or None)
    stack: list[tuple[float, int, Any, str, Optional[tuple[int, Any, str]]]] = []
    with_frames = False
    last_top: Any = None
    last_code = -1
    for t, kind, neg_end, _, what in items:
        if kind == _SPAN:
            while stack and stack[-1][0] <= t:
                stack.pop()
            span_kind, payload, node = what
            below = stack[-1][4] if stack else None
            path = below[2] if below is not None else ""
            if span_kind == _OP:
                stack.append((-neg_end, _OP, payload, node, (_OP, payload, node)))
            elif span_kind == _SCOPE:
                path = path + "/" + payload if path else payload
                stack.append((-neg_end, _SCOPE, payload, path, (_SCOPE, payload, path)))
            else:
                stack.append((-neg_end, _FRAME, payload, path, below))
            continue
        while stack and stack[-1][0] < t:  # a span's end is inside it (key_averages)
            stack.pop()
        args = what.args
        if args is None or args.nbytes is None:
            continue
        owner = code = -1
        if stack:
            top = stack[-1]
            scope = top[4]
            if scope is not None:
                owner = tables.owner(scope[1] if scope[0] == _OP else "", scope[2])
            if top is last_top:
                code = last_code
            else:
                frames = [s[2] for s in stack if s[1] == _FRAME]
                code = tables.trace(frames) if frames else -1
                last_top, last_code = top, code
            if code >= 0:
                with_frames = True
        out.append((t, device_name(args.device_type, args.device_id, seen), nbytes_of(args),
                    args.addr, owner, code,
                    None if args.total_allocated is None else _int(args.total_allocated),
                    None if args.total_reserved is None else _int(args.total_reserved)))
    return with_frames
