"""Timed executions from any trace format -> node records, by the engine's rules.

Trace formats that are not RunMetadata (XSpace events, Chrome-trace events)
hand each execution to :func:`add_exec`, which feeds it through the same
:func:`.runmeta.add_step_stat` as a RunMetadata record: cpu time on the
canonical device, accelerator time on ``stream:all`` devices, a run count
per cpu execution, 0 µs rounded up to 1 µs.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Optional, Sequence

from ..model import ExecMemory, ExecStep, Frame, GraphNode, LazyExecs, Model
from .runmeta import DeviceKind, add_step_stat, device_kind

#: Device strings in the engine's lower-case form, by host (task) index.
CPU_DEVICE = "/job:localhost/replica:0/task:%d/device:cpu:0"
GPU_DEVICE = "/job:localhost/replica:0/task:%d/device:gpu:%d"
GPU_STREAM_ALL = GPU_DEVICE + "/stream:all"
#: Any accelerator's device and its stream:all, by host index and ``FAMILY:INDEX``
#: (``gpu:0``, ``mtia:0``: model.intervals.ACCELERATORS).
ACCELERATOR_DEVICE = "/job:localhost/replica:0/task:%d/device:%s"
ACCELERATOR_STREAM_ALL = ACCELERATOR_DEVICE + "/stream:all"


class StatRecord:
    """The fields of a NodeExecStats that the engine's rules read."""

    __slots__ = ("node_name", "all_start_micros", "op_end_rel_micros")
    memory: Sequence[object] = ()
    output: Sequence[object] = ()

    def __init__(self, node_name: str, start_micros: int, duration_micros: int) -> None:
        self.node_name = node_name
        self.all_start_micros = start_micros
        self.op_end_rel_micros = duration_micros

    def HasField(self, name: str) -> bool:  # noqa: N802 - the protobuf spelling
        return False


def ps_to_micros(ps: int) -> int:
    """Picoseconds to whole microseconds, rounded to nearest (half up)."""
    return (ps + 500_000) // 1_000_000


def node_for(model: Model, name: str, op: str) -> GraphNode:
    """The node ``name``, created with op type ``op`` if it is new."""
    node = model.nodes.get(name)
    if node is None:
        node = GraphNode(name, op, len(model.nodes))
        model.nodes[name] = node
    return node


def add_exec(model: Model, step: int, device: str, name: str, op: str,
             start_micros: int, duration_micros: int,
             trace: Optional[list[Frame]] = None) -> GraphNode:
    """Record one execution of node ``name`` (type ``op``) on ``device`` in ``step``.

    ``device`` is in the engine's lower-case form (see CPU_DEVICE); the
    execution carries no memory (memory comes separately, as ExecMemory).
    """
    model.add_step(step)
    node = node_for(model, name, op)
    if trace and node.trace is None:
        node.trace = trace
        model.has_trace = True
    add_step_stat(node, step, device, StatRecord(name, start_micros, duration_micros),
                  memory=False)
    return node


#: One execution as :class:`ExecRows` keeps it: (step, device, start µs, duration µs).
Row = tuple[int, str, int, int]


class ExecRows:
    """Executions given as rows, kept as rows: :meth:`finish` hands each node its
    totals, and its per-step records are made only when a view reads them
    (an ExecSource), by the rules of :func:`add_exec`.

    A node's rows must come in the order :func:`add_exec` would have been called
    in, and nodes in the order it would have made them.
    A node that already holds records when :meth:`finish` runs gets its rows
    through :func:`add_exec` itself.

    With ``exact_streams`` an accelerator row of 0 µs stays 0 µs (the loader
    rounded its rows cumulatively, so a sub-µs kernel's time is in its neighbours'
    rows); otherwise it counts 1 µs, as the engine rounds every record.
    """

    def __init__(self, model: Model, exact_streams: bool = False) -> None:
        self.model = model
        self.exact_streams = exact_streams
        self._rows: dict[str, list[Row]] = {}
        self._steps: set[int] = set()
        #: node key -> its rows that count (see :meth:`finish`)
        self.table: list[list[Row]] = []
        #: the last node asked for, its rows by step (views ask a node's steps in a row)
        self._last: tuple[int, dict[int, list[Row]]] = (-1, {})
        #: node -> step -> its memory (requested, peak, residual, output bytes)
        self._memory: dict[str, dict[int, list[int]]] = {}
        #: node key -> its memory by step (None: none)
        self.memory: list[Optional[dict[int, list[int]]]] = []

    def add_memory(self, name: str, step: int, values: Sequence[int]) -> None:
        """Memory of node ``name`` in ``step`` (requested, peak, residual and output
        bytes), added to what it has; it counts for a step the node ran in."""
        by_step = self._memory.setdefault(name, {})
        found = by_step.get(step)
        if found is None:
            by_step[step] = list(values)
        else:
            for i, v in enumerate(values):
                found[i] += v

    def add_node(self, name: str, op: str, rows: list[Row]) -> None:
        """Executions of node ``name`` (made now, typed ``op``, if it is new), in order."""
        node_for(self.model, name, op)
        self._steps.update(map(_STEP, rows))
        found = self._rows.get(name)
        if found is None:
            self._rows[name] = rows
        else:
            found.extend(rows)

    def finish(self) -> None:
        """Give every node its rows (see the class)."""
        model = self.model
        for step in sorted(self._steps):
            model.add_step(step)
        nodes = model.nodes
        kinds: dict[str, DeviceKind] = {}
        exact = self.exact_streams
        for name, rows in self._rows.items():
            node = nodes[name]
            memory = self._memory.get(name)
            if node.steps_run:
                for step, device, start, dur in rows:
                    add_step_stat(node, step, device, StatRecord(name, start, dur),
                                  memory=False)
                for step, values in (memory or {}).items():
                    rec = node.exec_step(step)
                    if rec is not None:
                        rec.memory_execs.append(_exec_memory(values))
                continue
            if len(set(map(_DEVICE, rows))) == 1:
                counted, runs, cpu, acc = _counted_one_device(node, rows, kinds, exact)
            else:
                counted, runs, cpu, acc = _counted(node, rows, kinds, exact)
            if not counted:
                continue
            ran = tuple(dict.fromkeys(map(_STEP, counted)))
            key = len(self.table)
            self.table.append(counted)
            mem = [0, 0, 0, 0]
            if memory:
                memory = {step: values for step, values in memory.items() if step in ran}
                for values in memory.values():
                    mem = [a + b for a, b in zip(mem, values)]
            self.memory.append(memory or None)
            node.defer_execs(LazyExecs(self, key, ran, (runs, acc + cpu, acc, cpu, *mem),
                                       accelerator_persistent=False))
        self._rows = {}
        self._memory = {}

    def step_record(self, key: int, step: int) -> ExecStep:
        """The ExecStep :func:`add_exec` makes of node ``key``'s rows in ``step``."""
        if self._last[0] != key:
            by_step: dict[int, list[Row]] = {}
            for row in self.table[key]:
                found = by_step.get(row[0])
                if found is None:
                    by_step[row[0]] = [row]
                else:
                    found.append(row)
            self._last = (key, by_step)
        rec = ExecStep()
        exact = self.exact_streams
        for _, device, start, dur in self._last[1].get(step, ()):
            rec.devices.add(device)
            if start <= 0:
                continue
            if rec.all_start_micros <= 0 or start < rec.all_start_micros:
                rec.all_start_micros = start
            kind = device_kind(device)
            if not (exact and kind.stream):
                dur = dur or 1
            if rec.latest_end_micros < start + dur:
                rec.latest_end_micros = start + dur
            if kind.stream:
                rec.accelerator_execs.setdefault(device, []).append((start, dur))
            elif kind.canonical:
                rec.cpu_execs.setdefault(device, []).append((start, dur))
                rec.run_count += 1
        memory = self.memory[key] if key < len(self.memory) else None
        if memory and step in memory:
            rec.memory_execs.append(_exec_memory(memory[step]))
        return rec

    def step_values(self, key: int, step: int) -> tuple[int, ...]:
        """The :meth:`ExecStep.values` of :meth:`step_record`."""
        return self.step_record(key, step).values()

    def steps_values(self, key: int, steps: Sequence[int]) -> list[Sequence[int]]:
        """:meth:`step_values` of each of ``steps``."""
        return [self.step_values(key, step) for step in steps]


_STEP, _DEVICE, _START, _DURATION = (itemgetter(i) for i in range(4))


def _claims(node: GraphNode, device: str, kind: DeviceKind) -> bool:
    """Whether ``node``'s records on canonical ``device`` count: the first canonical
    device a node meets becomes its own, and records on another one are dropped."""
    if not node.canonical_device:
        node.canonical_device = device
        node.host_device = kind.host
        node.op_types.add(device)
        return True
    return node.canonical_device == device


def _counted(node: GraphNode, rows: list[Row], kinds: dict[str, DeviceKind], exact: bool
             ) -> tuple[list[Row], int, int, int]:
    """The rows of ``node`` that count (the engine drops records from a second canonical
    device), and their run count, total, accelerator and cpu µs (0 µs counting 1 µs,
    but on accelerator rows with ``exact``); the node learns its canonical device."""
    counted: list[Row] = []
    runs = cpu = acc = 0
    for row in rows:
        device, start = row[1], row[2]
        kind = kinds.get(device)
        if kind is None:
            kind = kinds[device] = device_kind(device)
        if kind.canonical and not _claims(node, device, kind):
            continue
        counted.append(row)
        if start <= 0:
            continue
        if kind.stream:
            acc += row[3] if exact else row[3] or 1
        elif kind.canonical:
            cpu += row[3] or 1
            runs += 1
    return counted, runs, cpu, acc


def _counted_one_device(node: GraphNode, rows: list[Row], kinds: dict[str, DeviceKind],
                        exact: bool) -> tuple[list[Row], int, int, int]:
    """:func:`_counted` of rows all on one device, a column at a time."""
    device = rows[0][1]
    kind = kinds.get(device)
    if kind is None:
        kind = kinds[device] = device_kind(device)
    if kind.canonical and not _claims(node, device, kind):
        return [], 0, 0, 0
    timed = rows if min(map(_START, rows)) > 0 else [row for row in rows if row[2] > 0]
    durations = list(map(_DURATION, timed))
    total = sum(durations)
    if kind.stream:
        return rows, 0, 0, total if exact else total + durations.count(0)
    if kind.canonical:
        return rows, len(timed), total + durations.count(0), 0
    return rows, 0, 0, 0


def _exec_memory(values: Sequence[int]) -> ExecMemory:
    """The ExecMemory of (requested, peak, residual, output) bytes."""
    requested, peak, residual, output = values
    return ExecMemory(requested_bytes=requested, peak_bytes=peak, residual_bytes=residual,
                      output_bytes=output)
