"""Timed executions from any trace format -> node records, by the engine's rules.

Trace formats that are not RunMetadata (XSpace events, Chrome-trace events)
hand each execution to :func:`add_exec`, which feeds it through the same
:func:`.runmeta.add_step_stat` as a RunMetadata record: cpu time on the
canonical device, accelerator time on ``stream:all`` devices, a run count
per cpu execution, 0 µs rounded up to 1 µs.
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..model import Frame, GraphNode, Model
from .runmeta import add_step_stat

#: Device strings in the engine's lower-case form, by host (task) index.
CPU_DEVICE = "/job:localhost/replica:0/task:%d/device:cpu:0"
GPU_DEVICE = "/job:localhost/replica:0/task:%d/device:gpu:%d"
GPU_STREAM_ALL = GPU_DEVICE + "/stream:all"


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
