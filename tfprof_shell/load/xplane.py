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
* XLA on the CPU (JAX without an accelerator): thunk events on host threads
  (``tf_XLA*`` lines, ``hlo_op``/``program_id`` stats) are cpu time of the
  framework op of their HLO instruction, self times (nested thunks
  subtracted), each program run in the step its first thunk starts in
  (:mod:`.xla_cpu`).
* steps: events with a ``step_num`` stat (``Trace("train", step_num=N)``,
  Keras's ``Profiled batch``) mark step N; an op execution belongs to the
  innermost marker open when it starts. Without markers everything is step 0.
* code view: with Python tracing on, ``$file.py:line function`` events are
  the Python stack; an op gets the stack open when it ran, followed through
  the executor's ``id`` stat to the ``FunctionRun`` that started it. Those
  events (most of a traced profile) are skipped while loading; the stacks are
  looked up, reading the file again, when a trace (or ``has_trace``) is first
  read, so the other views never pay for them.
* memory: ``MemoryAllocation``/``MemoryDeallocation`` events (read as columns)
  give each op's requested, peak, residual and output bytes, and the memory
  profile (:mod:`.memory_xplane`).

Several files (hosts) load together; node names then start with the host.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections import defaultdict
from functools import partial
from itertools import compress, repeat
from operator import add, floordiv, is_not, itemgetter
from typing import Any, Iterable, Optional, Sequence

from ..model import ExecMemory, ExecStep, Frame, GraphNode, LazyExecs, Model, Source
from ..model.intervals import StepMark
from .records import CPU_DEVICE, GPU_DEVICE
from .runmeta import device_kind
from .detect import host_name
from .memory_xplane import HostMemory, XPlaneMemorySource, host_memory, node_memory
from .progress import file_meter
from .xspace_intervals import XSpaceIntervals
from .xspace_path import XSpacePathSource
from .xspace import Host, time_origin
from .xspace_pick import parse_tf_op, read_xspace_picked

#: The share of a file's load done once its events are picked and its host made.
_PICKED = 0.6


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

    def at_sorted(self, ts: Sequence[int]) -> list[Optional[int]]:
        """``[self.at(t) for t in ts]`` for ascending ``ts``.

        The answer only changes at a marker's start or end, so each stretch of
        ``ts`` between two such times gets the answer at the stretch's start.
        """
        if not self.markers:
            return [None] * len(ts)
        bounds = sorted({m[0] for m in self.markers} | {m[1] for m in self.markers})
        lo = bisect_left(ts, bounds[0])
        out: list[Optional[int]] = [None] * lo
        for k, b in enumerate(bounds):
            hi = bisect_left(ts, bounds[k + 1], lo) if k + 1 < len(bounds) else len(ts)
            if hi > lo:
                out.extend(repeat(self.at(b), hi - lo))
                lo = hi
        return out

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
    for i, line in enumerate(host.lines):
        names = line.exec_names
        starts, op_names, op_types, self_times = host.op_rows(i)
        for start, name, op, self_ps in zip(starts, op_names, op_types, self_times):
            name = prefix + name
            gpu = gpu_of.get(name)
            device = cpu if gpu is None else GPU_DEVICE % (host.index, gpu)
            add((start, name, self_ps, op, device, at(start) if default is None else default))
            names.append(name)
        for start, dur, op in line.runs:
            name = prefix + op
            add((start, name, dur, op, cpu, at(start) if default is None else default))
            names.append(name)
        line.exec_starts = array("q", starts + [r[0] for r in line.runs])
        line.ops, line.runs, line.eagers, line.kernels = [], [], [], []
    host.op_columns.clear()
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

        def counted(start: int) -> bool:  # an execution in a step
            return default is not None or at(start) is not None

        for host in hosts:
            host.take_stacks(counted)
            for line in host.lines:
                traces = line.traces
                # Stacks were looked up for few of the executions: pass over the
                # others at C speed (in the same order).
                looked_up = compress(zip(line.exec_starts, line.exec_names),
                                     map(traces.__contains__, line.exec_starts))
                for start, name in looked_up:
                    trace = traces[start]
                    if not trace or not counted(start):
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


#: A CPU execution as :class:`_CpuExecs` keeps it: (start ps, self ps, step, op type).
_CpuRow = tuple[int, int, int, str]
_SELF_PS = itemgetter(1)


class _CpuExecs:
    """The ExecSource of a host without device kernels: every execution is on the
    host's cpu device, so a node's records are made from its own executions
    only when a view reads them (:func:`_add_execs`'s rules, per node)."""

    def __init__(self, device: str, ref_ps: int) -> None:
        self.device, self.ref_ps = device, ref_ps
        #: node key -> its executions with a step, sorted by start (stable)
        self.rows: list[list[_CpuRow]] = []
        #: node key -> its memory by step (requested, peak, residual, output bytes)
        self.memory: dict[int, dict[int, list[int]]] = {}
        #: the last node asked for: (key, its executions by step); callers ask for
        #: a node's steps one after another
        self._last: tuple[int, dict[int, list[_CpuRow]]] = (-1, {})

    def _of_step(self, key: int, step: int) -> list[_CpuRow]:
        if self._last[0] != key:
            by_step: dict[int, list[_CpuRow]] = {}
            for row in self.rows[key]:
                found = by_step.get(row[2])
                if found is None:
                    by_step[row[2]] = [row]
                else:
                    found.append(row)
            self._last = (key, by_step)
        return self._last[1].get(step, [])

    def step_record(self, key: int, step: int) -> ExecStep:
        """The record :func:`_add_execs` makes for node ``key`` in ``step``."""
        rec = ExecStep()
        rec.devices.add(self.device)
        execs: list[tuple[int, int]] = []
        ref_ps = self.ref_ps
        for t, dur, _, _ in self._of_step(key, step):
            start = (ref_ps + t) // 1_000_000
            if start <= 0:
                continue
            if rec.all_start_micros <= 0 or start < rec.all_start_micros:
                rec.all_start_micros = start
            dur = (dur + 500_000) // 1_000_000 or 1
            if rec.latest_end_micros < start + dur:
                rec.latest_end_micros = start + dur
            execs.append((start, dur))
        if execs:
            rec.cpu_execs[self.device] = execs
            rec.run_count = len(execs)
        memory = self.memory.get(key, {}).get(step)
        if memory is not None:
            rec.memory_execs.append(_exec_memory(memory))
        return rec

    def step_values(self, key: int, step: int) -> tuple[int, ...]:
        """The :meth:`ExecStep.values` of :meth:`step_record`."""
        return self.step_record(key, step).values()

    def steps_values(self, key: int, steps: Sequence[int]) -> list[Sequence[int]]:
        """:meth:`step_values` of each of ``steps``; at once in the common case."""
        rows = self.rows[key]
        # (ref_ps + t) // 10**6 > 0, i.e. step_record counts it, from this start on
        first_positive = 1_000_000 - self.ref_ps
        if len(rows) == len(steps) and rows[0][0] >= first_positive and key not in self.memory:
            # One execution per step (a tf.function's op), every start counted (rows
            # are sorted by start): the steps are the rows' own, in row order.
            each = map(floordiv, map(add, map(_SELF_PS, rows), repeat(500_000)),
                       repeat(1_000_000))
            # ps_to_micros, 0us rounding up to 1us, as step_record does
            return [(1, m, 0, m, 0, 0, 0, 0) for m in (m or 1 for m in each)]
        return [self.step_values(key, step) for step in steps]


def _plain_cpu(kind: Any) -> bool:
    """Whether executions on a device of this kind count as cpu executions."""
    return bool(kind.canonical and not kind.stream)


def _add_cpu_execs(model: Model, host: Host, steps: _Steps, default: Optional[int],
                   ref_ps: int, memory: dict[str, dict[int, list[int]]]) -> int:
    """:func:`_host_rows` then :func:`_add_execs` for a lone host without device
    kernels on a :func:`_plain_cpu` device, with the same result; records are
    deferred (:class:`_CpuExecs`).
    Returns how many executions had no step."""
    device = CPU_DEVICE % host.index
    kind = device_kind(device)
    prefix = host.prefix
    groups: defaultdict[str, list[_CpuRow]] = defaultdict(list)
    left_out = 0
    for i, line in enumerate(host.lines):
        starts, names, types, self_times = host.op_rows(i)
        if prefix:
            names = [prefix + name for name in names]
        # (the columns are the host's own, and extended below with the eager ops)
        op_steps = (steps.at_sorted(starts) if default is None
                    else [default] * len(starts))
        rows: Iterable[_CpuRow] = zip(starts, self_times, op_steps, types)
        named: Iterable[str] = names
        missing = op_steps.count(None)
        if missing:
            left_out += missing
            has_step = list(map(is_not, op_steps, repeat(None)))
            rows, named = compress(rows, has_step), compress(names, has_step)
        # any() only drives the C-level loop: list.append returns None
        any(map(list.append, map(groups.__getitem__, named), rows))
        for start, dur, op in line.runs:
            name = prefix + op
            step = steps.at(start) if default is None else default
            names.append(name)
            starts.append(start)
            if step is None:
                left_out += 1
                continue
            groups[name].append((start, dur, step, op))
        line.exec_names.extend(names)
        line.exec_starts = array("q", starts)
        line.ops, line.runs, line.eagers, line.kernels = [], [], [], []
    host.op_columns.clear()
    source = _CpuExecs(device, ref_ps)
    table = source.rows
    nodes = model.nodes
    seen = set(model.steps)
    step_of = itemgetter(2)
    self_ps = itemgetter(1)
    # (ref_ps + t) // 10**6 > 0 for every start at or after this one
    first_positive = 1_000_000 - ref_ps
    by_start = itemgetter(0)
    for g in groups.values():
        if len(g) > 1:
            g.sort(key=by_start)
    order = sorted((g[0][0], name) for name, g in groups.items())
    for _, name in order:
        g = groups[name]
        node = nodes[name] = GraphNode(name, g[0][3], len(nodes))
        node.canonical_device = device
        node.host_device = kind.host
        node.op_types.add(device)
        ran = tuple(dict.fromkeys(map(step_of, g)))
        seen.update(ran)
        durations: Iterable[int] = map(self_ps, g)
        if g[0][0] < first_positive:
            durations = [d for t, d, _, _ in g if t >= first_positive]
        # ps_to_micros, 0us rounding up to 1us, as _add_execs does per execution
        micros_each = list(map(floordiv, map(add, durations, repeat(500_000)),
                               repeat(1_000_000)))
        runs = len(micros_each)
        micros = sum(micros_each) + micros_each.count(0)
        key = len(table)
        table.append(g)
        mem = [0, 0, 0, 0]
        by_step = memory.get(name)
        if by_step:
            by_step = {step: values for step, values in by_step.items() if step in ran}
            source.memory[key] = by_step
            for values in by_step.values():
                mem = [a + b for a, b in zip(mem, values)]
        node.defer_execs(LazyExecs(source, key, ran, (runs, micros, 0, micros, *mem),
                                   accelerator_persistent=False))
    model.steps[:] = sorted(seen)
    return left_out


def _thunk_rows(host: Host, steps: _Steps, default: Optional[int],
                left_out: list[int]) -> list[Row]:
    """The host's XLA thunks (:mod:`.xla_cpu`) that ran in a step (the innermost
    marker open at the time :func:`.xla_cpu.step_times` gives each);
    ``left_out`` gets [count, ps] of the others."""
    out: list[Row] = []
    for ex, when in zip(host.thunks, host.thunk_times):
        ex.step = steps.at(when) if default is None else default
        if ex.step is None:
            left_out[0] += 1
            left_out[1] += ex.dur
            continue
        out.append((ex.start, ex.name, ex.dur, ex.op, ex.device, ex.step))
    return out


def _exec_memory(values: Sequence[int]) -> ExecMemory:
    requested, peak, residual, output = values
    return ExecMemory(requested_bytes=requested, peak_bytes=peak, residual_bytes=residual,
                      output_bytes=output)


def _set_memory_source(model: Model, hosts: Sequence[Host], mems: list[HostMemory],
                       memory: dict[str, dict[int, list[int]]], steps: _Steps) -> None:
    """Leave the hosts' memory events on the model, for its memory profile."""
    if not any(len(mem) for mem in mems):
        return
    marks = [StepMark(step, start // 1000, end // 1000) for start, end, step in steps.markers]
    if not marks:  # the whole profile is step 0
        times = [t for mem in mems for t in mem.time]
        marks = [StepMark(0, min(times) // 1000, max(times) // 1000 + 1)]
    op_types = {name: model.nodes[name].op for name in memory if name in model.nodes}
    model.set_memory_source(XPlaneMemorySource(mems, marks, op_types,
                                               [host.path for host in hosts], len(hosts) > 1))


def _nothing_to_show(left_out: int) -> str:
    """The note for a profile in which no execution was found (``left_out`` of them
    ran outside the step markers)."""
    if left_out:
        return "no executions to show: every one ran outside the step markers"
    return ("no executions to show: the profile holds no TensorFlow op events, no device "
            "kernels that name an op and no XLA thunk events on host threads")


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
    # each host's memory events, before the hosts drop the op spans they need
    mems = [host_memory(host) for host in hosts]
    memory = node_memory(mems, (lambda ts: [default] * len(ts)) if default is not None
                         else steps.at_sorted)
    rows: list[Row] = []
    fast = (len(hosts) == 1 and not hosts[0].kernels and not hosts[0].thunks
            and _plain_cpu(device_kind(CPU_DEVICE % hosts[0].index)))
    thunks_left_out = [0, 0]
    for host in hosts:
        unattributed += host.unattributed
        if fast:
            continue
        rows.extend(_host_rows(host, steps, default))
        for ex in host.kernels:
            ex.step = default
            if default is None:
                ex.step = steps.at(ex.start)
                if ex.step is None:  # kernels may run after the step's host work ended
                    ex.step = steps.last_started(ex.start)
            rows.append((ex.start, ex.name, ex.dur, ex.op, ex.device, ex.step))
        rows.extend(_thunk_rows(host, steps, default, thunks_left_out))
    if fast:
        left_out = _add_cpu_execs(model, hosts[0], steps, default, ref_ps, memory)
    else:
        rows.sort(key=itemgetter(0, 1))
        left_out = _add_execs(model, rows, ref_ps)
        for name, by_step in memory.items():
            node = model.nodes.get(name)
            for step, values in by_step.items():
                rec = node.exec_step(step) if node is not None else None
                if rec is not None:
                    rec.memory_execs.append(_exec_memory(values))
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
    _set_memory_source(model, hosts, mems, memory, steps)
    if left_out:
        model.notes.append("%d op executions outside any step marker were left out" % left_out)
    if unattributed:
        model.notes.append("%d device events name no TensorFlow op and were left out"
                           % unattributed)
    if thunks_left_out[0]:
        model.notes.append("%d XLA thunk executions (%d us) outside any step marker were "
                           "left out" % (thunks_left_out[0],
                                         (thunks_left_out[1] + 500_000) // 1_000_000))
    if not model.nodes:
        model.notes.append(_nothing_to_show(left_out + thunks_left_out[0]))
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
    meter = file_meter(paths)
    for i, path in enumerate(paths):
        space, picked = read_xspace_picked(path)
        epoch, first = time_origin(space)
        if ref_ns is None:
            ref_ns = epoch + first
        prefix = host_name(path) + "/" if len(paths) > 1 else ""
        hosts.append(Host(space, i, prefix, epoch - ref_ns, path, picked))
        del space, picked
        meter.reached(i, _PICKED)
    model = model_from_hosts(hosts, ref_ns or 0, Source("xplane", tuple(paths), note))
    meter.reached(len(paths) - 1, 1.0)
    model.set_interval_source(XSpaceIntervals(paths))
    model.set_path_source(XSpacePathSource(paths))
    if note:
        model.notes.insert(0, note)
    return model
