"""TF1 RunMetadata files -> Intervals, read again when first asked (file i = step i).

Each file is one step; its marker spans all of its records. Records on
``.../stream:N`` devices are device events (``stream:all`` repeats them and is
skipped), on ``.../memcpy`` copies (direction from the label). Records on a
canonical device (``/device:CPU:0``, ``/device:GPU:0``) are host ops; for a
GPU the record of the same node is the call that launched its device events.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from ..model.intervals import (HAS_DEVICE, HAS_HOST_OPS, HAS_LAUNCH, HOST_OPS, LAUNCH,
                               DeviceEvent, HostEvent, Intervals, StepMark, classify_kernel,
                               copy_kind, short_device)
from .graph import read_run_metadata

_STREAM = re.compile(r"/stream:(\d+)$", re.I)
_MEMCPY = re.compile(r"/memcpy$", re.I)
_CANONICAL_GPU = re.compile(r"(device:)?gpu:\d+$", re.I)


class RunMetaIntervals:
    """Builds the Intervals of RunMetadata files (file i is step ``step_ids[i]``)."""

    def __init__(self, paths: Sequence[str], step_ids: Optional[Sequence[int]] = None) -> None:
        self.paths = tuple(paths)
        self.step_ids = tuple(step_ids) if step_ids else tuple(range(len(paths)))

    def __call__(self) -> Intervals:
        devices: list[DeviceEvent] = []
        host: list[HostEvent] = []
        marks: list[StepMark] = []
        for step, path in zip(self.step_ids, self.paths):
            rm = read_run_metadata(path)
            launches: dict[str, tuple[int, int]] = {}
            pending = []
            lo, hi = 1 << 62, -(1 << 62)
            for dev in rm.step_stats.dev_stats:
                name = dev.device
                stream = _STREAM.search(name)
                copy = _MEMCPY.search(name)
                if "stream:all" in name.lower():
                    continue
                for ns in dev.node_stats:
                    a = ns.all_start_micros * 1000
                    b = a + max(ns.op_end_rel_micros, 0) * 1000
                    if ns.all_start_micros <= 0:
                        continue
                    lo, hi = min(lo, a), max(hi, b)
                    node = ns.node_name.split(":", 1)[0]
                    if stream or copy:
                        label = ns.timeline_label or ns.node_name
                        kind = copy_kind(label) if copy else classify_kernel(
                            ns.node_name.split(":", 1)[-1])
                        pending.append((a, b, short_device(name),
                                        stream.group(1) if stream else "memcpy", kind,
                                        ns.node_name, node))
                    else:
                        host.append(HostEvent(a, b, HOST_OPS, node, name))
                        if _CANONICAL_GPU.search(name):
                            launches.setdefault(node, (a, b))
            for a, b, device, stream_id, kind, label, node in pending:
                call = launches.get(node)
                devices.append(DeviceEvent(a, b, device, stream_id, kind, label, -1,
                                           call[0] if call else -1, call[1] if call else -1,
                                           step))
            for node, (a, b) in launches.items():
                host.append(HostEvent(a, b, LAUNCH, node))
            if hi > lo:
                marks.append(StepMark(step, lo, hi))
        has = {HAS_HOST_OPS}
        if devices:
            has.add(HAS_DEVICE)
        if any(d.launch >= 0 for d in devices):
            has.add(HAS_LAUNCH)
        devices.sort()
        host.sort()
        return Intervals(devices, host, marks, frozenset(has), "RunMetadata step stats")
