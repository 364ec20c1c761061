"""What each Kineto event category is to the PyTorch loader, and which device ran an event.

The categories are libkineto's ``ActivityType`` names (``ActivityType.h``),
with the capitalised spellings of the first Kineto traces (``Operator``,
``Runtime``, ``Kernel``, ``Memcpy``, ``Memset``):

* host ops: ``cpu_op`` (``operator``); scopes: ``user_annotation``;
* device work, on a device's lanes: ``kernel``, ``gpu_memcpy``,
  ``gpu_memset`` (CUDA, ROCm, XPU and PrivateUse1 backends all write these)
  and MTIA's ``mtia_ccp_events``;
* host calls that launch device work (each names its work by ``correlation``):
  ``cuda_runtime``, ``cuda_driver`` (ROCm's HIP calls too), ``mtia_runtime``,
  ``xpu_runtime``, ``xpu_driver``, ``privateuse1_runtime``,
  ``privateuse1_driver``, ``hpu_op``, ``glow_runtime``;
* device-side synchronisation: ``cuda_sync`` (``Event Sync``, ``Stream Wait
  Event``, ``Context Sync``, ``Stream Sync``); host-side: ``xpu_sync`` (and
  ``collective_comm``, XPU's collectives);
* everything else (``gpu_user_annotation``, ``cuda_event``, counters, flows,
  ``overhead``, ...) marks time but is no work of its own.

A device is named ``FAMILY:INDEX`` (``gpu:0``, ``mtia:0``, ``xpu:1``): the
family of the call that launched the event, else MTIA for ``mtia_ccp_events``,
else the one family every launch of the file drives, else ``gpu``; the index
is the event's ``device`` argument, else its process id.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

#: The accelerator families, in the order device names sort.
FAMILIES = ("gpu", "mtia", "xpu", "hpu", "privateuse1")

#: Host ops (a node each) and scopes (a path element), by category.
OP_CATS = frozenset(("cpu_op", "operator", "Operator"))
#: Device work by category: the kernels, copies and sets of every backend.
DEVICE_CATS = frozenset(("kernel", "gpu_memcpy", "gpu_memset", "mtia_ccp_events",
                         "Kernel", "Memcpy", "Memset"))
#: Calls that launch device work, by category -> the family of the device they drive
#: ("" for a runtime that does not say).
LAUNCH_CATS: dict[str, str] = {
    "cuda_runtime": "gpu", "cuda_driver": "gpu", "Runtime": "gpu", "runtime": "gpu",
    "Driver": "gpu", "mtia_runtime": "mtia", "xpu_runtime": "xpu", "xpu_driver": "xpu",
    "privateuse1_runtime": "privateuse1", "privateuse1_driver": "privateuse1",
    "hpu_op": "hpu", "glow_runtime": "",
}
#: Device-side synchronisation (a stream or the host waiting on device work).
SYNC_CATS = frozenset(("cuda_sync",))
#: Host-side work a plugin writes as its own category: XPU's synchronisation waits,
#: collectives (XPU's ``xccl::`` calls).
HOST_WORK_CATS = frozenset(("xpu_sync", "collective_comm"))
#: Categories of copies and sets (the rest of DEVICE_CATS is kernels).
MEMCPY_CATS = frozenset(("gpu_memcpy", "Memcpy"))
MEMSET_CATS = frozenset(("gpu_memset", "Memset"))
_MTIA_WORK = "mtia_ccp_events"


#: The types an id (correlation, External id) may have; anything else names nothing.
ID_TYPES = (int, str, float)


def event_id(value: Any) -> Any:
    """An id argument as a dictionary key: None unless a number or a string (a broken
    trace may hold anything there)."""
    return value if value.__class__ in ID_TYPES else None


def device_index(ev: Any) -> int:
    """The device an event ran on: its ``device`` argument, else its process id
    (device lanes' pid is the device), else 0."""
    args = ev.args
    for value in ((args.device if args is not None else None), ev.pid):
        try:
            return int(value)
        except (TypeError, ValueError):
            continue
    return 0


def stream_of(ev: Any) -> str:
    """An event's stream: its ``stream`` argument, else its lane (XPU names a queue by tid)."""
    args = ev.args
    stream = args.stream if args is not None else ""
    if stream == "" or stream is None:
        return str(ev.tid)
    return str(stream)


class DeviceNames:
    """Names the device of each device event of one trace (see the module)."""

    def __init__(self, launch_families: Iterable[str]) -> None:
        families = {f for f in launch_families if f}
        #: the family of work no call launched: the trace's one family, else gpu
        self.default = families.pop() if len(families) == 1 else "gpu"
        self._names: dict[tuple[Any, ...], str] = {}

    def name(self, ev: Any, family: Optional[str]) -> str:
        """``FAMILY:INDEX`` of device event ``ev`` launched by a call of ``family``
        (None: no launch found; "": the launch's runtime does not say)."""
        args = ev.args
        # looked up by the raw fields, worked out once per distinct value
        key = (family, ev.cat, None if args is None else args.device, ev.pid)
        try:
            found = self._names.get(key)
        except TypeError:  # an unhashable field: a broken event
            found, key = None, None
        if found is None:
            if not family:
                family = "mtia" if ev.cat == _MTIA_WORK else self.default
            found = "%s:%d" % (family, device_index(ev))
            if key is not None:
                self._names[key] = found
        return found
