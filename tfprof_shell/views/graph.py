"""The graph view: each node with its inputs as children.

Unlike the scope view, each node is visited once per pass (a node shared by
several consumers appears under the first one in input order), and a node
that is not accounted passes its kept inputs up to its consumer.
"""

from __future__ import annotations

from typing import Optional

from ..engine.account import Accounting
from ..engine.filter import Filter
from ..engine.order import sort_stable
from ..model import GraphNode, Model
from ..options import Options
from .base import GRAPH_PARENT, ROOT_NAME, ViewNode, ViewResult, sum_totals
from .tree import to_display


class GraphView:
    """Input/output tree, built once per model; :meth:`show` runs one command."""

    name = "graph"

    def __init__(self, model: Model) -> None:
        self.model = model
        by_name = {g.name: ViewNode(g.name, g) for g in model.sorted_nodes()}
        consumed: set[str] = set()
        for node in by_name.values():
            inputs = node.gnode.inputs
            for idx in sorted(inputs):
                src = inputs[idx]
                consumed.add(src)
                child = by_name.get(src)
                if child is not None:
                    node.children.append(child)
        self.root = ViewNode(ROOT_NAME, GraphNode(ROOT_NAME, GRAPH_PARENT))
        self.root.children = [n for name, n in by_name.items() if name not in consumed]
        #: (step, account regexes) of the accounting the tree holds, if reusable.
        self._accounted: Optional[tuple[int, tuple[str, ...]]] = None

    def show(self, opts: Options) -> ViewResult:
        """Account, filter, sort and freeze the graph tree for one command."""
        step = opts.step
        accounting = Accounting(opts.account_type_regexes)
        flt = Filter(opts, "graph")
        displayed_only = opts.account_displayed_op_only
        order_by = opts.order_by
        root = self.root

        def account(nodes: list[ViewNode], visited: set[str]) -> list[ViewNode]:
            kept = []
            for node in nodes:
                if node.name in visited:
                    continue
                visited.add(node.name)
                kept_children = account(node.children, visited)
                node.self = node.gnode.stats(step)
                node.account = accounting.accounts_types(node.gnode.op_types)
                if node.account:
                    node.kept = kept_children
                    node.set_total(kept_children)
                    kept.append(node)
                else:
                    kept.extend(kept_children)
            return kept

        def search(nodes: list[ViewNode], visited: set[str]) -> list[ViewNode]:
            found = []
            for node in nodes:
                if node.name in visited:
                    continue
                visited.add(node.name)
                if flt.start(node.name):
                    found.append(node)
                else:
                    found.extend(search(node.kept, visited))
            return found

        indents: dict[int, int] = {}

        def display(nodes: list[ViewNode], depth: int, indent: int,
                    visited: set[str]) -> list[ViewNode]:
            shown = []
            for node in nodes:
                if node.name in visited:
                    continue
                visited.add(node.name)
                show = node is root or flt.should_show(node, depth)
                shown_children: list[ViewNode] = []
                if not flt.trim(node.name) and depth <= flt.max_depth:
                    shown_children = display(roots if node is root else node.kept, depth + 1,
                                             indent + 1 if show else indent, visited)
                if show:
                    shown_children = sort_stable(shown_children, order_by)
                    node.show_children = shown_children
                    if displayed_only:
                        node.set_total(shown_children)
                    indents[id(node)] = indent
                    shown.append(node)
                else:
                    shown.extend(shown_children)
            return shown

        key = (step, accounting.patterns)
        reuse, self._accounted = key == self._accounted, None
        if not reuse:
            root.kept = account(root.children, set())
            root.total = sum_totals(root.kept)
        roots = root.kept
        if not flt.start_is_all:
            roots = search(roots, set())
        root.show_children = []
        display([root], 1, 0, set())
        # Re-accounting displayed nodes rewrites totals: the next command starts over.
        self._accounted = None if displayed_only else key
        return ViewResult("graph", opts, to_display(root, 0, False, indents),
                          model=self.model)
