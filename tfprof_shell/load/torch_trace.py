"""PyTorch profiler traces (``export_chrome_trace``) -> node records, in one pass over the events.

Each ``cpu_op`` event is a node named by the path of the module (``nn.Module``),
``record_function`` and enclosing ops around it (``Linear_0/aten::linear/
aten::addmm``), typed by the op (``aten::addmm``), timed by its self time.
Device work (kernels, copies, sets, on any accelerator) counts as accelerator
time of its owner by PyTorch's own rule, on every Kineto generation: the
innermost cpu op or ``record_function`` range open around the call that
launched it (the runtime or driver call with the same ``correlation``) on the
launching thread (:class:`_Charged`); work with no owner is a node of its own
under ``(unattributed)``. ``ProfilerStep#N`` marks step N (else the i-th file
is step i). In a
trace recorded with stacks (``with_stack=True``) the ``python_function``
events open around an op (``train.py(23): main``) are its code trace.

One pass over the events sorts them into what each part reads (scopes and
ops per thread, frames per thread, kernels, step marks, the events a step
breakdown keeps); the code traces are looked up only when a view first asks
for one (:class:`TorchTraces`), and the records stay rows until a view reads
a step's record (:class:`.records.ExecRows`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from itertools import accumulate, count
from operator import itemgetter
from typing import Any, Callable, Iterable, Optional, Sequence

from ..model import Frame, Model
from .memory_torch import ThreadMemory, TorchMemory
from .records import (ACCELERATOR_DEVICE, ACCELERATOR_STREAM_ALL, CPU_DEVICE, ExecRows,
                      node_for)
from .torch_code import MODULE_SCOPE, Framed, Scoped, TorchTraces, TraceOf, traces_wanted
from .torch_devices import (DEVICE_CATS, HOST_WORK_CATS, ID_TYPES, LAUNCH_CATS, OP_CATS,
                            SYNC_CATS, DeviceNames, event_id)
from .torch_intervals import KeptEvents, user_frame
from .trace_events import NO_ARGS, TraceEvent
from .xla import KERNEL_TYPE

TORCH_CPU = OP_CATS
_STEP_PREFIX = "ProfilerStep#"
_PROFILER_STEP = re.compile(r"ProfilerStep#(\d+)")
_PY_FRAME = re.compile(r"(.+)\((\d+)\): (.+)")
_MODULE = "nn.Module: "
_MODULE_LEN = len(_MODULE)
_START = itemgetter(0)


class _StepMarks:
    """Which ``ProfilerStep`` holds a time: a bisect over the sorted marks.

    The answer is the last mark (in sorted order) whose span holds the time;
    ``last=True`` falls back to the last mark started by then. The running
    maximum of the ends rules out earlier marks at once, so the search only
    walks back where marks overlap.
    """

    def __init__(self, marks: Sequence[tuple[float, float, int]]) -> None:
        self.marks = marks
        self.starts = [m[0] for m in marks]
        self.ends = [m[1] for m in marks]
        self.steps = [m[2] for m in marks]
        self.max_end = list(accumulate(self.ends, max))

    def at(self, t: float, default: int, last: bool = False) -> Optional[int]:
        if not self.marks:
            return default
        i = bisect_right(self.starts, t) - 1
        if i < 0:
            return None
        if t < self.ends[i]:  # the common case: inside the last mark started
            return self.steps[i]
        j = i - 1
        while j >= 0 and self.max_end[j] > t:
            if t < self.ends[j]:
                return self.steps[j]
            j -= 1
        return self.steps[i] if last else None

    def each(self, times: Iterable[float], default: int) -> list[Optional[int]]:
        """:meth:`at` of each of ``times``; quicker where they come in runs inside one mark
        (the last answer's range, where no other mark starts, is tried first)."""
        if not self.marks:
            return [default for _ in times]
        out: list[Optional[int]] = []
        add = out.append
        at, starts, ends, steps = self.at, self.starts, self.ends, self.steps
        n = len(starts)
        lo, hi, step = _INF, -_INF, None
        for t in times:
            if lo <= t < hi:
                add(step)
                continue
            add(at(t, default))
            i = bisect_right(starts, t) - 1
            if i >= 0 and t < ends[i]:  # the common case of at()
                lo, step = starts[i], steps[i]
                hi = ends[i] if i + 1 == n else min(ends[i], starts[i + 1])
        return out


def _whole(micros: float) -> int:
    """Whole microseconds, rounded, at least 0 (0 for NaN or infinity: a broken trace)."""
    try:
        return max(round(micros), 0)
    except (ValueError, OverflowError):
        return 0


class _PyName:
    """What a ``python_function`` event's name means, worked out once per name."""

    __slots__ = ("frame", "label", "mark", "user", "kept", "only_frame")

    def __init__(self, name: str) -> None:
        m = _PY_FRAME.fullmatch(name)
        line = int(m.group(2)) if m else 0
        #: the code-trace frame ``file.py(12): func``, else None
        self.frame = Frame(m.group(1), line, m.group(3), line) if m else None
        #: the scope label of an ``nn.Module: Linear_0`` event, else None
        self.label = name[_MODULE_LEN:] if name.startswith(_MODULE) else None
        #: the step of a ``ProfilerStep#N`` name, else None
        self.mark = _mark(name) if name.startswith(_STEP_PREFIX) else None
        #: a frame of the program's own code
        self.user = user_frame(name)
        #: kept for the step breakdown (input waits and the program's own frames)
        self.kept = self.user or "__next__" in name
        #: nothing but (maybe) a code-trace frame is read of it
        self.only_frame = self.label is None and self.mark is None and not self.kept


def _mark(name: str) -> Optional[int]:
    """N of a ``ProfilerStep#N`` event name, else None (callers test the prefix first:
    most names have another)."""
    m = _PROFILER_STEP.fullmatch(name)
    return int(m.group(1)) if m else None




class _Sorted:
    """One trace's events, sorted into what each part of the load reads."""

    def __init__(self, events: Sequence[TraceEvent]) -> None:
        #: per (pid, tid): the scopes and cpu ops
        self.scoped: defaultdict[Any, list[Scoped]] = defaultdict(list)
        #: per (pid, tid): the Python frames
        self.framed: defaultdict[Any, list[Framed]] = defaultdict(list)
        self.marks: list[tuple[float, float, int]] = []
        #: per (pid, tid): the [start, end) of its ProfilerStep ranges
        self.step_spans: defaultdict[Any, list[tuple[float, float]]] = defaultdict(list)
        #: the External ids of the ProfilerStep ranges written as cpu ops (the first
        #: Kineto traces' ``Operator``s): work they name is the step's
        self.step_ids: list[Any] = []
        #: per (pid, tid): the ``[memory]`` instant events (read by .memory_torch)
        self.memory: defaultdict[Any, list[TraceEvent]] = defaultdict(list)
        #: the events :class:`.torch_intervals.TorchIntervals` reads
        self.kept = KeptEvents()
        scoped, framed = self.scoped, self.framed
        keep, add_mark = self.kept.host.append, self.marks.append
        keep_device, keep_runtime = self.kept.device.append, self.kept.runtime.append
        keep_sync = self.kept.sync.append
        py_names: dict[str, _PyName] = {}
        for seq, ev in enumerate(events):
            ph = ev.ph
            if ph != "X":
                if ph == "i" and ev.name == "[memory]":
                    self.memory[(ev.pid, ev.tid)].append(ev)
                continue
            cat, name = ev.cat, ev.name
            if name.__class__ is not str:
                name = str(name)
            if cat == "python_function":
                info = py_names.get(name)
                if info is None:
                    info = py_names[name] = _PyName(name)
                if info.only_frame:  # most Python events: a frame, or nothing read
                    frame = info.frame
                    if frame is not None:
                        start = float(ev.ts)
                        framed[(ev.pid, ev.tid)].append((start, start + float(ev.dur), frame))
                    continue
                if info.label is not None:
                    scoped[(ev.pid, ev.tid)].append(
                        (float(ev.ts), -float(ev.dur), seq, info.label, None, MODULE_SCOPE))
                if info.frame is not None:
                    start = float(ev.ts)
                    framed[(ev.pid, ev.tid)].append((start, start + float(ev.dur), info.frame))
                if info.mark is not None:
                    start = float(ev.ts)
                    add_mark((start, start + float(ev.dur), info.mark))
                if info.kept:
                    keep(ev)
                    if info.user:
                        self.kept.user_frames.append(ev)
                continue
            step = _mark(name) if name.startswith(_STEP_PREFIX) else None
            if step is not None:
                start = float(ev.ts)
                add_mark((start, start + float(ev.dur), step))
            if cat in OP_CATS or cat == "user_annotation":
                keep(ev)
                if step is not None:
                    self.step_spans[(ev.pid, ev.tid)].append((start, start + float(ev.dur)))
                    self.kept.marks.append(ev)
                    if cat in OP_CATS and ev.args is not None:
                        self.step_ids.append(ev.args.external_id)
                    continue
                args = ev.args
                item: Any = (float(ev.ts), -float(ev.dur), seq,
                             name[_MODULE_LEN:] if name.startswith(_MODULE) else name,
                             name if cat in OP_CATS else None,
                             None if args is None else args.external_id)
            else:
                if cat in DEVICE_CATS:
                    keep_device(ev)
                elif cat in LAUNCH_CATS:
                    keep_runtime(ev)
                elif cat in SYNC_CATS:
                    keep_sync(ev)
                elif cat in HOST_WORK_CATS:
                    keep(ev)
                continue
            scoped[(ev.pid, ev.tid)].append(item)

    def samples(self) -> list[TraceEvent]:
        """The first event of each kind sorted out that may call for argument fields only
        some traces carry (:func:`.trace_events.groups_called`): a [memory] event, a
        cuda_sync event, a device event and a runtime call (a trace is of one Kineto
        generation, so its first device or runtime event says which)."""
        kept = self.kept
        firsts = [found[0] for found in (kept.sync, kept.device, kept.runtime) if found]
        if self.memory:
            firsts.append(next(iter(self.memory.values()))[0])
        return firsts


#: What owns device work (see :func:`_ops`): [start, self µs or None, node name, op
#: type, External id]; a cpu op's self time is a number, a range's None; the owners
#: below, which are no range of the trace, have no start either.
_Owner = list[Any]
#: The owner of work launched inside a ProfilerStep but outside every op (PyTorch's
#: ``key_averages`` names it so).
_STEP_OWNER: _Owner = [None, None, "ProfilerStep*", "ProfilerStep*", None]
#: The owners of device work with no op: launched outside every op and step, or
#: with no launching call in the trace.
UNATTRIBUTED = "(unattributed)"
_OUTSIDE_OWNER: _Owner = [None, None, UNATTRIBUTED + "/launched outside any op", UNATTRIBUTED,
                          None]
_NO_LAUNCH_OWNER: _Owner = [None, None, UNATTRIBUTED + "/no launch in the trace",
                            UNATTRIBUTED, None]


def _launches(runtime: Sequence[TraceEvent]
              ) -> tuple[dict[Any, list[tuple[float, Any]]], dict[Any, tuple[float, str, Any]]]:
    """Per thread, its launching calls as (start, correlation) sorted by start; and
    correlation -> (start, the family of the device it drives, thread)."""
    per_thread: defaultdict[Any, list[tuple[float, Any]]] = defaultdict(list)
    at: dict[Any, tuple[float, str, Any]] = {}
    family = LAUNCH_CATS.get
    for ev in runtime:
        args = ev.args
        corr = None if args is None else args.correlation
        if corr.__class__ not in ID_TYPES:
            continue
        start = ev.ts
        if start.__class__ is not float:
            try:
                start = float(start)
            except (TypeError, ValueError):
                continue
        key = (ev.pid, ev.tid)
        per_thread[key].append((start, corr))
        at[corr] = (start, family(ev.cat, ""), key)
    for calls in per_thread.values():
        try:
            calls.sort()
        except TypeError:  # correlation ids of several types tying on a start
            calls.sort(key=_first)
    return per_thread, at


def _first(item: tuple[float, Any]) -> float:
    return item[0]


_INF = float("inf")


def _ops(scoped: dict[Any, list[Scoped]], launches: dict[Any, list[tuple[float, Any]]],
         memory: Optional[dict[Any, ThreadMemory]] = None
         ) -> tuple[list[list[Any]], dict[Any, Optional[_Owner]], dict[Any, int]]:
    """[start, self, name, op, external id] of every cpu op, scoped by what encloses it
    (each thread's in the order of its sorted scopes and ops, from the index given per
    thread); and the owner of each launching call (by correlation): the innermost cpu op
    or ``user_annotation`` range open around it on its thread (PyTorch's rule: the
    profiler range whose correlation was current when the call was made), None if
    none is. Each thread's ``memory`` events learn the cpu op innermost around them
    (:meth:`.memory_torch.ThreadMemory.own`)."""
    out: list[list[Any]] = []
    add = out.append
    owners: dict[Any, Optional[_Owner]] = {}
    first: dict[Any, int] = {}
    for key, items in scoped.items():
        first[key] = len(out)
        # (start, -duration, input order): the outer of two events starting
        # together comes first, ties keep their order.
        items.sort()
        # The thread's launches, merged in: each is owned by what is open when it starts.
        calls = iter(launches.get(key, ()))
        call = next(calls, None)
        call_at = _INF if call is None else call[0]
        # Its memory events, merged in too, before the launches of a gap (a launch
        # closes the spans that end at it, a memory event does not): each is in the
        # span last opened among those open at its time (ending then at the earliest).
        held = memory.get(key) if memory else None
        held_times: Sequence[float] = () if held is None else held.times
        held_next = 0
        held_at = held_times[0] if held_times else _INF
        # Each open event: its end, its scope path, the nearest cpu op record at or
        # above it (whose self time its child ops reduce), the innermost range (op or
        # annotation) at or above it, which owns the work launched inside, the index of
        # its record if it is a cpu op (else -1), and that range's end (a module scope
        # opened inside an op may outlive it in traces written in whole µs).
        stack: list[tuple[float, str, Optional[list[Any]], Optional[_Owner], int, float]] = []
        for start, neg_dur, _, label, op, tag in items:
            while held_at < start:
                j = len(stack) - 1
                while j >= 0 and stack[j][0] < held_at:
                    j -= 1
                if j >= 0 and stack[j][4] >= 0:
                    held.own(held_next, stack[j][4], stack[j][2], stack[j][0])  # type: ignore
                held_next += 1
                held_at = held_times[held_next] if held_next < len(held_times) else _INF
            while call_at < start:
                while stack and stack[-1][0] <= call_at:
                    stack.pop()
                owners[call[1]] = _open_owner(stack, call_at)  # type: ignore[index]
                call = next(calls, None)
                call_at = _INF if call is None else call[0]
            end = start - neg_dur
            while stack and stack[-1][0] <= start:
                stack.pop()
            if stack:
                top = stack[-1]
                path, rec, owner, owner_end = top[1] + "/" + label, top[2], top[3], top[5]
            else:
                path, rec, owner, owner_end = label, None, None, _INF
            if op is not None:
                parent, rec = rec, [start, end - start, path, op, tag]
                if parent is not None:
                    parent[1] -= end - start
                stack.append((end, path, rec, rec, len(out), end))
                add(rec)
                continue
            if tag is not MODULE_SCOPE:
                owner, owner_end = [start, None, path, label, tag], end
            stack.append((end, path, rec, owner, -1, owner_end))
        for held_next in range(held_next, len(held_times)):
            held_at = held_times[held_next]
            j = len(stack) - 1
            while j >= 0 and stack[j][0] < held_at:
                j -= 1
            if j >= 0 and stack[j][4] >= 0:
                held.own(held_next, stack[j][4], stack[j][2], stack[j][0])  # type: ignore
        while call is not None:
            while stack and stack[-1][0] <= call[0]:
                stack.pop()
            owners[call[1]] = _open_owner(stack, call[0])
            call = next(calls, None)
    for key, calls_of in launches.items():
        if key not in scoped:
            for _, corr in calls_of:
                owners[corr] = None
    return out, owners, first


def _open_owner(stack: list[tuple[float, str, Optional[list[Any]], Optional[_Owner], int, float]],
                t: float) -> Optional[_Owner]:
    """The owner of a call at ``t``: the innermost range on the open-event ``stack``
    that is still open at ``t`` (a module scope's own owner may have ended first)."""
    j = len(stack) - 1
    while j >= 0 and stack[j][5] <= t:
        j -= 1
    return stack[j][3] if j >= 0 else None


def _in_spans(spans: list[tuple[float, float]], t: float) -> bool:
    """Whether ``t`` falls in the last of the sorted, disjoint ``spans`` starting by then."""
    i = bisect_right(spans, (t, float("inf"))) - 1
    return i >= 0 and t < spans[i][1]


class _Charged:
    """Each device event of one trace with its owner (see :func:`_ops`), by PyTorch's
    rule: the owner of the call with the event's ``correlation``; else, for an event
    no call launched, the op its ``External id`` names where the trace's External ids
    agree with its launches (``ProfilerStep*`` where it names a step written as a cpu
    op); else :data:`UNATTRIBUTED`.

    ``work`` holds (start, duration, owner, device, event name, launch start or None).
    """

    def __init__(self, parts: _Sorted, ops: list[list[Any]],
                 owners: dict[Any, Optional[_Owner]],
                 launch_at: dict[Any, tuple[float, str, Any]]) -> None:
        kept = parts.kept
        names = DeviceNames(LAUNCH_CATS.get(ev.cat, "") for ev in kept.runtime)
        self.work: list[tuple[float, float, _Owner, str, str, Optional[float]]] = []
        add = self.work.append
        #: device events whose External id names their owner, and those whose does not
        self.agree = self.disagree = 0
        pending = []
        step_spans = parts.step_spans
        for spans in step_spans.values():
            spans.sort()
        for ev in kept.device:
            args = ev.args or NO_ARGS
            corr = args.correlation
            launch = launch_at.get(corr) if corr.__class__ in ID_TYPES else None
            if launch is None:
                pending.append(ev)
                continue
            owner = owners.get(corr)
            if owner is None:
                spans = step_spans.get(launch[2])
                owner = _STEP_OWNER if spans and _in_spans(spans, launch[0]) else _OUTSIDE_OWNER
            ext = args.external_id if args.external_id is not None else args.external_id_lower
            if ext is not None and owner[4] is not None:
                if ext == owner[4]:
                    self.agree += 1
                else:
                    self.disagree += 1
            add((_number(ev.ts), _number(ev.dur), owner, names.name(ev, launch[1]),
                 str(ev.name), launch[0]))
        by_ext: dict[Any, list[Any]] = {}
        if pending and not self.disagree:
            by_ext = {op[4]: op for op in ops if op[4].__class__ in ID_TYPES}
            for ext in parts.step_ids:
                if ext.__class__ in ID_TYPES:
                    by_ext.setdefault(ext, _STEP_OWNER)
        for ev in pending:
            args = ev.args or NO_ARGS
            ext = event_id(args.external_id if args.external_id is not None
                           else args.external_id_lower)
            owner = by_ext.get(ext) if ext is not None and ext != args.correlation else None
            add((_number(ev.ts), _number(ev.dur),
                 owner if owner is not None else _NO_LAUNCH_OWNER,
                 names.name(ev, None), str(ev.name), None))


def _number(value: Any) -> float:
    """A time field as a float (0 for a broken one)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _carried(rows: list[tuple[float, int, float, int, str, Optional[str]]], device: str
             ) -> list[tuple[int, str, int, int]]:
    """A node's rows in whole µs; device rows (own device set) rounded cumulatively, so
    that their sum is the rounded sum of their exact durations (each alone may round
    to 0: a sub-µs kernel), cpu rows one by one, as everywhere."""
    durs = [row[2] if 0.0 < row[2] < _INF else 0.0 for row in rows if row[5] is not None]
    ends = [round(t) for t in accumulate(durs)]
    each = iter([b - a for a, b in zip([0] + ends, ends)])
    return [(step, device, int(start), _whole(dur)) if own is None
            else (step, own, int(start), next(each))
            for start, _, dur, step, _, own in rows]


class TorchFiles:
    """The PyTorch traces of one model, added file by file, then :meth:`finish`."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.rows = ExecRows(model, exact_streams=True)
        self.traces = TorchTraces()
        self.memory = TorchMemory()
        #: per file, the events a step breakdown reads
        self.kept: list[KeptEvents] = []
        self.left_out = 0
        #: device events charged to (unattributed), and those whose External id was
        #: checked against their launching op / disagreed with it
        self.unattributed = self.checked = self.disagree = 0
        #: node -> the canonical device of its first counted cpu execution
        self.canonical: dict[str, str] = {}

    def add(self, index: int, events: Sequence[TraceEvent],
            reread: Optional[Callable[[Sequence[TraceEvent]],
                                      Optional[Sequence[TraceEvent]]]] = None) -> None:
        """Add one trace, file ``index`` (its step when it has no ProfilerStep marks).
        ``reread(samples)`` gives the events the argument fields ``samples`` call for
        (see :meth:`_Sorted.samples`; without it those fields read None): None if the
        events held have them now, else the events to take instead."""
        parts = _Sorted(events)
        if reread is not None:
            again = reread(parts.samples())
            if again is not None:
                parts = _Sorted(again)
        self.kept.append(parts.kept)
        marks = _StepMarks(sorted(parts.marks))
        launches, launch_at = _launches(parts.kept.runtime)
        held = self.memory.threads(parts.memory, parts.framed)
        ops, owners, first_op = _ops(parts.scoped, launches, held)
        op_steps = marks.each(map(_START, ops), index)
        self.memory.add(held, parts.scoped, parts.framed, ops, op_steps, first_op, parts.marks,
                        lambda t: marks.at(t, index))
        charged = _Charged(parts, ops, owners, launch_at)
        self.disagree += charged.disagree
        self.checked += charged.agree + charged.disagree
        # The engine keeps a node's cpu records on its first device only, so every
        # execution of a cpu op goes on its device if any of them launched work.
        device_of: dict[str, str] = {}
        for _, _, owner, device, _, _ in charged.work:
            if owner[1] is not None:
                device_of.setdefault(owner[2], device)
        # Each node's executions with a step, (start, input order, duration, step,
        # op type, device or None for the node's own), sorted by start
        groups: dict[str, list[tuple[float, int, float, int, str, Optional[str]]]] = {}
        left_out = 0
        step_at = marks.at
        for i, step, (start, dur, name, op_type, _) in zip(count(), op_steps, ops):
            if step is None:
                left_out += 1
                continue
            row = (start, i, dur, step, op_type, None)
            found = groups.get(name)
            if found is None:
                groups[name] = [row]
            else:
                found.append(row)
        i = len(ops)
        streams: dict[str, str] = {}
        with_work: set[str] = set()
        model = self.model
        for start, dur, owner, device, kernel, launch in charged.work:
            i += 1
            # the step of the launching call (HTA's rule, as `steps`), else the one the
            # work ran in
            step = None if launch is None else step_at(launch, index)
            if step is None:
                step = step_at(start, index, True)
            name = owner[2]
            node_for(model, name, owner[3]).op_types.add(KERNEL_TYPE + kernel)
            if step is None:
                left_out += 1
                continue
            if owner is _OUTSIDE_OWNER or owner is _NO_LAUNCH_OWNER:
                self.unattributed += 1
            stream = streams.get(device)
            if stream is None:
                stream = streams[device] = ACCELERATOR_STREAM_ALL % (0, device)
            row = (start, i, dur, step, owner[3], stream)
            with_work.add(name)
            found = groups.get(name)
            if found is None:
                groups[name] = [row]
            else:
                found.append(row)
        self.left_out += left_out
        for rows in groups.values():
            rows.sort()
        canonical = self.canonical
        # The engine counts no record starting at 0 µs or before (untimed); a trace's own
        # clock may start there (ns since baseTimeNanoseconds), so such rows start at 1.
        early = min(min(map(_START, ops), default=_INF),
                    min(map(_START, charged.work), default=_INF)) < 1
        # New nodes are made in the order of their first execution (then name).
        for _, name in sorted((rows[0][0], name) for name, rows in groups.items()):
            rows = groups[name]
            device = canonical.get(name)
            if device is None:
                on = device_of.get(name)
                device = CPU_DEVICE % 0 if on is None else ACCELERATOR_DEVICE % (0, on)
                if any(row[5] is None for row in rows):
                    canonical[name] = device
            if name in with_work:
                kept = _carried(rows, device)
            else:
                try:
                    kept = [(step, device, int(start), max(round(dur), 0))
                            for start, _, dur, step, _, _ in rows]
                except (ValueError, OverflowError):  # NaN or infinite: a broken trace
                    kept = [(step, device, int(start), _whole(dur))
                            for start, _, dur, step, _, _ in rows]
            if early:
                kept = [(step, on, start if start >= 1 else 1, dur)
                        for step, on, start, dur in kept]
            self.rows.add_node(name, rows[0][4], kept)
        # a range node's code trace: the frames around its first range
        ranges: dict[str, tuple[float, str]] = {}
        for _, _, owner, _, _, _ in charged.work:
            if owner[1] is None and owner[0] is not None:
                found_range = ranges.get(owner[2])
                if found_range is None or owner[0] < found_range[0]:
                    ranges[owner[2]] = (owner[0], owner[3])
        self.traces.add(parts.framed, parts.scoped, groups, ranges)

    def finish(self, defer_traces: bool) -> None:
        """Give the nodes their records, and their traces (now, or when first asked
        for with ``defer_traces``)."""
        self.memory.finish(self.rows.add_memory)
        self.rows.finish()
        self.model.set_memory_source(self.memory.source())
        traces, model = self.traces, self.model
        if not traces.any:
            return
        if defer_traces:
            model.defer_has_trace(traces.resolve, costly=False)
            for name in traces_wanted(traces):
                node = model.nodes[name]
                if node.trace is None:
                    node.defer_trace(TraceOf(traces, name))
            return
        traces.resolve()
        for name, trace in (traces.found or {}).items():
            node = model.nodes[name]
            if node.trace is None:
                node.trace = trace
                model.has_trace = True
