"""PyTorch traces -> the inputs of their critical path (one per trace file).

The events are those the loader kept (:class:`.torch_intervals.KeptEvents`):
``cpu_op`` events are host ops, ``cuda_runtime``/``cuda_driver`` calls are
runtime calls, the DataLoader's ``__next__`` annotation is data loading, other
``user_annotation`` events (``ProfilerStep#N``, ``record_function``) are scopes,
kernels, copies and sets are device work, and ``cuda_sync`` events join a sync
call to the device. The launch and blocking calls are HTA's lists
(``hta/analyzers/critical_path_analysis.py``, ``trace_symbol_table.py``).
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from ..model.path_input import (ANNOTATION, DATA, DEVICE, HTA, OP, RUNTIME, SYNC, PathEvent,
                                PathInput)
from .torch_devices import DEVICE_CATS
from .torch_intervals import KeptEvents
from .trace_events import NO_ARGS

#: Runtime calls that queue device work (HTA's queue length counts them).
LAUNCHES = frozenset((
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cudaMemcpyAsync",
    "cudaMemsetAsync", "runFunction - job_prep_and_submit_for_execution", "hipLaunchKernel",
    "hipExtModuleLaunchKernel", "hipMemsetAsync", "hipMemcpyAsync", "hipMemcpyWithStream"))
#: Calls that block the host until the device is done (their exit edge weighs nothing).
BLOCKING = frozenset((
    "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventQuery",
    "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpyAsync"))
_DATA = re.compile(r"enumerate\(DataLoader\)#.*__next__")
_STEP = re.compile(r"ProfilerStep#(\d+)")
_HOST_CATS = frozenset(("cpu_op", "operator"))


def _ns(value: Any) -> int:
    try:
        return int(round(float(value) * 1000))
    except (TypeError, ValueError, OverflowError):
        return 0


class TorchPathSource:
    """The path inputs of a model's PyTorch traces, from the events kept at load time."""

    def __init__(self, files: Sequence[KeptEvents]) -> None:
        self.files = list(files)

    def __call__(self) -> list[PathInput]:
        return [_input(index, kept) for index, kept in enumerate(self.files)]


def _input(index: int, kept: KeptEvents) -> PathInput:
    out: list[PathEvent] = []
    add = out.append
    steps: dict[int, int] = {}
    for ev in kept.host:
        cat = ev.cat
        if cat in _HOST_CATS:
            kind = OP
        elif cat == "user_annotation":
            name = str(ev.name)
            kind = DATA if _DATA.match(name) else ANNOTATION
            m = _STEP.fullmatch(name)
            if m:
                steps[len(out)] = int(m.group(1))
        else:
            continue  # Python frames: not in HTA's graph
        ts, dur = ev.ts, ev.dur
        try:
            start = int(ts * 1000 + 0.5)
            end = start + int(dur * 1000 + 0.5)
        except TypeError:
            start = _ns(ts)
            end = start + _ns(dur)
        add((start, end, kind, ev.name, cat, ev.pid, ev.tid, ts, dur, None, None, None, None))
    for ev in kept.runtime:
        ts, dur = ev.ts, ev.dur
        try:  # _ns's arithmetic inline; anything else takes _ns itself
            start = round(ts * 1000.0)
            end = start + round(dur * 1000.0)
        except (TypeError, ValueError, OverflowError):
            start = _ns(ts)
            end = start + _ns(dur)
        add((start, end, RUNTIME, ev.name, ev.cat, ev.pid, ev.tid, ts, dur,
             (ev.args or NO_ARGS).correlation, None, None, None))
    # device work, then the cuda_sync records (which the loader keeps apart)
    for ev in kept.device + kept.sync:
        args = ev.args or NO_ARGS
        ts, dur = ev.ts, ev.dur
        try:
            start = round(ts * 1000.0)
            end = start + round(dur * 1000.0)
        except (TypeError, ValueError, OverflowError):
            start = _ns(ts)
            end = start + _ns(dur)
        if ev.cat == "cuda_sync":
            stream = args.stream if isinstance(args.stream, int) else -1
            add((start, end, SYNC, ev.name, ev.cat, ev.pid, ev.tid, ts, dur,
                 args.correlation, stream, args.device,
                 (args.wait_on_stream, args.wait_on_cuda_event_record_corr_id)))
        elif ev.cat in DEVICE_CATS:
            add((start, end, DEVICE, ev.name, ev.cat, ev.pid, ev.tid, ts, dur,
                 args.correlation, args.stream, args.device, None))
    return PathInput(out, HTA, "PyTorch trace events", LAUNCHES, BLOCKING, False, steps,
                     None if steps else index)


__all__ = ["BLOCKING", "LAUNCHES", "TorchPathSource"]
