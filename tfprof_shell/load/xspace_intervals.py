"""XSpace files (``.xplane.pb``) -> Intervals, read again when first asked.

Device events are the events of every non-derived line of each
``/device:GPU:N`` plane (kernels, ``Memcpy*`` with their ``memcpy_details``
size, ``Memset``); a host event with the same ``correlation_id`` is the call
that launched it, and fixes its step. Host events with a ``step_num`` stat
mark steps (without any, the whole profile is step 0); ``Iterator::Root`` and
``IteratorGetNext`` events are input; ``*Synchronize*`` and
``BlockHostUntilDone`` are sync waits; in a profile without GPUs, collective ops
(TensorFlow's ``Collective*`` kernels, XLA's ``all-reduce`` and kin) are host
communication, since they can only run on the CPU there (with GPUs the host events
only launch them); any other host event (not a Python-tracer frame) is host ops.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Any, Optional, Sequence

from ..errors import LoadError
from ..model.intervals import (HAS_BYTES, HAS_DEVICE, HAS_HOST_COMM, HAS_HOST_OPS, HAS_INPUT,
                               HAS_LAUNCH, HAS_MARKERS, HAS_SYNC, HOST_COMMUNICATION,
                               HOST_OPS, INPUT, LAUNCH, SYNC,
                               DeviceEvent, HostEvent, Intervals, StepMark, classify_kernel,
                               copy_kind)
from ..proto import xplane_pb2
from .files import parse_binary, read_unzipped
from .xspace import DERIVED_LINES, HOST_PLANES, time_origin

_GPU_PLANE = re.compile(r"/device:GPU:(\d+)")
_SIZE = re.compile(r"(?:^|\s)(?:size|num_bytes):(\d+)")
_INPUT = re.compile(r"Iterator::Root$|IteratorGetNext")
_SYNC = re.compile(r".*Synchronize|.*BlockHostUntilDone")
_COLLECTIVE = re.compile(r"Collective(Reduce|Gather|Bcast|AllToAll|Permute)|(^|\W)(all-reduce"
                         r"|all-gather|reduce-scatter|all-to-all|collective-permute"
                         r"|collective-broadcast)", re.I)


class _Plane:
    """Stat names of one plane and the value of a named stat of an event."""

    def __init__(self, plane: Any) -> None:
        self.plane = plane
        self.names = {k: v.name for k, v in plane.stat_metadata.items()}
        self.ids = {v: k for k, v in self.names.items()}

    def stat(self, stats: Any, name: str) -> Any:
        wanted = self.ids.get(name)
        if wanted is None:
            return None
        for st in stats:
            if st.metadata_id == wanted:
                kind = st.WhichOneof("value")
                if kind == "ref_value":
                    return self.names.get(st.ref_value, "")
                return getattr(st, kind) if kind else None
        return None


class XSpaceIntervals:
    """Builds the Intervals of ``.xplane.pb`` files (one per host) from the files."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = tuple(paths)

    def __call__(self) -> Intervals:
        devices: list[DeviceEvent] = []
        host: list[HostEvent] = []
        marks: dict[int, list[int]] = {}
        calls: dict[tuple[int, Any], tuple[int, int]] = {}
        pending: list[tuple[int, int, str, str, str, str, int, Any]] = []
        gpus = False
        for i, path in enumerate(self.paths):
            space = parse_binary(xplane_pb2.XSpace, read_unzipped(path, "profile_path"))
            if space is None:
                raise LoadError("--profile_path %s: no longer an XSpace file" % path)
            epoch, _ = time_origin(space)
            prefix = "host%d/" % i if len(self.paths) > 1 else ""
            for plane in space.planes:
                gpu = _GPU_PLANE.search(plane.name)
                if gpu:
                    gpus = True
                    _read_device(_Plane(plane), epoch, prefix + "gpu:" + gpu.group(1), i,
                                 pending)
                elif plane.name in HOST_PLANES:
                    _read_host(_Plane(plane), epoch, i, host, marks, calls)
        step_marks = [StepMark(s, a, b) for s, (a, b) in marks.items()]
        if not step_marks:
            times = [e[0] for e in pending] + [e.start for e in host]
            ends = [e[1] for e in pending] + [e.end for e in host]
            if times:
                step_marks = [StepMark(0, min(times), max(ends))]
        step_marks.sort(key=lambda m: m.start)
        starts = [m.start for m in step_marks]

        def step_at(t: int) -> Optional[int]:
            k = bisect_right(starts, t) - 1
            return step_marks[k].step if k >= 0 and t < step_marks[k].end else None

        for start, end, device, stream, kind, name, nbytes, key in pending:
            call = calls.get(key) if key is not None else None
            step = step_at(call[0]) if call else None
            if step is None:
                step = step_at(start)
            devices.append(DeviceEvent(start, end, device, stream, kind, name, nbytes,
                                       call[0] if call else -1, call[1] if call else -1, step))
        launched = {key for *_, key in pending if key is not None}
        for key, (a, b) in calls.items():
            if key in launched:
                host.append(HostEvent(a, b, LAUNCH, "launch"))
        devices.sort()
        host.sort()
        has = {HAS_HOST_OPS, HAS_SYNC, HAS_INPUT}
        if devices:
            has |= {HAS_DEVICE, HAS_BYTES}
        elif not gpus:  # CPU only: collectives ran on the host
            host = [e._replace(kind=HOST_COMMUNICATION)
                    if e.kind == HOST_OPS and _COLLECTIVE.search(e.name) else e for e in host]
            has.add(HAS_HOST_COMM)
        if any(d.launch >= 0 for d in devices):
            has.add(HAS_LAUNCH)
        if marks:
            has.add(HAS_MARKERS)
        return Intervals(devices, host, step_marks, frozenset(has), "XSpace events")


def _read_device(p: _Plane, epoch: int, device: str, host: int,
                 out: list[tuple[int, int, str, str, str, str, int, Any]]) -> None:
    md = p.plane.event_metadata
    for line in p.plane.lines:
        if line.name in DERIVED_LINES:
            continue
        base = (epoch + line.timestamp_ns) * 1000
        stream = line.name or str(line.id)
        for ev in line.events:
            start = (base + ev.offset_ps) // 1000
            end = (base + ev.offset_ps + ev.duration_ps) // 1000
            name = md[ev.metadata_id].name if ev.metadata_id in md else ""
            kind = classify_kernel(name)
            nbytes = -1
            if name.startswith(("Memcpy", "Memset")):
                field = "memcpy_details" if name.startswith("Memcpy") else "Memset_details"
                details = str(p.stat(ev.stats, field) or "")
                m = _SIZE.search(details)
                nbytes = int(m.group(1)) if m else -1
                if name.startswith("Memcpy"):
                    kind = copy_kind(name + " " + details)
            corr = p.stat(ev.stats, "correlation_id")
            out.append((start, end, device, stream, kind, name, nbytes,
                        (host, corr) if corr is not None else None))


def _read_host(p: _Plane, epoch: int, host: int, events: list[HostEvent],
               marks: dict[int, list[int]], calls: dict[tuple[int, Any], tuple[int, int]]
               ) -> None:
    md = p.plane.event_metadata
    step_id = p.ids.get("step_num")
    corr_id = p.ids.get("correlation_id")
    for line in p.plane.lines:
        if line.name in DERIVED_LINES:
            continue
        base = (epoch + line.timestamp_ns) * 1000
        thread = line.name
        for ev in line.events:
            meta = md.get(ev.metadata_id)
            name = meta.name if meta is not None else ""
            if name.startswith("$"):
                continue  # a Python-tracer frame: covers everything below it
            start = (base + ev.offset_ps) // 1000
            end = (base + ev.offset_ps + ev.duration_ps) // 1000
            ids = {st.metadata_id for st in ev.stats}
            if step_id is not None and step_id in ids:
                step = p.stat(ev.stats, "step_num")
                span = marks.setdefault(int(step or 0), [start, end])
                span[0], span[1] = min(span[0], start), max(span[1], end)
                continue
            if corr_id is not None and corr_id in ids:
                calls[(host, p.stat(ev.stats, "correlation_id"))] = (start, end)
                continue
            if end <= start:
                continue
            if _INPUT.search(name):
                kind = INPUT
            elif _SYNC.match(name):
                kind = SYNC
            else:
                kind = HOST_OPS
            events.append(HostEvent(start, end, kind, name, thread))
