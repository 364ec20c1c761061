"""Chrome-trace JSON (``.json`` / ``.json.gz``) -> Model.

Two producers are understood:

* TensorFlow 1 timelines (``timeline.Timeline(...).generate_chrome_trace_format()``,
  ``ProfilerHook``'s ``timeline-<step>.json``): each complete event (``"ph": "X"``)
  whose ``args`` carry ``name`` and ``op`` is one record of node ``name`` on the
  device of its process (``<device> Compute``), fed through the engine's
  RunMetadata rules. The i-th file is step i. Op types are the kernels that ran
  (``args.op``); with ``--graph_path`` the graph supplies nodes and types and
  timeline-only nodes are named by themselves, exactly as with run metadata.
* PyTorch profiler traces (``torch.profiler`` ``export_chrome_trace``): each
  ``cpu_op`` event is a node named by the path of the module (``nn.Module``),
  ``record_function`` and enclosing ops around it (``Linear_0/aten::linear/
  aten::addmm``), typed by the op (``aten::addmm``), timed by its self time;
  GPU kernels count as accelerator time of the op whose ``External id`` they
  carry; ``ProfilerStep#N`` marks step N (else the i-th file is step i). In a
  trace recorded with stacks (``with_stack=True``) the ``python_function``
  events open around an op (``train.py(23): main``) are its code trace.
"""

from __future__ import annotations

import gzip
import re
import zlib
from bisect import bisect_right
from itertools import accumulate
from typing import Any, Optional, Sequence

from ..errors import LoadError
from ..model import Frame, Model, Source
from .files import read_bytes
from .json_doc import parse_json
from .records import CPU_DEVICE, GPU_DEVICE, GPU_STREAM_ALL, StatRecord, add_exec, node_for
from .runmeta import add_run_metadata
from .torch_intervals import TorchIntervals, keep_events
from .xla import KERNEL_TYPE

_COMPUTE_SUFFIX = " Compute"
_PROFILER_STEP = re.compile(r"ProfilerStep#(\d+)")
_TORCH_CPU = ("cpu_op", "operator")
_TORCH_DEVICE = ("kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset")
_TORCH_SCOPES = ("user_annotation", "python_function")
_TORCH_PY_FRAME = re.compile(r"(.+)\((\d+)\): (.+)")
_UNPARSED = object()


def read_trace_events(path: str, entry: str = "") -> list[dict[str, Any]]:
    """The event list of one Chrome-trace file; LoadError if it is not one."""
    where = "--profile_path %s%s" % (path, " (%s)" % entry if entry else "")
    data = read_bytes(path, "profile_path")
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            raise LoadError("%s: gzip data does not decompress" % where) from None
    try:
        doc = parse_json(data)
    except (ValueError, RecursionError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise LoadError("%s: not valid JSON: %s" % (where, first)) from None
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise LoadError("%s: not a Chrome trace (no traceEvents list)" % where)
    return [e for e in events if isinstance(e, dict)]


def trace_flavor(events: Sequence[dict[str, Any]]) -> str:
    """"tensorflow", "pytorch" or "" for a trace neither wrote."""
    for ev in events:
        if ev.get("ph") != "X":
            continue
        args = ev.get("args")
        if isinstance(args, dict) and "name" in args and "op" in args:
            return "tensorflow"
        if ev.get("cat") in _TORCH_CPU + _TORCH_DEVICE:
            return "pytorch"
    return ""


class _DevStats:
    __slots__ = ("device", "node_stats")

    def __init__(self, device: str) -> None:
        self.device = device
        self.node_stats: list[Any] = []


class _StepStats:
    __slots__ = ("dev_stats",)

    def __init__(self) -> None:
        self.dev_stats: list[_DevStats] = []


def _micros(value: Any) -> int:
    try:
        return int(round(float(value)))
    except (TypeError, ValueError):
        return 0


def tf_step_stats(events: Sequence[dict[str, Any]]) -> tuple[Any, dict[str, str]]:
    """A StepStats look-alike of one TF timeline, and each node's kernel type."""
    devices = {}
    for ev in events:
        if ev.get("ph") == "M" and ev.get("name") == "process_name":
            name = str((ev.get("args") or {}).get("name", ""))
            if name.endswith(_COMPUTE_SUFFIX):
                devices[ev.get("pid")] = name[:-len(_COMPUTE_SUFFIX)]
    stats = _StepStats()
    by_device: dict[str, _DevStats] = {}
    types: dict[str, str] = {}
    for ev in events:
        args = ev.get("args")
        if ev.get("ph") != "X" or not isinstance(args, dict) or "name" not in args:
            continue
        device = devices.get(ev.get("pid"), "/job:localhost/replica:0/task:0/device:CPU:0")
        dev = by_device.get(device)
        if dev is None:
            dev = by_device[device] = _DevStats(device)
            stats.dev_stats.append(dev)
        name = str(args["name"])
        dev.node_stats.append(StatRecord(name, _micros(ev.get("ts")), _micros(ev.get("dur"))))
        types.setdefault(name.split(":", 1)[0], str(args.get("op", name)))
    return stats, types


def add_tf_timeline(model: Model, step: int, events: Sequence[dict[str, Any]],
                    types_from_graph: bool) -> None:
    """Add one TF timeline as ``step``. Nodes it adds are typed by their kernel,
    unless a graph gives the types (then they are named by themselves, as with
    run metadata)."""
    stats, types = tf_step_stats(events)
    before = set(model.nodes) if not types_from_graph else None
    add_run_metadata(model, step, stats)
    if before is None:
        return
    for name, node in model.nodes.items():
        if name not in before and name in types and node.op == name:
            node.op_types.discard(name)
            node.op = types[name]
            node.op_types.add(node.op)


def _label(ev: dict[str, Any]) -> str:
    name = str(ev.get("name", ""))
    return name[len("nn.Module: "):] if name.startswith("nn.Module: ") else name


def _torch_scoped(ev: dict[str, Any]) -> bool:
    cat = ev.get("cat")
    if cat in _TORCH_CPU:
        return True
    return cat == "user_annotation" or (
        cat == "python_function" and str(ev.get("name", "")).startswith("nn.Module: "))


def _torch_ops(events: Sequence[dict[str, Any]]) -> list[list[Any]]:
    """[start, self, name, op, external id] of every cpu op, scoped by what encloses it."""
    # Per thread: (start, -duration, input order, event), so a plain sort puts
    # the outer of two events starting together first and keeps ties in order.
    threads: dict[Any, list[tuple[float, float, int, dict[str, Any]]]] = {}
    for seq, ev in enumerate(events):
        if ev.get("ph") != "X" or not _torch_scoped(ev) \
                or _PROFILER_STEP.fullmatch(str(ev.get("name", ""))):
            continue
        threads.setdefault((ev.get("pid"), ev.get("tid")), []).append(
            (float(ev.get("ts", 0)), -float(ev.get("dur", 0)), seq, ev))
    out: list[list[Any]] = []
    for items in threads.values():
        items.sort()
        # Each open event: its end, its scope path, and the nearest cpu op record
        # at or above it (whose self time its child ops reduce).
        stack: list[tuple[float, str, Optional[list[Any]]]] = []
        for start, neg_dur, _, ev in items:
            end = start - neg_dur
            while stack and stack[-1][0] <= start:
                stack.pop()
            path = stack[-1][1] + "/" + _label(ev) if stack else _label(ev)
            parent = stack[-1][2] if stack else None
            rec = parent
            if ev.get("cat") in _TORCH_CPU:
                ext = (ev.get("args") or {}).get("External id")
                rec = [start, end - start, path, str(ev.get("name", "")), ext]
                if parent is not None:
                    parent[1] -= end - start
                out.append(rec)
            stack.append((end, path, rec))
    return out


def _torch_steps(events: Sequence[dict[str, Any]]) -> list[tuple[float, float, int]]:
    marks = []
    for ev in events:
        if ev.get("ph") != "X":
            continue
        m = _PROFILER_STEP.fullmatch(str(ev.get("name", "")))
        if m:
            start = float(ev.get("ts", 0))
            marks.append((start, start + float(ev.get("dur", 0)), int(m.group(1))))
    return sorted(marks)


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
        self.max_end = list(accumulate((m[1] for m in marks), max))

    def at(self, t: float, default: int, last: bool = False) -> Optional[int]:
        marks = self.marks
        if not marks:
            return default
        i = bisect_right(self.starts, t) - 1
        if i < 0:
            return None
        j = i
        while j >= 0 and self.max_end[j] > t:
            if t < marks[j][1]:
                return marks[j][2]
            j -= 1
        return marks[i][2] if last else None


def _torch_frame(ev: dict[str, Any]) -> Optional[Frame]:
    """The Frame of a ``python_function`` event ``file.py(12): func``; None for others."""
    m = _TORCH_PY_FRAME.fullmatch(str(ev.get("name", "")))
    if m is None:
        return None
    line = int(m.group(2))
    return Frame(m.group(1), line, m.group(3), line)


def _torch_traces(events: Sequence[dict[str, Any]]) -> dict[tuple[float, str], list[Frame]]:
    """(start, op type) of each cpu op -> the Python frames open around it on its thread,
    outermost first (empty without ``python_function`` events)."""
    threads: dict[Any, list[tuple[float, int, float, Any]]] = {}
    # A trace repeats the same few hundred frames: each name is parsed once.
    frames: dict[str, Optional[Frame]] = {}
    for ev in events:
        if ev.get("ph") != "X":
            continue
        cat = ev.get("cat")
        if cat == "python_function":
            name = str(ev.get("name", ""))
            frame = frames.get(name, _UNPARSED)
            if frame is _UNPARSED:
                frame = frames[name] = _torch_frame(ev)
            if frame is None:
                continue
            kind, what = 0, frame
        elif cat in _TORCH_CPU:
            kind, what = 1, str(ev.get("name", ""))
        else:
            continue
        start = float(ev.get("ts", 0))
        threads.setdefault((ev.get("pid"), ev.get("tid")), []).append(
            (start, kind, start + float(ev.get("dur", 0)), what))
    traces: dict[tuple[float, str], list[Frame]] = {}
    for items in threads.values():
        if not any(kind == 0 for _, kind, _, _ in items):
            continue
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


def add_torch_trace(model: Model, index: int, events: Sequence[dict[str, Any]]) -> int:
    """Add one PyTorch trace (file ``index``); returns how many ops fell outside steps."""
    marks = _StepMarks(_torch_steps(events))
    ops = _torch_ops(events)
    traces = _torch_traces(events)
    by_ext = {op[4]: op for op in ops if op[4] is not None}
    kernels = []
    for ev in events:
        if ev.get("ph") != "X" or ev.get("cat") not in _TORCH_DEVICE:
            continue
        args = ev.get("args") or {}
        op = by_ext.get(args.get("External id"))
        if op is not None:
            gpu = int(args.get("device", 0) or 0)
            op.append(gpu)
            kernels.append((float(ev.get("ts", 0)), float(ev.get("dur", 0)), op[2], op[3], gpu,
                            str(ev.get("name", ""))))
    # The engine keeps a node's cpu records on its first device only, so every
    # execution of a node goes on its GPU if any of them launched kernels.
    gpu_of: dict[str, int] = {}
    for op in ops:
        if len(op) > 5:
            gpu_of.setdefault(op[2], op[5])
    records = []
    for op in ops:
        known = model.nodes.get(op[2])
        if known is not None and known.canonical_device:
            device = known.canonical_device
        else:
            on_gpu = gpu_of.get(op[2])
            device = CPU_DEVICE % 0 if on_gpu is None else GPU_DEVICE % (0, on_gpu)
        records.append((op[0], op[1], op[2], op[3], device, marks.at(op[0], index)))
    for start, dur, name, op_type, gpu, _ in kernels:
        records.append((start, dur, name, op_type, GPU_STREAM_ALL % (0, gpu),
                        marks.at(start, index, last=True)))
    add_kernel_types(model, [(k[2], k[3], k[5]) for k in kernels])
    records.sort(key=lambda r: (r[0], r[2]))
    left_out = 0
    for start, dur, name, op_type, device, step in records:
        if step is None:
            left_out += 1
            continue
        add_exec(model, step, device, name, op_type, int(start), max(_micros(dur), 0),
                 trace=traces.get((start, op_type)))
    return left_out


def add_kernel_types(model: Model, kernels: Sequence[tuple[str, str, str]]) -> None:
    """Give each (node, op type, kernel name) node the extra op type ``kernel:<name>``,
    as the XLA route does, so -account_type_regexes 'kernel:...' selects it."""
    for name, op_type, kernel in kernels:
        node_for(model, name, op_type).op_types.add(KERNEL_TYPE + kernel)


def load_chrome_traces(paths: Sequence[str], graph_path: Optional[str] = None,
                       op_log_path: Optional[str] = None, note: str = "") -> Model:
    """Read Chrome-trace files (file i = step i) into a Model, with an optional
    GraphDef and op log as on the run-metadata route."""
    model = Model(Source("chrome_trace", tuple(p for p in (*paths, graph_path, op_log_path)
                                              if p), note))
    if note:
        model.notes.append(note)
    op_log: Any = None
    id_to_string: dict[int, str] = {}
    if graph_path or op_log_path:
        from .graph import add_graph, add_op_log, read_graph, read_op_log
        if graph_path:
            add_graph(model, read_graph(graph_path))
        if op_log_path:
            op_log = read_op_log(op_log_path)
            add_op_log(model, op_log, id_to_string)
    left_out = 0
    count = len(paths)
    torch_files = []
    for i, path in enumerate(paths):
        entry = "entry %d of %d" % (i + 1, count) if count > 1 else ""
        events = read_trace_events(path, entry)
        flavor = trace_flavor(events)
        if flavor == "tensorflow":
            add_tf_timeline(model, i, events, types_from_graph=bool(graph_path))
        elif flavor == "pytorch":
            left_out += add_torch_trace(model, i, events)
            torch_files.append(keep_events(events))
        else:
            raise LoadError("--profile_path %s%s: a Chrome trace, but neither a TensorFlow "
                            "timeline (events with args.name and args.op) nor a PyTorch "
                            "profiler trace" % (path, " (%s)" % entry if entry else ""))
    if op_log is not None:
        from .graph import add_op_log
        add_op_log(model, op_log, id_to_string)
    if left_out:
        model.notes.append("%d op executions outside any ProfilerStep were left out" % left_out)
    if torch_files:
        model.set_interval_source(TorchIntervals(torch_files))
    return model
