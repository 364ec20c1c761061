"""What a critical path is computed from: one timeline's events, whatever the format.

Loaders that can say how work depends on other work (host call stacks,
launches, device streams, synchronisations) leave the model a
:class:`PathSource`; `critpath` asks it once for the :class:`PathInput` of
each timeline (one per trace file or host) and builds its graph from them
(views/critpath.py). Times are integer nanoseconds on the profile's own
axis; ``ts``/``dur`` keep the trace's own numbers for output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Protocol

# Event kinds.
#: A host op (PyTorch cpu_op, a TF/XLA host event): a node of the graph.
OP = 0
#: A runtime or driver call (launch, copy, sync): a node.
RUNTIME = 1
#: A data-loading span (the DataLoader's __next__): a node whose time is data loading.
DATA = 2
#: A host scope (record_function, a step marker): not a node; nests ops, names windows.
ANNOTATION = 3
#: Work on a device stream (kernel, copy, set): a node.
DEVICE = 4
#: A device-side record of a synchronisation (Kineto's cuda_sync): joins a sync call
#: to the device work it waited for.
SYNC = 5

#: Each kind's name in outputs.
KIND_NAMES = ("op", "runtime", "data", "annotation", "device", "sync")

#: How the path of a format is defined (PathInput.definition).
HTA = "hta"
XPLANE = "xplane"


#: One event, a plain tuple (made by the million, read by index):
#: (start, end, kind, name, cat, pid, tid, ts, dur, corr, stream, device, extra):
#: [start, end) ns, kind, name, the trace's category, process and thread (a stream's
#: thread for device events), the trace's own ts and dur, the correlation id linking a
#: launch and its device work (None), the device stream and device of device and sync
#: events (None), and extra facts (a sync's (wait_on_stream, record correlation)).
PathEvent = tuple


@dataclass
class PathInput:
    """The events of one timeline (a trace file, a host) and how to read them.

    ``launch_names`` are the runtime calls that queue device work (the queue a
    launch delay needs); ``blocking_names`` the calls that wait for the device
    (their exit weighs nothing: the device path carries the wait). With
    ``one_to_many`` a launch may start several device events (CUDA graphs).
    """

    events: list[PathEvent]
    definition: str = HTA
    origin: str = ""
    launch_names: frozenset[str] = frozenset()
    blocking_names: frozenset[str] = frozenset()
    one_to_many: bool = False
    #: Step markers: the index of a marker (an ANNOTATION event) -> its step.
    steps: dict[int, int] = field(default_factory=dict)
    #: Step of a timeline without step markers (its file index), else None.
    default_step: Optional[int] = None
    #: What the analysis derives from the events once (views/critpath.py keeps its
    #: prepared timeline here), so later commands reuse it.
    derived: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


class PathSource(Protocol):
    """What a loader leaves on the model: the timelines' inputs, built when first asked.

    Picklable (a class instance, not a closure), since models travel between processes.
    """

    def __call__(self) -> list[PathInput]:
        ...
