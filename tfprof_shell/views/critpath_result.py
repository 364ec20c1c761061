"""What `critpath` finds: windows, paths as event-to-event edges, what-if paths.

Made by views/critpath.py (trace formats) and views/critpath_dataflow.py
(TensorFlow 1 graphs); read by the renderers and the advisor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import invert, itemgetter
from typing import Any, NamedTuple, Optional, Sequence

from ..model.path_input import PathInput
from .critpath_graph import BOUNDS
from .critpath_whatif import WhatIfRule


@dataclass
class Window:
    """A span a path is computed for: a step, an annotation's instance, a timeline."""

    name: str
    instance: int
    start: int  # ns
    end: int
    step: Optional[int] = None
    timeline: int = 0
    #: the marker's own ts and dur (None: the window spans a whole timeline)
    ts: Any = None
    dur: Any = None


class PathStep(NamedTuple):
    """One edge of a path: from (event, at its end?) to (event, at its end?), weight
    (ns), type and bound (critpath_graph), and the event its time is attributed to
    (-1: none)."""

    src: int
    src_end: bool
    dst: int
    dst_end: bool
    weight: int
    etype: int
    bound: int
    attr: int


#: A path's edge as the graph gives it: (from, to, weight, packed info), each end
#: an event (~event for an event's end); see critpath_graph.pack.
Packed = tuple[int, int, int, int]


def steps_of(packed: Sequence[Packed]) -> list[PathStep]:
    """The path's edges as PathSteps."""
    return [PathStep(a if a >= 0 else ~a, a < 0, b if b >= 0 else ~b, b < 0, w,
                     info & 7, (info >> 3) & 7, (info >> 6) - 1) for a, b, w, info in packed]


@dataclass
class WhatIf:
    """A path recomputed with scaled edges: how many edges changed, the new path,
    and the window's estimated length (its wall time less what the path lost)."""

    rules: tuple[WhatIfRule, ...]
    changed: int
    length: int
    packed: list[Packed]
    estimated_wall: int

    @property
    def by_bound(self) -> dict[str, int]:
        return by_bound(self.packed)

    @property
    def steps(self) -> list[PathStep]:
        return steps_of(self.packed)


@dataclass
class CritPath:
    """One window's critical path."""

    window: Window
    definition: str
    input: Optional[PathInput]
    length: int
    packed: list[Packed]
    nodes: int
    edges: int
    notes: list[str] = field(default_factory=list)
    whatif: Optional[WhatIf] = None
    #: every event of the window's graph (for the timeline), when asked for
    graph_events: Optional[list[int]] = None

    @property
    def wall(self) -> int:
        return self.window.end - self.window.start

    _tally: Optional[tuple[dict[str, int], dict[int, list[int]]]] = field(
        default=None, repr=False, compare=False)
    _events: Optional[list[int]] = field(default=None, repr=False, compare=False)

    def tally(self) -> tuple[dict[str, int], dict[int, list[int]]]:
        """(what bounds the path, largest first; (attributed event + 1) << 3 | bound ->
        [ns, edges]), in one pass over the path, kept."""
        if self._tally is None:
            by_key: dict[int, list[int]] = {}
            get = by_key.get
            for _, _, w, info in self.packed:
                if w:
                    got = get(info >> 3)
                    if got is None:
                        by_key[info >> 3] = [w, 1]
                    else:
                        got[0] += w
                        got[1] += 1
            sums = [0] * len(BOUNDS)
            for key, (t, _) in by_key.items():
                sums[key & 7] += t
            sums[1] += sums[0]  # a host gap weighed by -host_gaps is cpu_bound
            bounds = dict(sorted(((BOUNDS[k], v) for k, v in enumerate(sums) if k and v),
                                 key=lambda kv: -kv[1]))
            self._tally = (bounds, by_key)
        return self._tally

    @property
    def by_bound(self) -> dict[str, int]:
        """What bounds the path: category -> ns, largest first."""
        return self.tally()[0]

    @property
    def events(self) -> list[int]:
        """The path's events, in path order, each once (kept)."""
        if self._events is None:
            self._events = path_events(self.packed)
        return self._events

    @property
    def event_count(self) -> int:
        """How many events the path passes."""
        if self._events is not None:
            return len(self._events)
        if not self.packed:
            return 0
        ends = set(map(itemgetter(0), self.packed))
        ends.update(map(itemgetter(1), self.packed))
        # the nodes (an event, or ~event for its end) less the events met at both ends,
        # each counted once: in C, with no per-node arithmetic but ~
        return len(ends) - len(ends.intersection(map(invert, ends))) // 2

    @property
    def steps(self) -> list[PathStep]:
        """The path's edges, in order."""
        return steps_of(self.packed)

    def attributed(self) -> dict[int, int]:
        """Event -> the path time attributed to it (ns)."""
        return attributed_time(self.packed)


@dataclass
class CritPathResult:
    """The paths of the chosen windows of one profile."""

    paths: list[CritPath]
    notes: list[str] = field(default_factory=list)
    #: the host time between top-level ops weighed (-host_gaps)
    host_gaps: bool = False


def path_events(packed: Sequence[Packed]) -> list[int]:
    """The events a path passes, in path order, each once."""
    seen = dict.fromkeys([x for a, b, _, _ in packed for x in (a, b)])
    return list(dict.fromkeys([x if x >= 0 else ~x for x in seen]))


def attributed_time(packed: Sequence[Packed]) -> dict[int, int]:
    """Event -> the path time attributed to it (ns); delays and gaps attributed to no
    event are left out (see by_bound)."""
    out: dict[int, int] = {}
    get = out.get
    for _, _, w, info in packed:
        if w and info >= 64:
            attr = (info >> 6) - 1
            out[attr] = get(attr, 0) + w
    return out


def by_bound(packed: Sequence[Packed]) -> dict[str, int]:
    """What bounds the path: category -> ns, largest first (zero-weight edges left out;
    a host gap weighed by -host_gaps is cpu_bound)."""
    sums = [0] * len(BOUNDS)
    for _, _, w, info in packed:
        sums[(info >> 3) & 7] += w
    sums[1] += sums[0]
    return dict(sorted(((BOUNDS[k], v) for k, v in enumerate(sums) if k and v),
                       key=lambda kv: -kv[1]))
