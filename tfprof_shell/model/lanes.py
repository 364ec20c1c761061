"""A trace's slices by lane: one lane per host thread and per device stream.

The node model sums time per node and the intervals keep what a step
breakdown needs; a timeline needs every slice where the trace put it. A
:class:`TraceLanes` holds them compactly: parallel arrays over all slices
(start and duration in ns on the profile's time axis, interned name and
category, lane, nesting depth), each lane's slices by depth in start order,
the flows that join a launch to the device work it started, and the few
arguments worth showing (a kernel's launch configuration, a copy's bytes).
Loaders that read a trace build one with :class:`LanesBuilder`
(load/lanes.py); nothing here reads files.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

#: Lane kinds.
HOST = "host"
DEVICE = "device"


@dataclass
class Lane:
    """One thread or stream: its name as the trace gives it, its group (process or
    device), kind (HOST or DEVICE), and ``rows``: its slices by depth, as event ids
    in start order (filled by LanesBuilder.finish)."""

    name: str
    group: str
    kind: str
    order: tuple = ()
    rows: list[array] = field(default_factory=list)
    starts: list[array] = field(default_factory=list)

    @property
    def depth(self) -> int:
        """How many rows of nested slices the lane has."""
        return len(self.rows)


class TraceLanes:
    """Every slice of a trace, by lane (see the module docstring). Event ids index
    :attr:`start`, :attr:`dur`, :attr:`name`, :attr:`cat`, :attr:`lane`, :attr:`depth`."""

    def __init__(self, origin: str) -> None:
        #: How the slices were read (for notes): "PyTorch trace events", ...
        self.origin = origin
        self.lanes: list[Lane] = []
        #: Groups in display order: (name, kind).
        self.groups: list[tuple[str, str]] = []
        self.strings: list[str] = []
        self.start = array("q")
        self.dur = array("q")
        self.name = array("l")
        self.cat = array("l")
        self.lane = array("l")
        self.depth = array("l")
        #: A launch's device event and a device event's launch, both ways.
        self.flows: dict[int, int] = {}
        #: Arguments worth showing, for the events that have them.
        self.args: dict[int, dict[str, Any]] = {}
        #: Longest slice per (lane, depth), to find the slices overlapping a window.
        self.longest: list[list[int]] = []
        #: The earliest start and the latest end (ns).
        self.begin = 0
        self.end = 0

    def __len__(self) -> int:
        return len(self.start)

    def text(self, event: int) -> str:
        """An event's name."""
        return self.strings[self.name[event]]

    def category(self, event: int) -> str:
        return self.strings[self.cat[event]]

    def window(self, lane: int, depth: int, lo: int, hi: int) -> tuple[int, int]:
        """The [first, last) positions in row ``depth`` of ``lane`` of the slices that
        overlap [lo, hi] ns."""
        starts = self.lanes[lane].starts[depth]
        first = bisect_left(starts, lo - self.longest[lane][depth])
        last = bisect_right(starts, hi)
        row = self.lanes[lane].rows[depth]
        start, dur = self.start, self.dur
        while first < last and start[row[first]] + dur[row[first]] < lo:
            first += 1
        return first, last

    def overlapping(self, lane: int, lo: int, hi: int) -> Iterator[int]:
        """Event ids of ``lane`` overlapping [lo, hi] ns, row by row."""
        for depth, row in enumerate(self.lanes[lane].rows):
            first, last = self.window(lane, depth, lo, hi)
            start, dur = self.start, self.dur
            for k in range(first, last):
                e = row[k]
                if start[e] + dur[e] >= lo:
                    yield e

    def enclosing(self, event: int) -> list[int]:
        """The slices of the event's lane that enclose it, outermost first."""
        lane, out = self.lane[event], []
        t0 = self.start[event]
        for depth in range(self.depth[event]):
            row = self.lanes[lane].rows[depth]
            starts = self.lanes[lane].starts[depth]
            k = bisect_right(starts, t0) - 1
            if k >= 0:
                e = row[k]
                if self.start[e] + self.dur[e] > t0:
                    out.append(e)
        return out


class LanesBuilder:
    """Collects slices lane by lane, then lays them out in rows (:meth:`finish`)."""

    def __init__(self, origin: str) -> None:
        self.out = TraceLanes(origin)
        self._lanes: dict[Any, int] = {}
        self._strings: dict[str, int] = {}
        self._groups: dict[str, tuple[str, str, tuple]] = {}

    def intern(self, text: str) -> int:
        found = self._strings.get(text)
        if found is None:
            found = self._strings[text] = len(self.out.strings)
            self.out.strings.append(text)
        return found

    def lane(self, key: Any, name: str, group: str, kind: str, order: tuple = ()) -> int:
        """The id of the lane ``key`` (made on first use with its name, group and kind;
        lanes are shown sorted by ``order``, groups by their first lane's ``order``
        without its last item)."""
        found = self._lanes.get(key)
        if found is None:
            found = self._lanes[key] = len(self.out.lanes)
            self.out.lanes.append(Lane(name, group, kind, order))
            if group not in self._groups:
                self._groups[group] = (group, kind, order[:-1])
        return found

    def has_lane(self, key: Any) -> Optional[int]:
        return self._lanes.get(key)

    def add(self, lane: int, start: int, dur: int, name: str, cat: str = "") -> int:
        """Add a slice [start, start + dur) ns; its event id."""
        out = self.out
        out.start.append(start)
        out.dur.append(max(0, dur))
        out.name.append(self.intern(name))
        out.cat.append(self.intern(cat))
        out.lane.append(lane)
        return len(out.start) - 1

    def flow(self, launch: int, device: int) -> None:
        """Join a launch to the device event it started."""
        self.out.flows[launch] = device
        self.out.flows[device] = launch

    def finish(self) -> TraceLanes:
        """Sort lanes and groups, and lay each lane's slices out in nested rows: a slice
        goes one row below the slices that still run when it starts, so every row
        holds slices that do not overlap."""
        out = self.out
        order = sorted(range(len(out.lanes)), key=lambda k: (out.lanes[k].order,
                                                              out.lanes[k].name))
        renumber = array("l", [0] * len(order))
        for new, old in enumerate(order):
            renumber[old] = new
        out.lanes = [out.lanes[k] for k in order]
        out.lane = array("l", (renumber[k] for k in out.lane))
        out.groups = [(g, kind) for g, kind, _ in sorted(self._groups.values(),
                                                         key=lambda g: (g[2], g[0]))]
        by_lane: list[list[int]] = [[] for _ in out.lanes]
        for event, lane in enumerate(out.lane):
            by_lane[lane].append(event)
        start, dur = out.start, out.dur
        out.depth = array("l", [0] * len(start))
        depth = out.depth
        out.longest = []
        for lane, events in zip(out.lanes, by_lane):
            events.sort(key=lambda e: (start[e], -dur[e]))
            rows: list[array] = []
            ends: list[int] = []  # the end of the slice open at each depth
            for e in events:
                t = start[e]
                while ends and ends[-1] <= t:
                    ends.pop()
                d = len(ends)
                if d == len(rows):
                    rows.append(array("l"))
                rows[d].append(e)
                depth[e] = d
                ends.append(t + dur[e])
            lane.rows = rows
            lane.starts = [array("q", (start[e] for e in row)) for row in rows]
            out.longest.append([max((dur[e] for e in row), default=0) for row in rows])
        if len(start):
            out.begin = min(start)
            out.end = max(s + d for s, d in zip(start, dur))
        return out
