"""XSpace files (TensorFlow 2, JAX) -> the inputs of their critical path, one per host.

Read again when first asked. Each host line is a thread: its events (not the
Python tracer's ``$`` frames, not zero-length ones) nest into call stacks;
events with a ``step_num`` stat are step markers, events with a
``correlation_id`` are runtime calls that launch the device events carrying
the same id (several under CUDA graphs and command buffers), ``*Synchronize*``
and ``BlockHostUntil*`` calls block until the device is done; the rest are
host ops. Each non-derived line of a ``/device:GPU:N`` plane is a stream. The
profile records no waits between streams and no device-side sync records, so
each blocking call is joined to the last device event of each stream that
ended before the call returned (a synthetic ``Context Sync``): the path is
approximate.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from ..errors import LoadError
from ..model.path_input import (ANNOTATION, DEVICE, OP, RUNTIME, SYNC, XPLANE, PathEvent,
                                PathInput)
from ..proto import xplane_pb2
from .files import parse_binary, read_unzipped
from .xspace import DERIVED_LINES, HOST_PLANES, time_origin

_GPU_PLANE = re.compile(r"/device:GPU:(\d+)")
_SYNC = re.compile(r".*Synchronize|.*BlockHostUntil|.*BlockUntilReady")


class XSpacePathSource:
    """The path inputs of ``.xplane.pb`` files (one per host), from the files."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = tuple(paths)

    def __call__(self) -> list[PathInput]:
        out = []
        for i, path in enumerate(self.paths):
            space = parse_binary(xplane_pb2.XSpace, read_unzipped(path, "profile_path"))
            if space is None:
                raise LoadError("--profile_path %s: no longer an XSpace file" % path)
            out.append(_input(space, i))
        return out


def _stat_ids(plane: Any, *names: str) -> list[Any]:
    ids = {v.name: k for k, v in plane.stat_metadata.items()}
    return [ids.get(n) for n in names]


def _value(stat: Any) -> Any:
    kind = stat.WhichOneof("value")
    return getattr(stat, kind) if kind else None


def _input(space: Any, host: int) -> PathInput:
    epoch, _ = time_origin(space)
    events: list[PathEvent] = []
    steps: dict[int, int] = {}
    launches: set[str] = set()
    blocking: set[str] = set()
    for plane in space.planes:
        gpu = _GPU_PLANE.search(plane.name)
        if not gpu and plane.name not in HOST_PLANES:
            continue
        md = plane.event_metadata
        step_id, corr_id = _stat_ids(plane, "step_num", "correlation_id")
        for line in plane.lines:
            if line.name in DERIVED_LINES:
                continue
            base = (epoch + line.timestamp_ns) * 1000
            thread = line.name or str(line.id)
            for ev in line.events:
                meta = md.get(ev.metadata_id)
                name = meta.name if meta is not None else ""
                start = (base + ev.offset_ps) // 1000
                end = (base + ev.offset_ps + ev.duration_ps) // 1000
                corr = step = None
                for st in ev.stats:
                    if st.metadata_id == corr_id and corr_id is not None:
                        corr = (host, _value(st))
                    elif st.metadata_id == step_id and step_id is not None:
                        step = _value(st)
                ts, dur = start / 1000.0, (end - start) / 1000.0
                if gpu:
                    events.append((start, end, DEVICE, name, "device", plane.name, thread, ts,
                                   dur, corr, thread, int(gpu.group(1)), None))
                    continue
                if name.startswith("$") or end <= start:
                    continue  # a Python-tracer frame; an instant
                if step is not None:
                    steps[len(events)] = int(step)
                    kind = ANNOTATION
                elif corr is not None:
                    kind = RUNTIME
                    launches.add(name)
                elif _SYNC.match(name):
                    kind = RUNTIME
                    blocking.add(name)
                    corr = (host, "sync", len(events))
                else:
                    kind = OP
                events.append((start, end, kind, name, "host", plane.name, thread, ts, dur,
                               corr, None, None, None))
    # Each blocking call waits for every stream: a Context Sync record joins them.
    for e in list(events):
        if e[2] == RUNTIME and e[3] in blocking:
            events.append((e[0], e[1], SYNC, "Context Sync", "sync", e[5], e[6], e[7], e[8],
                           e[9], -1, None, None))
    return PathInput(events, XPLANE, "XSpace events", frozenset(launches), frozenset(blocking),
                     True, steps, None if steps else host)
