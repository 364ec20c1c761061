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
from typing import Any, Iterator

#: Lane kinds.
HOST = "host"
DEVICE = "device"


@dataclass
class Lane:
    """One thread or stream: its name as the trace gives it, its group (process or
    device), kind (HOST or DEVICE), and ``rows``: its slices by depth, as event ids
    in start order, with their starts and ends (filled by LanesBuilder.finish). The
    slices of a row never overlap, so its ends are in order too."""

    name: str
    group: str
    kind: str
    order: tuple = ()
    rows: list[array] = field(default_factory=list)
    starts: list[array] = field(default_factory=list)
    ends: list[array] = field(default_factory=list)

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
        overlap [lo, hi] ns (end at or after lo, start at or before hi)."""
        found = self.lanes[lane]
        return bisect_left(found.ends[depth], lo), bisect_right(found.starts[depth], hi)

    def overlapping(self, lane: int, lo: int, hi: int) -> Iterator[int]:
        """Event ids of ``lane`` overlapping [lo, hi] ns, row by row."""
        for depth, row in enumerate(self.lanes[lane].rows):
            first, last = self.window(lane, depth, lo, hi)
            yield from row[first:last]

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
    """Collects slices lane by lane, then lays them out in rows (:meth:`finish`).

    Slices go in one at a time (:meth:`add`) or, in a reader's loop, appended to
    the column lists :attr:`starts`, :attr:`durs`, :attr:`names`, :attr:`cats` and
    :attr:`lanes_of` (names and categories interned with :meth:`intern`).
    """

    def __init__(self, origin: str) -> None:
        self.out = TraceLanes(origin)
        self._lanes: dict[Any, int] = {}
        self.string_ids: dict[str, int] = {}
        self._groups: dict[str, tuple[str, str, tuple]] = {}
        self.starts: list[int] = []
        self.durs: list[int] = []
        self.names: list[int] = []
        self.cats: list[int] = []
        self.lanes_of: list[int] = []

    def intern(self, text: str) -> int:
        found = self.string_ids.get(text)
        if found is None:
            found = self.string_ids[text] = len(self.out.strings)
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

    def add(self, lane: int, start: int, dur: int, name: str, cat: str = "") -> int:
        """Add a slice [start, start + dur) ns; its event id."""
        self.starts.append(start)
        self.durs.append(dur if dur > 0 else 0)
        self.names.append(self.intern(name))
        self.cats.append(self.intern(cat))
        self.lanes_of.append(lane)
        return len(self.starts) - 1

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
        renumber = [0] * len(order)
        for new, old in enumerate(order):
            renumber[old] = new
        out.lanes = [out.lanes[k] for k in order]
        lanes_of = [renumber[k] for k in self.lanes_of]
        out.groups = [(g, kind) for g, kind, _ in sorted(self._groups.values(),
                                                         key=lambda g: (g[2], g[0]))]
        start, dur = self.starts, self.durs
        out.start, out.dur = array("q", start), array("q", dur)
        out.name, out.cat, out.lane = array("l", self.names), array("l", self.cats), \
            array("l", lanes_of)
        by_lane: list[list[int]] = [[] for _ in out.lanes]
        for event, lane in enumerate(lanes_of):
            by_lane[lane].append(event)
        base = min(start) if start else 0
        # one integer per slice orders by start, then longest first (parents first)
        keys = [((s - base) << 48) - d for s, d in zip(start, dur)]
        depth = [0] * len(start)
        for lane, events in zip(out.lanes, by_lane):
            events.sort(key=keys.__getitem__)
            rows: list[list[int]] = []
            ends: list[int] = []  # the end of the slice open at each depth
            for e in events:
                t = start[e]
                while ends and ends[-1] <= t:
                    ends.pop()
                d = len(ends)
                if d == len(rows):
                    rows.append([])
                rows[d].append(e)
                depth[e] = d
                ends.append(t + dur[e])
            lane.rows = [array("l", row) for row in rows]
            lane.starts = [array("q", [start[e] for e in row]) for row in rows]
            lane.ends = [array("q", [start[e] + dur[e] for e in row]) for row in rows]
        out.depth = array("l", depth)
        if start:
            out.begin = base
            out.end = max(map(int.__add__, start, dur))
        return out
