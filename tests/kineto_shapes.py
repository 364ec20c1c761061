"""Random PyTorch profiler traces in the event shapes of every Kineto generation and backend.

A hypothesis strategy, :func:`traces`, for property tests of device time per op
(tests/test_torch_attribution_props.py). Each drawn trace is a small program:
1-3 host threads (in one or two processes) running nested ``cpu_op`` /
``user_annotation`` ranges (ties in start, zero durations, a child ending with
its parent, ``nn.Module`` scopes, ``ProfilerStep#N`` ranges or none), runtime
and driver calls at any depth (some outside every range) that launch device work
(kernels, copies, sets; none, one or a graph's several) on streams of one or two
devices, calls left out of the trace (their work then has no launch), and work
with no correlation at all; maybe a Python frame around each thread's events,
``[memory]`` events, and (2024, CUDA) ``cuda_sync`` waits. It is then written in one generation's shapes (the
same ones sample_profiles/torch_generations/make_synthetic.py writes, there for
one fixed program):

* ``kineto2021``: ``Operator`` / ``Runtime`` / ``Kernel`` / ``Memcpy`` /
  ``Memset``, a lower-case ``external id`` on launches and work, whole µs;
* ``kineto2022``: ``cpu_op`` / ``user_annotation`` / ``cuda_runtime`` / ``kernel``
  ..., ``External id`` = the ``correlation`` on launches and work, flows
  ``async_cpu_to_gpu``, whole µs;
* ``kineto2023``: ``External id`` names the innermost range (sometimes the one
  around it, as that era's ``aten::to`` copies did), ``ac2g`` flows, whole µs or
  ns precision since the epoch;
* ``kineto2024``: ns precision since ``baseTimeNanoseconds``, ``cuda_driver``
  launches, no ``External id`` where no range was open (or none at all);

and one backend's categories and names (CUDA, ROCm's HIP calls, MTIA's
``mtia_runtime`` / ``mtia_ccp_events``, XPU's ``xpu_runtime`` / ``xpu_driver``
with SYCL queues, a PrivateUse1 backend). Whole-µs traces truncate either each
end (nesting kept) or the start and the duration apart, as older Kineto did (a
child may then end a µs after its parent). Events come in shuffled file order;
a device event's device is its ``device`` argument or, without one, its pid.

Only the drawing is random: :func:`build` turns the choices into a document with
no randomness of its own, so a failing example shrinks to a small trace.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from hypothesis import strategies as st

GENERATIONS = ("kineto2021", "kineto2022", "kineto2023", "kineto2024")
BACKENDS = ("cuda", "rocm", "mtia", "xpu", "privateuse1")
#: The epoch of whole-µs and absolute traces (µs), and the 2024 traces' base (ns).
EPOCH_US = 1_650_000_000_000_000
BASE_NS = 1_790_000_000_000_000_000

#: Per backend: (runtime category, driver category, launch names, device categories
#: for kernel / memcpy / memset, kernel names).
_BACKEND = {
    "cuda": ("cuda_runtime", "cuda_driver",
             ("cudaLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync", "cudaGraphLaunch",
              "cuLaunchKernel"),
             ("kernel", "gpu_memcpy", "gpu_memset"),
             ("ampere_sgemm_128x64_nn", "vectorized_elementwise_kernel<relu>",
              "triton_poi_fused_add_0", "ncclDevKernel_AllReduce_Sum_f32_RING_LL")),
    "rocm": ("cuda_runtime", "cuda_runtime",
             ("hipLaunchKernel", "hipMemcpyWithStream", "hipMemsetAsync", "hipGraphLaunch",
              "hipExtModuleLaunchKernel"),
             ("kernel", "gpu_memcpy", "gpu_memset"),
             ("Cijk_Ailk_Bljk_SB_MT64x64x16", "elementwise_kernel", "triton_poi_fused_0",
              "ncclKernel_AllReduce_RING_LL_Sum_float")),
    "mtia": ("mtia_runtime", "mtia_runtime",
             ("runFunction - job_prep_and_submit_for_execution", "copyToDevice",
              "memsetDevice", "runGraph", "runFunction"),
             ("mtia_ccp_events", "mtia_ccp_events", "mtia_ccp_events"),
             ("mtia_kernel_mm", "mtia_kernel_relu", "mtia_kernel_add", "mtia_kernel_sum")),
    "xpu": ("xpu_runtime", "xpu_driver",
            ("urEnqueueKernelLaunch", "urEnqueueUSMMemcpy", "urEnqueueUSMFill",
             "urCommandBufferEnqueueExp", "zeCommandListAppendLaunchKernel"),
            ("kernel", "gpu_memcpy", "gpu_memset"),
            ("gemm_kernel", "xpu::relu_kernel", "triton_poi_fused_0", "ccl_allreduce")),
    "privateuse1": ("privateuse1_runtime", "privateuse1_driver",
                    ("launchKernel", "memcpyAsync", "memsetAsync", "graphLaunch",
                     "launchKernel"),
                    ("kernel", "gpu_memcpy", "gpu_memset"),
                    ("pu1_matmul", "pu1_relu", "pu1_add", "pu1_allreduce")),
}
_OPS = ("aten::mm", "aten::addmm", "aten::linear", "aten::to", "aten::_to_copy",
        "aten::copy_", "aten::empty_strided", "aten::relu", "aten::fill_", "aten::view",
        "autograd::engine::evaluate_function: AddmmBackward0")
_ANNOTATIONS = ("forward", "Optimizer.step#SGD.step", "fused", "cudagraph_replay")
_MODULES = ("nn.Module: Net_0", "nn.Module: Linear_0")
_COPY_NAMES = ("Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH (Device -> Pinned)",
               "Memcpy DtoD (Device -> Device)")
#: Small gaps and durations in ns: 0 makes ties, sub-µs ones vanish in whole-µs traces.
_GAPS = (0, 0, 300, 1000, 1700, 4000, 12500)
_DURS = (0, 600, 1000, 2250, 4096, 40218)


@dataclass(frozen=True)
class Style:
    """How a drawn program is written: generation, backend, clock, id convention, flows."""

    generation: str
    backend: str
    #: "span" (whole µs, each end truncated), "dur" (whole µs, start and duration
    #: truncated apart), "abs" (ns precision since the epoch), "rel" (ns precision
    #: since baseTimeNanoseconds)
    clock: str
    #: "lower" (``external id`` names the op), "corr" (External id = correlation),
    #: "linked" (names the innermost range), "wrong" (sometimes the one around it),
    #: "absent" (launches and work carry none), "none" (no event carries one)
    ext: str
    flows: bool
    #: the category of ProfilerStep ranges
    step_cat: str


@dataclass
class Range:
    cat: str  # "op" | "annotation" | "step" | "module"
    name: str
    tid: tuple[int, int]
    start: int  # ns
    end: int = 0
    ext: Optional[int] = None


@dataclass
class Work:
    kind: int  # 0 kernel, 1 memcpy, 2 memset
    name: str
    device: int
    stream: int
    dur: int
    start: int = 0
    #: the ``device`` argument is written (else only the pid says the device)
    device_arg: bool = True
    #: the ``correlation`` argument is written
    corr_arg: bool = True


@dataclass
class Call:
    api: int  # index into the backend's launch names
    driver: bool
    tid: tuple[int, int]
    start: int
    end: int
    corr: int
    owner: Optional[Range]  # the innermost range open (not a module scope)
    around: Optional[Range]  # the range around that one
    works: list[Work] = field(default_factory=list)
    hidden: bool = False
    wrong: bool = False


@dataclass
class Program:
    """What was drawn: the host ranges, the calls and their work, the first step's start."""

    style: Style
    ranges: list[Range] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    first_step: Optional[int] = None
    shuffle: int = 0
    #: a ``python_function`` frame around each thread's events (a with_stack trace)
    frames: bool = False
    #: ``[memory]`` instant events (a profile_memory trace): (thread, ns, bytes)
    memory: list[tuple[tuple[int, int], int, int]] = field(default_factory=list)


class _Drawer:
    """The program's choices, each one hypothesis draw (so examples shrink)."""

    def __init__(self, draw: Callable[[Any], Any], style: Style) -> None:
        self.draw = draw
        self.style = style
        self.p = Program(style)
        self.ext = 1
        self.corr = draw(st.sampled_from((1, 1000)))  # correlations may reuse op ids' numbers
        self.free: dict[tuple[int, int], int] = {}
        self.budget = draw(st.integers(4, 28))
        self.devices = draw(st.sampled_from(((0,), (0,), (0, 1), (1,))))

    def pick(self, options: Any) -> Any:
        return self.draw(st.sampled_from(options))

    def chance(self, p: float) -> bool:
        # a weighted coin that shrinks to False
        return self.draw(st.integers(0, 99)) < int(p * 100)

    def open(self, cat: str, name: str, tid: tuple[int, int], at: int) -> Range:
        r = Range(cat, name, tid, at)
        if cat != "module":
            r.ext = self.ext
            self.ext += 1
        self.p.ranges.append(r)
        return r

    def items(self, tid: tuple[int, int], at: int, stack: list[Range], depth: int) -> int:
        """Draws what runs on ``tid`` from ``at`` under ``stack``; returns when it ends."""
        for _ in range(self.draw(st.integers(0 if depth else 1, 3))):
            if self.budget <= 0:
                break
            self.budget -= 1
            at += self.pick(_GAPS)
            kind = self.pick(("op", "op", "annotation", "module", "call", "call")
                             if depth < 4 else ("call",))
            if kind == "call":
                at = self.call(tid, at, stack)
                continue
            name = self.pick(_OPS if kind == "op" else
                             _ANNOTATIONS if kind == "annotation" else _MODULES)
            r = self.open(kind, name, tid, at)
            inner = self.items(tid, at + self.pick(_GAPS), stack + [r], depth + 1)
            r.end = inner + self.pick(_GAPS) if inner > at else at + self.pick((0,) + _DURS)
            at = r.end
        return at

    def call(self, tid: tuple[int, int], at: int, stack: list[Range]) -> int:
        ranges = [r for r in stack if r.cat != "module"]
        driver = self.chance(0.3)
        api = 4 if driver else self.pick((0, 0, 1, 2, 3))
        end = at + self.pick((0, 1000, 3500, 5250))
        c = Call(api, driver, tid, at, end, self.corr, ranges[-1] if ranges else None,
                 ranges[-2] if len(ranges) > 1 else None, hidden=self.chance(0.12),
                 wrong=self.chance(0.3))
        self.corr += 1
        count = 3 if api == 3 else self.pick((0, 1, 1, 1)) if api == 0 else 1
        for _ in range(count):
            kind = {1: 1, 2: 2}.get(api, 0)
            names = _BACKEND[self.style.backend][4]
            w = Work(kind, self.pick(names) if kind == 0 else
                     self.pick(_COPY_NAMES) if kind == 1 else "Memset (Device)",
                     self.pick(self.devices), self.pick((7, 7, 20)), self.pick(_DURS[1:]),
                     device_arg=not self.chance(0.15), corr_arg=not self.chance(0.05))
            key = (w.device, w.stream)
            w.start = max(end + self.pick((0, 1500, 3000)), self.free.get(key, 0))
            self.free[key] = w.start + w.dur
            c.works.append(w)
        self.p.calls.append(c)
        return end + self.pick(_GAPS)

    def thread(self, tid: tuple[int, int], at: int, steps: list[int]) -> None:
        if not steps:
            self.items(tid, at, [], 0)
            return
        if self.chance(0.4):  # work before the first step
            at = self.items(tid, at, [], 1) + self.pick(_GAPS)
        self.p.first_step = at
        for n in steps:
            step = self.open("step", "ProfilerStep#%d" % n, tid, at)
            inner = self.items(tid, at + self.pick(_GAPS), [step], 1)
            # a step outlasts what it holds: a range with the very same span is not a step
            step.end = max(inner, at) + 1000 + self.pick(_GAPS)
            at = step.end + self.pick((0, 0, 2000))


@st.composite
def styles(draw: Callable[[Any], Any]) -> Style:
    """A generation and backend, and how its ids, clock and flows are written."""
    generation = draw(st.sampled_from(GENERATIONS))
    if generation == "kineto2021":
        return Style(generation, "cuda", draw(st.sampled_from(("span", "dur"))), "lower",
                     False, "Operator")
    if generation == "kineto2022":
        return Style(generation, draw(st.sampled_from(("cuda", "rocm"))),
                     draw(st.sampled_from(("span", "dur"))), "corr", draw(st.booleans()),
                     draw(st.sampled_from(("user_annotation", "cpu_op"))))
    backend = draw(st.sampled_from(BACKENDS))
    if generation == "kineto2023":
        return Style(generation, backend, draw(st.sampled_from(("span", "dur", "abs"))),
                     draw(st.sampled_from(("linked", "wrong"))), draw(st.booleans()),
                     "user_annotation")
    return Style(generation, backend, "rel",
                 draw(st.sampled_from(("linked", "absent", "none"))),
                 draw(st.booleans()), "user_annotation")


@st.composite
def programs(draw: Callable[[Any], Any]) -> Program:
    """A drawn program (see the module)."""
    style = draw(styles())
    d = _Drawer(draw, style)
    pids = (4242, draw(st.sampled_from((4242, 4343))))
    threads = [(pids[0], 100)] + [(pids[i % 2], 101 + i)
                                  for i in range(draw(st.integers(0, 2)))]
    steps: list[int] = []
    if draw(st.booleans()):
        first = draw(st.integers(0, 9))
        steps = list(range(first, first + draw(st.integers(1, 3))))
    # every PyTorch trace has a cpu op (a trace without is no PyTorch trace)
    d.open("op", "aten::empty", threads[0], 0).end = 1000
    for i, tid in enumerate(threads):
        d.thread(tid, draw(st.sampled_from((0, 2000, 5500))), steps if i == 0 else [])
    if d.p.first_step is not None:
        # device work runs from the first step on (work before it is outside every step,
        # which no view shows)
        for c in d.p.calls:
            for w in c.works:
                w.start = max(w.start, d.p.first_step)
    d.p.frames = draw(st.booleans()) and style.generation != "kineto2021"
    for _ in range(draw(st.integers(0, 2))):
        r = draw(st.sampled_from(d.p.ranges))
        d.p.memory.append((r.tid, r.start, draw(st.sampled_from((512, -512, 4096)))))
    d.p.shuffle = draw(st.integers(0, 2**16))
    return d.p


class _Writer:
    def __init__(self, p: Program) -> None:
        self.p, self.s = p, p.style
        self.events: list[dict[str, Any]] = []

    def span(self, start: int, end: int) -> tuple[Any, Any]:
        """(ts, dur) as the style writes them; ns-precision ones as text markers."""
        clock = self.s.clock
        if clock == "span":
            return EPOCH_US + start // 1000, end // 1000 - start // 1000
        if clock == "dur":
            return EPOCH_US + start // 1000, (end - start) // 1000
        base = EPOCH_US * 1000 if clock == "abs" else 0
        return _Exact(base + start), _Exact(end - start)

    def x(self, cat: str, name: str, pid: Any, tid: Any, start: int, end: int,
          args: Optional[dict[str, Any]]) -> None:
        ts, dur = self.span(start, end)
        ev: dict[str, Any] = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
                              "ts": ts, "dur": dur}
        if args is not None:
            ev["args"] = args
        self.events.append(ev)

    def ext_args(self, c: Call) -> dict[str, Any]:
        ext = self.s.ext
        if ext == "corr":
            return {"External id": c.corr}
        target = c.around if ext == "wrong" and c.wrong and c.around else c.owner
        if ext in ("absent", "none") or target is None:
            return {}
        return {"external id" if ext == "lower" else "External id": target.ext}

    def write(self) -> dict[str, Any]:
        s, p = self.s, self.p
        gen2021 = s.generation == "kineto2021"
        runtime, driver, apis, device_cats, _ = _BACKEND[s.backend]
        if gen2021:
            runtime = driver = "Runtime"
            device_cats = ("Kernel", "Memcpy", "Memset")
        cats = {"op": "Operator" if gen2021 else "cpu_op",
                "annotation": "Operator" if gen2021 else "user_annotation",
                "step": s.step_cat}
        for i, r in enumerate(p.ranges):
            pid, tid = r.tid
            if r.cat == "module":
                self.x("python_function", r.name, pid, tid, r.start, r.end,
                       {"Python id": i, "Python parent id": None})
                continue
            args: dict[str, Any] = {} if s.ext == "none" else {"External id": r.ext}
            if s.generation == "kineto2022":
                args.update({"Trace name": "PyTorch Profiler", "Trace iteration": 0,
                             "Profiler Event Index": i})
            elif not gen2021:
                args["Ev Idx"] = i
            self.x(cats[r.cat], r.name, pid, tid, r.start, r.end, args)
        flow = ("async_cpu_to_gpu", "async_gpu") if s.generation == "kineto2022" else (
            "ac2g", "ac2g")
        for c in p.calls:
            pid, tid = c.tid
            ext = self.ext_args(c)
            if not c.hidden:
                self.x(driver if c.driver else runtime, apis[c.api], pid, tid, c.start, c.end,
                       dict(ext, cbid=211, correlation=c.corr))
                if s.flows and c.works:
                    self.events.append({"ph": "s", "id": c.corr, "pid": pid, "tid": tid,
                                        "ts": self.span(c.start, c.start)[0], "cat": flow[0],
                                        "name": flow[1]})
            for i, w in enumerate(c.works):
                args = dict(ext)
                if w.device_arg:
                    args["device"] = w.device
                if s.backend == "xpu":
                    args["sycl queue"] = w.stream
                else:
                    args["stream"] = w.stream
                if w.corr_arg:
                    args["correlation"] = c.corr
                if w.kind:
                    args["bytes"] = 4096
                if c.api == 3:
                    args.update({"graph id": 1, "graph node id": 100 + i})
                lane = "stream %d" % w.stream if gen2021 else w.stream
                self.x(device_cats[w.kind], w.name, w.device, lane, w.start, w.start + w.dur,
                       args)
                if s.flows and not c.hidden:
                    self.events.append({"ph": "f", "id": c.corr, "pid": w.device, "tid": lane,
                                        "ts": self.span(w.start, w.start)[0], "cat": flow[0],
                                        "name": flow[1], "bp": "e"})
            if c.works and not gen2021 and s.backend == "cuda" and c.api == 0:
                w = c.works[0]  # noise: a device-side annotation no work is charged for
                self.x("gpu_user_annotation", "forward", w.device, w.stream, w.start,
                       w.start + w.dur, {"device": w.device})
            sync = self.sync(c)
            if sync is not None:
                self.events.append(sync)
        if p.frames:
            threads = {r.tid for r in p.ranges} | {c.tid for c in p.calls}
            for pid, tid in sorted(threads):
                times = [t for r in p.ranges if r.tid == (pid, tid) for t in (r.start, r.end)]
                times += [t for c in p.calls if c.tid == (pid, tid) for t in (c.start, c.end)]
                self.x("python_function", "train.py(40): main", pid, tid, min(times) - 1000,
                       max(times) + 1000, {"Python id": 0, "Python parent id": None})
        for (pid, tid), at, nbytes in p.memory:
            self.events.append({"ph": "i", "s": "t", "name": "[memory]", "pid": pid,
                                "tid": tid, "ts": self.span(at, at)[0],
                                "args": {"Total Reserved": 1 << 20, "Total Allocated": 8192,
                                         "Bytes": nbytes, "Addr": 94000000 + abs(nbytes),
                                         "Device Id": 0, "Device Type": 1}})
        pids = sorted({r.tid[0] for r in p.ranges} | {c.tid[0] for c in p.calls})
        for pid in pids:
            self.events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                                "args": {"name": "python3"}})
        random.Random(p.shuffle).shuffle(self.events)
        doc: dict[str, Any] = {"schemaVersion": 1, "deviceProperties": [],
                               "traceEvents": self.events}
        if s.clock == "rel":
            doc["baseTimeNanoseconds"] = BASE_NS
        return doc


    def sync(self, c: Call) -> Optional[dict[str, Any]]:
        """A 2024 CUDA trace's ``cuda_sync`` event for a call that launched nothing (a
        stream or event wait; device-side, no work of its own)."""
        s = self.s
        if c.works or c.hidden or s.generation != "kineto2024" or s.backend != "cuda":
            return None
        name = ("Stream Wait Event", "Event Sync", "Stream Sync", "Context Sync")[c.corr % 4]
        args: dict[str, Any] = {"correlation": c.corr, "device": 0, "stream": 7}
        if name in ("Stream Wait Event", "Event Sync"):
            args.update({"wait_on_stream": 20, "wait_on_cuda_event_record_corr_id": c.corr - 1})
        ts, dur = self.span(c.start, c.end + 500)
        return {"ph": "X", "cat": "cuda_sync", "name": name, "pid": 0,
                "tid": 7, "ts": ts, "dur": dur, "args": args}


class _Exact:
    """A time of ns precision, written as Kineto does: µs with three decimals."""

    def __init__(self, ns: int) -> None:
        self.ns = ns

    def text(self) -> str:
        sign = "-" if self.ns < 0 else ""
        whole, frac = divmod(abs(self.ns), 1000)
        return "%s%d.%03d" % (sign, whole, frac)


_MARK = re.compile(r'"\\u0000T([-0-9.]+)"')


def build(p: Program) -> dict[str, Any]:
    """The trace document of a drawn program (ns-precision times as :class:`_Exact`)."""
    return _Writer(p).write()


def dumps(doc: dict[str, Any]) -> str:
    """The document as JSON text, ns-precision times written digit for digit."""
    text = json.dumps(doc, default=lambda o: "\0T" + o.text())
    return _MARK.sub(r"\1", text)


def traces() -> st.SearchStrategy[tuple[Program, str]]:
    """(the drawn program, its trace's JSON text)."""
    return programs().map(lambda p: (p, dumps(build(p))))
