"""Time intervals of a profile: device events, host events and step markers.

The node model sums time per node; a step breakdown (busy, idle, overlap,
launch delays) needs the intervals themselves. Loaders that have them give
the model an :class:`IntervalSource`, asked only when a command needs the
intervals (the `steps` and `kernels` commands, the step advice); other
profiles fall back to :func:`intervals_from_nodes`, the execution times every
loader puts on the nodes. All times are integer nanoseconds on the profile's
own time axis.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, NamedTuple, Optional, Protocol

from .node import GraphNode

# Device event kinds.
COMPUTE = "compute"
COMMUNICATION = "communication"
MEMCPY_H2D = "memcpy_h2d"
MEMCPY_D2H = "memcpy_d2h"
MEMCPY_D2D = "memcpy_d2d"
MEMCPY_P2P = "memcpy_p2p"
MEMCPY = "memcpy"
MEMSET = "memset"
OTHER = "other"
MEMORY_KINDS = (MEMCPY_H2D, MEMCPY_D2H, MEMCPY_D2D, MEMCPY_P2P, MEMCPY, MEMSET)

# Host event kinds, in the order a host instant is labelled (the first present wins).
SYNC = "sync"
HOST_COMMUNICATION = "communication"
INPUT = "input"
LAUNCH = "launch"
HOST_OPS = "ops"
HOST_KINDS = (SYNC, HOST_COMMUNICATION, INPUT, LAUNCH, HOST_OPS)
#: A Python frame (Intervals.frames); not a host kind of the breakdown.
PYTHON_FRAME = "python"

# What a format can say (Intervals.has): the columns that need it show "--" without.
HAS_DEVICE = "device"
HAS_LAUNCH = "launch"
HAS_BYTES = "bytes"
HAS_SYNC = "sync"
HAS_INPUT = "input"
HAS_HOST_OPS = "host_ops"
HAS_HOST_COMM = "host_communication"
HAS_MARKERS = "markers"
#: device-side synchronisation events (Kineto's cuda_sync, recorded only when enabled)
HAS_DEVICE_SYNC = "device_sync"

# HTA's classification by kernel name (hta/utils/utils.py), plus the copy directions.
_NCCL = re.compile(r"nccl.*Kernel")
_COLLECTIVE = re.compile(r"(all-?reduce|all-?gather|reduce-?scatter|all-?to-?all"
                         r"|collective-permute)", re.I)
_MEMORY = re.compile(r"(Memcpy)|(Memset)|(dma)")
_NOT_COMPUTE = re.compile(r"(.*Memcpy)|(Memset)|(.*Sync)")
_COPY_KINDS = (
    (re.compile(r"HtoD|H2D|Host\s*->\s*Device|HostToDevice", re.I), MEMCPY_H2D),
    (re.compile(r"DtoH|D2H|Device\s*->\s*Host|DeviceToHost", re.I), MEMCPY_D2H),
    (re.compile(r"PtoP|P2P|Peer", re.I), MEMCPY_P2P),
    (re.compile(r"DtoD|D2D|Device\s*->\s*Device|DeviceToDevice", re.I), MEMCPY_D2D),
)


def copy_kind(text: str) -> str:
    """The memcpy kind a copy's name or details say (MEMCPY if they say no direction)."""
    for pattern, kind in _COPY_KINDS:
        if pattern.search(text):
            return kind
    return MEMCPY


def classify_kernel(name: str) -> str:
    """A device event's kind from its name, by HTA's rules: NCCL kernels are
    communication (XLA's collective fusions too), names starting with Memcpy,
    Memset or dma are memory, names with no Memcpy, Memset or Sync are compute."""
    if _NCCL.match(name) or _COLLECTIVE.match(name):
        return COMMUNICATION
    if _MEMORY.match(name):
        return MEMSET if name.startswith("Memset") else copy_kind(name)
    if not _NOT_COMPUTE.match(name):
        return COMPUTE
    return OTHER


class DeviceEvent(NamedTuple):
    """One execution on a device: [start, end) ns, stream, kind, name, bytes
    (-1 unknown), the launching host call's [launch, launch_end) (-1 unknown),
    and the step it belongs to (None: outside every step)."""

    start: int
    end: int
    device: str
    stream: str
    kind: str
    name: str
    nbytes: int = -1
    launch: int = -1
    launch_end: int = -1
    step: Optional[int] = None


class DeviceSync(NamedTuple):
    """A device-side synchronisation (Kineto's ``cuda_sync``) on one device lane: [start,
    end) ns, its kind (``Event Sync``, ``Stream Wait Event``, ``Context Sync``, ``Stream
    Sync``), the step of the call that made it, and what it waited for where the trace
    says: the stream (``""`` unknown) and the device event on it that the wait covered
    (its name and end, ``""``/-1 unknown), the host call that recorded the CUDA event
    waited on ([start, end) ns, -1 unknown), and the start of the host call that made
    the sync (-1 unknown)."""

    start: int
    end: int
    device: str
    stream: str
    name: str
    step: Optional[int] = None
    waited_stream: str = ""
    waited_name: str = ""
    waited_end: int = -1
    record: int = -1
    record_end: int = -1
    launch: int = -1


class HostEvent(NamedTuple):
    """A host interval of one kind (SYNC, INPUT, LAUNCH, ...) on one thread (its id as
    the trace gives it)."""

    start: int
    end: int
    kind: str
    name: str
    thread: object = ""


class StepMark(NamedTuple):
    """Step ``step`` ran on the host over [start, end) ns."""

    step: int
    start: int
    end: int


@dataclass
class Intervals:
    """A profile's intervals. ``has`` says which facts the format records (HAS_*);
    ``origin`` is how they were read, for notes."""

    devices: list[DeviceEvent] = field(default_factory=list)
    host: list[HostEvent] = field(default_factory=list)
    marks: list[StepMark] = field(default_factory=list)
    has: frozenset[str] = frozenset()
    origin: str = ""
    #: Python frames of the program's own code (``file.py(N): func``, not the
    #: framework's), kind PYTHON_FRAME, where the trace records a Python stack.
    frames: list[HostEvent] = field(default_factory=list)
    #: Device-side synchronisations (not work: kept apart from ``devices``).
    syncs: list[DeviceSync] = field(default_factory=list)

    def device_names(self) -> list[str]:
        """The devices with events, sorted."""
        return sorted({e.device for e in self.devices})


class IntervalSource(Protocol):
    """What a loader leaves on the model: builds the intervals when first asked.

    Picklable (a class instance, not a closure), since models travel between processes.
    """

    def __call__(self) -> Intervals:
        ...


#: The accelerator families a device is named by (``gpu:0``, ``mtia:0``, ``xpu:0``): CUDA
#: and ROCm GPUs, Meta's MTIA, Intel's XPU, Habana's HPU, PyTorch's PrivateUse1 backends.
ACCELERATORS = ("gpu", "mtia", "xpu", "hpu", "privateuse1")
_GPU = re.compile(r"(?:device:)?(%s):(\d+)" % "|".join(ACCELERATORS), re.I)


def short_device(device: str) -> str:
    """``gpu:0`` for any spelling of GPU 0 (``/job:.../device:GPU:0/stream:all``), and
    likewise ``mtia:0``, ``xpu:0``... for the other :data:`ACCELERATORS`."""
    m = _GPU.search(device)
    return "%s:%s" % (m.group(1).lower(), m.group(2)) if m else device


def intervals_from_nodes(nodes: Iterable[GraphNode]) -> Intervals:
    """Intervals from the execution times on the nodes (any format, µs precision).

    Accelerator executions (``stream:all`` records) are device events,
    classified by op type; a node's executions on a GPU's canonical device are
    the host calls that launched them (paired in order); cpu executions are
    host ops. Each step's marker spans all of its executions.
    """
    devices: list[DeviceEvent] = []
    host: list[HostEvent] = []
    bounds: dict[int, list[int]] = {}
    launches = 0
    for node in nodes:
        for step, rec in node.execs.items():
            span = bounds.setdefault(step, [1 << 62, -(1 << 62)])
            launch_calls: list[tuple[int, int]] = []
            for dev, execs in rec.cpu_execs.items():
                on_gpu = _GPU.search(dev) is not None and bool(rec.accelerator_execs)
                for start, dur in execs:
                    if start <= 0:
                        continue
                    a, b = start * 1000, (start + dur) * 1000
                    span[0], span[1] = min(span[0], a), max(span[1], b)
                    host.append(HostEvent(a, b, LAUNCH if on_gpu else HOST_OPS, node.name))
                    if on_gpu:
                        launch_calls.append((a, b))
            launch_calls.sort()
            for dev, execs in rec.accelerator_execs.items():
                kind = classify_kernel(node.op or node.name)
                for i, (start, dur) in enumerate(sorted(execs)):
                    if start <= 0:
                        continue
                    a, b = start * 1000, (start + dur) * 1000
                    span[0], span[1] = min(span[0], a), max(span[1], b)
                    call = launch_calls[i] if i < len(launch_calls) else (-1, -1)
                    launches += call[0] >= 0
                    devices.append(DeviceEvent(a, b, short_device(dev), "all", kind, node.op,
                                               -1, call[0], call[1], step))
    marks = [StepMark(step, lo, hi) for step, (lo, hi) in sorted(bounds.items()) if hi > lo]
    has = {HAS_HOST_OPS}
    if devices:
        has.add(HAS_DEVICE)
    if launches:
        has.add(HAS_LAUNCH)
    devices.sort()
    host.sort()
    return Intervals(devices, host, marks, frozenset(has), "node execution times")
