"""TensorFlow 2 profiles (``<host>.xplane.pb``, an XSpace) -> Model.

Read with our own wire-compatible schema (no TensorFlow needed). The mapping:

* host plane (``/host:CPU``, formerly ``Host Threads``): each event named
  ``op_name:OpType`` is one execution of node ``op_name`` with that type (the
  kernel that ran, e.g. ``_MklMatMul``), on the host's cpu device. Its time
  is its own duration minus the TF-op events nested inside it on that thread.
  Eager ops (``EagerExecute`` events with an ``eager_op`` stat) become nodes
  named by their op type, timed by the ``EagerKernelExecute`` inside them.
* device planes (``/device:GPU:<n>``): each kernel on a stream line is
  accelerator time of the op named by its ``tf_op`` (or annotation) stat, on
  ``.../device:gpu:<n>/stream:all``; that op's host events then count as
  launch time on ``.../device:gpu:<n>``, as in RunMetadata. Kernels of
  XLA programs (``hlo_op`` and ``program_id`` stats: JAX, jit-compiled TF)
  count for the framework op of their HLO instruction instead (:mod:`.xla`).
* steps: events with a ``step_num`` stat (``Trace("train", step_num=N)``,
  Keras's ``Profiled batch``) mark step N; an op execution belongs to the
  innermost marker open when it starts. Without markers everything is step 0.
* code view: with Python tracing on, ``$file.py:line function`` events are
  the Python stack; an op gets the stack open when it ran, followed through
  the executor's ``id`` stat to the ``FunctionRun`` that started it. Those
  events (most of a traced profile) are skipped while loading; the stacks are
  looked up, reading the file again, when a trace (or ``has_trace``) is first
  read, so the other views never pay for them.
* memory: ``MemoryAllocation`` events (``tf_op`` stat) give requested, peak
  (allocated), output and residual (not freed by the end of the profile) bytes.

Several files (hosts) load together; node names then start with the host.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from functools import partial
from operator import itemgetter
from typing import Any, Optional, Sequence

from ..model import ExecMemory, ExecStep, Frame, GraphNode, Model, Source
from .records import CPU_DEVICE, GPU_DEVICE
from .runmeta import device_kind
from .detect import host_name
from .xspace import Host, parse_tf_op, read_xspace_picked, time_origin


class _Steps:
    """Step markers, looked up by time: the innermost marker open at ``t``."""

    def __init__(self, markers: Sequence[tuple[int, int, int]]) -> None:
        self.markers = sorted(markers)
        self.starts = [m[0] for m in self.markers]
        self.max_end: list[int] = []
        end = -1
        for m in self.markers:
            end = max(end, m[1])
            self.max_end.append(end)

    def at(self, t: int) -> Optional[int]:
        i = bisect_right(self.starts, t) - 1
        while i >= 0 and self.max_end[i] > t:
            if self.markers[i][1] > t:
                return self.markers[i][2]
            i -= 1
        return None

    def last_started(self, t: int) -> Optional[int]:
        i = bisect_right(self.starts, t) - 1
        return self.markers[i][2] if i >= 0 else None


#: An execution as the model is built from it: (start ps, node name, duration ps,
#: op type, device, step or None).
Row = tuple[int, str, int, str, str, Optional[int]]


def _host_rows(host: Host, steps: _Steps, default: Optional[int]) -> list[Row]:
    """The host's executions (without traces); each line keeps just their starts
    and names (for :class:`_DeferredTraces`)."""
    cpu = CPU_DEVICE % host.index
    out: list[Row] = []
    add = out.append
    prefix, gpu_of = host.prefix, host.gpu_of
    at = steps.at
    for line in host.lines:
        names = line.exec_names
        for start, _, name, op, self_ps in line.ops:
            name = prefix + name
            gpu = gpu_of.get(name)
            device = cpu if gpu is None else GPU_DEVICE % (host.index, gpu)
            add((start, name, self_ps, op, device, at(start) if default is None else default))
            names.append(name)
        for start, dur, op in line.runs:
            name = prefix + op
            add((start, name, dur, op, cpu, at(start) if default is None else default))
            names.append(name)
        line.exec_starts = array("q", [o[0] for o in line.ops] + [r[0] for r in line.runs])
        line.ops, line.runs, line.eagers, line.kernels = [], [], [], []
    return out


class _DeferredTraces:
    """The nodes' Python stacks, looked up all at once when the first is asked for.

    A node's trace is the stack of its first execution (in time, then reading
    order) that has a step and a non-empty stack, as :func:`_add_execs` would
    set it from the executions' traces.
    """

    def __init__(self, hosts: Sequence[Host], steps: _Steps, default: Optional[int]) -> None:
        self.hosts: Optional[Sequence[Host]] = hosts
        self.steps, self.default = steps, default
        self.found: dict[str, list[Frame]] = {}

    def resolve(self) -> bool:
        """Look the stacks up (once); whether any execution with a step has one."""
        hosts, self.hosts = self.hosts, None
        if hosts is None:
            return bool(self.found)
        first: dict[str, tuple[int, list[Frame]]] = {}
        at, default = self.steps.at, self.default
        for host in hosts:
            host.take_stacks(lambda start: default is not None or at(start) is not None)
            for line in host.lines:
                traces = line.traces
                for start, name in zip(line.exec_starts, line.exec_names):
                    trace = traces.get(start)
                    if not trace or (default is None and at(start) is None):
                        continue
                    best = first.get(name)
                    if best is None or start < best[0]:
                        first[name] = (start, trace)
                line.traces = {}
        self.found = {name: trace for name, (_, trace) in first.items()}
        return bool(self.found)

    def trace_of(self, name: str) -> Optional[list[Frame]]:
        """The trace of node ``name`` (resolving all traces on the first call)."""
        self.resolve()
        return self.found.get(name)


def _add_memory(model: Model, host: Host, steps: _Steps, default: Optional[int],
                ref_ps: int) -> None:
    acc: dict[tuple[str, int], ExecMemory] = {}
    live: dict[tuple[Any, Any], tuple[str, int, int]] = {}
    for t, kind, st in sorted(host.memory, key=lambda m: m[0]):
        op = str(st.get("tf_op") or "")
        named = parse_tf_op(op)
        name = host.prefix + (named[0] if named else op)
        step = steps.at(t) if default is None else default
        key = (st.get("allocator_name"), st.get("addr"))
        if kind == "MemoryDeallocation":
            live.pop(key, None)
            continue
        if name not in model.nodes or step is None:
            continue
        mem = acc.get((name, step))
        if mem is None:
            mem = acc[(name, step)] = ExecMemory(memory_micros=(ref_ps + t) // 1_000_000)
        nbytes = int(st.get("allocation_bytes") or 0)
        mem.requested_bytes += int(st.get("requested_bytes") or 0)
        mem.peak_bytes += nbytes
        if st.get("region_type") == "output":
            mem.output_bytes += nbytes
        live[key] = (name, step, nbytes)
    for name, step, nbytes in live.values():
        if (name, step) in acc:
            acc[(name, step)].residual_bytes += nbytes
    for (name, step), mem in acc.items():
        rec = model.nodes[name].execs.setdefault(step, ExecStep())
        rec.memory_execs.append(mem)


def _add_execs(model: Model, rows: Sequence[Row], ref_ps: int) -> int:
    """:func:`.records.add_exec` for each execution with a step, in order; returns
    how many had no step. The same rules as :func:`.runmeta.add_step_stat`,
    inlined: this loop runs once per execution of a large TF2 profile."""
    nodes = model.nodes
    seen = set(model.steps)
    records: dict[str, tuple[GraphNode, dict[int, ExecStep]]] = {}  # execs is a property
    left_out = 0
    for t, name, dur, op, dev, step in rows:
        if step is None:
            left_out += 1
            continue
        if step not in seen:
            seen.add(step)
        kind = device_kind(dev)
        known = records.get(name)
        if known is None:
            node = nodes.get(name)
            if node is None:
                node = nodes[name] = GraphNode(name, op, len(nodes))
            known = records[name] = (node, node.execs)
        node, execs_of = known
        if kind.canonical:
            if node.canonical_device:
                if node.canonical_device != dev:
                    continue  # the engine drops records from a second canonical device
            else:
                node.canonical_device = dev
                node.host_device = kind.host
                node.op_types.add(dev)
        rec = execs_of.get(step)
        if rec is None:
            rec = execs_of[step] = ExecStep()
        rec.devices.add(dev)
        start = (ref_ps + t) // 1_000_000
        if start <= 0:
            continue
        if rec.all_start_micros <= 0 or start < rec.all_start_micros:
            rec.all_start_micros = start
        dur = (dur + 500_000) // 1_000_000 or 1  # ps_to_micros; 0us rounds up to 1us
        if rec.latest_end_micros < start + dur:
            rec.latest_end_micros = start + dur
        if kind.stream:
            rec.accelerator_execs.setdefault(dev, []).append((start, dur))
        elif kind.canonical:
            rec.cpu_execs.setdefault(dev, []).append((start, dur))
            rec.run_count += 1
    model.steps[:] = sorted(seen)
    return left_out


def model_from_hosts(hosts: Sequence[Host], ref_ns: int, source: Source) -> Model:
    """Build a Model from hosts read onto one time axis (picoseconds after ``ref_ns``)."""
    model = Model(source)
    ref_ps = ref_ns * 1000
    steps = _Steps([m for h in hosts for m in h.markers])
    default = None if steps.markers else 0
    if default == 0:
        model.notes.append("no step markers (events with a step_num stat): "
                           "the whole profile is step 0")
    unattributed = 0
    rows: list[Row] = []
    for host in hosts:
        unattributed += host.unattributed
        rows.extend(_host_rows(host, steps, default))
        for ex in host.kernels:
            ex.step = default
            if default is None:
                ex.step = steps.at(ex.start)
                if ex.step is None:  # kernels may run after the step's host work ended
                    ex.step = steps.last_started(ex.start)
            rows.append((ex.start, ex.name, ex.dur, ex.op, ex.device, ex.step))
    rows.sort(key=itemgetter(0, 1))
    left_out = _add_execs(model, rows, ref_ps)
    del rows
    if any(host.has_frames for host in hosts):
        deferred = _DeferredTraces(hosts, steps, default)
        model.defer_has_trace(deferred.resolve)
        for node in model.nodes.values():
            if node.trace is None:
                node.defer_trace(partial(deferred.trace_of, node.name))
    for host in hosts:
        if host.xla is not None:
            host.xla.apply(model, host.index)
        _add_memory(model, host, steps, default, ref_ps)
    if left_out:
        model.notes.append("%d op executions outside any step marker were left out" % left_out)
    if unattributed:
        model.notes.append("%d device events name no TensorFlow op and were left out"
                           % unattributed)
    collectors = [host.xla for host in hosts if host.xla is not None]
    if collectors:
        from .xla import xla_notes
        model.notes.extend(xla_notes(collectors))
    return model


def load_xplane(paths: Sequence[str], note: str = "") -> Model:
    """Read ``.xplane.pb`` files (one per host of one run) into a Model.

    Each file is reduced to its events and dropped before the next is read.
    Times are kept in picoseconds after the first file's earliest line start
    (absolute picoseconds would not fit 64-bit arrays).
    """
    hosts = []
    ref_ns: Optional[int] = None
    for i, path in enumerate(paths):
        space, picked = read_xspace_picked(path)
        epoch, first = time_origin(space)
        if ref_ns is None:
            ref_ns = epoch + first
        prefix = host_name(path) + "/" if len(paths) > 1 else ""
        hosts.append(Host(space, i, prefix, epoch - ref_ns, path, picked))
        del space, picked
    model = model_from_hosts(hosts, ref_ns or 0, Source("xplane", tuple(paths), note))
    if note:
        model.notes.insert(0, note)
    return model
