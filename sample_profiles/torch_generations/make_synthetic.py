#!/usr/bin/env python3
"""Write small SYNTHETIC PyTorch profiler traces, one per Kineto generation and backend.

    python make_synthetic.py [OUTDIR]      # no framework needed; deterministic

Every trace holds the same small training program, simulated (host threads
running ops that launch device work on streams that run it in order), then
written with the event shapes of one trace generation, as Kineto's
``output_json.cpp`` and its CUPTI, PTI and plugin activity writers printed them
in that era (see README.md for what each generation looks like):

* ``kineto2021``: the first Kineto traces (PyTorch 1.8): categories ``Operator``,
  ``Runtime``, ``Kernel``, ``Memcpy``, ``Memset``; ``ProfilerStep#N`` and
  ``record_function`` ranges are ``Operator`` events too; device lanes named
  ``"stream 7"``; launches and device work carry a lower-case ``external id``
  naming their op; whole-microsecond timestamps.
* ``kineto2022``: PyTorch 1.10 to 1.13: ``cpu_op``, ``user_annotation``,
  ``cuda_runtime``, ``kernel``, ``gpu_memcpy``, ``gpu_memset``, ``python_function``;
  ``Trace name`` / ``Trace iteration`` / ``Profiler Event Index`` arguments;
  a launch's and its device work's ``External id`` is their own ``correlation``
  (it names no op); flows ``async_cpu_to_gpu`` / ``async_gpu``; whole microseconds.
* ``kineto2023``: PyTorch 2.0 / 2.1: ``Ev Idx``, ``ac2g`` flows, whole
  microseconds (as torch 2.1.2 still writes); ``External id`` names the linked op,
  but for some launches an enclosing or sibling op, not the innermost (the copy
  in ``aten::to`` charged to ``aten::to`` and ``aten::empty_strided``).
* ``kineto2024``: PyTorch 2.4 and later: timestamps relative to
  ``baseTimeNanoseconds``, ``cuda_driver`` launches (``cuLaunchKernel`` of a Triton
  kernel), a CUDA graph (three kernels of one ``cudaGraphLaunch``), ``cuda_sync``
  events (a stream waiting on another's event, a stream sync, a context sync),
  launches with no ``External id`` where no range was open.
* ``rocm``, ``mtia``, ``xpu``, ``privateuse1``: the 2024 shapes with each backend's
  launch category and names (HIP calls; ``mtia_runtime`` and ``mtia_ccp_events``;
  ``xpu_runtime`` with SYCL queues as lanes; ``privateuse1_runtime``).
* ``cuda_sync``: a two-step program on two streams with every kind of
  ``cuda_sync`` event, for the step breakdown.

The program, per ``ProfilerStep``: a forward pass under ``record_function("forward")``
(an ``nn.Module`` scope, linear, relu, a ``.to()`` copy and a ``zero_`` set, a
loss), a backward op on the autograd thread, an optimizer step under its
annotation, a Triton kernel launched directly inside the step (no op: PyTorch
charges it to ``ProfilerStep*``) and one inside ``record_function("fused")``,
a CUDA graph replay, and an NCCL kernel launched from a thread with no op
(nobody's: ``(unattributed)``). Before the first step, a copy is launched that
runs inside the first step's window; one kernel has no launching call in the
trace at all. ``<name>.pt.trace.json.gz`` is written for each trace; the
owners the program meant are not written (the reference script works them out
from the events alone).
"""

from __future__ import annotations

import gzip
import json
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

GENERATIONS = ("kineto2021", "kineto2022", "kineto2023", "kineto2024",
               "rocm", "mtia", "xpu", "privateuse1", "cuda_sync")
#: The 2021 and 2022 traces' epoch (µs); later ones use ns precision.
EPOCH_US = 1_650_000_000_000_000
#: The 2024 traces' ``baseTimeNanoseconds``.
BASE_NS = 1_790_000_000_000_000_000


@dataclass
class Range:
    """A host range: a cpu op, an annotation, a ProfilerStep, or a module scope."""

    kind: str  # "op" | "annotation" | "step" | "module"
    name: str
    tid: int
    start: float
    end: float = 0.0
    ext: int = 0  # its External id (ranges PyTorch records; 0 for module scopes)
    parent: Optional["Range"] = None


@dataclass
class Work:
    """Device work: kind "kernel" | "memcpy" | "memset", on a stream."""

    kind: str
    name: str
    dur: float
    stream: int = 7
    nbytes: int = 0
    start: float = 0.0


@dataclass
class Launch:
    """A host call that launched (or waited on) device work."""

    api: str  # a role: kernel | memcpy | memset | graph | driver | record | wait | sync | ctx
    tid: int
    start: float
    end: float
    corr: int
    works: list[Work] = field(default_factory=list)
    #: the innermost range open on its thread when it was made (PyTorch's owner)
    owner: Optional[Range] = None
    #: the range a buggy generation's External id names instead of the owner
    wrong: Optional[Range] = None
    #: a cuda_sync event it caused: (name, stream, start, end, waited stream, record corr)
    sync: Optional[tuple[str, int, float, float, int, int]] = None
    #: left out of the trace (its work then has no launching call)
    hidden: bool = False


class Program:
    """Simulates the program: host threads (a clock each) and streams (free from a time)."""

    def __init__(self, streams: tuple[int, ...] = (7, 20)) -> None:
        self.ranges: list[Range] = []
        self.launches: list[Launch] = []
        self.clock: dict[int, float] = {}
        self.stack: dict[int, list[Range]] = {}
        self.free = {s: 0.0 for s in streams}
        self.next_ext = 1
        self.next_corr = 1000

    def at(self, tid: int, t: float) -> None:
        self.clock[tid] = t
        self.stack.setdefault(tid, [])

    def wait(self, tid: int, us: float) -> None:
        self.clock[tid] += us

    @contextmanager
    def range(self, tid: int, kind: str, name: str, pre: float = 1.5,
              post: float = 1.0) -> Iterator[Range]:
        stack = self.stack[tid]
        r = Range(kind, name, tid, self.clock[tid], parent=stack[-1] if stack else None)
        if kind != "module":
            r.ext = self.next_ext
            self.next_ext += 1
        self.ranges.append(r)
        stack.append(r)
        self.clock[tid] += pre
        yield r
        self.clock[tid] += post
        stack.pop()
        r.end = self.clock[tid]

    def op(self, tid: int, name: str, pre: float = 2.0, post: float = 1.0):
        return self.range(tid, "op", name, pre, post)

    def owner(self, tid: int) -> Optional[Range]:
        for r in reversed(self.stack[tid]):
            if r.kind != "module":
                return r
        return None

    def launch(self, tid: int, api: str, works: list[Work], dur: float = 4.0,
               wrong: Optional[Range] = None, hidden: bool = False, delay: float = 3.0) -> Launch:
        start = self.clock[tid]
        end = start + dur
        self.clock[tid] = end + 0.5
        call = Launch(api, tid, start, end, self.next_corr, works, self.owner(tid), wrong,
                      hidden=hidden)
        self.next_corr += 1
        for w in works:
            w.start = max(end + delay, self.free[w.stream])
            self.free[w.stream] = w.start + w.dur
        self.launches.append(call)
        return call

    def record_event(self, tid: int, stream: int) -> Launch:
        """cudaEventRecord on ``stream``: marks the work launched there so far."""
        call = self.launch(tid, "record", [], dur=2.0)
        call.sync = ("", stream, 0.0, 0.0, stream, 0)
        return call

    def stream_wait(self, tid: int, stream: int, record: Launch) -> Launch:
        """cudaStreamWaitEvent: ``stream`` waits for ``record``'s stream."""
        on = record.sync[1] if record.sync else 0
        call = self.launch(tid, "wait", [], dur=2.5)
        ready = self.free[on]
        self.free[stream] = max(self.free[stream], ready)
        call.sync = ("Stream Wait Event", stream, call.start, call.end, on, record.corr)
        return call

    def stream_sync(self, tid: int, stream: int) -> Launch:
        """cudaStreamSynchronize: the host blocks until ``stream`` drains."""
        start = self.clock[tid]
        end = max(start + 2.0, self.free[stream] + 1.5)
        call = self.launch(tid, "sync", [], dur=end - start)
        call.sync = ("Stream Sync", stream, start, end, stream, 0)
        return call

    def context_sync(self, tid: int) -> Launch:
        """cudaDeviceSynchronize: the host blocks until every stream drains."""
        start = self.clock[tid]
        end = max(start + 2.0, max(self.free.values()) + 2.0)
        call = self.launch(tid, "ctx", [], dur=end - start)
        call.sync = ("Context Sync", -1, start, end, -1, 0)
        return call

    def event_sync(self, tid: int, record: Launch) -> Launch:
        """cudaEventSynchronize: the host blocks until ``record``'s stream reached it."""
        on = record.sync[1] if record.sync else 7
        start = self.clock[tid]
        end = max(start + 2.0, self.free[on] + 1.0)
        call = self.launch(tid, "event_sync", [], dur=end - start)
        call.sync = ("Event Sync", on, start, end, on, record.corr)
        return call


MAIN, BACKWARD, COMMS = 100, 101, 102


def training(p: Program, steps: tuple[int, ...] = (5, 6, 7), syncs: bool = False,
             graph: bool = True) -> None:
    """The program the module docstring describes, on ``p``."""
    p.at(MAIN, 1000.0)
    p.at(BACKWARD, 0.0)
    p.at(COMMS, 0.0)
    # before the first step: a copy launched now runs inside step 5's window
    with p.op(MAIN, "aten::copy_"):
        p.launch(MAIN, "memcpy", [Work("memcpy", "Memcpy HtoD (Pinned -> Device)", 180.25,
                                       nbytes=4 << 20)], delay=25.0)
    p.wait(MAIN, 2.0)
    for n, step in enumerate(steps):
        with p.range(MAIN, "step", "ProfilerStep#%d" % step, pre=3.0, post=2.0):
            _forward(p, n)
            _backward(p, n)
            with p.range(MAIN, "annotation", "Optimizer.step#SGD.step"):
                with p.op(MAIN, "aten::_foreach_add_"):
                    p.launch(MAIN, "kernel", [Work("kernel", "multi_tensor_apply_kernel",
                                                   6.812 + n)])
            # a Triton kernel launched by Python directly: no op, inside the step
            p.launch(MAIN, "driver", [Work("kernel", "triton_poi_fused_add_0", 3.125)])
            with p.range(MAIN, "annotation", "fused"):
                p.launch(MAIN, "driver", [Work("kernel", "triton_red_fused_sum_1", 5.5)])
            if graph:
                with p.range(MAIN, "annotation", "cudagraph_replay"):
                    p.launch(MAIN, "graph", [Work("kernel", "graph_kernel_%d" % i, 2.25 + i)
                                             for i in range(3)], dur=7.0)
            # NCCL launched from a communication thread with no op open
            p.at(COMMS, p.clock[MAIN] - 20.0)
            p.launch(COMMS, "kernel_ex", [Work("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                                               25.75, stream=20)])
            if syncs:
                _syncs(p, n)
            else:
                with p.op(MAIN, "aten::item"), p.op(MAIN, "aten::_local_scalar_dense"):
                    p.launch(MAIN, "memcpy", [Work("memcpy", "Memcpy DtoH (Device -> Pinned)",
                                                   1.625, nbytes=4)])
                    p.stream_sync(MAIN, 7)
        p.wait(MAIN, 30.0)
    # a kernel whose launching call is not in the trace (the ring buffer dropped it);
    # its External id still names the op that launched it
    with p.op(MAIN, "aten::mul"):
        p.launch(MAIN, "kernel", [Work("kernel", "vectorized_elementwise_kernel<mul>", 4.5)],
                 hidden=True)


def _forward(p: Program, n: int) -> None:
    with p.range(MAIN, "annotation", "forward"):
        with p.range(MAIN, "module", "nn.Module: Net_0"):
            with p.op(MAIN, "aten::linear"):
                with p.op(MAIN, "aten::t"):
                    pass
                with p.op(MAIN, "aten::addmm"):
                    p.launch(MAIN, "kernel", [Work("kernel", "ampere_sgemm_128x64_nn",
                                                   40.218 + 0.5 * n)])
            with p.op(MAIN, "aten::relu"), p.op(MAIN, "aten::clamp_min"):
                p.launch(MAIN, "kernel", [Work("kernel", "vectorized_elementwise_kernel<relu>",
                                               3.406)])
            with p.op(MAIN, "aten::to") as to, p.op(MAIN, "aten::_to_copy"):
                with p.op(MAIN, "aten::empty_strided") as empty:
                    pass
                with p.op(MAIN, "aten::copy_"):
                    # the buggy generation names aten::to for the copy and
                    # aten::empty_strided for the set that follows it
                    p.launch(MAIN, "memcpy", [Work("memcpy", "Memcpy HtoD (Pageable -> Device)",
                                                   12.734, nbytes=65536)], wrong=to)
                    p.launch(MAIN, "memset", [Work("memset", "Memset (Device)", 0.832,
                                                   nbytes=512)], wrong=empty)
            with p.op(MAIN, "aten::zero_"), p.op(MAIN, "aten::fill_"):
                p.launch(MAIN, "kernel", [Work("kernel", "vectorized_elementwise_kernel<fill>",
                                               1.472)])
        with p.op(MAIN, "aten::cross_entropy_loss"):
            with p.op(MAIN, "aten::log_softmax"), p.op(MAIN, "aten::_log_softmax"):
                p.launch(MAIN, "kernel", [Work("kernel", "cunn_SoftMaxForward<4>", 2.304)])
            with p.op(MAIN, "aten::nll_loss"), p.op(MAIN, "aten::nll_loss_forward"):
                p.launch(MAIN, "kernel", [Work("kernel", "nll_loss_forward_reduce_kernel",
                                               4.096)])


def _backward(p: Program, n: int) -> None:
    p.at(BACKWARD, max(p.clock[MAIN], p.clock.get(BACKWARD, 0.0)) + 5.0)
    with p.op(BACKWARD, "autograd::engine::evaluate_function: AddmmBackward0"):
        with p.op(BACKWARD, "AddmmBackward0"):
            with p.op(BACKWARD, "aten::mm"):
                p.launch(BACKWARD, "kernel", [Work("kernel", "ampere_sgemm_64x32_tn",
                                                   35.5 + n)])
            with p.op(BACKWARD, "aten::sum"):
                p.launch(BACKWARD, "kernel", [Work("kernel", "reduce_kernel<512, 1>", 8.25)])
    p.at(MAIN, max(p.clock[MAIN], p.clock[BACKWARD]) + 3.0)


def _syncs(p: Program, n: int) -> None:
    """Every kind of cuda_sync: stream 20 works, stream 7 waits on its event; a stream
    sync behind a copy; an event sync; a context sync."""
    with p.op(MAIN, "aten::add"):
        p.launch(MAIN, "kernel", [Work("kernel", "side_stream_kernel", 60.5 + 10 * n,
                                       stream=20)])
    with p.range(MAIN, "annotation", "wait_side_stream"):
        record = p.record_event(MAIN, 20)
        p.stream_wait(MAIN, 7, record)
    with p.op(MAIN, "aten::mul"):
        p.launch(MAIN, "kernel", [Work("kernel", "after_wait_kernel", 5.25)])
    with p.op(MAIN, "aten::item"), p.op(MAIN, "aten::_local_scalar_dense"):
        p.launch(MAIN, "memcpy", [Work("memcpy", "Memcpy DtoH (Device -> Pinned)", 1.625,
                                       nbytes=4)])
        p.stream_sync(MAIN, 7)
    with p.op(MAIN, "aten::div"):
        p.launch(MAIN, "kernel", [Work("kernel", "side_stream_kernel", 15.0, stream=20)])
    record = p.record_event(MAIN, 20)
    p.event_sync(MAIN, record)
    p.context_sync(MAIN)


# ---------------------------------------------------------------------------
# Writers: one Program -> the events of one generation
# ---------------------------------------------------------------------------
@dataclass
class Shape:
    """How one generation or backend writes events."""

    op_cat: str = "cpu_op"
    annotation_cat: str = "user_annotation"
    step_cat: str = "user_annotation"
    runtime_cat: str = "cuda_runtime"
    driver_cat: str = "cuda_driver"
    kernel_cat: str = "kernel"
    memcpy_cat: str = "gpu_memcpy"
    memset_cat: str = "gpu_memset"
    #: "int" (whole µs since the epoch), "abs" (ns precision since the epoch),
    #: "rel" (ns precision since baseTimeNanoseconds)
    clock: str = "rel"
    #: "lower" (``external id`` names the op), "corr" (External id = correlation),
    #: "linked" (names the linked op, or the wrong one the program says), "linked_ok"
    ext: str = "linked_ok"
    flow: tuple[str, str] = ("ac2g", "ac2g")
    lane: str = "int"  # device lanes: "int" tid = stream, "named" "stream 7", "queue"
    stream_arg: bool = True
    trace_args: bool = False  # "Trace name" / "Trace iteration"
    index_arg: str = "Ev Idx"
    frames: bool = True
    apis: dict[str, str] = field(default_factory=lambda: dict(
        kernel="cudaLaunchKernel", kernel_ex="cudaLaunchKernelExC", memcpy="cudaMemcpyAsync",
        memset="cudaMemsetAsync", graph="cudaGraphLaunch", driver="cuLaunchKernel",
        record="cudaEventRecord", wait="cudaStreamWaitEvent", sync="cudaStreamSynchronize",
        event_sync="cudaEventSynchronize", ctx="cudaDeviceSynchronize"))
    device_cats: dict[str, str] = field(default_factory=dict)
    syncs: bool = False
    driver: bool = True  # cuLaunchKernel is a driver call (else a runtime call)


def _cuda_like(**kw: Any) -> Shape:
    return Shape(**kw)


SHAPES: dict[str, Shape] = {
    "kineto2021": Shape(op_cat="Operator", annotation_cat="Operator", step_cat="Operator",
                        runtime_cat="Runtime", driver_cat="Runtime", kernel_cat="Kernel",
                        memcpy_cat="Memcpy", memset_cat="Memset", clock="int", ext="lower",
                        flow=("", ""), lane="named", index_arg="", frames=False,
                        driver=False),
    "kineto2022": Shape(clock="int", ext="corr", flow=("async_cpu_to_gpu", "async_gpu"),
                        trace_args=True, index_arg="Profiler Event Index", driver=False),
    "kineto2023": Shape(clock="int", ext="linked"),
    "kineto2024": Shape(syncs=True),
    "cuda_sync": Shape(syncs=True),
    "rocm": Shape(apis=dict(kernel="hipLaunchKernel", kernel_ex="hipExtLaunchKernel",
                            memcpy="hipMemcpyWithStream", memset="hipMemsetAsync",
                            graph="hipGraphLaunch", driver="hipExtModuleLaunchKernel",
                            record="hipEventRecord", wait="hipStreamWaitEvent",
                            sync="hipStreamSynchronize", event_sync="hipEventSynchronize",
                            ctx="hipDeviceSynchronize"), driver=False),
    "mtia": Shape(runtime_cat="mtia_runtime", driver_cat="mtia_runtime",
                  kernel_cat="mtia_ccp_events", memcpy_cat="mtia_ccp_events",
                  memset_cat="mtia_ccp_events",
                  apis=dict(kernel="runFunction - job_prep_and_submit_for_execution",
                            kernel_ex="runFunction - job_prep_and_submit_for_execution",
                            memcpy="copyToDevice", memset="memsetDevice",
                            graph="runGraph", driver="runFunction - job_prep_and_submit_for_execution",
                            record="recordEvent", wait="streamWaitEvent",
                            sync="streamSynchronize", event_sync="eventSynchronize",
                            ctx="deviceSynchronize"), driver=False),
    "xpu": Shape(runtime_cat="xpu_runtime", driver_cat="xpu_driver", lane="queue",
                 stream_arg=False,
                 apis=dict(kernel="urEnqueueKernelLaunch", kernel_ex="urEnqueueKernelLaunch",
                           memcpy="urEnqueueUSMMemcpy", memset="urEnqueueUSMFill",
                           graph="urCommandBufferEnqueueExp",
                           driver="zeCommandListAppendLaunchKernel",
                           record="urEnqueueEventsWaitWithBarrier",
                           wait="urEnqueueEventsWait", sync="urQueueFinish",
                           event_sync="urEventWait", ctx="urQueueFinish")),
    "privateuse1": Shape(runtime_cat="privateuse1_runtime", driver_cat="privateuse1_driver",
                         apis=dict(kernel="launchKernel", kernel_ex="launchKernel",
                                   memcpy="memcpyAsync", memset="memsetAsync",
                                   graph="graphLaunch", driver="launchKernel",
                                   record="eventRecord", wait="streamWaitEvent",
                                   sync="streamSynchronize", event_sync="eventSynchronize",
                                   ctx="deviceSynchronize")),
}


class Writer:
    """Turns a simulated Program into one generation's trace document."""

    def __init__(self, p: Program, shape: Shape, device: int = 0) -> None:
        self.p, self.s, self.device = p, shape, device
        self.events: list[dict[str, Any]] = []
        self.index = 0

    def time(self, t: float) -> Any:
        if self.s.clock == "int":
            return EPOCH_US + int(t // 1)
        if self.s.clock == "abs":
            return round(EPOCH_US + t, 3)
        return round(t, 3)

    def span(self, start: float, end: float) -> tuple[Any, Any]:
        ts = self.time(start)
        if self.s.clock == "int":
            return ts, self.time(end) - ts
        return ts, round(end - start, 3)

    def args(self, **kw: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.s.trace_args:
            out.update({"Trace name": "PyTorch Profiler", "Trace iteration": 0})
        out.update(kw)
        return out

    def x(self, cat: str, name: str, pid: int, tid: Any, start: float, end: float,
          args: dict[str, Any]) -> None:
        ts, dur = self.span(start, end)
        ev = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts,
              "dur": dur}
        if args:
            ev["args"] = args
        self.events.append(ev)

    def lane(self, stream: int) -> Any:
        if self.s.lane == "named":
            return "stream %d" % stream
        return stream

    def ext_of(self, call: Launch) -> dict[str, Any]:
        """The External id a launch and its work carry in this generation."""
        s = self.s
        if s.ext == "corr":
            return {"External id": call.corr}
        target = call.owner
        if s.ext == "linked" and call.wrong is not None:
            target = call.wrong
        if target is None:
            return {} if s.ext != "lower" else {}
        if s.ext == "lower":
            return {"external id": target.ext}
        return {"External id": target.ext}

    def write(self) -> dict[str, Any]:
        s, p = self.s, self.p
        pid = 4242
        for r in sorted(p.ranges, key=lambda r: (r.start, -(r.end - r.start))):
            if r.kind == "module":
                if s.frames:
                    self.x("python_function", r.name, pid, r.tid, r.start, r.end,
                           {"Python id": self.index, "Python module id": 1})
                continue
            cat = {"op": s.op_cat, "annotation": s.annotation_cat, "step": s.step_cat}[r.kind]
            args = self.args(**{"External id": r.ext})
            if s.index_arg:
                args[s.index_arg] = self.index
            self.index += 1
            self.x(cat, r.name, pid, r.tid, r.start, r.end, args)
        if s.frames:
            lo = min(r.start for r in p.ranges if r.tid == MAIN) - 5.0
            hi = max(r.end for r in p.ranges if r.tid == MAIN) + 5.0
            self.x("python_function", "train.py(40): main", pid, MAIN, lo, hi,
                   {"Python id": 0, "Python parent id": None})
        for call in p.launches:
            self._launch(call, pid)
        doc: dict[str, Any] = {"schemaVersion": 1, "deviceProperties": [],
                               "traceEvents": self.events}
        if s.clock == "rel":
            doc["baseTimeNanoseconds"] = BASE_NS
            doc["displayTimeUnit"] = "ms"
        return doc

    def _launch(self, call: Launch, pid: int) -> None:
        s = self.s
        ext = self.ext_of(call)
        cat = s.driver_cat if call.api == "driver" and s.driver else s.runtime_cat
        args = self.args(**ext)
        args.update({"cbid": 211, "correlation": call.corr})
        if not call.hidden:
            self.x(cat, s.apis[call.api], pid, call.tid, call.start, call.end, args)
            if call.works and s.flow[0]:
                ts = self.time(call.start)
                self.events.append({"ph": "s", "id": call.corr, "pid": pid, "tid": call.tid,
                                    "ts": ts, "cat": s.flow[0], "name": s.flow[1]})
        for i, w in enumerate(call.works):
            cat = {"kernel": s.kernel_cat, "memcpy": s.memcpy_cat,
                   "memset": s.memset_cat}[w.kind]
            wargs = self.args(**ext)
            wargs.update({"device": self.device})
            if s.stream_arg:
                wargs["stream"] = w.stream
            else:
                wargs["sycl queue"] = w.stream
            wargs["correlation"] = call.corr
            if w.kind != "kernel":
                wargs["bytes"] = w.nbytes
            if call.api == "graph":
                wargs.update({"graph id": 1, "graph node id": 100 + i})
            self.x(cat, w.name, self.device, self.lane(w.stream), w.start, w.start + w.dur,
                   wargs)
            if s.flow[0] and not call.hidden:
                self.events.append({"ph": "f", "id": call.corr, "pid": self.device,
                                    "tid": self.lane(w.stream), "ts": self.time(w.start),
                                    "cat": s.flow[0], "name": s.flow[1], "bp": "e"})
        if s.syncs and call.sync is not None and call.sync[0]:
            name, stream, start, end, on, record = call.sync
            sargs: dict[str, Any] = {"cuda_sync_kind": name}
            if name in ("Stream Wait Event", "Event Sync"):
                sargs.update({"wait_on_stream": on, "wait_on_cuda_event_record_corr_id": record,
                              "wait_on_cuda_event_id": record - 999})
            sargs.update({"stream": stream, "correlation": call.corr, "device": self.device,
                          "context": 1})
            if call.owner is not None:
                sargs = dict({"External id": call.owner.ext}, **sargs)
            self.x("cuda_sync", name, self.device, abs(stream), start, end, sargs)


def build(generation: str) -> dict[str, Any]:
    """The trace document of one generation (see the module)."""
    shape = SHAPES[generation]
    p = Program()
    if generation == "cuda_sync":
        training(p, steps=(1, 2), syncs=True, graph=False)
    else:
        training(p, syncs=shape.syncs)
    return Writer(p, shape).write()


def main(outdir: str) -> int:
    for generation in GENERATIONS:
        doc = build(generation)
        path = os.path.join(outdir, "synthetic_%s.pt.trace.json.gz" % generation)
        with gzip.GzipFile(path, "wb", mtime=0) as fh:
            fh.write(json.dumps(doc, separators=(",", ":")).encode("utf-8"))
        print("wrote %s (%d events)" % (path, len(doc["traceEvents"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))))
