"""The profile route: a ProfileProto (--profile_path) -> Model.

Loading reads the file once with ``profile_summary.proto``, a schema for
the same bytes under which the protobuf parser itself sums each node's
steps (see that file). Nodes keep those totals, which answer every view at
the default ``-step -1``; per-step records stay in the file's bytes and are
parsed with the ProfileProto schema the first time a command asks for one
step, a timeline or the advisor.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Optional, Sequence

from ..model import ExecMemory, ExecStep, Frame, GraphNode, LazyExecs, Model, Source
from ..proto import profile_summary_pb2, tfprof_log_pb2
from ..errors import LoadError
from .files import read_binary_with_bytes, shown_path
from .progress import file_meter

#: The share of a ProfileProto's load done once it is read and parsed.
_PARSED = 0.4


def read_profile(path: str) -> tuple[Any, bytes]:
    """Parse a binary ProfileProto as a ProfileSummary, refusing files that are not one."""
    return read_binary_with_bytes(path, "profile_path", profile_summary_pb2.ProfileSummary,
                                  "profile")


class ProfileExecs:
    """Per-step records of a ProfileProto's nodes, parsed from its bytes on first use."""

    def __init__(self, data: bytes) -> None:
        self._data: Optional[bytes] = data
        self._nodes: Any = None

    def _node(self, key: int) -> Any:
        if self._nodes is None:
            profile = tfprof_log_pb2.ProfileProto()
            profile.ParseFromString(self._data)
            self._nodes = profile.nodes
            self._data = None
        return self._nodes[key]

    def step_values(self, key: int, step: int) -> tuple[int, ...]:
        return _values(self._node(key).execs[step])

    def step_record(self, key: int, step: int) -> ExecStep:
        return _exec_step(self._node(key).execs[step])

    def steps_values(self, key: int, steps: Sequence[int]) -> Optional[list[Sequence[int]]]:
        if self._nodes is None:  # not parsed yet: the whole file's parse is the cost
            return None
        execs = self._nodes[key].execs
        return [_values(execs[step]) for step in steps]


def _durations(exec_times: Any) -> int:
    total = 0
    if len(exec_times):
        for dev in exec_times:
            for t in exec_times[dev].times:
                v = t.int64_values
                if len(v) > 1:
                    total += v[1]
    return total


def _values(ep: Any) -> tuple[int, ...]:
    """ExecStep.values() of one ExecProfile, without building the ExecStep."""
    acc = _durations(ep.accelerator_execs)
    cpu = _durations(ep.cpu_execs)
    requested = peak = residual = output = 0
    for m in ep.memory_execs:
        requested += m.requested_bytes
        peak += m.peak_bytes
        residual += m.residual_bytes
        output += m.output_bytes
    return (ep.run_count, acc + cpu, acc, cpu, requested, peak, residual, output)


def _times(exec_times: Any) -> dict[str, list[tuple[int, int]]]:
    out = {}
    for dev in exec_times:
        pairs = []
        for t in exec_times[dev].times:
            v = t.int64_values
            pairs.append((v[0] if len(v) > 0 else 0, v[1] if len(v) > 1 else 0))
        out[dev] = pairs
    return out


def _exec_step(ep: Any) -> ExecStep:
    rec = ExecStep(run_count=ep.run_count, all_start_micros=ep.all_start_micros,
                   latest_end_micros=ep.latest_end_micros,
                   accelerator_execs=_times(ep.accelerator_execs),
                   cpu_execs=_times(ep.cpu_execs), devices=set(ep.devices))
    for m in ep.memory_execs:
        out_mem = m.output_memory
        rec.memory_execs.append(ExecMemory(
            m.memory_micros, m.host_temp_bytes, m.host_persistent_bytes,
            m.accelerator_temp_bytes, m.accelerator_persistent_bytes,
            m.requested_bytes, m.peak_bytes, m.residual_bytes, m.output_bytes,
            m.allocator_bytes_in_use,
            {slot: (out_mem[slot].bytes, out_mem[slot].ptr) for slot in out_mem}))
    rec.allocations = [(a.alloc_micros, a.alloc_bytes) for a in ep.allocations]
    return rec


def _lazy_execs(source: ProfileExecs, key: int, execs: Any) -> Optional[LazyExecs]:
    """The node's steps and their summed values, from the parser-merged ExecsTotals."""
    steps = tuple(execs.step)
    if not steps:
        return None
    ep = execs.profile
    # (each absent part is skipped: reading it would make its empty messages)
    cpu = ep.cpu_execs.times.pairs.int64_values if ep.HasField("cpu_execs") else ()
    acc = (ep.accelerator_execs.times.pairs.int64_values if ep.HasField("accelerator_execs")
           else ())
    if len(set(steps)) != len(steps) or len(cpu) % 2 or len(acc) % 2:
        # A step listed twice (the last record wins) or a time record that is
        # not a (start, duration) pair: add up the records one by one.
        steps = tuple(dict.fromkeys(steps))
        sums = [0] * 8
        for step in steps:
            for i, v in enumerate(source.step_values(key, step)):
                sums[i] += v
        return LazyExecs(source, key, steps, tuple(sums))
    acc_micros = sum(acc[1::2]) if acc else 0
    cpu_micros = sum(cpu[1::2]) if cpu else 0
    if not ep.HasField("memory_execs"):
        return LazyExecs(source, key, steps, (sum(ep.run_count), acc_micros + cpu_micros,
                                              acc_micros, cpu_micros, 0, 0, 0, 0), False)
    mem = ep.memory_execs
    return LazyExecs(source, key, steps, (
        sum(ep.run_count), acc_micros + cpu_micros, acc_micros, cpu_micros,
        sum(mem.requested_bytes), sum(mem.peak_bytes), sum(mem.residual_bytes),
        sum(mem.output_bytes)), any(mem.accelerator_persistent_bytes))


class _Traces:
    """Resolves node traces, sharing one frame list between nodes with the same stack.

    Real models create many ops from the same few call stacks; sharing the
    list lets the code view build each distinct stack's path once.
    """

    def __init__(self, id_to_string: dict[int, str]) -> None:
        self._id_to_string = id_to_string
        self._seen: dict[bytes, list[Frame]] = {}
        self._frames: dict[bytes, Frame] = {}

    def frames(self, pn: Any) -> list[Frame]:
        key = pn.trace  # the CodeDef's bytes (see profile_summary.proto)
        frames = self._seen.get(key)
        if frames is None:
            frames = self._seen[key] = self._parse(key)
        return frames

    def _parse(self, code_def: bytes) -> list[Frame]:
        """The frames of a CodeDef, each distinct frame parsed (and made) once."""
        raws = profile_summary_pb2.CodeDefFrames.FromString(code_def).traces
        try:  # most frames are known: one C-level pass
            return [*map(self._frames.__getitem__, raws)]
        except KeyError:
            return [self._frame(raw) for raw in raws]

    def _frame(self, raw: bytes) -> Frame:
        """The Frame of one CodeDef.Trace's bytes, made on first sight."""
        frame = self._frames.get(raw)
        if frame is None:
            t = tfprof_log_pb2.CodeDef.Trace.FromString(raw)
            get = self._id_to_string.get
            frame = self._frames[raw] = Frame(get(t.file_id, ""), t.lineno,
                                              get(t.function_id, ""), t.func_start_line)
        return frame


def _columns(path: str, node_name: str, field: str, columns: Any) -> dict[int, int]:
    """A map field declared as merged key/value columns, as a dict (the last entry wins)."""
    keys = columns.key
    values = columns.value
    if len(keys) != len(values):
        raise LoadError("--profile_path %s: node %r: a %s map entry lacks its key or value "
                        "(the file was not written by a protobuf library)"
                        % (shown_path(path), node_name, field))
    return dict(zip(keys, values)) if keys else {}


class _Names:
    """Node names by their key in the file (what inputs name), made when first asked."""

    def __init__(self, by_key: dict[int, Any]) -> None:
        self._by_key = by_key
        self._names: Optional[dict[int, str]] = None

    def get(self) -> dict[int, str]:
        if self._names is None:
            self._names = {key: pn.name for key, pn in self._by_key.items()}
        return self._names


def _fill_shapes(path: str, pn: Any, names: _Names, node: GraphNode) -> None:
    """``node.output_shapes`` and ``node.src_output`` from its NodeSummary."""
    node.output_shapes = {e.key: list(e.value.int64_values) for e in pn.output_shapes}
    slots = _columns(path, node.name, "src_output_index", pn.src_output_index)
    by_key = names.get()
    node.src_output = {by_key[src]: slot for src, slot in slots.items() if src in by_key}


def _fill_inputs(path: str, pn: Any, names: _Names, node: GraphNode) -> None:
    """``node.inputs`` from its NodeSummary (inputs naming no node are left out)."""
    inputs = _columns(path, node.name, "inputs", pn.inputs)
    by_key = names.get()
    node.inputs = {idx: by_key[src] for idx, src in inputs.items() if src in by_key}


def _fill_types(pn: Any, node: GraphNode) -> None:
    """``node.op_types`` from its NodeSummary."""
    node.op_types = set(pn.op_types)


def _fill_attrs(pn: Any, node: GraphNode) -> None:
    """``node.attrs`` (string-valued ones) from its NodeSummary."""
    node.attrs = {key: attr.s.decode("utf-8", "replace")
                  for key, attr in {e.key: e.value for e in pn.attrs}.items()
                  if attr.WhichOneof("value") == "s"}


def model_from_profile(profile: Any, data: bytes, source: Source) -> Model:
    """Build a Model from a parsed ProfileSummary and the bytes it was parsed from."""
    path = source.paths[0] if source.paths else ""
    model = Model(source)
    execs_source = ProfileExecs(data)
    traces = _Traces({e.key: e.value for e in profile.id_to_string})
    by_key = {e.key: e.value for e in profile.nodes}  # a repeated key: the last wins
    names = _Names(by_key)
    nodes = model.nodes
    frames = traces.frames
    for key in sorted(by_key):
        pn = by_key[key]
        name = pn.name
        if name in nodes:
            continue
        node = GraphNode(name, pn.op, pn.id)
        shape = pn.shape
        if shape:
            node.shape = list(shape)
        node.canonical_device = pn.canonical_device
        node.host_device = pn.host_device
        node.float_ops = pn.float_ops
        node.defer_trace(partial(frames, pn))
        # Types and inputs are read by some views only (op, graph): read when asked.
        node.defer_details(partial(_fill_shapes, path, pn, names), partial(_fill_attrs, pn),
                           partial(_fill_inputs, path, pn, names), partial(_fill_types, pn))
        if pn.HasField("execs"):
            lazy = _lazy_execs(execs_source, key, pn.execs)
            if lazy is not None:
                node.defer_execs(lazy)
        nodes[name] = node
    model.has_trace = profile.has_trace
    model.steps = sorted(set(profile.steps))
    from .memory_tf1 import ProfileMemory  # here: only memory reads it
    model.set_memory_source(ProfileMemory(model))
    return model


def load_profile(path: str) -> Model:
    """Read ``--profile_path`` into a Model."""
    meter = file_meter([path])
    profile, data = read_profile(path)
    meter.reached(0, _PARSED)
    model = model_from_profile(profile, data, Source("profile", (path,)))
    meter.reached(0, 1.0)
    return model
