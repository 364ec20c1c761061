"""What `critpath` finds: windows, paths as event-to-event edges, what-if paths.

Made by views/critpath.py (trace formats) and views/critpath_dataflow.py
(TensorFlow 1 graphs); read by the renderers and the advisor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

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


@dataclass
class PathStep:
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


@dataclass
class WhatIf:
    """A path recomputed with scaled edges: how many edges changed, the new path,
    and the window's estimated length (its wall time less what the path lost)."""

    rules: tuple[WhatIfRule, ...]
    changed: int
    length: int
    steps: list[PathStep]
    by_bound: dict[str, int]
    estimated_wall: int


@dataclass
class CritPath:
    """One window's critical path."""

    window: Window
    definition: str
    input: Optional[PathInput]
    length: int
    steps: list[PathStep]
    by_bound: dict[str, int]
    nodes: int
    edges: int
    notes: list[str] = field(default_factory=list)
    whatif: Optional[WhatIf] = None
    #: every event of the window's graph (for the timeline), when asked for
    graph_events: Optional[list[int]] = None

    @property
    def wall(self) -> int:
        return self.window.end - self.window.start

    @property
    def events(self) -> list[int]:
        """The path's events, in path order, each once."""
        return path_events(self.steps)

    def attributed(self) -> dict[int, int]:
        """Event -> the path time attributed to it (ns)."""
        return attributed_time(self.steps)


@dataclass
class CritPathResult:
    """The paths of the chosen windows of one profile."""

    paths: list[CritPath]
    notes: list[str] = field(default_factory=list)


def path_events(steps: Sequence[PathStep]) -> list[int]:
    """The events a path passes, in path order, each once."""
    seen: dict[int, None] = {}
    for s in steps:
        seen.setdefault(s.src)
        seen.setdefault(s.dst)
    return list(seen)


def attributed_time(steps: Sequence[PathStep]) -> dict[int, int]:
    """Event -> the path time attributed to it (ns); delays and gaps attributed to no
    event are left out (see by_bound)."""
    out: dict[int, int] = {}
    for s in steps:
        if s.weight and s.attr >= 0:
            out[s.attr] = out.get(s.attr, 0) + s.weight
    return out


def by_bound(steps: Sequence[PathStep]) -> dict[str, int]:
    """What bounds the path: category -> ns, largest first (zero-weight edges left out)."""
    out: dict[str, int] = {}
    for s in steps:
        if s.weight:
            name = BOUNDS[s.bound] or "cpu_bound"
            out[name] = out.get(name, 0) + s.weight
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))
