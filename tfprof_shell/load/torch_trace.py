"""PyTorch profiler traces (``export_chrome_trace``) -> node records, in one pass over the events.

Each ``cpu_op`` event is a node named by the path of the module (``nn.Module``),
``record_function`` and enclosing ops around it (``Linear_0/aten::linear/
aten::addmm``), typed by the op (``aten::addmm``), timed by its self time;
GPU kernels count as accelerator time of the op whose ``External id`` they
carry; ``ProfilerStep#N`` marks step N (else the i-th file is step i). In a
trace recorded with stacks (``with_stack=True``) the ``python_function``
events open around an op (``train.py(23): main``) are its code trace.

One pass over the events sorts them into what each part reads (scopes and
ops per thread, frames per thread, kernels, step marks, the events a step
breakdown keeps); the code traces are looked up only when a view first asks
for one (:class:`TorchTraces`), and the records stay rows until a view reads
a step's record (:class:`.records.ExecRows`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from itertools import accumulate
from typing import Any, Optional, Sequence

from ..model import Frame, Model
from .records import CPU_DEVICE, GPU_DEVICE, GPU_STREAM_ALL, ExecRows, node_for
from .memory_torch import TorchMemory
from .trace_events import NO_ARGS, TraceEvent
from .torch_intervals import DEVICE_CATS, RUNTIME_CATS, KeptEvents, user_frame
from .xla import KERNEL_TYPE

TORCH_CPU = ("cpu_op", "operator")
_STEP_PREFIX = "ProfilerStep#"
_PROFILER_STEP = re.compile(r"ProfilerStep#(\d+)")
_PY_FRAME = re.compile(r"(.+)\((\d+)\): (.+)")
_MODULE = "nn.Module: "
_MODULE_LEN = len(_MODULE)


class _StepMarks:
    """Which ``ProfilerStep`` holds a time: a bisect over the sorted marks.

    The answer is the last mark (in sorted order) whose span holds the time;
    ``last=True`` falls back to the last mark started by then. The running
    maximum of the ends rules out earlier marks at once, so the search only
    walks back where marks overlap.
    """

    def __init__(self, marks: Sequence[tuple[float, float, int]]) -> None:
        self.marks = marks
        self.starts = [m[0] for m in marks]
        self.ends = [m[1] for m in marks]
        self.steps = [m[2] for m in marks]
        self.max_end = list(accumulate(self.ends, max))

    def at(self, t: float, default: int, last: bool = False) -> Optional[int]:
        if not self.marks:
            return default
        i = bisect_right(self.starts, t) - 1
        if i < 0:
            return None
        if t < self.ends[i]:  # the common case: inside the last mark started
            return self.steps[i]
        j = i - 1
        while j >= 0 and self.max_end[j] > t:
            if t < self.ends[j]:
                return self.steps[j]
            j -= 1
        return self.steps[i] if last else None


def _whole(micros: float) -> int:
    """Whole microseconds, rounded, at least 0 (0 for NaN or infinity: a broken trace)."""
    try:
        return max(round(micros), 0)
    except (ValueError, OverflowError):
        return 0


class _PyName:
    """What a ``python_function`` event's name means, worked out once per name."""

    __slots__ = ("frame", "label", "mark", "user", "kept")

    def __init__(self, name: str) -> None:
        m = _PY_FRAME.fullmatch(name)
        line = int(m.group(2)) if m else 0
        #: the code-trace frame ``file.py(12): func``, else None
        self.frame = Frame(m.group(1), line, m.group(3), line) if m else None
        #: the scope label of an ``nn.Module: Linear_0`` event, else None
        self.label = name[_MODULE_LEN:] if name.startswith(_MODULE) else None
        #: the step of a ``ProfilerStep#N`` name, else None
        self.mark = _mark(name) if name.startswith(_STEP_PREFIX) else None
        #: a frame of the program's own code
        self.user = user_frame(name)
        #: kept for the step breakdown (input waits and the program's own frames)
        self.kept = self.user or "__next__" in name


def _mark(name: str) -> Optional[int]:
    """N of a ``ProfilerStep#N`` event name, else None (callers test the prefix first:
    most names have another)."""
    m = _PROFILER_STEP.fullmatch(name)
    return int(m.group(1)) if m else None


#: A scope or op of a thread, to be sorted: (start, -duration, input order, label,
#: the op's type (None for a scope), the op's External id).
_Scoped = tuple[float, float, int, str, Optional[str], Any]
#: A Python frame of a thread: (start, end, frame).
_Framed = tuple[float, float, Frame]


class _Sorted:
    """One trace's events, sorted into what each part of the load reads."""

    def __init__(self, events: Sequence[TraceEvent]) -> None:
        #: per (pid, tid): the scopes and cpu ops
        self.scoped: defaultdict[Any, list[_Scoped]] = defaultdict(list)
        #: per (pid, tid): the Python frames
        self.framed: defaultdict[Any, list[_Framed]] = defaultdict(list)
        self.marks: list[tuple[float, float, int]] = []
        self.kernels: list[TraceEvent] = []
        #: per (pid, tid): the ``[memory]`` instant events (read by .memory_torch)
        self.memory: defaultdict[Any, list[TraceEvent]] = defaultdict(list)
        #: the events :class:`.torch_intervals.TorchIntervals` reads
        self.kept = KeptEvents()
        scoped, framed = self.scoped, self.framed
        keep, add_mark, add_kernel = self.kept.host.append, self.marks.append, self.kernels.append
        keep_device, keep_runtime = self.kept.device.append, self.kept.runtime.append
        py_names: dict[str, _PyName] = {}
        for seq, ev in enumerate(events):
            if ev.ph != "X":
                if ev.ph == "i" and ev.name == "[memory]":
                    self.memory[(ev.pid, ev.tid)].append(ev)
                continue
            cat, name = ev.cat, ev.name
            if name.__class__ is not str:
                name = str(name)
            if cat == "python_function":
                info = py_names.get(name)
                if info is None:
                    info = py_names[name] = _PyName(name)
                if info.label is not None:
                    scoped[(ev.pid, ev.tid)].append(
                        (float(ev.ts), -float(ev.dur), seq, info.label, None, None))
                if info.frame is not None:
                    start = float(ev.ts)
                    framed[(ev.pid, ev.tid)].append((start, start + float(ev.dur), info.frame))
                if info.mark is not None:
                    start = float(ev.ts)
                    add_mark((start, start + float(ev.dur), info.mark))
                if info.kept:
                    keep(ev)
                    if info.user:
                        self.kept.user_frames.append(ev)
                continue
            step = _mark(name) if name.startswith(_STEP_PREFIX) else None
            if step is not None:
                start = float(ev.ts)
                add_mark((start, start + float(ev.dur), step))
            if cat in TORCH_CPU:
                keep(ev)
                if step is not None:
                    continue
                args = ev.args
                item: Any = (float(ev.ts), -float(ev.dur), seq,
                             name[_MODULE_LEN:] if name.startswith(_MODULE) else name, name,
                             None if args is None else args.external_id)
            elif cat == "user_annotation":
                keep(ev)
                if step is not None:
                    continue
                item = (float(ev.ts), -float(ev.dur), seq,
                        name[_MODULE_LEN:] if name.startswith(_MODULE) else name, None, None)
            else:
                if cat in DEVICE_CATS:
                    add_kernel(ev)
                    keep_device(ev)
                elif cat in RUNTIME_CATS:
                    keep_runtime(ev)
                elif cat == "cuda_sync":  # for the critical path (torch_path.py)
                    self.kept.sync.append(ev)
                continue
            scoped[(ev.pid, ev.tid)].append(item)


def _ops(scoped: dict[Any, list[_Scoped]]) -> list[list[Any]]:
    """[start, self, name, op, external id] of every cpu op, scoped by what encloses it."""
    out: list[list[Any]] = []
    add = out.append
    for items in scoped.values():
        # (start, -duration, input order): the outer of two events starting
        # together comes first, ties keep their order.
        items.sort()
        # Each open event: its end, its scope path, and the nearest cpu op record
        # at or above it (whose self time its child ops reduce).
        stack: list[tuple[float, str, Optional[list[Any]]]] = []
        for start, neg_dur, _, label, op, ext in items:
            end = start - neg_dur
            while stack and stack[-1][0] <= start:
                stack.pop()
            if stack:
                top = stack[-1]
                path, rec = top[1] + "/" + label, top[2]
            else:
                path, rec = label, None
            if op is not None:
                parent, rec = rec, [start, end - start, path, op, ext]
                if parent is not None:
                    parent[1] -= end - start
                add(rec)
            stack.append((end, path, rec))
    return out


class TorchTraces:
    """The code traces of a model's PyTorch traces, looked up when first asked for.

    A node's trace is the stack of Python frames open around the first of its
    executions (in start order, then node name) with a step whose start and op
    type match a cpu op with frames around it, file by file.
    """

    def __init__(self) -> None:
        #: per file: per thread with frames, its frames and its scopes and ops;
        #: and each node's executions with a step, sorted by start (row[0] the
        #: start, row[4] the op type)
        self.files: list[tuple[dict[Any, tuple[list[_Framed], list[_Scoped]]],
                               dict[str, list[tuple[Any, ...]]]]] = []
        self.found: Optional[dict[str, list[Frame]]] = None

    def add(self, framed: dict[Any, list[_Framed]], scoped: dict[Any, list[_Scoped]],
            execs: dict[str, list[tuple[Any, ...]]]) -> None:
        """One file's Python frames and scoped events per thread, and its executions."""
        if framed:
            threads = {key: (frames, scoped.get(key, [])) for key, frames in framed.items()}
            self.files.append((threads, execs))

    @property
    def any(self) -> bool:
        """Whether any file has Python frames at all (else no node has a trace)."""
        return bool(self.files)

    def resolve(self) -> bool:
        """Look every trace up (once); whether any node has one."""
        if self.found is None:
            found: dict[str, list[Frame]] = {}
            for threads, execs in self.files:
                traces = _traces(threads)
                for name, rows in execs.items():
                    if name in found:
                        continue
                    for row in rows:
                        trace = traces.get((row[0], row[4]))
                        if trace:
                            found[name] = trace
                            break
            self.files = []
            self.found = found
        return bool(self.found)

    def trace_of(self, name: str) -> Optional[list[Frame]]:
        """The trace of node ``name`` (looking all traces up on the first call)."""
        self.resolve()
        return self.found.get(name) if self.found else None


def _traces(threads: dict[Any, tuple[list[_Framed], list[_Scoped]]]
            ) -> dict[tuple[float, str], list[Frame]]:
    """(start, op type) of each cpu op -> the Python frames open around it on its
    thread, outermost first."""
    traces: dict[tuple[float, str], list[Frame]] = {}
    for frames, scoped in threads.values():
        # (start, kind, end, frame or op type), kind 0 a frame, 1 an op; frames in
        # input order, ops in start order (ties in input order)
        items = [(start, 0, end, frame) for start, end, frame in frames]
        items.extend((start, 1, start - neg_dur, op)
                     for start, neg_dur, _, _, op, _ in scoped if op is not None)
        items.sort(key=lambda it: (it[0], it[1], -it[2]))
        ends: list[float] = []  # the open frames: their ends, and the frames
        open_frames: list[Frame] = []
        for start, kind, end, what in items:
            while ends and ends[-1] <= start:
                ends.pop()
                open_frames.pop()
            if kind == 0:
                ends.append(end)
                open_frames.append(what)
            elif ends:
                traces[(start, what)] = open_frames[:]
    return traces


class TorchFiles:
    """The PyTorch traces of one model, added file by file, then :meth:`finish`."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.rows = ExecRows(model)
        self.traces = TorchTraces()
        self.memory = TorchMemory()
        #: per file, the events a step breakdown reads
        self.kept: list[KeptEvents] = []
        self.left_out = 0
        #: node -> the canonical device of its first counted cpu execution
        self.canonical: dict[str, str] = {}

    def add(self, index: int, events: Sequence[TraceEvent]) -> None:
        """Add one trace, file ``index`` (its step when it has no ProfilerStep marks)."""
        parts = _Sorted(events)
        self.kept.append(parts.kept)
        marks = _StepMarks(sorted(parts.marks))
        ops = _ops(parts.scoped)
        self.memory.add(parts.memory, parts.scoped, parts.framed, ops, parts.marks,
                        lambda t: marks.at(t, index))
        by_ext = {op[4]: op for op in ops if op[4] is not None}
        kernels = []
        for ev in parts.kernels:
            args = ev.args or NO_ARGS
            op = by_ext.get(args.external_id)
            if op is not None:
                gpu = int(args.device or 0)
                op.append(gpu)
                kernels.append((float(ev.ts), float(ev.dur), op[2], op[3], gpu, str(ev.name)))
        # The engine keeps a node's cpu records on its first device only, so every
        # execution of a node goes on its GPU if any of them launched kernels.
        gpu_of: dict[str, int] = {}
        for op in ops:
            if len(op) > 5:
                gpu_of.setdefault(op[2], op[5])
        # Each node's executions with a step, (start, input order, duration, step,
        # op type, device or None for the node's own), sorted by start
        groups: dict[str, list[tuple[float, int, float, int, str, Optional[str]]]] = {}
        left_out = 0
        step_at = marks.at
        for i, (start, dur, name, op_type, *_) in enumerate(ops):
            step = step_at(start, index)
            if step is None:
                left_out += 1
                continue
            row = (start, i, dur, step, op_type, None)
            found = groups.get(name)
            if found is None:
                groups[name] = [row]
            else:
                found.append(row)
        i = len(ops)
        for start, dur, name, op_type, gpu, _ in kernels:
            i += 1
            step = step_at(start, index, True)
            if step is None:
                left_out += 1
                continue
            row = (start, i, dur, step, op_type, GPU_STREAM_ALL % (0, gpu))
            found = groups.get(name)
            if found is None:
                groups[name] = [row]
            else:
                found.append(row)
        self.left_out += left_out
        model = self.model
        for _, name, op_type, gpu, kernel in (k[1:] for k in kernels):
            node_for(model, name, op_type).op_types.add(KERNEL_TYPE + kernel)
        for rows in groups.values():
            rows.sort()
        canonical = self.canonical
        # New nodes are made in the order of their first execution (then name).
        for _, name in sorted((rows[0][0], name) for name, rows in groups.items()):
            rows = groups[name]
            device = canonical.get(name)
            if device is None:
                on_gpu = gpu_of.get(name)
                device = CPU_DEVICE % 0 if on_gpu is None else GPU_DEVICE % (0, on_gpu)
                if any(row[5] is None for row in rows):
                    canonical[name] = device
            try:
                kept = [(step, device if own is None else own, int(start), max(round(dur), 0))
                        for start, _, dur, step, _, own in rows]
            except (ValueError, OverflowError):  # NaN or infinite: a broken trace
                kept = [(step, device if own is None else own, int(start), _whole(dur))
                        for start, _, dur, step, _, own in rows]
            self.rows.add_node(name, rows[0][4], kept)
        self.traces.add(parts.framed, parts.scoped, groups)

    def finish(self, defer_traces: bool) -> None:
        """Give the nodes their records, and their traces (now, or when first asked
        for with ``defer_traces``)."""
        self.memory.finish(self.rows.add_memory)
        self.rows.finish()
        self.model.set_memory_source(self.memory.source())
        traces, model = self.traces, self.model
        if not traces.any:
            return
        if defer_traces:
            model.defer_has_trace(traces.resolve, costly=False)
            for name in traces_wanted(traces):
                node = model.nodes[name]
                if node.trace is None:
                    node.defer_trace(_TraceOf(traces, name))
            return
        traces.resolve()
        for name, trace in (traces.found or {}).items():
            node = model.nodes[name]
            if node.trace is None:
                node.trace = trace
                model.has_trace = True


def traces_wanted(traces: TorchTraces) -> list[str]:
    """The nodes that may get a trace: every node with an execution in a file with frames."""
    return list(dict.fromkeys(name for _, execs in traces.files for name in execs))


class _TraceOf:
    """A node's deferred trace (a small callable, cheaper than a closure per node)."""

    __slots__ = ("traces", "name")

    def __init__(self, traces: TorchTraces, name: str) -> None:
        self.traces, self.name = traces, name

    def __call__(self) -> Optional[list[Frame]]:
        return self.traces.trace_of(self.name)
