"""The critical path on the Timeline page: a `critpath` line's document, and where each
of its events is among the timeline's slices.

The page draws the path from the document `critpath -output json` prints; to
highlight an event and select it, it needs the event's slice in the lanes the
timeline shows. An event of the document is the trace's own (name, ``ts`` and
``dur`` in µs); its slice is the one of the same name starting at the same
nanosecond (within :data:`TOLERANCE_NS`: µs written as floats lose a few ns,
and XSpace times in µs since the epoch lose up to a quarter of one).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING, Any, Optional, Sequence

from ..errors import UsageError
from ..model.lanes import TraceLanes
from .timeline import prepare

if TYPE_CHECKING:
    from .runner import LineRunner

#: How far an event's start may be from its slice's.
TOLERANCE_NS = 1000


class SliceFinder:
    """Slices by name and start (built once per lanes, kept with them)."""

    def __init__(self, lanes: TraceLanes) -> None:
        self.lanes = lanes
        self.ids = {text: k for k, text in enumerate(lanes.strings)}
        by_name: dict[int, list[int]] = {}
        for event, name in enumerate(lanes.name):
            found = by_name.get(name)
            if found is None:
                by_name[name] = [event]
            else:
                found.append(event)
        start = lanes.start
        self.events: dict[int, list[int]] = {}
        self.starts: dict[int, list[int]] = {}
        for name, events in by_name.items():
            events.sort(key=start.__getitem__)
            self.events[name] = events
            self.starts[name] = [start[e] for e in events]

    def find(self, name: str, ts_us: float, dur_us: float) -> Optional[int]:
        """The slice of ``name`` starting nearest ``ts_us`` (within TOLERANCE_NS); among
        as near ones, the one whose duration is nearest ``dur_us``. None if there is none."""
        key = self.ids.get(name)
        if key is None:
            return None
        starts, events = self.starts[key], self.events[key]
        t, d = ts_us * 1000.0, dur_us * 1000.0
        k = bisect_left(starts, t - TOLERANCE_NS)
        best, best_key = None, None
        while k < len(starts) and starts[k] <= t + TOLERANCE_NS:
            e = events[k]
            rank = (abs(starts[k] - t), abs(self.lanes.dur[e] - d))
            if best_key is None or rank < best_key:
                best, best_key = e, rank
            k += 1
        return best

    def rows(self, events: Sequence[dict[str, Any]], origin: int) -> list[Optional[list[int]]]:
        """Per event of a path: ``[slice, lane, row, start, dur]`` (start in ns from
        ``origin``, as the timeline's windows give times), or None where none is found."""
        lanes = self.lanes
        out: list[Optional[list[int]]] = []
        for ev in events:
            e = self.find(str(ev.get("name", "")), float(ev.get("ts", 0.0)),
                          float(ev.get("dur", 0.0)))
            out.append(None if e is None else
                       [e, lanes.lane[e], lanes.depth[e], lanes.start[e] - origin, lanes.dur[e]])
        return out


def path_marks(runner: "LineRunner", line: str) -> dict[str, Any]:
    """A `critpath` line's document and, per path of the current profile (and its
    -whatif path), where each event is on the timeline (see SliceFinder.rows)."""
    request = runner.check(line)
    if request.command.name != "critpath":
        raise UsageError("%s: the timeline marks the paths of a critpath line"
                         % request.command.name)
    doc, notes = runner.document(line)
    prep = prepare(runner, line)
    if prep.finder is None:
        prep.finder = SliceFinder(prep.lanes)
    finder = prep.finder
    origin = prep.lanes.begin
    own = doc["profiles"][runner.session.current] if "profiles" in doc else doc
    marks, found, total = [], 0, 0
    for path in own["paths"]:
        rows = finder.rows(path["events"], origin)
        whatif = path.get("whatif")
        marks.append({"events": rows,
                      "whatif": finder.rows(whatif["events"], origin) if whatif else None})
        found += sum(r is not None for r in rows)
        total += len(rows)
    return {"line": line, "current": runner.session.current, "document": doc, "marks": marks,
            "found": found, "events": total, "notes": notes}


__all__ = ["SliceFinder", "TOLERANCE_NS", "path_marks"]
