"""How run metadata turns into per-step records: the engine's AddStepStat rules.

Kept apart from file reading so that every input format that carries
TensorFlow step stats (RunMetadata files, converted timelines) attributes
time and memory to nodes the same way.
"""

from __future__ import annotations

import re
from typing import Any

from ..model import ExecMemory, ExecStep, GraphNode, Model
from ..model.intervals import ACCELERATORS

_OTHERS = "|".join("device:" + a for a in ACCELERATORS if a != "gpu")
#: The engine's canonical devices (GPUs and CPUs), and the other accelerators a
#: PyTorch trace names (``device:mtia:0``): no TF device is spelled so.
_CANONICAL = re.compile(r".*/(device:gpu|gpu|device:cpu|cpu|%s):\d+" % _OTHERS)
_GPU_ID = re.compile(r"(%s):\d+" % "|".join(ACCELERATORS))
#: Run-time names the engine never turns into nodes.
_DROPPED = ("RecvTensor", "_SOURCE")


def is_canonical_device(dev: str) -> bool:
    """A device whose records count as cpu (host/scheduling) time."""
    return _CANONICAL.fullmatch(dev) is not None


def is_accelerator_stream(dev: str) -> bool:
    """A device whose records count as accelerator time."""
    return "stream:all" in dev


def host_device_of(canonical: str) -> str:
    return _GPU_ID.sub("cpu:0", canonical)


class DeviceKind:
    """How the engine's rules treat records on one device: canonical (cpu
    time, and the node's host device) or accelerator stream (accelerator time)."""

    __slots__ = ("canonical", "host", "stream")

    def __init__(self, dev: str) -> None:
        self.canonical = is_canonical_device(dev)
        self.host = host_device_of(dev) if self.canonical else ""
        self.stream = is_accelerator_stream(dev)


_KINDS: dict[str, DeviceKind] = {}


def device_kind(dev: str) -> DeviceKind:
    """The DeviceKind of ``dev``, classified once per distinct device name."""
    kind = _KINDS.get(dev)
    if kind is None:
        kind = _KINDS[dev] = DeviceKind(dev)
    return kind


def add_run_metadata(model: Model, step: int, step_stats: Any) -> None:
    """Add one step's StepStats (a parsed message) to ``model``.

    Names are cut at the first ':'; unknown names become run-time-only
    nodes (op type = name) except RecvTensor, _SOURCE and *MEMCPY*.
    """
    if step not in model.steps:
        model.steps.append(step)
        model.steps.sort()
    nodes = model.nodes
    has_gpu = has_stream = False
    for dev_stats in step_stats.dev_stats:
        device = dev_stats.device
        low = device.lower()
        if "gpu" in low:
            has_gpu = True
            if is_accelerator_stream(low):
                has_stream = True
        for ns in dev_stats.node_stats:
            name = ns.node_name.split(":", 1)[0]
            node = nodes.get(name)
            if node is None:
                if name in _DROPPED or "MEMCPY" in name:
                    continue
                node = GraphNode(name, name, len(nodes))
                nodes[name] = node
            add_step_stat(node, step, low, ns)
    if has_gpu and not has_stream:
        model.miss_accelerator_stream = True


def add_step_stat(node: GraphNode, step: int, dev: str, ns: Any, memory: bool = True) -> None:
    """One NodeExecStats record of ``node`` on (lower-cased) device ``dev``.

    ``memory=False`` skips the record's (empty) memory entry, for trace formats
    that carry no per-record memory."""
    kind = device_kind(dev)
    if kind.canonical:
        if node.canonical_device:
            if node.canonical_device != dev:
                return  # the engine drops records from a second canonical device
        else:
            node.canonical_device = dev
            node.host_device = kind.host
            node.op_types.add(dev)
    rec = node.execs.get(step)
    if rec is None:
        rec = node.execs[step] = ExecStep()
    _add_time(rec, dev, kind, ns)
    if memory and dev == node.canonical_device:
        _add_memory(rec, dev, ns)


def _add_time(rec: ExecStep, dev: str, kind: DeviceKind, ns: Any) -> None:
    rec.devices.add(dev)
    start = ns.all_start_micros
    if start <= 0:
        return
    rec.all_start_micros = min(rec.all_start_micros, start) if rec.all_start_micros > 0 else start
    dur = ns.op_end_rel_micros or 1  # the engine rounds 0us up to 1us
    rec.latest_end_micros = max(rec.latest_end_micros, start + dur)
    if kind.stream:
        rec.accelerator_execs.setdefault(dev, []).append((start, dur))
    elif kind.canonical:
        rec.cpu_execs.setdefault(dev, []).append((start, dur))
        rec.run_count += 1


def _add_memory(rec: ExecStep, dev: str, ns: Any) -> None:
    start = ns.all_start_micros
    if start <= 0:
        return
    mem = ExecMemory(memory_micros=start + ns.op_end_rel_micros)
    for alloc in ns.memory:
        if "GPU" not in alloc.allocator_name:
            continue
        mem.allocator_bytes_in_use = max(mem.allocator_bytes_in_use,
                                         alloc.allocator_bytes_in_use)
        rec.allocations.extend((r.alloc_micros, r.alloc_bytes)
                               for r in alloc.allocation_records)
    total_output = 0
    for out in ns.output:
        if out.HasField("tensor_description") and \
                out.tensor_description.HasField("allocation_description"):
            ad = out.tensor_description.allocation_description
            nbytes = max(ad.allocated_bytes, ad.requested_bytes)
            total_output += nbytes
            mem.output_memory[out.slot] = (nbytes, ad.ptr)
    mem.output_bytes = total_output
    if ns.HasField("memory_stats"):
        ms = ns.memory_stats
        if "cpu" in dev:
            mem.host_temp_bytes += ms.temp_memory_size
            mem.host_persistent_bytes += ms.persistent_memory_size
        else:
            mem.accelerator_temp_bytes += ms.temp_memory_size
            mem.accelerator_persistent_bytes += ms.persistent_memory_size
    persistent = mem.host_persistent_bytes + mem.accelerator_persistent_bytes
    temp = mem.host_temp_bytes + mem.accelerator_temp_bytes
    mem.residual_bytes = sum(a.live_bytes for a in ns.memory) + persistent
    mem.requested_bytes = sum(a.total_bytes for a in ns.memory) + persistent + temp
    mem.peak_bytes = sum(a.peak_bytes for a in ns.memory) + persistent + temp
    rec.memory_execs.append(mem)
