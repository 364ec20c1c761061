"""The in-memory profile: nodes by name, the recorded steps, and provenance."""

from __future__ import annotations

from bisect import insort
from dataclasses import dataclass
from typing import Callable, Optional

from .collectives import RankCollectives
from .intervals import IntervalSource, Intervals, intervals_from_nodes
from .memory import MemoryProfile, MemorySource
from .node import GraphNode
from .path_input import PathInput, PathSource


@dataclass
class Source:
    """Where a model came from: the input format and the files read."""

    kind: str
    paths: tuple[str, ...] = ()
    note: str = ""

    def describe(self) -> str:
        return "%s: %s" % (self.kind, ", ".join(self.paths))


class Model:
    """One loaded profile, whatever its input format.

    Loaders fill it; views only read it. ``nodes`` maps names to nodes;
    views iterate them in name order, as the engine does. ``has_trace`` may be
    decided late: a loader that defers resolving code traces gives
    :meth:`defer_has_trace` the check, which runs the first time it is read.
    """

    def __init__(self, source: Source, nodes: Optional[dict[str, GraphNode]] = None,
                 steps: Optional[list[int]] = None, has_trace: bool = False,
                 miss_accelerator_stream: bool = False,
                 notes: Optional[list[str]] = None) -> None:
        self.source = source
        self.nodes: dict[str, GraphNode] = {} if nodes is None else nodes
        self.steps: list[int] = [] if steps is None else steps
        self.miss_accelerator_stream = miss_accelerator_stream
        #: Notes a loader wants shown once (e.g. "3 gradient nodes not accounted").
        self.notes: list[str] = [] if notes is None else notes
        #: Notes made after loading (e.g. a profile read again): see take_notes.
        self.later_notes: list[str] = []
        self._has_trace = has_trace
        self._trace_check: Optional[Callable[[], bool]] = None
        self._traces_costly = True
        self._sorted: Optional[list[GraphNode]] = None
        self._interval_source: Optional[Callable[[], Intervals]] = None
        self._intervals: Optional[Intervals] = None
        self._step_set: Optional[tuple[list[int], set[int]]] = None
        self._path_source: Optional[Callable[[], list[PathInput]]] = None
        self._path_inputs: Optional[list[PathInput]] = None
        self._collective_source: Optional[Callable[[], Optional[RankCollectives]]] = None
        self._collectives: Optional[RankCollectives] = None
        self._memory_source: Optional[Callable[[], MemoryProfile]] = None
        self._memory: Optional[MemoryProfile] = None

    def add_step(self, step: int) -> None:
        """Add ``step`` to :attr:`steps` (kept sorted) unless it is there: a set
        look-up, so loaders may call it once per execution."""
        known = self._step_set
        if known is None or known[0] is not self.steps or len(known[1]) != len(self.steps):
            known = self._step_set = (self.steps, set(self.steps))
        if step not in known[1]:
            known[1].add(step)
            insort(self.steps, step)

    @property
    def signed_memory(self) -> bool:
        """Whether a node's bytes may be below 0: a PyTorch op's self memory (what it
        allocated minus what it freed, as key_averages counts it) is, for an op that
        frees more than it allocates. Memory bounds then apply only when given."""
        return self.source.kind == "chrome_trace"

    @property
    def has_trace(self) -> bool:
        """Whether any node carries a code trace (the code view needs one)."""
        check = self._trace_check
        if check is not None:
            self._trace_check = None
            self._has_trace = check() or self._has_trace
        return self._has_trace

    @has_trace.setter
    def has_trace(self, value: bool) -> None:
        self._has_trace = value

    def defer_has_trace(self, check: Callable[[], bool], costly: bool = True) -> None:
        """Decide ``has_trace`` (true if ``check()`` or if set true) when first read.

        ``costly``: looking the traces up costs about a load (the file is read
        again), so a loading process that sends the model on leaves them to a
        reload (see summary.pack_model); else it looks them up first.
        """
        self._trace_check = check
        self._traces_costly = costly

    @property
    def traces_deferred(self) -> bool:
        """Whether a loader left the code traces to be resolved when first read."""
        return self._trace_check is not None

    @property
    def traces_costly(self) -> bool:
        """Whether resolving the deferred traces costs about a load (see defer_has_trace)."""
        return self._trace_check is not None and self._traces_costly

    def take_notes(self) -> list[str]:
        """The :attr:`later_notes` made since the last call (the command that caused
        them shows them once)."""
        notes = list(self.later_notes)
        self.later_notes.clear()  # in place: whoever adds to it holds this list
        return notes

    def sorted_nodes(self) -> list[GraphNode]:
        """All nodes in name (byte) order, computed once."""
        if self._sorted is None or len(self._sorted) != len(self.nodes):
            self._sorted = [self.nodes[k] for k in sorted(self.nodes)]
        return self._sorted

    def set_interval_source(self, source: "IntervalSource | Callable[[], Intervals]") -> None:
        """Where :meth:`intervals` comes from (a loader's reader, called once when asked)."""
        self._interval_source = source
        self._intervals = None

    def intervals(self) -> Intervals:
        """The profile's time intervals, built on first use (from the loader's source,
        else from the nodes' execution times)."""
        if self._intervals is None:
            source = self._interval_source
            self._intervals = source() if source is not None else intervals_from_nodes(
                self.nodes.values())
        return self._intervals

    def set_path_source(self, source: "PathSource | Callable[[], list[PathInput]]") -> None:
        """Where :meth:`path_inputs` comes from (a loader's reader, called once when asked)."""
        self._path_source = source
        self._path_inputs = None

    def path_inputs(self) -> Optional[list[PathInput]]:
        """The events a critical path is built from, one input per timeline, built on
        first use; None when the format gives none (see model/path_input.py)."""
        if self._path_inputs is None and self._path_source is not None:
            self._path_inputs = self._path_source()
        return self._path_inputs

    def set_collective_source(self, source: Callable[[], Optional[RankCollectives]]) -> None:
        """Where :meth:`collectives` comes from (a loader's reader, called once when asked)."""
        self._collective_source = source
        self._collectives = None

    def collectives(self) -> Optional[RankCollectives]:
        """The profile's collective calls (None: its format or trace records none), read
        on first use."""
        source = self._collective_source
        if source is not None:
            self._collective_source = None
            self._collectives = source()
        return self._collectives

    def set_memory_source(self, source: "MemorySource | Callable[[], MemoryProfile]") -> None:
        """Where :meth:`memory` comes from (a loader's reader, called once when asked)."""
        self._memory_source = source
        self._memory = None

    @property
    def has_memory_source(self) -> bool:
        """Whether a loader left memory facts to read (see :meth:`memory`)."""
        return self._memory_source is not None

    def memory(self) -> MemoryProfile:
        """The profile's memory over time, built on first use (an empty profile when
        the format records none)."""
        if self._memory is None:
            source = self._memory_source
            self._memory = source() if source is not None else MemoryProfile(
                origin=self.source.kind)
        return self._memory
