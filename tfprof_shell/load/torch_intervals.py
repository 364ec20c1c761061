"""PyTorch profiler traces -> Intervals (device events, launches, syncs, input, steps).

At load time :mod:`.torch_trace` keeps the events a step breakdown reads
(device, runtime, host-op and step events, and the program's own Python
frames); :class:`TorchIntervals` turns them into intervals when a command
first asks. A device event belongs to the step of the runtime
call its ``correlation`` id names (HTA's rule), else to the step its start
falls in.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_right
from typing import Any, Optional, Sequence

from ..model.intervals import (HAS_BYTES, HAS_DEVICE, HAS_HOST_COMM, HAS_HOST_OPS,
                               HAS_INPUT, HAS_LAUNCH, HAS_MARKERS, HAS_SYNC,
                               HOST_COMMUNICATION, HOST_OPS, INPUT, LAUNCH, MEMSET,
                               PYTHON_FRAME, SYNC,
                               DeviceEvent, HostEvent, Intervals, StepMark, classify_kernel,
                               copy_kind)
from .trace_events import NO_ARGS, TraceEvent

#: Event categories of device work and of runtime (launch, copy, sync) calls.
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset")
RUNTIME_CATS = ("cuda_runtime", "cuda_driver", "Runtime", "Driver")
_HOST_CATS = frozenset(("cpu_op", "operator", "user_annotation"))
_STEP = re.compile(r"ProfilerStep#(\d+)")
_INPUT = re.compile(r"DataLoader.*__next__|dataloader\.py\(\d+\): __next__")
_SYNC = re.compile(r"(cuda|cu|hip)(Device|Stream|Event|Ctx)Synchronize|cudaMemcpy$"
                   r"|cuMemcpy[DH]toH?D?$|aten::_local_scalar_dense$")
_HOST_COLLECTIVE = re.compile(r"(gloo|c10d)[:]+|nccl:")
#: A Python frame of the program's own code: ``file.py(N): func``, not under torch/,
#: site-packages or the standard library (``with_stack=True`` traces).
_USER_FRAME = re.compile(r"(?!torch/|<)[^<]*?\.py\(\d+\): ")
_LIBRARY = re.compile(r"site-packages/|dist-packages/|/lib/python\d")


_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ()))  # Python 3.10+


def user_frame(name: str) -> bool:
    """Whether a python_function event's name is a frame of the program's own code (the
    trace writes library paths relative to their sys.path entry: torch/..., enum.py)."""
    if not _USER_FRAME.match(name) or _LIBRARY.search(name):
        return False
    top = re.split(r"[/.]", name, 1)[0]
    return top not in _STDLIB


class KeptEvents:
    """The events of one trace a step breakdown reads, by kind, each in input order:
    runtime calls, device events, and host events (cpu ops, annotations, and the
    Python frames :func:`user_frame` or an input wait names; ``user_frames``
    holds which of those are the program's own). ``sync`` holds the device's
    records of synchronisations (``cuda_sync``), which only the critical path reads."""

    __slots__ = ("runtime", "device", "host", "user_frames", "sync")

    def __init__(self) -> None:
        self.runtime: list[TraceEvent] = []
        self.device: list[TraceEvent] = []
        self.host: list[TraceEvent] = []
        self.user_frames: list[TraceEvent] = []
        self.sync: list[TraceEvent] = []


def _ns(value: Any) -> int:
    try:
        return int(round(float(value) * 1000))
    except (TypeError, ValueError):
        return 0


class _Steps:
    def __init__(self, marks: list[StepMark]) -> None:
        self.marks = sorted(marks, key=lambda m: m.start)
        self.starts = [m.start for m in self.marks]

    def at(self, t: int) -> Optional[int]:
        i = bisect_right(self.starts, t) - 1
        if i >= 0 and t < self.marks[i].end:
            return self.marks[i].step
        return None


class TorchIntervals:
    """Builds the Intervals of PyTorch traces from their kept events (file i
    without ProfilerStep markers is step i)."""

    def __init__(self, files: Sequence[KeptEvents]) -> None:
        self.files = list(files)

    def __call__(self) -> Intervals:
        out = Intervals(has=frozenset((HAS_DEVICE, HAS_LAUNCH, HAS_BYTES, HAS_SYNC, HAS_INPUT,
                                       HAS_HOST_OPS, HAS_HOST_COMM, HAS_MARKERS)),
                        origin="PyTorch trace events")
        for index, events in enumerate(self.files):
            self._add_file(out, index, events)
        out.devices.sort()
        out.host.sort()
        out.frames.sort()
        return out

    def _add_file(self, out: Intervals, index: int, events: KeptEvents) -> None:
        marks = []
        calls: dict[Any, tuple[int, int, str, Any]] = {}
        for ev in events.runtime:
            start = _ns(ev.ts)
            calls[(ev.args or NO_ARGS).correlation] = (start, start + _ns(ev.dur),
                                                       str(ev.name), ev.tid)
        for ev in events.host:
            if ev.cat == "user_annotation":
                m = _STEP.fullmatch(str(ev.name))
                if m:
                    start = _ns(ev.ts)
                    marks.append(StepMark(int(m.group(1)), start, start + _ns(ev.dur)))
        if not marks:
            times = [(_ns(e.ts), _ns(e.ts) + _ns(e.dur))
                     for kind in (events.runtime, events.device, events.host) for e in kind]
            lo = min((t[0] for t in times), default=0)
            hi = max((t[1] for t in times), default=0)
            if hi > lo:
                marks.append(StepMark(index, lo, hi))
        steps = _Steps(marks)
        out.marks.extend(marks)
        launched = set()
        kind_of: dict[tuple[Any, str], str] = {}
        new = tuple.__new__  # an event without NamedTuple's Python-level __new__
        for ev in events.device:
            cat = ev.cat
            args = ev.args or NO_ARGS
            corr, device, stream, nbytes = args.correlation, args.device, args.stream, args.bytes
            start = _ns(ev.ts)
            end = start + _ns(ev.dur)
            name = str(ev.name)
            call = calls.get(corr)
            step = steps.at(call[0]) if call is not None else None
            if step is None:
                step = steps.at(start)
            if call is not None:
                launched.add(corr)
            kind = kind_of.get((cat, name))
            if kind is None:
                kind = kind_of[(cat, name)] = (
                    MEMSET if cat in ("gpu_memset", "Memset") else
                    copy_kind(name) if cat in ("gpu_memcpy", "Memcpy") else
                    classify_kernel(name))
            out.devices.append(new(DeviceEvent, (
                start, end, "gpu:%s" % device, str(stream), kind, name,
                int(nbytes) if isinstance(nbytes, (int, float)) else -1,
                call[0] if call else -1, call[1] if call else -1, step)))
        for corr, (start, end, name, tid) in calls.items():
            if _SYNC.match(name):
                out.host.append(HostEvent(start, end, SYNC, name, str(tid)))
            elif corr in launched:
                out.host.append(HostEvent(start, end, LAUNCH, name, str(tid)))
        for ev in events.user_frames:
            start = _ns(ev.ts)
            out.frames.append(new(HostEvent, (start, start + _ns(ev.dur), PYTHON_FRAME,
                                              str(ev.name), ev.tid)))
        # a kind per category and name (None: not a kind of work, e.g. a scope)
        kinds: dict[Any, dict[Any, Optional[str]]] = {}
        add = out.host.append
        for ev in events.host:
            name = ev.name
            of_cat = kinds.get(ev.cat)
            if of_cat is None:
                of_cat = kinds[ev.cat] = {}
            kind = of_cat.get(name, "")
            if kind == "":
                kind = of_cat[name] = _host_kind(ev.cat, str(name))
            if kind is None:
                continue
            ts, dur = ev.ts, ev.dur
            try:
                start = int(ts * 1000 + 0.5)
                end = start + int(dur * 1000 + 0.5)
            except TypeError:  # not numbers: a broken event
                start, end = _ns(ts), _ns(ts) + _ns(dur)
            add(new(HostEvent, (start, end, kind, name, ev.tid)))


def _host_kind(cat: Any, name: str) -> Optional[str]:
    """The kind of a host event (None: not a kind of work, e.g. a scope)."""
    if _INPUT.search(name):
        return INPUT
    if _SYNC.match(name):
        return SYNC
    if _HOST_COLLECTIVE.match(name):
        return HOST_COMMUNICATION
    if cat in ("user_annotation", "python_function"):
        return None  # scopes (record_function, ProfilerStep) cover ops, not work
    return HOST_OPS
