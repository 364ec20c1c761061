"""PyTorch profiler traces -> Intervals (device events, launches, syncs, input, steps).

At load time :func:`keep_events` only picks the events a step breakdown reads
(references, no copies); :class:`TorchIntervals` turns them into intervals
when a command first asks. A device event belongs to the step of the runtime
call its ``correlation`` id names (HTA's rule), else to the step its start
falls in.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Any, Optional, Sequence

from ..model.intervals import (HAS_BYTES, HAS_DEVICE, HAS_HOST_OPS, HAS_INPUT, HAS_LAUNCH,
                               HAS_MARKERS, HAS_SYNC, HOST_COMMUNICATION, HOST_OPS, INPUT,
                               LAUNCH, MEMSET, SYNC, DeviceEvent, HostEvent, Intervals,
                               StepMark, classify_kernel, copy_kind)

_DEVICE_CATS = frozenset(("kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"))
_RUNTIME_CATS = frozenset(("cuda_runtime", "cuda_driver", "Runtime", "Driver"))
_HOST_CATS = frozenset(("cpu_op", "operator", "user_annotation"))
_STEP = re.compile(r"ProfilerStep#(\d+)")
_INPUT = re.compile(r"DataLoader.*__next__|dataloader\.py\(\d+\): __next__")
_SYNC = re.compile(r"(cuda|cu|hip)(Device|Stream|Event|Ctx)Synchronize|cudaMemcpy$|cuMemcpy[DH]toH?D?$"
                   r"|aten::_local_scalar_dense$")
_HOST_COLLECTIVE = re.compile(r"(gloo|c10d)[:]+|nccl:")


def keep_events(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The complete events of one trace that :class:`TorchIntervals` reads."""
    kept = []
    for ev in events:
        if ev.get("ph") != "X":
            continue
        cat = ev.get("cat")
        if cat in _DEVICE_CATS or cat in _RUNTIME_CATS or cat in _HOST_CATS:
            kept.append(ev)
        elif cat == "python_function" and "__next__" in str(ev.get("name", "")):
            kept.append(ev)
    return kept


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

    def __init__(self, files: Sequence[list[dict[str, Any]]]) -> None:
        self.files = list(files)

    def __call__(self) -> Intervals:
        out = Intervals(has=frozenset((HAS_DEVICE, HAS_LAUNCH, HAS_BYTES, HAS_SYNC, HAS_INPUT,
                                       HAS_HOST_OPS, HAS_MARKERS)),
                        origin="PyTorch trace events")
        for index, events in enumerate(self.files):
            self._add_file(out, index, events)
        out.devices.sort()
        out.host.sort()
        return out

    def _add_file(self, out: Intervals, index: int, events: list[dict[str, Any]]) -> None:
        marks = []
        calls: dict[Any, tuple[int, int, str, Any]] = {}
        for ev in events:
            cat = ev.get("cat")
            if cat in _RUNTIME_CATS:
                corr = (ev.get("args") or {}).get("correlation")
                start = _ns(ev.get("ts"))
                calls[corr] = (start, start + _ns(ev.get("dur")), str(ev.get("name", "")),
                               ev.get("tid"))
            elif cat == "user_annotation":
                m = _STEP.fullmatch(str(ev.get("name", "")))
                if m:
                    start = _ns(ev.get("ts"))
                    marks.append(StepMark(int(m.group(1)), start, start + _ns(ev.get("dur"))))
        if not marks:
            times = [(_ns(e.get("ts")), _ns(e.get("ts")) + _ns(e.get("dur"))) for e in events]
            lo = min((t[0] for t in times), default=0)
            hi = max((t[1] for t in times), default=0)
            if hi > lo:
                marks.append(StepMark(index, lo, hi))
        steps = _Steps(marks)
        out.marks.extend(marks)
        launched = set()
        for ev in events:
            cat = ev.get("cat")
            if cat not in _DEVICE_CATS:
                continue
            args = ev.get("args") or {}
            start = _ns(ev.get("ts"))
            end = start + _ns(ev.get("dur"))
            name = str(ev.get("name", ""))
            corr = args.get("correlation")
            call = calls.get(corr)
            step = steps.at(call[0]) if call is not None else None
            if step is None:
                step = steps.at(start)
            if call is not None:
                launched.add(corr)
            kind = (MEMSET if cat in ("gpu_memset", "Memset") else
                    copy_kind(name) if cat in ("gpu_memcpy", "Memcpy") else
                    classify_kernel(name))
            nbytes = args.get("bytes")
            out.devices.append(DeviceEvent(
                start, end, "gpu:%s" % args.get("device", 0), str(args.get("stream", "")),
                kind, name, int(nbytes) if isinstance(nbytes, (int, float)) else -1,
                call[0] if call else -1, call[1] if call else -1, step))
        for corr, (start, end, name, tid) in calls.items():
            if _SYNC.match(name):
                out.host.append(HostEvent(start, end, SYNC, name, str(tid)))
            elif corr in launched:
                out.host.append(HostEvent(start, end, LAUNCH, name, str(tid)))
        kinds: dict[tuple[Any, Any], Optional[str]] = {}
        host = out.host
        for ev in events:
            cat = ev.get("cat")
            if cat in _DEVICE_CATS or cat in _RUNTIME_CATS:
                continue
            name = ev.get("name", "")
            key = (cat, name)
            kind = kinds.get(key, "")
            if kind == "":
                kind = kinds[key] = _host_kind(cat, str(name))
            if kind is None:
                continue
            start = int(float(ev.get("ts", 0)) * 1000 + 0.5)
            host.append(HostEvent(start, start + int(float(ev.get("dur", 0)) * 1000 + 0.5),
                                  kind, name, str(ev.get("tid"))))


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
