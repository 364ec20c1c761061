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

from ..model.intervals import (HAS_BYTES, HAS_DEVICE, HAS_DEVICE_SYNC, HAS_HOST_COMM,
                               HAS_HOST_OPS, HAS_INPUT, HAS_LAUNCH, HAS_MARKERS, HAS_SYNC,
                               HOST_COMMUNICATION, HOST_OPS, INPUT, LAUNCH, MEMSET,
                               PYTHON_FRAME, SYNC,
                               DeviceEvent, DeviceSync, HostEvent, Intervals, StepMark,
                               classify_kernel, copy_kind)
from .torch_devices import (ID_TYPES, LAUNCH_CATS, MEMCPY_CATS, MEMSET_CATS, DeviceNames,
                            event_id, stream_of)
from .trace_events import NO_ARGS, TraceEvent

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

    * ``runtime``: the host calls that launch device work (and sync with it), of
      every category :data:`.torch_devices.LAUNCH_CATS` names (CUDA runtime and
      driver, MTIA, XPU, PrivateUse1, ...); a device event's launch is the one with
      its ``args.correlation``;
    * ``device``: device work, :data:`.torch_devices.DEVICE_CATS` (kernels, copies,
      sets of every backend);
    * ``sync``: device-side synchronisation events (``cuda_sync``), whose
      ``args`` carry what they waited on (``wait_on_stream``, ...): the steps'
      sync part and the critical path's sync joins (.torch_path);
    * ``host``: cpu ops, annotations, and the Python frames :func:`user_frame` or
      an input wait names; ``user_frames`` holds which of those are the program's own;
      ``marks`` the ``ProfilerStep#N`` ranges (ops or annotations) among them.
    """

    __slots__ = ("runtime", "device", "host", "user_frames", "sync", "marks")

    def __init__(self) -> None:
        self.runtime: list[TraceEvent] = []
        self.device: list[TraceEvent] = []
        self.host: list[TraceEvent] = []
        self.user_frames: list[TraceEvent] = []
        self.sync: list[TraceEvent] = []
        self.marks: list[TraceEvent] = []


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
        if out.syncs:
            out.has = out.has | {HAS_DEVICE_SYNC}
        out.devices.sort()
        out.host.sort()
        out.frames.sort()
        out.syncs.sort()
        return out

    def _add_file(self, out: Intervals, index: int, events: KeptEvents) -> None:
        marks = []
        calls: dict[Any, tuple[int, int, str, Any, str]] = {}
        for ev in events.runtime:
            corr = (ev.args or NO_ARGS).correlation
            if corr.__class__ in ID_TYPES:
                start = _ns(ev.ts)
                calls[corr] = (start, start + _ns(ev.dur), str(ev.name), ev.tid,
                               LAUNCH_CATS.get(ev.cat, ""))
        for ev in events.marks:
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
        names = DeviceNames(call[4] for call in calls.values())
        launched = set()
        kind_of: dict[tuple[Any, str], str] = {}
        #: the file's device work in launch order, for what a sync waited for
        work = _Launched() if events.sync else None
        seen: dict[tuple[Any, ...], str] = {}  # (family, cat, device, pid) -> its name
        new = tuple.__new__  # an event without NamedTuple's Python-level __new__
        for ev in events.device:
            cat = ev.cat
            args = ev.args or NO_ARGS
            corr, nbytes = args.correlation, args.bytes
            start = _ns(ev.ts)
            end = start + _ns(ev.dur)
            name = str(ev.name)
            call = calls.get(corr) if corr.__class__ in ID_TYPES else None
            step = steps.at(call[0]) if call is not None else None
            if step is None:
                step = steps.at(start)
            if call is not None:
                launched.add(corr)
            kind = kind_of.get((cat, name))
            if kind is None:
                kind = kind_of[(cat, name)] = (
                    MEMSET if cat in MEMSET_CATS else
                    copy_kind(name) if cat in MEMCPY_CATS else
                    classify_kernel(name))
            family = call[4] if call is not None else None
            device = seen.get((family, cat, args.device, ev.pid))
            if device is None:
                device = names.name(ev, family)
                if args.device.__class__ in ID_TYPES:
                    seen[(family, cat, args.device, ev.pid)] = device
            stream = args.stream
            stream = str(stream) if stream != "" and stream is not None else str(ev.tid)
            out.devices.append(new(DeviceEvent, (
                start, end, device, stream, kind, name,
                int(nbytes) if isinstance(nbytes, (int, float)) else -1,
                call[0] if call else -1, call[1] if call else -1, step)))
            if work is not None:
                work.add(corr, device, stream, end, name)
        if work is not None:
            work.finish()
            for ev in events.sync:
                out.syncs.append(_sync(ev, calls, names, steps, work))
        for corr, (start, end, name, tid, _) in calls.items():
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


class _Launched:
    """Device work by launch order (CUPTI's correlation ids count the calls of a
    process), per device and per stream: what was launched there before a call."""

    def __init__(self) -> None:
        self._by: dict[tuple[str, str], list[tuple[float, int, str, str]]] = {}

    def add(self, corr: Any, device: str, stream: str, end: int, name: str) -> None:
        if isinstance(corr, (int, float)):
            item = (corr, end, stream, name)
            self._by.setdefault((device, stream), []).append(item)
            self._by.setdefault((device, ""), []).append(item)

    def finish(self) -> None:
        # per list: sorted by correlation, each item then holding the latest end so far
        # on a device-wide list (what a context sync waits for)
        for (_, stream), items in self._by.items():
            items.sort()
            if stream == "":
                best = items[0] if items else None
                for i, item in enumerate(items):
                    if best is None or item[1] >= best[1]:
                        best = item
                    items[i] = (item[0], best[1], best[2], best[3])
        self._keys = {key: [item[0] for item in items] for key, items in self._by.items()}

    def before(self, device: str, stream: str, corr: Any) -> Optional[tuple[int, str, str]]:
        """(end, stream, name) of the work last launched on ``stream`` of ``device`` (any
        stream: "", then the one ending last) by a call before ``corr``; None if none."""
        keys = self._keys.get((device, stream))
        if not keys or not isinstance(corr, (int, float)):
            return None
        i = bisect_right(keys, corr - 0.5) - 1
        if i < 0:
            return None
        _, end, on, name = self._by[(device, stream)][i]
        return end, on, name


_WAITS_ON_EVENT = ("Event Sync", "Stream Wait Event")


def _sync(ev: TraceEvent, calls: dict[Any, tuple[int, int, str, Any, str]],
          names: DeviceNames, steps: "_Steps", work: _Launched) -> DeviceSync:
    """A ``cuda_sync`` event as a DeviceSync, linked to what it waited for: for a wait on a
    CUDA event, the work launched on the recording stream (``wait_on_stream``; any stream
    when unknown) before the call that recorded it
    (``wait_on_cuda_event_record_corr_id``); for a stream sync, the work launched on its
    stream before it; for a context sync, the work launched before it that ended last."""
    args = ev.args or NO_ARGS
    start = _ns(ev.ts)
    end = start + _ns(ev.dur)
    corr = event_id(args.correlation)
    recorded = event_id(args.wait_on_cuda_event_record_corr_id)
    call = calls.get(corr)
    device = names.name(ev, call[4] if call is not None else None)
    stream = stream_of(ev)
    step = steps.at(call[0]) if call is not None else None
    if step is None:
        step = steps.at(start)
    name = str(ev.name)
    waited, record = None, None
    if name in _WAITS_ON_EVENT:
        on = args.wait_on_stream
        on = "" if event_id(on) is None or on == -1 or on == "-1" else str(on)
        record = calls.get(recorded)
        if record is not None:
            waited = work.before(device, on, recorded)
        elif on:
            waited = work.before(device, on, corr)
    elif name == "Stream Sync":
        waited = work.before(device, stream, corr)
    else:  # Context Sync: every stream of the device
        waited = work.before(device, "", corr)
    return DeviceSync(start, end, device, stream, name, step,
                      waited_stream=waited[1] if waited else "",
                      waited_name=waited[2] if waited else "",
                      waited_end=waited[0] if waited else -1,
                      record=record[0] if record else -1,
                      record_end=record[1] if record else -1,
                      launch=call[0] if call is not None else -1)


def _host_kind(cat: Any, name: str) -> Optional[str]:
    """The kind of a host event (None: not a kind of work, e.g. a scope)."""
    if cat == "xpu_sync":
        return SYNC
    if cat == "collective_comm":
        return HOST_COMMUNICATION
    if _INPUT.search(name):
        return INPUT
    if _SYNC.match(name):
        return SYNC
    if _HOST_COLLECTIVE.match(name):
        return HOST_COMMUNICATION
    if cat in ("user_annotation", "python_function"):
        return None  # scopes (record_function, ProfilerStep) cover ops, not work
    return HOST_OPS
