"""`memory` over several profiles: a diff against ``-base`` (peaks and the live sets at
them, key by key) and ``-profiles`` (every profile's devices ranked by peak)."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ..formats import format_memory
from ..views.memory import DeviceResult, MemoryResult
from .memory import memory_document
from .steps import SCHEMA_VERSION, table

NA = "--"
ROWS = 15


def _pairs(current: MemoryResult, base: MemoryResult
           ) -> list[tuple[str, Optional[DeviceResult], Optional[DeviceResult]]]:
    """Devices matched by name; two profiles of one device each are matched whatever
    their names (a CPU run against a GPU run of the same program)."""
    if len(current.devices) == 1 and len(base.devices) == 1:
        a, b = current.devices[0], base.devices[0]
        name = a.name if a.name == b.name else "%s vs %s" % (a.name, b.name)
        return [(name, a, b)]
    mine = {d.name: d for d in current.devices}
    theirs = {d.name: d for d in base.devices}
    return [(n, mine.get(n), theirs.get(n)) for n in sorted(set(mine) | set(theirs))]


def _delta_rows(a: Optional[DeviceResult], b: Optional[DeviceResult]
                ) -> list[tuple[str, int, int]]:
    """(key, current bytes, base bytes) of the live sets at the peaks, by |change|."""
    mine = {r.key: r.nbytes for r in a.live} if a else {}
    theirs = {r.key: r.nbytes for r in b.live} if b else {}
    rows = [(k, mine.get(k, 0), theirs.get(k, 0)) for k in set(mine) | set(theirs)]
    rows.sort(key=lambda r: (-abs(r[1] - r[2]), r[0]))
    return rows


def _signed(n: int) -> str:
    return ("+" if n >= 0 else "-") + format_memory(abs(n))


def _ratio(a: int, b: int) -> str:
    return "%.2fx" % (a / b) if b > 0 else NA


def diff_text(current: str, result: MemoryResult, base_name: str, base: MemoryResult) -> str:
    """The diff of two profiles' memory as text."""
    lines = ["Memory diff: %s against %s; the live set at each peak, by %s."
             % (current, base_name, result.by)]
    for name, a, b in _pairs(result, base):
        pa, pb = (a.peak.nbytes if a else None), (b.peak.nbytes if b else None)
        lines.append("")
        lines.append("%s: peak %s vs %s%s" % (
            name, format_memory(pa) if pa is not None else NA,
            format_memory(pb) if pb is not None else NA,
            " (%s, %s)" % (_signed(pa - pb), _ratio(pa, pb))
            if pa is not None and pb is not None else ""))
        rows = _delta_rows(a, b)
        cells = [(k, format_memory(x), format_memory(y), _signed(x - y))
                 for k, x, y in rows[:ROWS]]
        if cells:
            lines += table((result.by, current, base_name, "change"), cells, left=1)
        if len(rows) > ROWS:
            lines.append("(%d more keys)" % (len(rows) - ROWS))
    return "\n".join(lines) + "\n"


def diff_document(current: str, result: MemoryResult, base_name: str, base: MemoryResult
                  ) -> dict[str, Any]:
    """The diff as JSON: both documents, and per device the peaks and key changes."""
    return {"schema_version": SCHEMA_VERSION, "mode": "memory", "base": base_name,
            "profiles": {current: memory_document(result), base_name: memory_document(base)},
            "diff": [{"device": name,
                      "peak": {"current": a.peak.nbytes if a else None,
                               "base": b.peak.nbytes if b else None},
                      "live": [{"key": k, "current": x, "base": y, "change": x - y}
                               for k, x, y in _delta_rows(a, b)]}
                     for name, a, b in _pairs(result, base)]}


def _ranked(results: Sequence[tuple[str, MemoryResult]]
            ) -> list[tuple[str, DeviceResult]]:
    rows = [(name, d) for name, r in results for d in r.devices]
    rows.sort(key=lambda nd: (-nd[1].peak.nbytes, nd[0], nd[1].name))
    return rows


def ranks_text(results: Sequence[tuple[str, MemoryResult]]) -> str:
    """Every profile's devices ranked by peak, largest first."""
    rows = _ranked(results)
    names = ", ".join(n for n, _ in results)
    lines = ["Memory of %d profiles: %s; devices ranked by peak, largest first." % (
        len(results), names)]
    cells = []
    for rank, (name, d) in enumerate(rows, start=1):
        top = d.live[0] if d.live else None
        cells.append(("%d" % rank, name, d.name, format_memory(d.peak.nbytes),
                      "%d" % d.peak.step if d.peak.step is not None else NA,
                      _signed(int(d.slope)) if d.slope is not None else NA,
                      "%d" % len(d.suspects),
                      "%s (%s)" % (top.key, format_memory(top.nbytes)) if top else NA))
    lines += table(("rank", "profile", "device", "peak", "step", "per step", "suspects",
                    "largest at the peak"), cells, left=3)
    return "\n".join(lines) + "\n"


def ranks_document(results: Sequence[tuple[str, MemoryResult]]) -> dict[str, Any]:
    """Each profile's document and the ranking."""
    return {"schema_version": SCHEMA_VERSION, "mode": "memory",
            "profiles": {n: memory_document(r) for n, r in results},
            "ranks": [{"profile": n, "device": d.name, "peak": d.peak.nbytes}
                      for n, d in _ranked(results)]}
