"""Memory over time: each device's allocations, the allocator's level, and the steps.

The node model sums memory per node and step (the ``bytes`` ... ``output_bytes``
columns); what was alive at one moment, and when the level peaked, needs the
allocations themselves. Loaders that read memory facts give the model a
:class:`MemorySource`, asked only when a command needs them (`memory`, the memory
advice); the source builds a :class:`MemoryProfile`: per device, the events in
time order with the level after each (:class:`DeviceMemory`), and every allocation
the profile saw as a block (:class:`Blocks`) that lives from its allocation event
to its free event. Loaders hand each device's raw events to
:func:`build_device`, which sorts them and matches each free to its allocation by
address. All times are integer nanoseconds on the profile's own time axis.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from itertools import accumulate
from operator import itemgetter
from typing import Any, NamedTuple, Optional, Protocol, Sequence

from .intervals import StepMark
from .node import Frame

#: Blocks.first of an allocation made before the profile began (its free was seen).
BEFORE = -1

# What a format can say (MemoryProfile.has).
#: The level is the allocator's own counter (else: the sum of what the profile saw).
HAS_COUNTER = "counter"
HAS_RESERVED = "reserved"
HAS_CAPACITY = "capacity"
HAS_FRAGMENTATION = "fragmentation"
#: Frees are recorded and matched to allocations.
HAS_FREES = "frees"
HAS_OWNER = "op"
HAS_SHAPE = "shape"
HAS_REGION = "region"
HAS_CODE = "code"
HAS_REQUESTED = "requested"


class Owner(NamedTuple):
    """Who allocated: the op type (a JAX program's name where events name no op) and
    the node (its scope path); "" where unknown."""

    op: str
    scope: str


@dataclass
class Blocks:
    """One device's allocations as columns (index i is one allocation).

    ``first``/``last`` are positions in the device's events: the allocation
    (:data:`BEFORE` if it was made before the profile) and the free (the event
    count if it was not freed while profiled). The other columns index the
    profile's tables; -1 is unknown.
    """

    first: array = field(default_factory=lambda: array("q"))
    last: array = field(default_factory=lambda: array("q"))
    nbytes: array = field(default_factory=lambda: array("q"))
    requested: array = field(default_factory=lambda: array("q"))
    owner: array = field(default_factory=lambda: array("q"))
    shape: array = field(default_factory=lambda: array("q"))
    region: array = field(default_factory=lambda: array("q"))
    code: array = field(default_factory=lambda: array("q"))

    def __len__(self) -> int:
        return len(self.nbytes)


@dataclass
class DeviceMemory:
    """One device (or allocator): its events in time order and the level after each.

    ``allocated`` is the allocator's counter where the format records it
    (``counted``), else the bytes of the blocks alive (those allocated before the
    profile included, where their frees were seen). ``reserved`` and
    ``fragmentation`` (0..1) are None where the format does not record them;
    ``capacity`` is -1 where unknown.
    """

    name: str
    times: array
    allocated: array
    blocks: Blocks
    counted: bool = False
    reserved: Optional[array] = None
    fragmentation: Optional[array] = None
    capacity: int = -1


@dataclass
class MemoryProfile:
    """A profile's memory: its devices, steps, and the tables blocks index.

    ``has`` says which facts the format records (HAS_*); ``notes`` are what the
    reader wants said about coverage (what the format leaves out); ``origin`` is
    the format, for notes.
    """

    devices: list[DeviceMemory] = field(default_factory=list)
    marks: list[StepMark] = field(default_factory=list)
    owners: list[Owner] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    traces: list[tuple[Frame, ...]] = field(default_factory=list)
    has: frozenset[str] = frozenset()
    notes: list[str] = field(default_factory=list)
    origin: str = ""


class MemorySource(Protocol):
    """What a loader leaves on the model: builds the memory profile when first asked.

    Picklable (a class instance, not a closure), since models travel between processes.
    """

    def __call__(self) -> MemoryProfile:
        ...


class Tables:
    """The tables a profile's blocks index (owners, labels, traces), filled as a reader
    meets each value, one entry per distinct value."""

    def __init__(self) -> None:
        self.owners: list[Owner] = []
        self.labels: list[str] = []
        self.traces: list[tuple[Frame, ...]] = []
        self._owners: dict[Owner, int] = {}
        self._labels: dict[str, int] = {}
        self._traces: dict[tuple[Frame, ...], int] = {}

    def owner(self, op: str, scope: str) -> int:
        """The index of owner (op, scope)."""
        key = Owner(op, scope)
        found = self._owners.get(key)
        if found is None:
            found = self._owners[key] = len(self.owners)
            self.owners.append(key)
        return found

    def label(self, text: str) -> int:
        """The index of a shape or region label ("" is unknown: -1)."""
        if not text:
            return -1
        found = self._labels.get(text)
        if found is None:
            found = self._labels[text] = len(self.labels)
            self.labels.append(text)
        return found

    def trace(self, frames: Sequence[Frame]) -> int:
        """The index of a code trace (outermost frame first; empty: -1)."""
        if not frames:
            return -1
        key = tuple(frames)
        found = self._traces.get(key)
        if found is None:
            found = self._traces[key] = len(self.traces)
            self.traces.append(key)
        return found

    def profile(self, devices: list[DeviceMemory], marks: list[StepMark],
                has: frozenset[str], notes: list[str], origin: str) -> MemoryProfile:
        """The MemoryProfile of ``devices`` indexing these tables."""
        return MemoryProfile(devices, marks, self.owners, self.labels, self.traces, has,
                             notes, origin)


@dataclass
class DeviceEvents:
    """One device's raw events as a reader collects them, as columns, in any order.

    ``size`` is positive for an allocation, negative for a free (its bytes);
    ``addr`` matches a free to its allocation. Attribute columns (requested,
    owner, shape, region, code) are read for allocations only. The counter
    columns are None where the format has no allocator counter; else they hold
    the allocator's state after each event.
    """

    name: str
    times: list[int] = field(default_factory=list)
    size: list[int] = field(default_factory=list)
    addr: list[Any] = field(default_factory=list)
    requested: list[int] = field(default_factory=list)
    owner: list[int] = field(default_factory=list)
    shape: list[int] = field(default_factory=list)
    region: list[int] = field(default_factory=list)
    code: list[int] = field(default_factory=list)
    allocated: Optional[list[int]] = None
    reserved: Optional[list[int]] = None
    fragmentation: Optional[list[float]] = None
    #: bytes the allocator could still give after each event (the capacity is the
    #: level plus this at the peak, where ``capacity`` is not given)
    available: Optional[list[int]] = None
    capacity: int = -1
    #: blocks allocated before the profile and never freed: (bytes, code)
    before: list[tuple[int, int]] = field(default_factory=list)

    def add(self, time: int, size: int, addr: Any, requested: int = -1, owner: int = -1,
            shape: int = -1, region: int = -1, code: int = -1) -> None:
        """One event (for readers of few events; large ones fill the columns)."""
        self.times.append(time)
        self.size.append(size)
        self.addr.append(addr)
        self.requested.append(requested)
        self.owner.append(owner)
        self.shape.append(shape)
        self.region.append(region)
        self.code.append(code)


def build_device(raw: DeviceEvents) -> DeviceMemory:
    """The DeviceMemory of ``raw``: events sorted by time (stable), each free matched
    to the latest open allocation at its address; a free with none is a block
    allocated before the profile. Without a counter, the level is the bytes of the
    blocks alive."""
    n = len(raw.times)
    order = sorted(range(n), key=raw.times.__getitem__)
    size = raw.size
    addr = raw.addr
    blocks = Blocks()
    first, last, nbytes = blocks.first, blocks.last, blocks.nbytes
    taken: list[int] = []  # the raw index of each block's allocation, -1 for BEFORE
    open_at: dict[Any, int] = {}
    for pos, i in enumerate(order):
        s = size[i]
        if s >= 0:
            open_at[addr[i]] = len(taken)
            taken.append(i)
            first.append(pos)
            last.append(n)
            nbytes.append(s)
            continue
        b = open_at.pop(addr[i], -1)
        if b >= 0:
            last[b] = pos
        else:
            taken.append(-1)
            first.append(BEFORE)
            last.append(pos)
            nbytes.append(-s)
    for column, out in ((raw.requested, blocks.requested), (raw.owner, blocks.owner),
                        (raw.shape, blocks.shape), (raw.region, blocks.region),
                        (raw.code, blocks.code)):
        out.extend(column[i] if i >= 0 else -1 for i in taken)
    for nbytes_before, code in raw.before:
        first.append(BEFORE)
        last.append(n)
        nbytes.append(nbytes_before)
        for out in (blocks.requested, blocks.owner, blocks.shape, blocks.region):
            out.append(-1)
        blocks.code.append(code)
    times = array("q", map(raw.times.__getitem__, order))
    counted = raw.allocated is not None
    if counted:
        allocated = array("q", map(raw.allocated.__getitem__, order))  # type: ignore[union-attr]
    else:
        before = sum(b for f, b in zip(first, nbytes) if f == BEFORE)
        allocated = array("q", accumulate((size[i] for i in order), initial=before))[1:]
    capacity = raw.capacity
    if capacity < 0 and raw.available is not None and n:
        peak = allocated.index(max(allocated))
        capacity = allocated[peak] + raw.available[order[peak]]
    return DeviceMemory(
        raw.name, times, allocated, blocks, counted,
        None if raw.reserved is None else array("q", map(raw.reserved.__getitem__, order)),
        None if raw.fragmentation is None
        else array("d", map(raw.fragmentation.__getitem__, order)),
        capacity)


def step_at(marks: Sequence[StepMark], t: int) -> Optional[int]:
    """The step whose marker holds time ``t`` (the latest started of those that do)."""
    best = None
    for m in marks:
        if m.start <= t < m.end and (best is None or m.start >= best.start):
            best = m
    return None if best is None else best.step


def sorted_marks(marks: Sequence[StepMark]) -> list[StepMark]:
    """Step markers by start, one per step (the earliest start and latest end of its
    markers)."""
    spans: dict[int, tuple[int, int]] = {}
    for m in marks:
        lo, hi = spans.get(m.step, (m.start, m.end))
        spans[m.step] = (min(lo, m.start), max(hi, m.end))
    return sorted((StepMark(s, lo, hi) for s, (lo, hi) in spans.items()),
                  key=itemgetter(1, 0))
