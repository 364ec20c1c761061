"""The `critpath` command's output: a table of windows, the path's time by event,
what-if paths; the JSON document; the Chrome trace with the path marked.

Lengths are µs with one decimal (kept in ns); the JSON gives every path's
events in the trace's own terms (``ts``/``dur`` as the file wrote them) and its
edges as indices into them, so a viewer can highlight the path.
"""

from __future__ import annotations

import json
from typing import Any, Optional, Sequence

from ..model.path_input import KIND_NAMES, PathInput
from ..views.critpath import DEFINITIONS
from ..views.critpath_graph import BOUNDS, EDGE_TYPES
from ..views.critpath_result import CritPath, CritPathResult, Packed, path_events, steps_of


def table(headers: Sequence[str], rows: Sequence[Sequence[str]],
          left: Sequence[int] = (0,)) -> list[str]:
    """Aligned columns: those in ``left`` left-aligned, the rest right-aligned."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    return ["  ".join(str(c).ljust(w) if i in left else str(c).rjust(w)
                      for i, (c, w) in enumerate(zip(r, widths))).rstrip()
            for r in [headers, *rows]]


def short(name: str, width: int = 70) -> str:
    """``name`` cut to ``width`` characters (the JSON keeps it whole)."""
    return name if len(name) <= width else name[:width - 3] + "..."

SCHEMA_VERSION = 1
#: Names for the path time no event holds, by bound.
_UNATTRIBUTED = {0: "<host gaps>", 1: "<host gaps>", 4: "<kernel launch delays>",
                 5: "<gaps between kernels>"}
#: Rows of the table of where the path's time goes.
TOP_NAMES = 12


def _us(ns: int) -> float:
    return round(ns / 1000.0, 3)


def _t(ns: int) -> str:
    return "%.1f" % (ns / 1000.0)


def _share(part: int, whole: int) -> str:
    return "%.1f%%" % (100.0 * part / whole) if whole > 0 else "--"


def _bounds_text(by_bound: dict[str, int], length: int) -> str:
    return ", ".join("%s %s" % (k, _share(v, length)) for k, v in by_bound.items()) or "--"


def definitions(result: CritPathResult) -> list[str]:
    """The definitions of the result's paths, each once, in order."""
    return list(dict.fromkeys(p.definition for p in result.paths))


def header(result: CritPathResult, title: str = "Critical path") -> str:
    defs = "; ".join(DEFINITIONS[d] for d in definitions(result))
    if result.host_gaps:
        defs += "; -host_gaps: the host time between top-level ops weighs"
    return "%s (%s); times in us." % (title, defs)


def critpath_text(result: CritPathResult, title: str = "Critical path") -> str:
    """The windows table, where the path's time goes, and any what-if."""
    lines = [header(result, title), ""]
    rows = []
    for p in result.paths:
        rows.append((p.window.name, "--" if p.window.step is None else str(p.window.step),
                     _t(p.length), _t(p.wall), _share(p.length, p.wall), str(p.event_count),
                     _bounds_text(p.by_bound, p.length)))
    lines += table(("window", "step", "length", "wall", "path%", "events", "bound by"), rows,
                   (0, 6))
    total = sum(p.length for p in result.paths)
    if len(result.paths) > 1:
        merged: dict[str, int] = {}
        for p in result.paths:
            for k, v in p.by_bound.items():
                merged[k] = merged.get(k, 0) + v
        merged = dict(sorted(merged.items(), key=lambda kv: -kv[1]))
        lines += ["", "All windows: %s us of path in %s us; bound by %s."
                  % (_t(total), _t(sum(p.wall for p in result.paths)),
                     _bounds_text(merged, total))]
    names = time_by_name(result.paths)
    if names:
        lines += ["", "Where the path's time goes (attributed to events, by name%s):"
                  % (", all windows" if len(result.paths) > 1 else "")]
        rows = [(short(name), kind, _t(t), _share(t, total), str(n))
                for (name, kind), (t, n) in list(names.items())[:TOP_NAMES]]
        lines += table(("name", "kind", "time", "share", "edges"), rows, (0, 1))
    if any(p.whatif for p in result.paths):
        lines += [""] + whatif_lines(result.paths)
    return "\n".join(lines) + "\n"


def time_by_name(paths: Sequence[CritPath]) -> dict[tuple[str, str], tuple[int, int]]:
    """(name, kind) -> (path time attributed, how many edges), largest first; time no
    event holds (launch delays, host gaps) under ``<its bound category>``."""
    # summed first by the events' own (name, kind) or the bound, then by the names
    # shown (in the order they were first met, as the ties of the sort keep it)
    raw: dict[Any, list[int]] = {}
    for p in paths:
        ev = p.input.events if p.input is not None else None
        for key, (t, n) in p.tally()[1].items():
            attr = (key >> 3) - 1
            if attr >= 0 and ev is not None:
                e = ev[attr]
                by: Any = (e[3], e[2])
            else:
                by = key & 7
            got = raw.get(by)
            if got is None:
                raw[by] = [t, n]
            else:
                got[0] += t
                got[1] += n
    out: dict[tuple[str, str], list[int]] = {}
    for by, (t, n) in raw.items():
        if type(by) is int:
            name = (_UNATTRIBUTED.get(by, "<%s>" % BOUNDS[by]), "delay")
        else:
            name = (str(by[0]), KIND_NAMES[by[1]])
        got = out.get(name)
        if got is None:
            out[name] = [t, n]
        else:
            got[0] += t
            got[1] += n
    return {k: (v[0], v[1]) for k, v in sorted(out.items(), key=lambda kv: -kv[1][0])}


def whatif_lines(paths: Sequence[CritPath]) -> list[str]:
    first = next(p.whatif for p in paths if p.whatif)
    changed = sum(p.whatif.changed for p in paths if p.whatif)
    lines = ["What if %s (%d edge%s scaled): the new path, and the window's time less what "
             "the path lost:" % (", ".join(r.text for r in first.rules), changed,
                                 "" if changed == 1 else "s")]
    rows = []
    for p in paths:
        w = p.whatif
        if w is None:
            continue
        rows.append((p.window.name, _t(p.length), _t(w.length), _t(w.length - p.length),
                     _t(p.wall), _t(w.estimated_wall), _share(p.wall - w.estimated_wall, p.wall),
                     _bounds_text(w.by_bound, w.length)))
    lines += table(("window", "length", "new", "change", "wall", "est. wall", "saved",
                    "new path bound by"), rows, (0, 7))
    if changed == 0:
        lines.append("No edge matched the rules: the paths are unchanged.")
    return lines


# -- JSON ---------------------------------------------------------------------

def _event_doc(inp: PathInput, i: int) -> dict[str, Any]:
    e = inp.events[i]
    return {"name": e[3], "ts": e[7], "dur": e[8], "cat": e[4], "pid": e[5], "tid": e[6],
            "kind": KIND_NAMES[e[2]]}


def path_document(inp: Optional[PathInput], packed: Sequence[Packed]) -> dict[str, Any]:
    """``events`` (the path's, in order) and ``edges`` (indices into them)."""
    order = path_events(packed)
    where = {e: n for n, e in enumerate(order)}
    edges = []
    for s in steps_of(packed):
        attr = s.attr if s.attr >= 0 else None
        edges.append({"from": where[s.src], "from_at": "end" if s.src_end else "start",
                      "to": where[s.dst], "to_at": "end" if s.dst_end else "start",
                      "type": EDGE_TYPES[s.etype], "weight": _us(s.weight),
                      "bound_by": BOUNDS[s.bound] or ("cpu_bound" if s.weight else None),
                      "event": where.get(attr) if attr is not None else None,
                      "event_name": (str(inp.events[attr][3])
                                     if attr is not None and inp is not None else None)})
    return {"events": [_event_doc(inp, e) for e in order] if inp is not None else [],
            "edges": edges}


def _bounds_doc(by_bound: dict[str, int]) -> dict[str, float]:
    return {k: _us(v) for k, v in by_bound.items()}


def critpath_document(result: CritPathResult) -> dict[str, Any]:
    """``{"schema_version", "mode": "critpath", "definitions", "unit", "paths": [...]}``."""
    paths = []
    for p in result.paths:
        w = p.window
        if isinstance(w.ts, (int, float)) and isinstance(w.dur, (int, float)):
            start, end = w.ts, w.ts + w.dur  # the marker's own numbers
        else:
            start, end = _us(w.start), _us(w.end)
        doc: dict[str, Any] = {
            "window": {"name": w.name, "instance": w.instance, "start": start,
                       "end": end, "step": w.step},
            "definition": p.definition, "length": _us(p.length), "wall": _us(p.wall),
            "by_bound": _bounds_doc(p.by_bound), "graph": {"nodes": p.nodes, "edges": p.edges}}
        doc.update(path_document(p.input, p.packed))
        if p.notes:
            doc["notes"] = list(p.notes)
        if p.whatif is not None:
            wi = p.whatif
            doc["whatif"] = dict({"rules": [r.text for r in wi.rules], "edges_scaled": wi.changed,
                                  "length": _us(wi.length),
                                  "estimated_wall": _us(wi.estimated_wall),
                                  "by_bound": _bounds_doc(wi.by_bound)},
                                 **path_document(p.input, wi.packed))
        paths.append(doc)
    return {"schema_version": SCHEMA_VERSION, "mode": "critpath", "unit": "microseconds",
            "definitions": {d: DEFINITIONS[d] for d in definitions(result)},
            "host_gaps": result.host_gaps, "paths": paths}


# -- the Chrome trace ---------------------------------------------------------

def critpath_trace(result: CritPathResult) -> str:
    """A Chrome trace of each window's graph events (the trace's own pids, tids and
    times) with the path's marked ``args.critical = 1`` and a flow arrow (category:
    the edge's type) along each path edge between two events, as HTA's overlay."""
    out: list[dict[str, Any]] = []
    flow = 0
    for p in result.paths:
        inp = p.input
        if inp is None:
            continue
        ev = inp.events
        on_path = set(p.events)
        shown = set(p.graph_events or on_path) | on_path
        for i in sorted(shown, key=lambda i: ev[i][0]):
            e = ev[i]
            args: dict[str, Any] = {"window": p.window.name}
            if i in on_path:
                args["critical"] = 1
            out.append({"ph": "X", "name": e[3], "cat": e[4], "pid": e[5], "tid": e[6],
                        "ts": e[7], "dur": e[8], "args": args})
        for s in p.steps:
            if s.src == s.dst:
                continue
            flow += 1
            for at, end, ph in ((s.src, s.src_end, "s"), (s.dst, s.dst_end, "f")):
                e = ev[at]
                ns = e[1] - min((e[1] - e[0]) // 2, 1000) if end else e[0]
                item = {"ph": ph, "id": flow, "name": "critical_path",
                        "cat": "critical_path_" + EDGE_TYPES[s.etype], "pid": e[5],
                        "tid": e[6], "ts": ns / 1000.0,
                        "args": {"weight": _us(s.weight), "window": p.window.name}}
                if ph == "f":
                    item["bp"] = "e"
                out.append(item)
    return json.dumps({"traceEvents": out, "displayTimeUnit": "ns"}, default=str) + "\n"
