"""The `steps` command's output: per-step tables as text, or a JSON document.

Times are whole microseconds; each device row's parts (compute, comm, memory,
other, idle) add up to its span and each host row's parts to its wall time,
exactly (see views.steps.micros_parts). ``--`` marks what the format does not
record.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ..model.intervals import HAS_DEVICE, HAS_DEVICE_SYNC
from ..views.step_values import (device_part_keys, device_values, host_values, memory_values,
                                 sync_values, us)
from ..views.steps import HOST_PARTS, DeviceBreakdown, StepBreakdown, StepsResult, average

SCHEMA_VERSION = 1
NA = "--"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> list[str]:
    """Aligned columns: the first ``left`` left-aligned, the rest right-aligned."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    out = []
    for r in [headers, *rows]:
        cells = [str(c).ljust(w) if i < left else str(c).rjust(w)
                 for i, (c, w) in enumerate(zip(r, widths))]
        out.append("  ".join(cells).rstrip())
    return out


def _device_doc(d: DeviceBreakdown, has: frozenset[str], origin: int) -> dict[str, Any]:
    doc: dict[str, Any] = dict(device_values(d, has), memory_kinds=memory_values(d, has))
    if HAS_DEVICE_SYNC in has:
        doc["syncs"] = sync_values(d, origin)
    return doc


def _step_doc(s: StepBreakdown, has: frozenset[str]) -> dict[str, Any]:
    return {"step": s.step, "wall": us(s.wall),
            "gap_before": None if s.gap_before is None else us(s.gap_before),
            "devices": {name: _device_doc(d, has, s.start) for name, d in s.devices.items()},
            "host": host_values(s.host, has)}


def steps_document(result: StepsResult) -> dict[str, Any]:
    """The JSON document of one profile's steps (``"mode": "steps"``)."""
    doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "mode": "steps",
                           "unit": "microseconds", "origin": result.origin,
                           "records": sorted(result.has), "devices": result.devices,
                           "device_parts": device_part_keys(result.has),
                           "host_parts": list(HOST_PARTS),
                           "steps": [_step_doc(s, result.has) for s in result.steps]}
    if result.steps:
        avg = _step_doc(average(result.steps), result.has)
        del avg["step"]
        doc["average"] = avg
    return doc


def _cell(value: Optional[int]) -> str:
    return NA if value is None else "%d" % value


def _pct(part: Optional[int], whole: int) -> str:
    if part is None or whole <= 0:
        return NA
    return "%.1f%%" % (100.0 * part / whole)


def _label(s: StepBreakdown, is_avg: bool) -> str:
    return "avg" if is_avg else "%d" % s.step


DEVICE_HEADERS = ("step", "device", "span", "busy", "compute", "comm", "memory", "other",
                  "idle", "host_wait", "queued", "idle%", "comm_all", "overlap")
HOST_HEADERS = ("step", "wall", "sync", "comm", "input", "launch", "ops", "rest",
                "launches", "launch_us", "delay_us", "gap_before")


def steps_text(result: StepsResult, title: str) -> str:
    """The text tables of one profile: devices, copies, host."""
    has = result.has
    syncs = HAS_DEVICE_SYNC in has
    rows_of = [(s, False) for s in result.steps]
    if len(result.steps) > 1:
        rows_of.append((average(result.steps), True))
    lines = ["%s: %d step%s (%s); times in us." % (title, len(result.steps),
                                                    "" if len(result.steps) == 1 else "s",
                                                    result.origin)]
    dev_rows, mem_rows, outside = [], [], []
    for s, is_avg in rows_of:
        for name, d in s.devices.items():
            v = device_values(d, has)
            label = _label(s, is_avg)
            if not is_avg and v["launched_outside"]:
                label += OUTSIDE_MARK
                outside.append((s.step, name, v))
            row = [label, name, _cell(v["span"]), _cell(v["busy"]), _cell(v["compute"]),
                   _cell(v["communication_exposed"]), _cell(v["memory_exposed"]),
                   _cell(v["other"])]
            if syncs:
                row.append(_cell(v["sync"]))
            row += [_cell(v["idle"]), _cell(v["idle_host_wait"]), _cell(v["idle_queued"]),
                    _pct(v["idle"], v["span"] or 0), _cell(v["communication"]),
                    _cell(v["overlap"])]
            dev_rows.append(row)
            if is_avg or len(rows_of) == 1:
                for kind, m in memory_values(d, has).items():
                    mem_rows.append((name, kind, "%d" % m["count"], "%d" % m["time"],
                                     _cell(m["bytes"]),
                                     NA if m["gbps"] is None else "%.2f" % m["gbps"]))
    lines.append("")
    if dev_rows:
        lines.append("Device (span = compute + comm + memory + other + %sidle; comm and memory "
                     "outside compute; idle = host_wait + queued):" % ("sync + " if syncs else ""))
        headers = DEVICE_HEADERS if not syncs else (
            DEVICE_HEADERS[:8] + ("sync",) + DEVICE_HEADERS[8:])
        lines += table(headers, dev_rows, left=2)
        lines += [_outside_note(step, name, v) for step, name, v in outside]
    elif HAS_DEVICE not in has:
        lines.append("Device: none recorded (a CPU-only profile: see the host table).")
    else:
        lines.append("Device: no device events in these steps.")
    if mem_rows:
        lines += ["", "Copies and sets per step%s (time is their union):"
                  % ("" if len(rows_of) == 1 else ", average")]
        lines += table(("device", "kind", "count", "time", "bytes", "GB/s"), mem_rows, left=2)
    host_rows = []
    for s, is_avg in rows_of:
        v = host_values(s.host, has)
        gap = None if s.gap_before is None else us(s.gap_before)
        host_rows.append((_label(s, is_avg), _cell(v["wall"]), _cell(v["sync"]),
                          _cell(v["communication"]), _cell(v["input"]), _cell(v["launch"]),
                          _cell(v["ops"]), _cell(v["rest"]), _cell(v["launch_count"]),
                          _cell(v["launch_total"]), _cell(v["launch_delay_mean"]), _cell(gap)))
    lines += ["", "Host (wall = sync + comm + input + launch + ops + rest):"]
    lines += table(HOST_HEADERS, host_rows)
    return "\n".join(lines) + "\n"


#: Marks a step holding device events launched outside its marker (see _outside_note).
OUTSIDE_MARK = "+"


def _outside_note(step: int, device: str, v: dict[str, Optional[int]]) -> str:
    n = v["launched_outside"] or 0
    return ("%s step %d, %s: %d device event%s (%d us) launched before or outside the step's "
            "marker, or with no launch in the trace, count where %s ran; HTA counts %s in no "
            "step." % (OUTSIDE_MARK, step, device, n, "" if n == 1 else "s",
                       v["launched_outside_time"] or 0, "it" if n == 1 else "they",
                       "it" if n == 1 else "them"))
