"""PyTorch traces -> one rank's collective calls (:class:`RankCollectives`).

What each trace generation writes:

* NCCL (and newer gloo) traces: a ``record_param_comms`` op per call with
  ``Collective name``, ``Process Group Name``, ``Process Group Ranks``, the
  message sizes, ``dtype`` and, in newer PyTorch, ``Seq``; its NCCL kernel
  carries the same args. These calls are read when a trace has them.
* torch 2.x with gloo on the CPU: only the ``c10d::allreduce_`` (``broadcast_``,
  ``barrier``, ...) op on the calling thread, sizes in its ``Input Dims``
  (with ``record_shapes``), and ``gloo:all_reduce`` annotations on the
  group's worker threads, whose ends say when each call finished. No group,
  no sequence number; the header's ``distributedInfo`` lists the groups.

Regions are the top-level annotations, ops and runtime calls (a stream
synchronization outside any op) of the threads that call collectives and of
the thread with the step markers (the cause of a late
arrival is found among them). Built from the events the loader keeps for the
step breakdown (:class:`.torch_intervals.KeptEvents`), when first asked.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right
from itertools import chain
from typing import Any, Optional, Sequence

from ..model.collectives import (FROM_C10D, FROM_PARAM_COMMS, CollectiveCall,
                                 RankCollectives, Region)
from .torch_intervals import KeptEvents
from .trace_events import NO_ARGS, TraceEvent, TraceHeader

_PARAM_COMMS = "record_param_comms"
_C10D = "c10d::"
_BACKEND = re.compile(r"(gloo|nccl|ucc|mpi):(\w+)")
_STEP = re.compile(r"ProfilerStep#(\d+)")
#: record_param_comms names that are not collectives (a work's wait, a communicator's set-up).
_NOT_COLLECTIVES = frozenset(("wait", "init", ""))
#: Backend work events are looked for this many places ahead of the call's order.
_LOOKAHEAD = 4
_OP_CATS = ("cpu_op", "operator", "user_annotation")
_REGION_CATS = _OP_CATS + ("cuda_runtime", "cuda_driver", "Runtime", "Driver")


class TorchCollectives:
    """Builds a model's RankCollectives from its traces' kept events and headers
    (picklable: models travel between processes)."""

    def __init__(self, files: Sequence[KeptEvents], headers: Sequence[TraceHeader]) -> None:
        self.files = list(zip(files, headers))

    def __call__(self) -> Optional[RankCollectives]:
        return read_rank(self.files)


def read_rank(files: Sequence[tuple[KeptEvents, TraceHeader]]) -> Optional[RankCollectives]:
    """The collective calls of one rank's trace files (file i without step markers is
    step i); None when no file has any, or no header names a distributed job (a trace
    without ``distributedInfo`` calls no collective: its events are not even looked at)."""
    if not any(isinstance(header.distributed, dict) for _, header in files):
        return None
    found = [_FileCalls(index, kept) for index, (kept, _) in enumerate(files)]
    from_comms = any(f.comms for f in found)
    if not any(f.comms or f.c10d for f in found):
        return None
    out = RankCollectives(source=FROM_PARAM_COMMS if from_comms else FROM_C10D)
    for (_, header), f in zip(files, found):
        _read_header(out, header)
        f.build(out, from_comms)
    out.calls.sort()
    out.regions.sort()
    out.steps.sort(key=lambda s: s[1])
    return out


def _read_header(out: RankCollectives, header: TraceHeader) -> None:
    if out.host == "" and isinstance(header.host, str):
        out.host = header.host
    if out.base_ns == 0 and isinstance(header.base_ns, (int, float)):
        out.base_ns = int(header.base_ns)
    info = header.distributed
    if not isinstance(info, dict):
        return
    if out.rank < 0:
        out.rank = _int(info.get("rank"), -1)
        out.world_size = _int(info.get("world_size"), 0)
        out.backend = str(info.get("backend") or "")
    config = info.get("pg_config")
    groups = list(config.values()) if isinstance(config, dict) else config
    for group in groups if isinstance(groups, list) else ():
        if isinstance(group, dict) and "pg_name" in group:
            ranks = _ranks(group.get("ranks"))
            if ranks:
                out.groups.setdefault(str(group["pg_name"]), ranks)


class _FileCalls:
    """One file's calls, marks and backend work, found in one pass over its host events."""

    def __init__(self, index: int, kept: KeptEvents) -> None:
        self.index = index
        self.kept = kept
        self.comms: list[TraceEvent] = []
        self.c10d: list[TraceEvent] = []
        self.backend: list[TraceEvent] = []
        self.marks: list[tuple[float, float, int]] = []
        self.mark_threads: set[Any] = set()
        for ev in kept.host:
            name = ev.name
            if name.__class__ is not str:
                continue
            first = name[:1]
            if first == "r" and name == _PARAM_COMMS:
                if ev.cat in _OP_CATS and (ev.args or NO_ARGS).collective is not None:
                    self.comms.append(ev)
            elif first == "c" and name.startswith(_C10D):
                if ev.cat in _OP_CATS:
                    self.c10d.append(ev)
            elif first == "P" and name.startswith("ProfilerStep#"):
                m = _STEP.fullmatch(name)
                if m:
                    start = float(ev.ts)
                    self.marks.append((start, start + float(ev.dur), int(m.group(1))))
                    self.mark_threads.add(ev.tid)
            elif ev.cat == "user_annotation" and _BACKEND.match(name):
                self.backend.append(ev)

    def build(self, out: RankCollectives, from_comms: bool) -> None:
        """Add this file's calls, regions and steps to ``out``."""
        self.marks.sort()
        events = _outermost(self.comms if from_comms else self.c10d)
        starts = [m[0] for m in self.marks]
        calls = []
        for ev in events:
            args = ev.args or NO_ARGS
            start = float(ev.ts)
            end = start + float(ev.dur)
            if from_comms:
                op = str(args.collective)
                if op in _NOT_COLLECTIVES:
                    continue
                group = "" if args.group_name is None else str(args.group_name)
                ranks = _ranks(args.group_ranks)
                if group and ranks:
                    out.groups.setdefault(group, ranks)
                call = CollectiveCall(start, end, op, group, _int(args.seq, -1),
                                      _int(args.in_nelems, -1), _int(args.out_nelems, -1),
                                      "" if args.dtype is None else str(args.dtype),
                                      str(ev.tid), self._step(starts, start))
            else:
                op = str(ev.name)[len(_C10D):].rstrip("_")
                call = CollectiveCall(start, end, op, size=_elements(args),
                                      thread=str(ev.tid), step=self._step(starts, start))
            calls.append(call)
        calls.sort()
        if from_comms:
            calls = _with_kernels(calls, self.kept.device)
        else:
            calls = _with_backend(calls, self.backend)
        out.calls.extend(calls)
        if self.marks:
            out.steps.extend((step, a, b) for a, b, step in self.marks)
        elif calls:
            times = [float(e.ts) for e in self.kept.host]
            ends = [float(e.ts) + float(e.dur) for e in self.kept.host]
            out.steps.append((self.index, min(times), max(ends)))
        threads = {ev.tid for ev in events} | self.mark_threads
        out.regions.extend(_regions(self.kept.host, self.kept.runtime, threads))

    def _step(self, starts: list[float], t: float) -> int:
        if not self.marks:
            return self.index
        i = bisect_right(starts, t) - 1
        if i >= 0 and t < self.marks[i][1]:
            return self.marks[i][2]
        return -1


def _outermost(events: list[TraceEvent]) -> list[TraceEvent]:
    """The events not nested in another of the list on the same thread (c10d::barrier
    runs an allreduce_; a call's record_param_comms may hold another)."""
    by_thread: dict[Any, list[tuple[float, float, int, TraceEvent]]] = {}
    for i, ev in enumerate(events):
        start = float(ev.ts)
        by_thread.setdefault(ev.tid, []).append((start, -float(ev.dur), i, ev))
    out = []
    for items in by_thread.values():
        items.sort(key=lambda it: it[:3])
        open_end = float("-inf")
        for start, neg_dur, _, ev in items:
            if start < open_end:
                continue
            open_end = start - neg_dur
            out.append(ev)
    return out


def _with_kernels(calls: list[CollectiveCall], device: Sequence[TraceEvent]
                  ) -> list[CollectiveCall]:
    """Each call with its NCCL kernel: by (group, Seq) where both carry one, else the
    group's kernels in order."""
    kernels = sorted((float(e.ts), float(e.dur), e.args) for e in device
                     if e.args is not None and e.args.collective is not None
                     and str(e.args.collective) not in _NOT_COLLECTIVES)
    if not kernels:
        return calls
    by_seq = {(c.group, c.seq): i for i, c in enumerate(calls) if c.seq >= 0}
    queues: dict[str, list[int]] = {}
    for i, c in enumerate(calls):
        queues.setdefault(c.group, []).append(i)
    taken: set[int] = set()
    positions = {group: 0 for group in queues}
    out = list(calls)
    for start, dur, args in kernels:
        group = "" if args.group_name is None else str(args.group_name)
        i = by_seq.get((group, _int(args.seq, -1)), -1)
        if i < 0 or i in taken:
            queue = queues.get(group, [])
            pos = positions.get(group, 0)
            while pos < len(queue) and queue[pos] in taken:
                pos += 1
            if pos >= len(queue):
                continue
            i = queue[pos]
            positions[group] = pos + 1
        taken.add(i)
        out[i] = out[i]._replace(device_start=start, device_end=start + dur, done=start + dur)
    return out


def _with_backend(calls: list[CollectiveCall], backend: list[TraceEvent]
                  ) -> list[CollectiveCall]:
    """Each call with the end of its backend work (``gloo:all_reduce`` on a worker
    thread): the work is taken in call order, so the next unused one of the same op
    and size, a few places ahead at most."""
    work = sorted((float(e.ts), float(e.dur), _canon(_BACKEND.match(str(e.name)).group(2)),
                   _elements(e.args or NO_ARGS)) for e in backend)
    used = [False] * len(work)
    pos = 0
    out = []
    for call in calls:
        if call.point_to_point:
            out.append(call)
            continue
        want = _canon(call.op)
        while pos < len(work) and used[pos]:
            pos += 1
        for j in range(pos, min(pos + _LOOKAHEAD, len(work))):
            start, dur, op, size = work[j]
            if not used[j] and op == want and size == call.size and start >= call.start:
                used[j] = True
                call = call._replace(done=start + dur)
                break
        out.append(call)
    return out


def _canon(op: str) -> str:
    """An op name as both a c10d op and its backend's work spell it (all_reduce ==
    allreduce)."""
    return op.replace("_", "").lower()


def _regions(host: Sequence[TraceEvent], runtime: Sequence[TraceEvent], threads: set[Any]
             ) -> list[Region]:
    """The top-level annotations, ops and runtime calls (a cudaStreamSynchronize outside
    any op) of ``threads``; step markers left out."""
    per_thread: dict[Any, list[tuple[float, float, str]]] = {}
    names: dict[str, str] = {}
    for ev in chain(host, runtime):
        if ev.tid in threads and ev.cat in _REGION_CATS:
            name = str(ev.name)
            if name.startswith("ProfilerStep#"):
                continue
            start = float(ev.ts)
            per_thread.setdefault(ev.tid, []).append(
                (start, -float(ev.dur), names.setdefault(name, name)))
    out = []
    for items in per_thread.values():
        items.sort()
        open_end = float("-inf")
        for start, neg_dur, name in items:
            if start < open_end:
                continue
            open_end = start - neg_dur
            out.append(Region(start, open_end, name))
    return out


def _elements(args: Any) -> int:
    """Elements of an op's first tensor argument (a tensor list: all of them), from
    its ``Input Dims``; -1 when unknown."""
    dims = getattr(args, "input_dims", None)
    if not isinstance(dims, list) or not dims or not isinstance(dims[0], list):
        return -1
    first = dims[0]
    if not first:
        return -1
    shapes = first if isinstance(first[0], list) else [first]
    total = 0
    for shape in shapes:
        n = 1
        for d in shape:
            if not isinstance(d, int):
                return -1
            n *= d
        total += n
    return total


def _ranks(value: Any) -> tuple[int, ...]:
    """A group's ranks from a list or the text record_param_comms writes ("[0, 1]")."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return ()
    if isinstance(value, (list, tuple)) and all(isinstance(r, int) for r in value):
        return tuple(value)
    return ()


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return default
