"""XSpace files (``.xplane.pb``, TensorFlow 2 and JAX) -> TraceLanes.

Each line of a plane is a lane, named as the file names it: a host thread
(``python3``, ``tf_Compute/123``) in the group ``host`` (``host0``,
``host1``... with several files, as the intervals name them), a device stream (``Stream #14(Compute,
Memset)``) as ``gpu:0 stream 14 (Compute,Memset)`` in the group ``gpu:0``.
A host event and a device event with the same ``correlation_id`` are joined
by a flow. A kernel keeps its ``kernel_details`` (registers, shared memory,
grid, block, occupancy) and the op that ran it (``hlo_op``, ``name``). Times
are on the axis the intervals use (load/xspace_intervals.py).
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from ..errors import LoadError
from ..model.lanes import DEVICE, HOST, LanesBuilder, TraceLanes
from ..proto import xplane_pb2
from .files import parse_binary, read_unzipped
from .xspace import time_origin

_GPU_PLANE = re.compile(r"/device:([A-Z]+):(\d+)\Z")
_STREAM = re.compile(r"Stream #(\d+)\s*(.*)\Z")
_DETAIL = re.compile(r"(\w+):([\d.,]+)")
#: Stats of a device event shown in its details (ours: the stat's name).
_DEVICE_STATS = ("hlo_op", "name", "tf_op", "hlo_module", "theoretical_occupancy_pct",
                 "memcpy_details", "Memset_details")
#: kernel_details keys, renamed as the Chrome-trace lanes name them.
_DETAIL_NAMES = {"regs": "registers", "static_shared": "static_shared_memory",
                 "dynamic_shared": "dynamic_shared_memory", "grid": "grid", "block": "block",
                 "occ_pct": "occupancy_pct"}


def _value(st: Any, names: dict[int, str]) -> Any:
    kind = st.WhichOneof("value")
    if kind == "ref_value":
        return names.get(st.ref_value, "")
    return getattr(st, kind) if kind else None


def kernel_details(text: str) -> dict[str, Any]:
    """``regs:22 grid:512,1,1 ...`` as {"registers": 22, "grid": [512, 1, 1], ...}."""
    out: dict[str, Any] = {}
    for key, value in _DETAIL.findall(text):
        name = _DETAIL_NAMES.get(key)
        if name is None:
            continue
        parts = value.split(",")
        nums = [float(p) if "." in p else int(p) for p in parts if p]
        out[name] = nums if len(nums) > 1 else (nums[0] if nums else value)
    return out


def _meta_stats(meta: Any, names: dict[int, str], wanted: set[int],
                cache: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """The shown stats an event's metadata carries (read once per metadata)."""
    found = cache.get(meta.id)
    if found is None:
        found = cache[meta.id] = {}
        for st in meta.stats:
            if st.metadata_id in wanted:
                key, value = names[st.metadata_id], _value(st, names)
                if key == "kernel_details":
                    found.update(kernel_details(str(value)))
                else:
                    found[key] = value
    return found


def _device_lane(b: LanesBuilder, file_key: Any, device: str, line: Any,
                 order: tuple) -> int:
    m = _STREAM.match(line.name or "")
    if m:
        name = "%s stream %s" % (device, m.group(1)) + (" " + m.group(2) if m.group(2) else "")
        rank = (0, int(m.group(1)))
    else:
        name = "%s %s" % (device, line.display_name or line.name or "line %d" % line.id)
        rank = (1, 0)
    return b.lane((file_key, device, line.id), name, device, DEVICE, order + rank)


def add_xspace_file(b: LanesBuilder, path: str, file_index: int, files: int) -> None:
    """Add the lines of one XSpace file to ``b``."""
    space = parse_binary(xplane_pb2.XSpace, read_unzipped(path, "profile_path"))
    if space is None:
        raise LoadError("--profile_path %s: no longer an XSpace file" % path)
    epoch, _ = time_origin(space)
    host = "host%d" % file_index if files > 1 else "host"
    launches: dict[Any, int] = {}
    work: dict[Any, int] = {}
    for plane in space.planes:
        if not plane.lines:
            continue
        names = {k: v.name for k, v in plane.stat_metadata.items()}
        ids = {v: k for k, v in names.items()}
        corr_id = ids.get("correlation_id")
        md = plane.event_metadata
        gpu = _GPU_PLANE.search(plane.name)
        device = ("%s%s:%s" % ("" if files == 1 else host + "/", gpu.group(1).lower(),
                               gpu.group(2)) if gpu else None)
        wanted = {ids[n] for n in _DEVICE_STATS + ("kernel_details",) if n in ids}
        cache: dict[int, dict[str, Any]] = {}
        for line in plane.lines:
            if device is not None:
                lane = _device_lane(b, file_index, device, line,
                                    (0, file_index, int(gpu.group(2))))  # type: ignore[union-attr]
            else:
                group = host if plane.name in ("/host:CPU", "Host Threads") else \
                    "%s %s" % (host, plane.name)
                lane = b.lane((file_index, plane.name, line.id),
                              line.display_name or line.name or "line %d" % line.id, group,
                              HOST, (1, file_index, plane.name, line.id))
            base = (epoch + line.timestamp_ns) * 1000
            for ev in line.events:
                meta = md.get(ev.metadata_id)
                name = meta.name if meta is not None else ""
                start = (base + ev.offset_ps) // 1000
                end = (base + ev.offset_ps + ev.duration_ps) // 1000
                event = b.add(lane, start, end - start, name, "device" if device else "")
                if corr_id is None and not wanted:
                    continue
                corr = None
                shown: dict[str, Any] = {}
                for st in ev.stats:
                    sid = st.metadata_id
                    if sid == corr_id:
                        corr = _value(st, names)
                    elif device is not None and sid in wanted:
                        key = names[sid]
                        value = _value(st, names)
                        if key == "kernel_details":
                            shown.update(kernel_details(str(value)))
                        else:
                            shown[key] = value
                if device is not None and meta is not None and meta.stats:
                    for key, value in _meta_stats(meta, names, wanted, cache).items():
                        shown.setdefault(key, value)
                if shown:
                    b.out.args[event] = shown
                if corr is not None:
                    (work if device is not None else launches)[corr] = event
    for corr, event in work.items():
        launch = launches.get(corr)
        if launch is not None:
            b.flow(launch, event)


def xspace_lanes(paths: Sequence[str], origin: str) -> TraceLanes:
    """The lanes of XSpace files (one per host)."""
    b = LanesBuilder(origin)
    for i, path in enumerate(paths):
        add_xspace_file(b, path, i, len(paths))
    return b.finish()
