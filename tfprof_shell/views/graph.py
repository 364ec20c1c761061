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
from .base import (GRAPH_PARENT, ROOT_NAME, DisplayNode, ViewNode, ViewResult, sum_totals,
                   total_with)


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
        flt = Filter(opts, "graph", self.model.signed_memory)
        displayed_only = opts.account_displayed_op_only
        order_by = opts.order_by
        root = self.root

        match_all = accounting.match_all
        accounts_types = accounting.accounts_types

        def account(nodes: list[ViewNode], visited: set[str]) -> list[ViewNode]:
            kept = []
            for node in nodes:
                name = node.name
                if name in visited:
                    continue
                visited.add(name)
                children = node.children
                kept_children = account(children, visited) if children else []
                gnode = node.gnode
                own = node.self = gnode.stats(step)
                if match_all or accounts_types(gnode.op_types):
                    node.account = True
                    node.kept = kept_children
                    node.total = total_with(own, kept_children)
                    kept.append(node)
                else:
                    node.account = False
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

        passes = flt.passes()
        max_depth = flt.max_depth
        trim = flt.trim if flt.trims else None

        def freeze(node: ViewNode, indent: int, shown_children: list[DisplayNode]) -> DisplayNode:
            if len(shown_children) > 1:
                shown_children = sort_stable(shown_children, order_by)
            if displayed_only:
                node.set_total(shown_children)  # DisplayNodes carry the same totals
            return DisplayNode(node.name, indent, node.account, node.self, node.total,
                               shown_children, node.gnode, (), (), node.frame, node.suffix,
                               node)

        def display(nodes: list[ViewNode], depth: int, indent: int,
                    visited: set[str]) -> list[DisplayNode]:
            if depth > max_depth:
                # Nothing is shown or walked below, but these count as visited:
                # they cannot be shown later where they are less deep.
                visited.update([n.name for n in nodes])
                return []
            deeper = depth + 1
            shown: list[DisplayNode] = []
            for node in nodes:
                name = node.name
                if name in visited:
                    continue
                visited.add(name)
                show = passes(node)
                below = node.kept
                shown_children: list[DisplayNode] = []
                if below and (trim is None or not trim(name)):
                    shown_children = display(below, deeper, indent + 1 if show else indent,
                                             visited)
                if show:
                    shown.append(freeze(node, indent, shown_children))
                elif shown_children:
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
        # The root is always shown, and its subtree walked unless cut.
        below = roots if max_depth >= 1 and not flt.trim(root.name) else []
        visited = {root.name}
        top = freeze(root, 0, display(below, 2, 1, visited) if below else [])
        # Re-accounting displayed nodes rewrites totals: the next command starts over.
        self._accounted = None if displayed_only else key
        return ViewResult("graph", opts, top, model=self.model)
