#!/usr/bin/env python3
"""Write small GPU-shaped PyTorch profiler traces for the critical-path tests.

No GPU was at hand, so these traces are simulated, in the shape Kineto writes
(``cpu_op``/``cuda_runtime`` on host threads, ``kernel``/``gpu_memcpy`` on
stream threads linked by ``correlation``, ``cuda_sync`` events with
``wait_on_stream`` and ``wait_on_cuda_event_record_corr_id``): a tiny
discrete simulation runs a training step's host calls, queues their kernels
on streams and lets syncs wait for them, so every timestamp is consistent.
Both tfprof-shell and Holistic Trace Analysis read them; the HTA goldens in
``tests/golden/hta/`` are HTA's critical paths of these files (see
``make_critpath_goldens.py`` there). Deterministic: run it again and the
files come out the same::

    python tests/critpath/make_traces.py          # writes tests/critpath/*.pt.trace.json
"""

from __future__ import annotations

import json
import os
import random
import sys
from typing import Any, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
HOST_PID = 1000
MAIN, BACKWARD = 1000, 1001
GPU_PID = 0
COMPUTE, SIDE, COMM = 7, 20, 25
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


class Sim:
    """Host threads with clocks, streams that run what was queued in order."""

    def __init__(self, seed: int, start: float = 1_000_000.0) -> None:
        self.rng = random.Random(seed)
        self.events: list[dict[str, Any]] = []
        self.now = {MAIN: start, BACKWARD: start}
        self.stream_free = {COMPUTE: start, SIDE: start, COMM: start}
        #: per stream, the end of the last kernel launched on it (for event records)
        self.last_kernel_end = {COMPUTE: start, SIDE: start, COMM: start}
        self.waits: dict[int, float] = {}  # stream -> time its next kernel must wait for
        self.corr = 100
        self.ext = 1
        self.open: dict[int, list[dict[str, Any]]] = {MAIN: [], BACKWARD: []}

    def jitter(self, us: float, spread: float = 0.3) -> float:
        return round(us * (1 + self.rng.uniform(-spread, spread)), 3)

    def advance(self, tid: int, us: float) -> None:
        self.now[tid] = round(self.now[tid] + self.jitter(us), 3)

    # -- host events ----------------------------------------------------------

    def begin(self, tid: int, name: str, cat: str = "cpu_op") -> None:
        self.advance(tid, 1.5)
        ev = {"ph": "X", "cat": cat, "name": name, "pid": HOST_PID, "tid": tid,
              "ts": self.now[tid], "args": {"External id": self.ext}}
        self.ext += 1
        self.open[tid].append(ev)
        self.advance(tid, 2.0)

    def end(self, tid: int) -> None:
        self.advance(tid, 1.5)
        ev = self.open[tid].pop()
        ev["dur"] = round(self.now[tid] - ev["ts"], 3)
        self.events.append(ev)

    def work(self, tid: int, name: str, us: float) -> None:
        """A leaf cpu op of about ``us``."""
        self.begin(tid, name)
        self.advance(tid, us)
        self.end(tid)

    def runtime(self, tid: int, name: str, us: float, **args: Any) -> int:
        self.advance(tid, 0.8)
        self.corr += 1
        ev = {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": HOST_PID, "tid": tid,
              "ts": self.now[tid], "dur": self.jitter(us),
              "args": dict({"cbid": 1, "correlation": self.corr,
                            "External id": self.open[tid][-1]["args"]["External id"]
                            if self.open[tid] else 0}, **args)}
        self.events.append(ev)
        self.now[tid] = round(ev["ts"] + ev["dur"], 3)
        return self.corr

    # -- device work ----------------------------------------------------------

    def launch(self, tid: int, kernel: str, us: float, stream: int = COMPUTE,
               cat: str = "kernel", call: str = "cudaLaunchKernel") -> dict[str, Any]:
        """A launch call and the kernel it queues on ``stream``."""
        self.advance(tid, 0.8)
        call_ts = self.now[tid]
        corr = self.runtime(tid, call, 4.0)
        start = max(call_ts + self.jitter(6.0), self.stream_free[stream] + self.jitter(1.2),
                    self.waits.pop(stream, 0.0))
        ev = {"ph": "X", "cat": cat, "name": kernel, "pid": GPU_PID, "tid": stream,
              "ts": round(start, 3), "dur": self.jitter(us, 0.1),
              "args": {"External id": self.open[tid][-1]["args"]["External id"]
                       if self.open[tid] else 0, "queued": 0, "device": 0, "context": 1,
                       "stream": stream, "correlation": corr}}
        if cat == "gpu_memcpy":
            ev["args"]["bytes"] = 4 << 20
        self.events.append(ev)
        self.stream_free[stream] = round(ev["ts"] + ev["dur"], 3)
        self.last_kernel_end[stream] = self.stream_free[stream]
        return ev

    def sync(self, tid: int, call: str, sync_name: str, stream: int, until: float,
             **sync_args: Any) -> None:
        """A blocking call that returns after ``until`` and its cuda_sync event."""
        self.advance(tid, 0.8)
        start = self.now[tid]
        end = round(max(start + self.jitter(3.0), until + self.jitter(2.0)), 3)
        self.corr += 1
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": call, "pid": HOST_PID,
                            "tid": tid, "ts": start, "dur": round(end - start, 3),
                            "args": {"cbid": 2, "correlation": self.corr}})
        args = dict({"device": 0, "context": 1, "stream": stream,
                     "correlation": self.corr}, **sync_args)
        sync_start = round(start + self.jitter(1.0), 3)
        self.events.append({"ph": "X", "cat": "cuda_sync", "name": sync_name, "pid": GPU_PID,
                            "tid": stream if stream >= 0 else COMPUTE, "ts": sync_start,
                            "dur": round(max(end - 0.5, sync_start + 0.2) - sync_start, 3),
                            "args": args})
        self.now[tid] = end

    def record_event(self, tid: int, stream: int) -> int:
        """cudaEventRecord on ``stream``: its correlation id."""
        return self.runtime(tid, "cudaEventRecord", 2.0)


def _step(sim: Sim, step: int, shape: str, data_loader: bool) -> None:
    long_k = {"gpu_bound": 180.0, "launch_bound": 3.0}.get(shape, 40.0)
    short_k = {"gpu_bound": 25.0, "launch_bound": 1.5}.get(shape, 4.0)
    sim.begin(MAIN, "ProfilerStep#%d" % step, "user_annotation")
    if data_loader:
        sim.begin(MAIN, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                  "user_annotation")
        sim.advance(MAIN, 60.0)  # Python work of the loader, no op recorded
        sim.work(MAIN, "aten::stack", 25.0)
        sim.end(MAIN)
    # the batch to the GPU
    sim.begin(MAIN, "aten::to")
    sim.begin(MAIN, "aten::copy_")
    sim.launch(MAIN, "Memcpy HtoD (Pageable -> Device)", 30.0, cat="gpu_memcpy",
               call="cudaMemcpyAsync")
    sim.end(MAIN)
    sim.end(MAIN)
    # forward: linear layers
    sim.begin(MAIN, "forward", "user_annotation")
    for i in range(4):
        sim.begin(MAIN, "aten::linear")
        sim.begin(MAIN, "aten::addmm")
        sim.launch(MAIN, "ampere_sgemm_128x64_tn", long_k)
        sim.end(MAIN)
        sim.end(MAIN)
        sim.begin(MAIN, "aten::relu")
        sim.launch(MAIN, "void at::native::vectorized_elementwise_kernel<4, relu>", short_k)
        sim.end(MAIN)
        sim.advance(MAIN, 8.0)  # Python between ops
    # side stream: waits for the forward through an event
    record = sim.record_event(MAIN, COMPUTE)
    wait_corr = sim.runtime(MAIN, "cudaStreamWaitEvent", 2.0)
    sim.waits[SIDE] = sim.last_kernel_end[COMPUTE]
    sim.events.append({"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event",
                       "pid": GPU_PID, "tid": SIDE, "ts": round(sim.now[MAIN] + 3.0, 3),
                       "dur": 0.5, "args": {"device": 0, "context": 1, "stream": SIDE,
                                            "correlation": wait_corr,
                                            "wait_on_stream": COMPUTE,
                                            "wait_on_cuda_event_record_corr_id": record,
                                            "wait_on_cuda_event_id": step}})
    sim.begin(MAIN, "aten::sum")
    sim.launch(MAIN, "void at::native::reduce_kernel<512, 1>", short_k * 3, stream=SIDE)
    sim.end(MAIN)
    sim.end(MAIN)  # forward
    # loss.item(): a copy back and a stream sync
    sim.begin(MAIN, "aten::item")
    sim.begin(MAIN, "aten::_local_scalar_dense")
    sim.launch(MAIN, "Memcpy DtoH (Device -> Pageable)", 2.0, cat="gpu_memcpy",
               call="cudaMemcpyAsync")
    sim.sync(MAIN, "cudaStreamSynchronize", "Stream Sync", COMPUTE,
             sim.stream_free[COMPUTE])
    sim.end(MAIN)
    sim.end(MAIN)
    # backward on the autograd thread, after the main thread hands over
    sim.now[BACKWARD] = max(sim.now[BACKWARD], sim.now[MAIN])
    sim.begin(MAIN, "autograd::engine::backward", "user_annotation")
    for i in range(4):
        sim.begin(BACKWARD, "autograd::engine::evaluate_function: AddmmBackward0")
        sim.begin(BACKWARD, "aten::mm")
        sim.launch(BACKWARD, "ampere_sgemm_64x64_nn", long_k)
        sim.end(BACKWARD)
        sim.begin(BACKWARD, "aten::mm")
        sim.launch(BACKWARD, "ampere_sgemm_64x64_nt", long_k * 0.7)
        sim.end(BACKWARD)
        sim.end(BACKWARD)
    sim.now[MAIN] = max(sim.now[MAIN], sim.now[BACKWARD])
    sim.end(MAIN)
    # gradients all-reduced on the communication stream, after the compute stream
    record = sim.record_event(MAIN, COMPUTE)
    wait_corr = sim.runtime(MAIN, "cudaStreamWaitEvent", 2.0)
    sim.waits[COMM] = sim.last_kernel_end[COMPUTE]
    sim.events.append({"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event",
                       "pid": GPU_PID, "tid": COMM, "ts": round(sim.now[MAIN] + 3.0, 3),
                       "dur": 0.5, "args": {"device": 0, "context": 1, "stream": COMM,
                                            "correlation": wait_corr,
                                            "wait_on_stream": COMPUTE,
                                            "wait_on_cuda_event_record_corr_id": record,
                                            "wait_on_cuda_event_id": 100 + step}})
    sim.begin(MAIN, "c10d::allreduce_")
    sim.launch(MAIN, NCCL, long_k * 1.5, stream=COMM)
    sim.end(MAIN)
    # optimizer: many small kernels
    sim.begin(MAIN, "Optimizer.step#SGD.step", "user_annotation")
    for i in range(12):
        sim.begin(MAIN, "aten::add_")
        sim.launch(MAIN, "void at::native::vectorized_elementwise_kernel<4, add>", short_k)
        sim.end(MAIN)
    sim.end(MAIN)
    # wait for the all-reduce through an event, then for everything
    record = sim.record_event(MAIN, COMM)
    sim.sync(MAIN, "cudaEventSynchronize", "Event Sync", -1, sim.last_kernel_end[COMM],
             wait_on_stream=COMM, wait_on_cuda_event_record_corr_id=record,
             wait_on_cuda_event_id=200 + step)
    sim.sync(MAIN, "cudaDeviceSynchronize", "Context Sync", -1, max(sim.stream_free.values()))
    sim.end(MAIN)  # ProfilerStep


def make_trace(seed: int, shape: str, steps: int = 3, data_loader: bool = False
               ) -> dict[str, Any]:
    """A trace document of ``steps`` steps (ProfilerStep#1..)."""
    sim = Sim(seed)
    for step in range(1, steps + 1):
        _step(sim, step, shape, data_loader)
        sim.advance(MAIN, 30.0)
    meta = [{"ph": "M", "name": "process_name", "pid": HOST_PID, "args": {"name": "python"}},
            {"ph": "M", "name": "process_name", "pid": GPU_PID, "args": {"name": "GPU 0"}}]
    events = sorted(sim.events, key=lambda e: (e["pid"] != HOST_PID, e["ts"]))
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "simulated GPU"}],
            "traceEvents": meta + events, "traceName": "simulated"}


#: file name -> (seed, shape, data loader)
TRACES: dict[str, tuple[int, str, bool]] = {
    "mixed.pt.trace.json": (1, "mixed", False),
    "launch_bound.pt.trace.json": (2, "launch_bound", False),
    "gpu_bound.pt.trace.json": (3, "gpu_bound", False),
    "data_loader.pt.trace.json": (4, "mixed", True),
}


def main(argv: Optional[list[str]] = None) -> int:
    out_dir = (argv or sys.argv[1:] or [HERE])[0]
    for name, (seed, shape, loader) in TRACES.items():
        folder = os.path.join(out_dir, name.split(".")[0])
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
            json.dump(make_trace(seed, shape, data_loader=loader), fh, indent=0)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
