"""View results as compact columns for the browser, and one row's details.

A result becomes parallel arrays in display (preorder) order: ``name`` and
``op`` index a table of interned strings, ``parent`` is the index of the
row's parent (-1 for the root), and each numeric attribute has an array per
kind of value. The values mean what the ``-output json`` document's do
(render/json_out.py, render/multi.py): a test rebuilds that document from
the columns. Nothing here formats for display; the page does.
"""

from __future__ import annotations

from itertools import repeat
from operator import itemgetter
from typing import Any, Optional, Sequence

from .. import metrics
from ..combine.result import DIFF, MultiResult
from ..model import GraphNode
from ..model import stats as S
from ..render.json_out import UNIT_NAMES, numeric_attributes
from ..views.base import DisplayNode, ViewResult, preorder

#: Details list at most this many member nodes, attributes, steps.
DETAIL_LIMIT = 200


class Strings:
    """Interns strings: each distinct one is sent once and referred to by index."""

    def __init__(self) -> None:
        self.table: list[str] = []
        self._index: dict[str, int] = {}

    def id(self, text: str) -> int:
        """The index of ``text`` in :attr:`table`, adding it if new."""
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self.table)
            self.table.append(text)
        return found


def _header(view: str, select: frozenset[str], attrs: list[str]) -> dict[str, Any]:
    return {"view": view, "select": sorted(select), "attrs": attrs,
            "units": {a: UNIT_NAMES[metrics.ATTRIBUTES[a].unit] for a in attrs}}


def _stat(attr: str) -> int:
    stat = metrics.ATTRIBUTES[attr].stat
    assert stat is not None, attr
    return stat


def _flatten(root: Any) -> tuple[list[Any], list[int]]:
    """The rows in display (pre)order and each row's parent row (-1 for the root)."""
    nodes: list[Any] = []
    parents: list[int] = []
    add_node, add_parent = nodes.append, parents.append
    stack = [(root, -1)]
    pop, push = stack.pop, stack.extend
    row = 0
    while stack:
        node, parent = pop()
        add_node(node)
        add_parent(parent)
        kids = node.children
        if kids:
            push(zip(reversed(kids), repeat(row)))
        row += 1
    return nodes, parents


def _interned(names: Sequence[str]) -> tuple[list[int], list[str]]:
    """Each name's index into a table of the distinct names, and the table."""
    index: dict[str, int] = {}
    ids = [index.setdefault(n, len(index)) for n in names]
    return ids, list(index)


def view_columns(result: ViewResult) -> dict[str, Any]:
    """A single profile's view as columns: self, total (and cumulative for op rows)."""
    opts = result.options
    attrs = numeric_attributes(opts.select)
    nodes, parents = _flatten(result.root)
    op_view = result.view == "op"
    ids, strings = _interned([n.name for n in nodes] + [_op_of(n) for n in nodes])
    doc = _header(result.view, opts.select, attrs)
    doc.update(kind="single", step=opts.step, order_by=opts.order_by, rows=len(nodes),
               parent=parents, name=ids[:len(nodes)], op=ids[len(nodes):],
               accounted=[1 if n.account else 0 for n in nodes])
    own = [n.self_stats for n in nodes]
    totals_of = [n.total for n in nodes]
    selves, totals, cumulative = {}, {}, {}
    for attr in attrs:
        pick = itemgetter(_stat(attr))
        selves[attr] = list(map(pick, own))
        if op_view:  # an op row's engine total is cumulative over the rows after it
            totals[attr] = [pick(totals_of[0])] + selves[attr][1:]
            cumulative[attr] = list(map(pick, totals_of))
        else:
            totals[attr] = list(map(pick, totals_of))
    doc.update(self=selves, total=totals)
    if op_view:
        doc["cumulative"] = cumulative
    doc["strings"] = strings
    return doc


def multi_columns(result: MultiResult) -> dict[str, Any]:
    """A diff (value, base, status) or an aggregate (value, each profile's) as columns."""
    opts = result.options
    attrs = numeric_attributes(opts.select)
    nodes, parents = _flatten(result.root)
    ids, strings = _interned([n.name for n in nodes])
    doc = _header(result.view, opts.select, attrs)
    doc.update(kind=result.mode, step=result.sides[0].step, order_by=opts.order_by,
               rows=len(nodes), sides=[{"name": s.name, "source": s.source, "step": s.step}
                                       for s in result.sides],
               parent=parents, name=ids)
    doc["total"] = {a: [n.value[_stat(a)] for n in nodes] for a in attrs}
    if result.mode == DIFF:
        doc["status"] = [n.status for n in nodes]
        doc["base"] = {a: [n.base[_stat(a)] for n in nodes] for a in attrs}
    else:
        doc["aggregate"] = result.aggregate
        doc["present"] = [sum(v is not None for v in n.by_profile) for n in nodes]
        doc["by_profile"] = [{a: [v[_stat(a)] if v is not None else None
                                  for v in (n.by_profile[i] for n in nodes)] for a in attrs}
                             for i in range(len(result.sides))]
    doc["strings"] = strings
    return doc


def row_starts(result: ViewResult) -> list[int]:
    """Each row's first start (µs, -1 unknown): the earliest execution start of its graph
    nodes and of the rows below it, in the step shown (all steps: the first one each
    node ran in, which orders rows by time within a step). For time-ordered flames."""
    nodes, parents = _flatten(result.root)
    step = result.options.step
    out = []
    for node in nodes:
        members = node.graph_nodes or ((node.graph_node,) if node.graph_node is not None else ())
        best = -1
        for g in members:
            run = g.steps_run
            if not run:
                continue
            rec = g.exec_step(step if step >= 0 else min(run))
            if rec is not None and rec.all_start_micros > 0 and \
                    (best < 0 or rec.all_start_micros < best):
                best = rec.all_start_micros
        out.append(best)
    for row in range(len(nodes) - 1, 0, -1):
        p, mine = parents[row], out[row]
        if mine >= 0 and (out[p] < 0 or mine < out[p]):
            out[p] = mine
    return out


def _op_of(node: DisplayNode) -> str:
    gnode = node.graph_node
    return gnode.op if gnode is not None else ""


def row_node(result: Any, row: int) -> Any:
    """The node shown at preorder ``row`` of a result (IndexError if there is none)."""
    if row < 0:
        raise IndexError(row)
    for i, node in enumerate(preorder(result.root)):
        if i == row:
            return node
    raise IndexError(row)


def _all_values(stats: Sequence[int]) -> dict[str, int]:
    return {name: int(stats[a.stat]) for name, a in metrics.ATTRIBUTES.items()
            if a.stat is not None and a.stat < len(stats)}


def _graph_node_facts(gnode: GraphNode, nodes: dict[str, GraphNode]) -> dict[str, Any]:
    trace = gnode.trace or []
    steps = sorted(gnode.steps_run)[:DETAIL_LIMIT]
    return {
        "op": gnode.op, "op_types": sorted(gnode.op_types), "device": gnode.canonical_device,
        "shape": list(gnode.shape),
        "input_shapes": [[i, list(d) if d else None]
                         for i, d in sorted(gnode.input_shapes(nodes).items())],
        "attrs": sorted(gnode.attrs.items())[:DETAIL_LIMIT],
        "trace": [[f.file, f.lineno, f.function] for f in trace],
        "steps": steps, "step_micros": [gnode.stats(s)[S.EXEC] for s in steps],
    }


def row_details(result: Any, row: int) -> dict[str, Any]:
    """Everything known about one row: all statistics, devices, shapes, trace, steps."""
    node = row_node(result, row)
    if isinstance(result, MultiResult):
        out: dict[str, Any] = {"name": node.name, "status": node.status,
                               "total": _all_values(node.value)}
        if result.mode == DIFF:
            out["base"] = _all_values(node.base)
        else:
            out["by_profile"] = {s.name: (_all_values(v) if v is not None else None)
                                 for s, v in zip(result.sides, node.by_profile)}
        return out
    model_nodes = getattr(result.model, "nodes", {})
    out = {"name": node.name, "self": _all_values(node.self_stats),
           "total": _all_values(node.total)}
    if result.view == "op" and row > 0:
        # an op row's engine total runs on over the rows below it: its own is its self
        out["cumulative"] = out["total"]
        out["total"] = out["self"]
    gnode: Optional[GraphNode] = node.graph_node
    if gnode is not None:
        out.update(_graph_node_facts(gnode, model_nodes))
    members = node.graph_nodes
    if members:
        out["members"] = [g.name for g in members[:DETAIL_LIMIT]]
        out["member_count"] = len(members)
        out["devices"] = sorted({g.canonical_device for g in members} - {""})
        out["op_types"] = sorted(set().union(*(g.op_types for g in members)))
    if node.frame is not None:
        f = node.frame
        out["frame"] = [f.file, f.lineno, f.function]
    return out
