"""A step breakdown's figures in whole µs, None where the format cannot say.

Parts stay exact: a device's parts add up to its span and the host's to the
wall time (views.steps.micros_parts rounds them cumulatively).
"""

from __future__ import annotations

from typing import Any, Optional

from ..model.intervals import (HAS_BYTES, HAS_DEVICE_SYNC, HAS_HOST_COMM, HAS_INPUT,
                               HAS_LAUNCH, HAS_SYNC, MEMORY_KINDS)
from .steps import (DEVICE_PARTS, HOST_PARTS, DeviceBreakdown, HostBreakdown, StepBreakdown,
                    device_parts,
                    micros_parts)

#: Host parts and the fact a format must record for the part to be known.
_HOST_NEEDS = {"sync": HAS_SYNC, "input": HAS_INPUT, "launch": HAS_LAUNCH,
               "communication": HAS_HOST_COMM}


#: A steps document's key for a part of views.steps.DEVICE_PARTS, where it differs.
_DOC_KEY = {"other_exposed": "other", "sync_exposed": "sync"}


def device_part_keys(has: frozenset[str]) -> list[str]:
    """The keys of a steps document's device figures that add up to its ``span``, in
    the order they are taken (idle whole where the format records no launches; sync
    only where it records device-side syncs)."""
    keys = [_DOC_KEY.get(p, p) for p in DEVICE_PARTS]
    if HAS_DEVICE_SYNC not in has:
        keys.remove("sync")
    if HAS_LAUNCH not in has:
        keys = [k for k in keys if not k.startswith("idle_")] + ["idle"]
    return keys


def us(ns: int) -> int:
    """ns -> whole µs, rounded half up."""
    return (ns + 500) // 1000


def device_values(d: DeviceBreakdown, has: frozenset[str]) -> dict[str, Optional[int]]:
    """A device's figures in µs (None where unknown); the parts add up to ``span``
    (``busy`` + ``sync`` + ``idle``)."""
    parts = micros_parts(device_parts(d))
    span = sum(parts.values())
    idle = parts.get("idle", (parts.get("idle_host_wait") or 0) + (parts.get("idle_queued") or 0))
    sync = parts["sync_exposed"]
    out: dict[str, Optional[int]] = {
        "span": span, "busy": span - idle - sync, "compute": parts["compute"],
        "communication": us(d.communication), "communication_exposed":
        parts["communication_exposed"], "overlap": us(d.overlap), "memory": us(d.memory),
        "memory_exposed": parts["memory_exposed"], "other": parts["other_exposed"],
        "sync": sync, "sync_all": us(d.sync), "sync_count": d.sync_count,
        "idle": idle, "idle_host_wait": parts.get("idle_host_wait"),
        "idle_queued": parts.get("idle_queued"), "events": d.events,
        "kernels": d.kernel_count, "short_kernels": d.short_kernels,
        "launched_outside": d.outside_count, "launched_outside_time": us(d.outside_time),
    }
    if HAS_LAUNCH not in has:
        out["idle_host_wait"] = out["idle_queued"] = None
        out["launched_outside"] = out["launched_outside_time"] = None
    if HAS_DEVICE_SYNC not in has:
        out["sync"] = out["sync_all"] = out["sync_count"] = None
    return out


def sync_values(d: DeviceBreakdown, origin: int) -> list[dict[str, Any]]:
    """A device's syncs in one step: kind, stream, start and end (µs from ``origin``, the
    step's start), and what each waited for where the trace says (``null`` if not): the
    stream, the device event there it waited on and that event's end, and when the host
    recorded the CUDA event waited on."""
    def at(ns: int) -> Optional[int]:
        return None if ns < 0 else us(ns - origin)
    return [{"kind": y.name, "stream": y.stream, "start": at(y.start), "end": at(y.end),
             "waited_stream": y.waited_stream or None, "waited_for": y.waited_name or None,
             "waited_end": at(y.waited_end), "event_recorded": at(y.record)}
            for y in sorted(d.syncs)]


def host_values(h: HostBreakdown, has: frozenset[str]) -> dict[str, Optional[int]]:
    """The host side in µs: wall, its parts (adding up to it), launch statistics."""
    parts = micros_parts([(p, h.parts.get(p, 0)) for p in HOST_PARTS])
    out: dict[str, Optional[int]] = {"wall": sum(parts.values())}
    for part, value in parts.items():
        need = _HOST_NEEDS.get(part)
        out[part] = value if need is None or need in has or value else None
    known = HAS_LAUNCH in has
    out["launch_count"] = h.launch_count if known else None
    out["launch_total"] = us(h.launch_total) if known else None
    out["launch_delay_mean"] = (us(h.launch_delay_total // h.launched)
                                if known and h.launched else None)
    return out


def memory_values(d: DeviceBreakdown, has: frozenset[str]) -> dict[str, dict[str, Any]]:
    """Per copy kind: count, time (µs, union), bytes and GB/s (None if unknown)."""
    out = {}
    for kind in MEMORY_KINDS:
        m = d.memory_kinds.get(kind)
        if m is None:
            continue
        known = HAS_BYTES in has and m.nbytes > 0
        out[kind] = {"count": m.count, "time": us(m.time),
                     "bytes": m.nbytes if known else None,
                     "gbps": round(m.nbytes / m.time, 3) if known and m.time else None}
    return out


#: What a straggler may have waited on: (label, where, field), device fields
#: from its busiest device.
_WAITS = (("device idle, host wait", "device", "idle_host_wait"),
          ("device idle, queued", "device", "idle_queued"),
          ("device idle", "device", "idle"),
          ("device sync", "device", "sync"),
          ("communication", "device", "communication_exposed"),
          ("copies", "device", "memory_exposed"),
          ("input", "host", "input"),
          ("sync", "host", "sync"),
          ("host communication", "host", "communication"))


def main_device(s: StepBreakdown, has: frozenset[str]) -> Optional[dict[str, Optional[int]]]:
    """The µs figures of the step's busiest device (None without devices)."""
    if not s.devices:
        return None
    name = max(s.devices, key=lambda n: s.devices[n].busy)
    return device_values(s.devices[name], has)


def waited_on(s: StepBreakdown, has: frozenset[str]) -> tuple[str, int]:
    """The largest non-compute category of a step, and its µs; if none took any time,
    what the step did instead ("compute", or "host ops" without a device) and 0."""
    dev = main_device(s, has)
    host = host_values(s.host, has)
    best, value = "compute" if dev is not None else "host ops", 0
    for label, where, key in _WAITS:
        source = dev if where == "device" else host
        if source is None:
            continue
        v = source.get(key)
        if key == "idle" and source.get("idle_host_wait") is not None:
            continue  # split already
        if v is not None and v > value:
            best, value = label, v
    return best, value
