"""A loaded Model as compact bytes: what a loading process sends back.

:func:`pack_model` keeps what every view, filter and renderer reads from a
node (its static facts, the steps it ran in and the eight
:meth:`~tfprof_shell.model.ExecStep.values` of each of those steps), so
:meth:`GraphNode.stats` answers every step, and the average, exactly as on
the loaded model. The detailed per-step records (executions per device,
memory records, allocations; only timelines and the accelerator advice read
them) stay behind, and so do code traces a loader left unresolved (a TF2
profile's Python stacks cost a second pass over the file), the per-step
values a loader left in the file (a ProfileProto's: only a parse of the whole
file gives them, and only ``-step N`` reads them) and the node details it
deferred (output shapes and attributes: ``-select input_shapes`` and the
advisor's check of accelerator ops): :func:`unpack_model`'s nodes fetch them
from a full load of the original inputs, made once, on first use, by the
``reload`` callable. The profile's collective calls
(:class:`~tfprof_shell.model.collectives.RankCollectives`) travel whole:
aligning many ranks must not reload each.

The format: :data:`MAGIC`, a version byte, then zlib-compressed
:mod:`marshal` data (marshal, unlike pickle, cannot run code when it reads
bytes, and writes a string shared by many nodes once). Numbers per step are
``array('q')`` columns.
"""

from __future__ import annotations

import marshal
import zlib
from array import array
from functools import partial
from itertools import chain
from typing import Callable, Optional, Sequence

from ..errors import LoadError, UserError
from .collectives import KnownCollectives, unpack_rank
from .intervals import Intervals
from .path_input import PathInput
from .memory import MemoryProfile
from .model import Model, Source
from .node import ExecStep, Frame, GraphNode, LazyExecs

MAGIC = b"tfprof-summary\n"
#: Bumped whenever the layout changes: a summary from another version is refused.
VERSION = 4
#: marshal format 4 reads the same on every Python 3 from 3.4 on.
_MARSHAL_FORMAT = 4
#: Speed over ratio: zeros and small numbers dominate, level 1 already packs them.
_ZLIB_LEVEL = 1
#: A node's trace index, and the model's has_trace, when a reload decides them.
_TRACE_FROM_RELOAD = -2
_HAS_TRACE_FROM_RELOAD = 2
_N_VALUES = 8
_ZEROS = (0,) * _N_VALUES
#: Source kinds of TensorFlow 1 graph profiles: their critical path reads the nodes.
_GRAPH_KINDS = ("profile", "graph")


def pack_model(model: Model) -> bytes:
    """The compact summary of ``model`` (deferred loader details are resolved first)."""
    strings: dict[str, str] = {}
    share = strings.setdefault  # one object per distinct string: marshal writes it once
    frame_index: dict[Frame, int] = {}
    frames: list[tuple[str, int, str, int]] = []
    trace_index: dict[tuple[Frame, ...], int] = {}
    trace_by_identity: dict[int, int] = {}
    traces: list[tuple[int, ...]] = []
    kept_alive: list[list[Frame]] = []  # keeps the id() keys above valid
    rows = []
    # Lists while filling (appending to a list is cheaper), array('q') bytes at the end.
    counts: list[int] = []
    steps: list[int] = []
    values: list[int] = []  # _N_VALUES per (node, step), in node then step order
    totals: list[int] = []  # _N_VALUES per node
    persistent = []
    # Nodes whose per-step values stay with their loader (see steps_values): a reload's.
    values_deferred: list[int] = []
    # Traces a loader deferred at about a load's cost (TF2 Python stacks) stay
    # deferred: resolving them here would cost a worker what no view may ever
    # ask for; a reload gives them. Cheap ones (PyTorch frames) are resolved here.
    if model.traces_deferred and not model.traces_costly:
        model.has_trace  # noqa: B018 - reading it looks every trace up
    deferred = model.traces_deferred
    for index, node in enumerate(model.nodes.values()):
        trace = None if deferred and node.trace_deferred else node.trace
        if trace is None:
            t = _TRACE_FROM_RELOAD if deferred and node.trace_deferred else -1
        else:
            t = trace_by_identity.get(id(trace), -1)
            if t < 0:
                key = tuple(trace)
                t = trace_index.get(key, -1)
                if t < 0:
                    ids = []
                    for frame in trace:
                        f = frame_index.get(frame)
                        if f is None:
                            f = frame_index[frame] = len(frames)
                            frames.append((share(frame.file, frame.file), frame.lineno,
                                           share(frame.function, frame.function),
                                           frame.func_start_line))
                        ids.append(f)
                    t = trace_index[key] = len(traces)
                    traces.append(tuple(ids))
                trace_by_identity[id(trace)] = t
                kept_alive.append(trace)
        # Details a loader deferred stay deferred (None): few commands read them.
        shapes = not node.details_deferred("shapes")
        rows.append((
            share(node.name, node.name), node.id, share(node.op, node.op),
            tuple(share(s, s) for s in node.op_types), tuple(node.shape),
            {i: share(s, s) for i, s in node.inputs.items()},
            {slot: tuple(dims) for slot, dims in node.output_shapes.items()} if shapes else None,
            {share(s, s): slot for s, slot in node.src_output.items()} if shapes else None,
            None if node.details_deferred("attrs") else dict(node.attrs),
            share(node.canonical_device, node.canonical_device),
            share(node.host_device, node.host_device), node.float_ops, t))
        ran = node.steps_run
        counts.append(len(ran))
        if not ran:
            totals.extend(_ZEROS)
            continue
        steps.extend(ran)
        lazy = node._lazy  # noqa: SLF001  (the model's own codec; its totals are exact)
        if lazy is not None:
            per_step = lazy.source.steps_values(lazy.key, ran)
            if per_step is None:
                values_deferred.append(index)
            else:
                values.extend(chain.from_iterable(per_step))
            totals.extend(lazy.totals)
        else:
            records = [node.exec_step(step).values() for step in ran]  # type: ignore[union-attr]
            for rec in records:
                values.extend(rec)
            totals.extend(map(sum, zip(*records)))
        if _has_accelerator_persistent(node, lazy):
            persistent.append(index)
    source = model.source
    collectives = model.collectives()
    payload = (
        (source.kind, tuple(source.paths), source.note), list(model.steps),
        _HAS_TRACE_FROM_RELOAD if deferred and not model._has_trace  # noqa: SLF001
        else bool(model.has_trace), bool(model.miss_accelerator_stream), list(model.notes),
        frames, traces, rows, array("q", counts).tobytes(), array("q", steps).tobytes(),
        _transpose(values), _transpose(totals), persistent, values_deferred,
        None if collectives is None else collectives.pack())
    return MAGIC + bytes([VERSION]) + zlib.compress(marshal.dumps(payload, _MARSHAL_FORMAT),
                                                    _ZLIB_LEVEL)


def _transpose(rows: list[int]) -> list[bytes]:
    """Row-major values as one column per value: like numbers side by side pack better."""
    return [array("q", rows[i::_N_VALUES]).tobytes() for i in range(_N_VALUES)]


def _has_accelerator_persistent(node: GraphNode, lazy: Optional[LazyExecs]) -> bool:
    if lazy is not None:
        return lazy.accelerator_persistent
    return any(m.accelerator_persistent_bytes
               for rec in node.execs.values() for m in rec.memory_execs)


def _columns(raw: list[bytes]) -> list[array]:
    out = []
    for data in raw:
        column = array("q")
        column.frombytes(data)
        out.append(column)
    return out


def unpack_model(data: bytes, reload: Optional[Callable[[], Model]] = None) -> Model:
    """The Model a :func:`pack_model` summary describes.

    Views, filters and every ``-step`` answer as on the packed model. The
    first request for what the summary left behind (a detailed record, a
    deferred trace, value or detail: see the module docstring) calls
    ``reload()`` once for the full model and adds a note saying so to the
    model's later notes; without it, or if it fails, that request is a
    LoadError.
    """
    header = len(MAGIC) + 1
    if data[:len(MAGIC)] != MAGIC:
        raise LoadError("not a tfprof profile summary")
    if data[len(MAGIC):header] != bytes([VERSION]):
        raise LoadError("the profile summary has format %d, this tfprof-shell reads %d "
                        "(install the same tfprof-shell everywhere)"
                        % (data[len(MAGIC)] if len(data) >= header else -1, VERSION))
    try:
        (src, model_steps, has_trace, miss_stream, notes, frame_rows, trace_rows, rows,
         raw_counts, raw_steps, raw_values, raw_totals, persistent,
         values_deferred, collectives) = marshal.loads(zlib.decompress(data[header:]))
    except (ValueError, TypeError, EOFError, zlib.error) as exc:
        raise LoadError("the profile summary is damaged (%s)" % exc) from None
    model = Model(Source(src[0], tuple(src[1]), src[2]), steps=list(model_steps),
                  has_trace=has_trace is True, miss_accelerator_stream=miss_stream,
                  notes=list(notes))
    frames = [Frame(*f) for f in frame_rows]
    traces = [[frames[i] for i in ids] for ids in trace_rows]
    counts, steps = _columns([raw_counts, raw_steps])
    totals = list(zip(*_columns(raw_totals)))  # per node, made at C speed
    persistent_set = set(persistent)
    execs = SummaryExecs(model.source, [r[0] for r in rows], counts, steps,
                         _columns(raw_values), values_deferred, reload, model.later_notes)
    offsets = execs.offsets
    model.set_interval_source(execs.full_intervals)
    if src[0] not in _GRAPH_KINDS:  # graph profiles have no path inputs: their nodes do
        model.set_path_source(execs.full_path_inputs)
    model.set_collective_source(KnownCollectives(unpack_rank(collectives)))
    model.set_memory_source(execs.full_memory)
    if has_trace == _HAS_TRACE_FROM_RELOAD:
        model.defer_has_trace(execs.full_has_trace)
    nodes = model.nodes
    for index, row in enumerate(rows):
        (name, node_id, op, op_types, shape, inputs, output_shapes, src_output, attrs,
         canonical_device, host_device, float_ops, t) = row
        node = GraphNode(name, op, node_id)
        node.op_types = set(op_types)
        node.shape = list(shape)
        node.inputs = inputs
        if output_shapes is not None:
            node.output_shapes = {slot: list(dims) for slot, dims in output_shapes.items()}
            node.src_output = src_output
        if attrs is not None:
            node.attrs = attrs
        if output_shapes is None or attrs is None:
            node.defer_details(execs.fill_shapes if output_shapes is None else None,
                               execs.fill_attrs if attrs is None else None)
        node.canonical_device = canonical_device
        node.host_device = host_device
        node.float_ops = float_ops
        if t >= 0:
            node.trace = traces[t]
        elif t == _TRACE_FROM_RELOAD:
            node.defer_trace(partial(execs.full_trace, name))
        count = counts[index]
        if count:
            start = offsets[index]
            node.defer_execs(LazyExecs(
                execs, index, tuple(steps[start:start + count]),
                totals[index], index in persistent_set))
        nodes[name] = node
    return model


class SummaryExecs:
    """The ExecSource of unpacked nodes: values from the summary, records from a reload."""

    def __init__(self, source: Source, names: list[str], counts: array, steps: array,
                 values: list[array], values_deferred: Sequence[int],
                 reload: Optional[Callable[[], Model]], notes: list[str]) -> None:
        self._source = source
        #: Where a reload is announced (the unpacked model's later notes).
        self._notes = notes
        self._names = names
        self._counts = counts
        self._steps = steps
        self._values = values
        self._reload = reload
        self._full: Optional[Model] = None
        #: node -> its first step's index in steps
        self.offsets = array("q", bytes(8 * len(counts)))
        #: node -> its first step's row in values, -1 if they were left to a reload
        self._rows = array("q", bytes(8 * len(counts)))
        deferred = set(values_deferred)
        offset = row = 0
        for i, count in enumerate(counts):
            self.offsets[i] = offset
            offset += count
            if i in deferred:
                self._rows[i] = -1
            else:
                self._rows[i] = row
                row += count

    def step_values(self, key: int, step: int) -> tuple[int, ...]:
        row = self._rows[key]
        if row < 0:
            return self._full_record(key, step, "statistics of one step").values()
        start = self.offsets[key]
        row += self._steps[start:start + self._counts[key]].index(step)
        return tuple([column[row] for column in self._values])

    def steps_values(self, key: int, steps: Sequence[int]) -> Optional[list[Sequence[int]]]:
        if self._rows[key] < 0:
            return None
        return [self.step_values(key, step) for step in steps]

    def step_record(self, key: int, step: int) -> ExecStep:
        return self._full_record(key, step, "timelines and the accelerator advice")

    def _full_record(self, key: int, step: int, what: str) -> ExecStep:
        name = self._names[key]
        node = self._full_model(what).nodes.get(name)
        record = node.exec_step(step) if node is not None else None
        if record is None:
            raise LoadError("%s changed since it was loaded: node %r has no step %d now"
                            % (self._where(), name, step))
        return record

    def fill_shapes(self, node: GraphNode) -> None:
        """Set ``node``'s output shapes and source slots from the full model."""
        full = self._full_model("input shapes").nodes.get(node.name)
        if full is not None:
            node.output_shapes = full.output_shapes
            node.src_output = full.src_output

    def fill_attrs(self, node: GraphNode) -> None:
        """Set ``node``'s attributes from the full model."""
        full = self._full_model("node attributes").nodes.get(node.name)
        if full is not None:
            node.attrs = full.attrs

    def full_trace(self, name: str) -> Optional[list[Frame]]:
        """Node ``name``'s code trace, from the full model."""
        node = self._full_model("code traces").nodes.get(name)
        return node.trace if node is not None else None

    def full_has_trace(self) -> bool:
        """Whether the full model has code traces."""
        return self._full_model("code traces").has_trace

    def full_intervals(self) -> Intervals:
        """The full model's time intervals (steps and kernels need them)."""
        return self._full_model("step intervals").intervals()

    def full_path_inputs(self) -> Optional[list[PathInput]]:
        """The full model's critical-path inputs (critpath needs them)."""
        return self._full_model("critical-path events").path_inputs()
    def full_memory(self) -> MemoryProfile:
        """The full model's memory over time (the memory command needs it)."""
        return self._full_model("memory events").memory()

    def _where(self) -> str:
        return ", ".join(self._source.paths) or self._source.kind

    def _full_model(self, what: str) -> Model:
        if self._full is None:
            why = "it was loaded elsewhere"
            if self._reload is not None:
                try:
                    self._full = self._reload()
                except UserError as exc:
                    why = exc.message
                else:
                    self._notes.append("read %s again in full: %s need it"
                                       % (self._where(), what))
            if self._full is None:
                raise LoadError("%s need the full profile: %s cannot be read here (%s)"
                                % (what, self._where(), why))
        return self._full

