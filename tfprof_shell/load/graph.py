"""The graph route: GraphDef + RunMetadata files (one per step) + OpLogProto -> Model.

Follows the engine's TFStats: graph nodes keyed by name (first wins), inputs
cut at ':' (the output slot is always 0, as in release builds of the
engine), then op log, then each run metadata file as step 0, 1, 2...
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ..model import Frame, GraphNode, Model, Source
from ..proto import framework_pb2, tfprof_log_pb2
from . import sniff
from .files import parse_binary, parse_text, read_binary_message, read_bytes, refuse, where
from .plausible import check
from .runmeta import add_run_metadata


def shape_to_list(shape: Any) -> list[int]:
    """The engine's ShapeProtoToVec: a scalar (no dims, known rank) is [1]."""
    if not shape.dim and not shape.unknown_rank:
        return [1]
    return [d.size for d in shape.dim]


def read_graph(path: str, notes: Optional[list[str]] = None) -> Any:
    """A GraphDef from a text or binary file (text is tried first, as in the engine).

    A note about text fields the schema lacks (skipped) goes to ``notes``.
    """
    data = read_bytes(path, "graph_path")
    skipped: list[str] = []
    graph, text_error = parse_text(framework_pb2.GraphDef, data, skipped)
    reason = check("graph", graph) if graph is not None else ""
    if graph is not None and reason is None:
        if skipped and notes is not None:
            notes.append(skipped_note("graph_path", path, skipped[0]))
        return graph
    binary = parse_binary(framework_pb2.GraphDef, data)
    if binary is not None and sniff.accepts("graph", binary, data):
        return binary
    raise refuse("graph_path", path, data, "graph", text_error=text_error,
                 reason=reason or "")


def read_run_metadata(path: str, entry: str = "", notes: Optional[list[str]] = None) -> Any:
    """A RunMetadata from a binary or text file (binary is tried first, as in the engine).

    ``entry`` (e.g. "entry 2 of 3") names the file's place in the list in messages.
    """
    data = read_bytes(path, "run_meta_path", entry)
    rm = parse_binary(framework_pb2.RunMetadata, data)
    if rm is not None and sniff.accepts("run_meta", rm, data):
        return rm
    reason = check("run_meta", rm) if rm is not None else None
    skipped: list[str] = []
    rm_text, text_error = parse_text(framework_pb2.RunMetadata, data, skipped)
    if rm_text is not None:
        text_reason = check("run_meta", rm_text)
        if text_reason is None:
            if skipped and notes is not None:
                notes.append(skipped_note("run_meta_path", path, skipped[0]))
            return rm_text
        reason = reason or text_reason
    raise refuse("run_meta_path", path, data, "run_meta", entry, text_error, reason or "")


def skipped_note(flag: str, path: str, field: str) -> str:
    """The note for a field of a text file that the schema lacks (it was skipped)."""
    return ("%s: skipped unknown field %s (written by a newer TensorFlow, or misspelt?)"
            % (where(flag, path), field))


def read_op_log(path: str) -> Any:
    """An OpLogProto (binary only, as in the engine)."""
    return read_binary_message(path, "op_log_path", tfprof_log_pb2.OpLogProto, "op_log")


def add_graph(model: Model, graph: Any) -> None:
    """Add the GraphDef's nodes (a name already present is skipped)."""
    nodes = model.nodes
    added = []
    for nd in graph.node:
        if nd.name in nodes:
            continue
        node = GraphNode(nd.name, nd.op, len(nodes))
        for key, attr in nd.attr.items():
            which = attr.WhichOneof("value")
            if key == "shape" and which == "shape":
                if not node.shape:
                    node.shape = shape_to_list(attr.shape)
            elif key == "_output_shapes" and which == "list":
                if not node.output_shapes:
                    node.output_shapes = {i: shape_to_list(s)
                                          for i, s in enumerate(attr.list.shape)}
            elif which == "s":
                node.attrs[key] = attr.s.decode("utf-8", "replace")
        nodes[nd.name] = node
        added.append((node, nd))
    for node, nd in added:
        for i, inp in enumerate(nd.input):
            src = inp.split(":", 1)[0]
            if src.startswith("^"):
                src = src[1:]
            node.inputs[i] = src
            node.src_output[src] = 0


def add_op_log(model: Model, op_log: Any, id_to_string: dict[int, str]) -> None:
    """Apply an OpLogProto: extra op types, float ops and code traces by node name."""
    for key, value in op_log.id_to_string.items():
        id_to_string.setdefault(key, value)
    nodes = model.nodes
    for entry in op_log.log_entries:
        node = nodes.get(entry.name)
        if node is None:
            continue
        node.op_types.update(entry.types)
        if entry.float_ops:
            node.float_ops = entry.float_ops
        if entry.HasField("code_def"):
            model.has_trace = True
            if node.trace is None:
                node.trace = frames_of(entry.code_def, id_to_string)


def frames_of(code_def: Any, id_to_string: dict[int, str]) -> list[Frame]:
    """Resolve a CodeDef's string ids into frames (unknown ids become '')."""
    get = id_to_string.get
    return [Frame(get(t.file_id, ""), t.lineno, get(t.function_id, ""), t.func_start_line)
            for t in code_def.traces]


def load_graph_route(graph_path: Optional[str], run_meta_paths: Sequence[str],
                     op_log_path: Optional[str], step_ids: Sequence[int] = ()) -> Model:
    """Build a Model from an optional GraphDef, run metadata files and an op log.

    Without a GraphDef (eager programs) every node comes from run metadata.
    The i-th run metadata file is step ``step_ids[i]`` (default: step i).
    """
    paths = tuple(p for p in (graph_path, *run_meta_paths, op_log_path) if p)
    model = Model(Source("graph", paths))
    notes = model.notes
    graph = read_graph(graph_path, notes) if graph_path else framework_pb2.GraphDef()
    op_log = read_op_log(op_log_path) if op_log_path else None
    count = len(run_meta_paths)
    if step_ids and len(step_ids) != count:
        raise ValueError("%d step ids for %d run metadata files" % (len(step_ids), count))
    run_metas = [read_run_metadata(p, "entry %d of %d" % (i + 1, count) if count > 1 else "",
                                   notes)
                 for i, p in enumerate(run_meta_paths)]
    add_messages(model, graph, op_log,
                 [(step, rm.step_stats) for step, rm in zip(step_ids or range(count), run_metas)])
    return model


def add_messages(model: Model, graph: Any, op_log: Any,
                 steps: Sequence[tuple[int, Any]]) -> None:
    """Add a GraphDef, an OpLogProto (or None) and (step, StepStats) pairs to ``model``
    in the engine's order: the graph, the op log, the steps, the op log again."""
    id_to_string: dict[int, str] = {}
    add_graph(model, graph)
    if op_log is not None:
        add_op_log(model, op_log, id_to_string)
    for step, step_stats in steps:
        add_run_metadata(model, step, step_stats)
    if op_log is not None:
        add_op_log(model, op_log, id_to_string)
