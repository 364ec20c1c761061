"""The result of aligning collectives across ranks: instances, step verdicts, clocks.

Built by views/collectives.py (matching, lateness) and
views/collective_causes.py (causes, clock offsets); read by the renderers
and the advisor. Times are µs on the common clock unless said otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..model.collectives import CollectiveCall, RankCollectives

#: How instances were matched (CollectivesResult.mode).
BY_SEQ = "seq"
BY_GROUP_ORDER = "group order"
BY_STEP_ORDER = "order"
MODE_TEXT = {
    BY_SEQ: "matched by (process group, Seq)",
    BY_GROUP_ORDER: "matched by their order in each process group (the traces name "
                    "groups but give no sequence numbers)",
    BY_STEP_ORDER: "matched by the order of the collective calls in each step (the "
                   "traces name no process group and give no sequence number)",
}


@dataclass
class Instance:
    """One collective matched across ranks; times in µs on the common clock."""

    index: int
    step: int
    op: str
    group: str
    seq: int
    size: int
    dtype: str
    arrival: dict[str, float]
    end: dict[str, float]
    skew: float
    last: str
    wait: dict[str, float]
    #: Each rank's own lateness here (inherited lateness is not repeated).
    lateness: dict[str, float] = field(default_factory=dict)
    #: Continues the chain of the previous instance of its group.
    chained: bool = False
    #: The kernels' starts, when every rank's call has one (NCCL).
    device_arrival: dict[str, float] = field(default_factory=dict)
    device_skew: Optional[float] = None
    device_last: str = ""
    #: Each rank's call, as its trace gave it (own clock).
    calls: dict[str, CollectiveCall] = field(default_factory=dict)


@dataclass
class Cause:
    """What the straggler did before its late arrival that the others did not."""

    region: str
    excess: float
    rank_us: float
    others_us: float
    instance: int


@dataclass
class StepVerdict:
    """A step's straggler (None: nobody late), every rank's own lateness, the cause."""

    step: int
    straggler: Optional[str]
    lateness: dict[str, float]
    cause: Optional[Cause] = None
    instances: int = 0
    #: The instance where the straggler was charged the most own lateness (-1: none).
    charged: int = -1


@dataclass
class Clock:
    """Which profiles share a host, and the estimated offsets of the other hosts'
    clocks from the first's (µs; from the collectives' ends)."""

    hosts: dict[str, list[str]]
    offsets: dict[str, float] = field(default_factory=dict)
    samples: int = 0

    @property
    def shared(self) -> bool:
        """Whether every profile's trace comes from one host (one clock)."""
        return len(self.hosts) <= 1


@dataclass
class CollectivesResult:
    """The aligned collectives of several ranks."""

    ranks: list[str]
    mode: str
    instances: list[Instance]
    steps: list[StepVerdict]
    clock: Clock
    notes: list[str]
    mismatch: str = ""
    #: Each rank's collective calls (point-to-point ones included) before matching.
    calls: dict[str, int] = field(default_factory=dict)
    #: Each rank's data, for the causes and the timeline.
    data: dict[str, RankCollectives] = field(default_factory=dict)
    #: Each rank's clock shift onto the common clock (µs).
    shift: dict[str, float] = field(default_factory=dict)
