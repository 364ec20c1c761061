"""The displayed tree (or op list) as JSON, for scripts (`-output json[:outfile=F]`).

The document is described in docs/api.md ("JSON output"); its shape is stable
and versioned by ``schema_version``. Every number is raw: bytes,
microseconds or counts, never a formatted string.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from .. import metrics
from ..views.base import DisplayNode, ViewResult
from .base import Rendered, SingleRenderer

SCHEMA_VERSION = 1

UNIT_NAMES = {"memory": "bytes", "time": "microseconds", "count": "count"}
_TIMES = ("micros", "accelerator_micros", "cpu_micros")


def numeric_attributes(select: frozenset[str]) -> list[str]:
    """The selected attributes that have values, in table order (micros brings all times)."""
    names = []
    for name, attr in metrics.ATTRIBUTES.items():
        if attr.stat is None:
            continue
        if name in select or (name in _TIMES and "micros" in select):
            names.append(name)
    return names


def _values(stats: Sequence[int], attrs: list[str]) -> dict[str, int]:
    return {a: int(stats[_stat(a)]) for a in attrs}


def _stat(attr: str) -> int:
    stat = metrics.ATTRIBUTES[attr].stat
    assert stat is not None, attr
    return stat


def _node(node: DisplayNode, depth: int, result: ViewResult, attrs: list[str],
          op_row: bool) -> dict[str, Any]:
    select = result.options.select
    out: dict[str, Any] = {"name": node.name, "depth": depth, "accounted": node.account}
    out["self"] = _values(node.self_stats, attrs)
    # An op row's engine total is cumulative over the rows after it; keep both.
    out["total"] = _values(node.self_stats if op_row else node.total, attrs)
    if op_row:
        out["cumulative"] = _values(node.total, attrs)
    gnode = node.graph_node
    multi = result.view in ("op", "code")
    if multi and depth > 0:
        out["graph_nodes"] = [g.name for g in node.graph_nodes]
    if "params" in select and gnode is not None and gnode.shape:
        out["shape"] = list(gnode.shape)
    if "device" in select:
        if multi:
            out["device"] = sorted({g.canonical_device for g in node.graph_nodes} - {""})
        elif gnode is not None:
            out["device"] = gnode.canonical_device
    if "op_types" in select:
        if multi:
            out["op_types"] = sorted(set().union(*(g.op_types for g in node.graph_nodes)))
        elif gnode is not None:
            out["op_types"] = sorted(gnode.op_types)
    if "input_shapes" in select and not multi and gnode is not None:
        nodes = getattr(result.model, "nodes", {})
        out["input_shapes"] = [{"input": i, "shape": list(dims) if dims else None}
                               for i, dims in sorted(gnode.input_shapes(nodes).items())]
    out["children"] = []
    return out


def to_document(result: ViewResult) -> dict[str, Any]:
    """The JSON document of one view result (plain dicts and lists)."""
    opts = result.options
    attrs = numeric_attributes(opts.select)
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "mode": "single",
        "view": result.view,
        "step": opts.step,
        "select": sorted(opts.select),
        "order_by": opts.order_by,
        "units": {a: UNIT_NAMES[metrics.ATTRIBUTES[a].unit] for a in attrs},
        "missing_accelerator_stream": result.missing_accelerator_stream,
    }
    root = _node(result.root, 0, result, attrs, False)
    doc["root"] = root
    op_view = result.view == "op"
    stack = [(result.root, root)]
    while stack:
        node, out = stack.pop()
        for child in node.children:
            child_out = _node(child, out["depth"] + 1, result, attrs, op_view)
            out["children"].append(child_out)
            stack.append((child, child_out))
    return doc


def render_json(result: ViewResult) -> str:
    """The document as one line of JSON text plus a newline."""
    return json.dumps(to_document(result), separators=(",", ":"), ensure_ascii=True) + "\n"


class JsonRenderer(SingleRenderer):
    """`-output json[:outfile=F]`: the document on stdout, or written to F."""

    def render(self, result: ViewResult) -> Rendered:
        text = render_json(result)
        path = self.opts.output.outfile
        if path:
            return Rendered(notes=list(result.notes), writes=[(path, text)], result=result)
        return Rendered(text, list(result.notes), result=result)
