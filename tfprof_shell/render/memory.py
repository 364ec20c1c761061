"""The `memory` command's output: per device a sparkline, the peak, the live set at
it, the steps and growth, as text; or the JSON document a chart can be drawn from.

The JSON document (``"mode": "memory"``, schema_version 1; bytes are integers,
times nanoseconds after ``start``):

* ``devices``: one object per device: ``name``, ``counted`` (the level is the
  allocator's counter, else the bytes of the blocks the profile saw),
  ``capacity`` (null unknown), ``peak`` (``bytes``, ``time``, ``times_reached``,
  ``step``, ``reserved``, ``fragmentation``), ``timeline`` (``time``,
  ``allocated``, ``reserved`` arrays: at most 2000 points, each stretch's
  highest), ``live`` (the live set at the peak by ``by``: ``key``, ``bytes``,
  ``count``, ``requested``, ``steps``, ``age``; plus ``unexplained``), ``steps``
  (``step``, ``peak``, ``end``), ``growth`` (``slope``: bytes per step, and
  ``suspects``: ``key``, ``steps``, ``judged``, ``bytes``, ``per_step``);
* ``steps``: each step's ``start`` and ``end``, for boundaries on a chart;
* ``records``: what the format records (see model.memory's HAS_* names);
  ``notes``: what it leaves out.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ..formats import format_memory, format_time
from ..model.memory import HAS_COUNTER
from ..views.memory import (BEFORE_PROFILE, DeviceResult, LiveRow, MemoryResult, StepLevel,
                            columns_of, sparkline)
from .steps import SCHEMA_VERSION, table

#: Sparkline width in characters, and live-set rows shown in text.
WIDTH = 64
ROWS = 12
#: Steps a text table shows in full (more: the first, last and the peak's).
STEP_ROWS = 12
NA = "--"


def memory_document(result: MemoryResult) -> dict[str, Any]:
    """The JSON document of one profile's memory (see the module)."""
    start = result.start
    return {"schema_version": SCHEMA_VERSION, "mode": "memory", "by": result.by,
            "origin": result.origin, "start": start, "unit": "bytes",
            "records": sorted(result.has), "notes": result.notes,
            "steps": [{"step": m.step, "start": m.start - start, "end": m.end - start}
                      for m in result.marks],
            "devices": [_device_doc(d, start) for d in result.devices]}


def _device_doc(d: DeviceResult, start: int) -> dict[str, Any]:
    times, allocated, reserved = d.timeline
    p = d.peak
    return {"name": d.name, "counted": d.counted, "events": d.events,
            "capacity": d.capacity if d.capacity >= 0 else None,
            "peak": {"bytes": p.nbytes, "time": p.time - start, "times_reached": p.times_reached,
                     "step": p.step, "reserved": p.reserved,
                     "fragmentation": p.fragmentation},
            "timeline": {"time": [t - start for t in times], "allocated": allocated,
                         "reserved": reserved},
            "live": {"rows": [_live_doc(r) for r in d.live], "unexplained": d.unexplained},
            "steps": [{"step": s.step, "peak": s.peak, "end": s.end} for s in d.steps],
            "growth": {"slope": None if d.slope is None else round(d.slope, 3),
                       "suspects": [{"key": s.key, "steps": s.steps, "judged": s.judged,
                                     "bytes": s.nbytes, "per_step": s.per_step}
                                    for s in d.suspects]}}


def _live_doc(r: LiveRow) -> dict[str, Any]:
    return {"key": r.key, "bytes": r.nbytes, "count": r.count, "requested": r.requested,
            "steps": list(r.steps), "age": r.age}


def memory_text(result: MemoryResult, title: str, min_bytes: int = 0) -> str:
    """The text of one profile's memory: a block per device."""
    if not result.devices:
        return "%s: no memory events.\n" % title
    out = []
    for d in result.devices:
        out += _device_text(d, result, title, min_bytes)
    return "\n".join(out) + "\n"


def _steps_named(result: MemoryResult) -> str:
    n = len(result.marks)
    return "%d step%s" % (n, "" if n == 1 else "s") if n else "no steps"


def _at(t: int, start: int) -> str:
    return format_time(max(t - start, 0) // 1000)


def _device_text(d: DeviceResult, result: MemoryResult, title: str, min_bytes: int
                 ) -> list[str]:
    level = ("the allocator's counter" if d.counted and HAS_COUNTER in result.has
             else "the blocks the profile saw allocated")
    lines = ["%s on %s: %d events over %s (%s); level: %s." % (
        title, d.name, d.events, _steps_named(result), result.origin, level)]
    p = d.peak
    where = "step %d" % p.step if p.step is not None else "outside any step"
    facts = ["%speak %s at %s (%s), reached %d time%s" % (
        "step %d's " % result.step if result.step is not None else "",
        format_memory(p.nbytes), _at(p.time, result.start), where, p.times_reached,
        "" if p.times_reached == 1 else "s")]
    if p.reserved is not None:
        facts.append("reserved %s" % format_memory(p.reserved))
    if p.fragmentation is not None:
        facts.append("fragmentation %.1f%%" % (100.0 * p.fragmentation))
    if d.capacity >= 0:
        facts.append("capacity %s (%.1f%% used)" % (format_memory(d.capacity),
                                                    100.0 * p.nbytes / max(d.capacity, 1)))
    lines.append("; ".join(facts) + ".")
    start = min([d.first] + [m.start for m in result.marks])
    end = max([d.last + 1] + [m.end for m in result.marks])
    bars, floor, top = sparkline(d, start, end, WIDTH)
    lines.append("  " + bars + "  %s..%s" % (format_memory(floor), format_memory(top)))
    axis = _axis([m.step for m in result.marks],
                 columns_of([m.start for m in result.marks], start, end, WIDTH))
    if axis.strip():
        lines.append("  " + axis + "  (step starts)")
    lines += [""] + _live_text(d, result.by, min_bytes)
    if d.steps:
        lines += ["", "Per step (the highest level in it, the level at its end):"]
        shown = _some_steps(d)
        cells = [("...", "", "") if s is None else
                 ("%d" % s.step, format_memory(s.peak), format_memory(s.end)) for s in shown]
        lines += table(("step", "peak", "end"), cells, left=0)
    lines += [""] + _growth_text(d)
    lines.append("")
    return lines


def _some_steps(d: DeviceResult) -> list[Optional[StepLevel]]:
    """The steps a text table shows: all of a few; of many, the first and last few and
    the peak's (None where some are left out)."""
    steps = d.steps
    if len(steps) <= STEP_ROWS:
        return list(steps)
    keep = set(range(3)) | set(range(len(steps) - 3, len(steps)))
    keep |= {i for i, s in enumerate(steps) if s.step == d.peak.step}
    out: list[Optional[StepLevel]] = []
    for i, s in enumerate(steps):
        if i in keep:
            out.append(s)
        elif out and out[-1] is not None:
            out.append(None)
    return out


def _axis(steps: Sequence[int], columns: Sequence[int]) -> str:
    """Each step's number written from its column (skipped where it would overlap)."""
    line = [" "] * WIDTH
    free_from = 0
    for step, col in zip(steps, columns):
        text = "%d" % step
        if col < free_from or col + len(text) > WIDTH:
            continue
        line[col:col + len(text)] = text
        free_from = col + len(text) + 1
    return "".join(line).rstrip()


def _live_text(d: DeviceResult, by: str, min_bytes: int) -> list[str]:
    total = sum(r.nbytes for r in d.live)
    count = sum(r.count for r in d.live if r.key != BEFORE_PROFILE or r.count)
    lines = ["Alive at the peak, by %s: %s in %d block%s." % (
        by, format_memory(total), count, "" if count == 1 else "s")]
    rows = [r for r in d.live if r.nbytes >= min_bytes]
    hidden = len(d.live) - len(rows[:ROWS])
    out = []
    for r in rows[:ROWS]:
        out.append((_cut(r.key), format_memory(r.nbytes),
                    "%.1f%%" % (100.0 * r.nbytes / total) if total else NA,
                    "%d" % r.count if r.count else NA,
                    format_memory(r.requested) if r.requested is not None else NA,
                    _steps(r.steps), format_time(r.age // 1000) if r.age is not None else NA))
    if out:
        lines += table((by, "bytes", "share", "blocks", "requested", "steps", "age"), out,
                       left=1)
    if hidden > 0:
        lines.append("(%d more key%s)" % (hidden, "" if hidden == 1 else "s"))
    return lines


def _cut(key: str, width: int = 60) -> str:
    return key if len(key) <= width else key[:width - 3] + "..."


def _steps(steps: Sequence[Optional[int]]) -> str:
    named = [s for s in steps if s is not None]
    if not named:
        return NA
    text = "%d" % named[0] if len(named) == 1 else "%d-%d" % (named[0], named[-1])
    return text + ("+" if len(named) < len(steps) else "")


def _growth_text(d: DeviceResult) -> list[str]:
    if d.slope is None:
        return ["Growth: needs two steps or more."]
    line = "Growth: %s%s per step (least squares over the steps' end levels)" % (
        "+" if d.slope >= 0 else "-", format_memory(int(abs(d.slope))))
    if not d.suspects:
        return [line + "; no leak suspects."]
    out = [line + "; leak suspects (allocated step after step, never freed):"]
    out += ["  %s: %s per step, in %d of %d steps" % (_cut(s.key, 80),
                                                     format_memory(s.per_step), s.steps,
                                                     s.judged)
            for s in d.suspects[:ROWS]]
    return out
