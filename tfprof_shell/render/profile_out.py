"""A model as the engine's ProfileProto, as ``Profiler.serialize_to_string()`` writes it.

One ProfileNode per node keyed by its id: name, op, id, every NodeDef
attribute, shape, op types (sorted), devices, float ops, the call stack's
CodeDef (only when the node has one), inputs and source slots by node id,
output shapes and per step an ExecProfile whose time records are
[start, duration] pairs. Inputs naming no node are left out (the engine
would abort on them). Loading the result back gives the same model.
"""

from __future__ import annotations

from typing import Any

from ..model import ExecStep, GraphNode, Model
from ..model.extras import ModelExtras
from ..proto import tfprof_log_pb2


def _exec_profile(rec: ExecStep, ep: Any) -> None:
    ep.run_count = rec.run_count
    ep.all_start_micros = rec.all_start_micros
    ep.latest_end_micros = rec.latest_end_micros
    for target, execs in ((ep.accelerator_execs, rec.accelerator_execs),
                          (ep.cpu_execs, rec.cpu_execs)):
        for dev, pairs in execs.items():
            times = target[dev].times
            for start, dur in pairs:
                times.add().int64_values.extend((start, dur))
    ep.devices.extend(sorted(rec.devices))
    for mem in rec.memory_execs:
        m = ep.memory_execs.add(
            memory_micros=mem.memory_micros, host_temp_bytes=mem.host_temp_bytes,
            host_persistent_bytes=mem.host_persistent_bytes,
            accelerator_temp_bytes=mem.accelerator_temp_bytes,
            accelerator_persistent_bytes=mem.accelerator_persistent_bytes,
            requested_bytes=mem.requested_bytes, peak_bytes=mem.peak_bytes,
            residual_bytes=mem.residual_bytes, output_bytes=mem.output_bytes,
            allocator_bytes_in_use=mem.allocator_bytes_in_use)
        for slot, (nbytes, ptr) in mem.output_memory.items():
            m.output_memory[slot].bytes = nbytes
            m.output_memory[slot].ptr = ptr
    for micros, nbytes in rec.allocations:
        ep.allocations.add(alloc_micros=micros, alloc_bytes=nbytes)


def _profile_node(node: GraphNode, pn: Any, nodes: dict[str, GraphNode],
                  extras: ModelExtras) -> None:
    pn.name = node.name
    pn.op = node.op
    pn.id = node.id
    attrs = extras.attrs.get(node.name)
    if attrs is not None:
        for key, value in attrs.items():
            pn.attrs[key].MergeFromString(value.SerializeToString())
    pn.shape.extend(node.shape)
    pn.op_types.extend(sorted(node.op_types))
    pn.canonical_device = node.canonical_device
    pn.host_device = node.host_device
    pn.float_ops = node.float_ops
    code_def = extras.code_defs.get(node.name)
    if code_def is not None:
        pn.trace.MergeFromString(code_def.SerializeToString())
    for idx, src in node.inputs.items():
        if src in nodes:
            pn.inputs[idx] = nodes[src].id
    for src, slot in node.src_output.items():
        if src in nodes:
            pn.src_output_index[nodes[src].id] = slot
    for idx, dims in node.output_shapes.items():
        pn.output_shapes[idx].int64_values.extend(dims)
    for step, rec in node.execs.items():
        _exec_profile(rec, pn.execs[step])


def to_profile_proto(model: Model, extras: ModelExtras) -> Any:
    """The ProfileProto of ``model`` (built by a :class:`StepwiseLog`, which gives ``extras``)."""
    profile = tfprof_log_pb2.ProfileProto()
    for key, value in extras.id_to_string.items():
        profile.id_to_string[key] = value
    nodes = model.nodes
    for node in nodes.values():
        _profile_node(node, profile.nodes[node.id], nodes, extras)
    profile.has_trace = model.has_trace
    profile.miss_accelerator_stream = model.miss_accelerator_stream
    profile.steps.extend(sorted(model.steps))
    return profile
