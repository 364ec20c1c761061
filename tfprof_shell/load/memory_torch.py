"""PyTorch ``[memory]`` events (``profile_memory=True``) -> per-op memory columns.

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

Loading attributes the events to ops in the sweep :mod:`.torch_trace` makes over
each thread's ops anyway (:class:`ThreadMemory`) and hands out the columns
(:class:`TorchMemory`); what only the ``memory`` command reads (each event's owner
and code trace, the memory profile) is worked out when first asked
(:mod:`.memory_torch_profile`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import islice
from operator import attrgetter, itemgetter, le
from typing import Any, Callable, Optional, Sequence

from ..model.intervals import StepMark
from .memory_torch_profile import TorchMemorySource, TorchThread, device_name, nbytes_of

#: A Python frame of a thread: (start, end, frame) (.torch_code.Framed).
_Framed = tuple[float, float, Any]
_TS, _START = attrgetter("ts"), itemgetter(0)


def _ns(value: Any) -> int:
    try:
        return int(round(float(value) * 1000))
    except (TypeError, ValueError, OverflowError):
        return 0


def _ascending(values: Sequence[float]) -> bool:
    return all(map(le, values, islice(values, 1, None)))


class ThreadMemory(TorchThread):
    """One thread's ``[memory]`` events in time order (equal times in input order), and
    the cpu op owning each: the op innermost around the event among the thread's ops,
    scopes and Python frames (:meth:`own`, called by the sweep over the thread's ops)."""

    __slots__ = ("owners", "_frames", "_starts")

    def __init__(self, events: Sequence[Any], frames: Sequence[_Framed]) -> None:
        times = list(map(float, map(_TS, events)))
        if not _ascending(times):
            order = sorted(range(len(times)), key=times.__getitem__)
            events = [events[i] for i in order]
            times = [times[i] for i in order]
        super().__init__(list(events), times)
        #: per event: (the index of the owning op's record, the op's end), or None
        self.owners: list[Optional[tuple[int, float]]] = [None] * len(times)
        self._frames = frames
        #: the frames' starts, in order (made when first needed)
        self._starts: Optional[list[float]] = None

    def own(self, i: int, op: int, record: list[Any], end: float) -> None:
        """Event ``i`` has cpu op ``record`` ([start, ...], index ``op``, open until
        ``end``) as the innermost op or scope open around it: the op owns it, unless a
        Python frame opened after the op (in the sweep's order: by start, the longer
        first, an op before a frame like it) is still open at the event, which makes
        the frame the innermost span."""
        starts = self._starts
        if starts is None:
            starts = list(map(_START, self._frames))
            if not _ascending(starts):
                self._frames = sorted(self._frames, key=_START)
                starts = list(map(_START, self._frames))
            self._starts = starts
        t, start = self.times[i], record[0]
        j = bisect_left(starts, start)
        if j < len(starts) and starts[j] <= t:
            frames = self._frames
            for j in range(j, bisect_right(starts, t, j)):
                frame_start, frame_end, _ = frames[j]
                if frame_end >= t and (frame_start > start or frame_end <= end):
                    return
        self.owners[i] = (op, end)


#: One cpu op execution that owns memory events, as a list: its end (µs), its own
#: allocations' running bytes, their high watermark, its allocations still alive, the
#: sum of its events' sizes, its node and its step.
_Exec = list
_END, _OWN, _PEAK, _RESIDUAL, _NET, _NODE, _STEP = range(7)


class TorchMemory:
    """The ``[memory]`` events of a model's PyTorch traces, attributed file by file."""

    def __init__(self) -> None:
        #: every event: (time, signed bytes, device, address, owning execution or None)
        self.rows: list[tuple[float, int, str, Any, Optional[_Exec]]] = []
        self.marks: list[StepMark] = []
        #: executions that own events, whose columns :meth:`finish` hands out
        self.execs: list[_Exec] = []
        #: per file with memory events: its threads, for the memory profile
        self.files: list[list[tuple[TorchThread, Sequence[tuple], Sequence[_Framed],
                                    Sequence[list[Any]], int]]] = []

    @staticmethod
    def threads(memory: dict[Any, list[Any]], framed: dict[Any, list[_Framed]]
                ) -> dict[Any, ThreadMemory]:
        """One trace's memory events per thread, ready for the sweep over its ops."""
        return {key: ThreadMemory(events, framed.get(key, ())) for key, events in memory.items()}

    def add(self, threads: dict[Any, ThreadMemory], scoped: dict[Any, list[tuple]],
            framed: dict[Any, list[_Framed]], ops: Sequence[list[Any]],
            op_steps: Sequence[Optional[int]], first_op: dict[Any, int],
            marks: Sequence[tuple[float, float, int]],
            step_at: Callable[[float], Optional[int]]) -> None:
        """One trace's memory threads (owned by the sweep), with its scopes and ops per
        thread (sorted, as :func:`.torch_trace._ops` leaves them), Python frames, op
        records ([start, self, node name, op type, ...], each thread's from
        ``first_op[thread]`` on, in the order of its sorted ops) and their steps, step
        markers and step look-up."""
        self.marks.extend(StepMark(step, _ns(a), _ns(b)) for a, b, step in marks)
        if not threads:
            return
        if not marks:  # the file is one step: the span of its memory events
            lo = min(min(th.times) for th in threads.values())
            hi = max(max(th.times) for th in threads.values())
            step = step_at(lo)
            if step is not None:
                self.marks.append(StepMark(step, _ns(lo), _ns(hi) + 1))
        rows, execs = self.rows, self.execs
        add_row = rows.append
        of_op: dict[int, _Exec] = {}
        devices: dict[Any, str] = {}
        for thread in threads.values():
            for ev, t, owned in zip(thread.events, thread.times, thread.owners):
                args = ev.args
                if args is None:
                    continue
                size = args.nbytes
                if size.__class__ is not int:
                    if size is None:
                        continue
                    size = nbytes_of(args)
                ex = None
                if owned is not None:
                    op, end = owned
                    ex = of_op.get(op)
                    if ex is None and ops[op][2]:
                        ex = of_op[op] = [end, 0, 0, 0, 0, ops[op][2], op_steps[op]]
                        execs.append(ex)
                try:
                    device = devices[(args.device_type, args.device_id)]
                except (KeyError, TypeError):  # new, or a field that is no JSON scalar
                    device = device_name(args.device_type, args.device_id, devices)
                add_row((t, size, device, args.addr, ex))
        self.files.append([(TorchThread(thread.events, thread.times), scoped.get(key, ()),
                            framed.get(key, ()), ops, first_op.get(key, 0))
                           for key, thread in threads.items()])

    def finish(self, add_memory: Callable[[str, int, Sequence[int]], None]) -> None:
        """Hand each op its columns for each step (``add_memory(node, step, values)``)."""
        rows = self.rows
        if not rows:
            return
        rows.sort(key=itemgetter(0))
        open_at: dict[tuple[str, Any], Optional[_Exec]] = {}
        for t, size, device, addr, ex in rows:
            if size >= 0:
                open_at[(device, addr)] = ex
                if ex is not None:
                    ex[_NET] += size
                    own = ex[_OWN] = ex[_OWN] + size
                    if own > ex[_PEAK]:
                        ex[_PEAK] = own
                    ex[_RESIDUAL] += size
                continue
            if ex is not None:
                ex[_NET] += size
            owner = open_at.pop((device, addr), None)
            if owner is not None and t <= owner[_END]:  # freed before its op returned
                owner[_OWN] += size
                owner[_RESIDUAL] += size
        self.rows = []
        totals: dict[tuple[str, int], list[int]] = {}
        for _, _, peak, residual, net, node, step in self.execs:
            if step is None:
                continue
            found = totals.get((node, step))
            if found is None:
                totals[(node, step)] = [net, peak, residual, residual]
            else:
                found[0] += net
                found[1] += peak
                found[2] += residual
                found[3] += residual
        for (node, step), values in totals.items():
            add_memory(node, step, values)

    def source(self) -> TorchMemorySource:
        """What the model keeps to build its memory profile when asked."""
        return TorchMemorySource(self.files, self.marks)
