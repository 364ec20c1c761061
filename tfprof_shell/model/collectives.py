"""What one rank's trace says about its collective calls: the calls, the top-level
regions around them, its steps and its clock.

A loader that reads collectives gives the model a source
(:meth:`~tfprof_shell.model.Model.set_collective_source`) that builds one
:class:`RankCollectives` when first asked. Times are microseconds on the
trace's own clock (``ts``); :attr:`RankCollectives.base_ns` places that clock
on the wall clock. Matching the calls across ranks is views/collectives.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional

#: Operations between two ranks, not the whole group: never matched as instances.
POINT_TO_POINT = frozenset(("send", "recv", "recv_any_source", "isend", "irecv",
                            "batch_isend_irecv"))
#: What a trace's calls are read from (RankCollectives.source).
FROM_PARAM_COMMS = "record_param_comms"
FROM_C10D = "c10d"


class CollectiveCall(NamedTuple):
    """One call into a collective on one rank.

    ``start``/``end``: the host call (µs). ``op``: the collective's name as
    record_param_comms spells it (``allreduce``, ``_allgather_base``, ...).
    ``group``: its process group's name ("" when the trace names none);
    ``seq``: its sequence number in the group (-1 when none). ``size`` and
    ``out_size``: elements in and out (-1 unknown); ``dtype`` ("" unknown).
    ``device_start``/``device_end``: its kernel on the device (-1: none);
    ``done``: when the rank saw it finish (its kernel's or the backend worker's
    end; -1 unknown). ``step``: the step the call is in.
    """

    start: float
    end: float
    op: str
    group: str = ""
    seq: int = -1
    size: int = -1
    out_size: int = -1
    dtype: str = ""
    thread: str = ""
    step: int = -1
    device_start: float = -1.0
    device_end: float = -1.0
    done: float = -1.0

    @property
    def point_to_point(self) -> bool:
        """Whether the call involves two ranks only (send, recv)."""
        return self.op in POINT_TO_POINT


class Region(NamedTuple):
    """A top-level event (an annotation or an op) on a thread that calls collectives,
    or on the thread with the step markers: [start, end) µs."""

    start: float
    end: float
    name: str


@dataclass
class RankCollectives:
    """One rank's collective calls, in start order, and what explains their timing.

    ``rank`` and ``world_size`` come from the trace's header (-1, 0 unknown);
    ``groups`` maps a process group's name to its global ranks; ``regions``
    are sorted by start; ``steps`` holds (step, start, end) per step marker.
    ``host`` and ``base_ns`` (the wall-clock time of the trace's time 0, ns;
    0 unknown) place the clock.
    """

    calls: list[CollectiveCall] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    steps: list[tuple[int, float, float]] = field(default_factory=list)
    rank: int = -1
    world_size: int = 0
    backend: str = ""
    host: str = ""
    base_ns: int = 0
    groups: dict[str, tuple[int, ...]] = field(default_factory=dict)
    source: str = ""

    def pack(self) -> tuple[Any, ...]:
        """Plain values (marshal-able) that :func:`unpack_rank` turns back into this."""
        names: dict[str, int] = {}
        index = names.setdefault
        calls = [tuple(c) for c in self.calls]
        regions = [(r.start, r.end, index(r.name, len(names))) for r in self.regions]
        return (calls, list(names), regions, list(self.steps), self.rank, self.world_size,
                self.backend, self.host, self.base_ns,
                {k: tuple(v) for k, v in self.groups.items()}, self.source)


class KnownCollectives:
    """A collective source that already holds its answer (an unpacked summary's)."""

    def __init__(self, value: Optional[RankCollectives]) -> None:
        self.value = value

    def __call__(self) -> Optional[RankCollectives]:
        return self.value


def unpack_rank(packed: Optional[tuple[Any, ...]]) -> Optional[RankCollectives]:
    """The RankCollectives :meth:`RankCollectives.pack` gave (None stays None)."""
    if packed is None:
        return None
    (calls, names, regions, steps, rank, world, backend, host, base_ns, groups,
     source) = packed
    return RankCollectives(
        [CollectiveCall(*c) for c in calls],
        [Region(a, b, names[i]) for a, b, i in regions],
        [tuple(s) for s in steps], rank, world, backend, host, base_ns,  # type: ignore[misc]
        {k: tuple(v) for k, v in groups.items()}, source)
