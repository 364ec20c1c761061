"""The scope view: nodes arranged by their name scopes (`a/b/c` under `a/b`)."""

from __future__ import annotations

from typing import Optional

from ..engine.account import Accounting
from ..engine.filter import Filter
from ..engine.order import sort_stable
from ..model import GraphNode, Model
from ..options import Options
from .base import ROOT_NAME, SCOPE_PARENT, ViewNode, ViewResult
from .tree import show_tree


class ScopeView:
    """Name-scope tree, built once per model; :meth:`show` runs one command."""

    name = "scope"

    def __init__(self, model: Model) -> None:
        self.model = model
        by_name: dict[str, ViewNode] = {}
        for gnode in model.sorted_nodes():
            if gnode.name not in by_name:
                by_name[gnode.name] = ViewNode(gnode.name, gnode)
            scope = gnode.name
            while "/" in scope:
                scope = scope.rsplit("/", 1)[0]
                if scope in by_name:
                    break  # its ancestors are all there already
                by_name[scope] = ViewNode(scope, GraphNode(scope, SCOPE_PARENT))
        roots = []
        for name in sorted(by_name):
            node = by_name[name]
            if "/" in name:
                by_name[name.rsplit("/", 1)[0]].children.append(node)
            else:
                roots.append(node)
        self.root = ViewNode(ROOT_NAME, GraphNode(ROOT_NAME, SCOPE_PARENT))
        self.root.children = roots
        #: (step, account regexes) of the accounting the tree holds, if reusable.
        self._accounted: Optional[tuple[int, tuple[str, ...]]] = None

    def show(self, opts: Options) -> ViewResult:
        """Account, filter, sort and freeze the tree for one command."""
        step = opts.step
        accounting = Accounting(opts.account_type_regexes)
        flt = Filter(opts, "scope")

        def reaccount(node: ViewNode) -> bool:
            node.self = node.gnode.stats(step)
            return accounting.accounts_types(node.gnode.op_types)

        key = (step, accounting.patterns)
        reuse, self._accounted = key == self._accounted, None
        shown = show_tree(self.root, None if reuse else reaccount, flt,
                          lambda ns: sort_stable(ns, opts.order_by),
                          opts.account_displayed_op_only, False)
        # Re-accounting displayed nodes rewrites totals: the next command starts over.
        self._accounted = None if opts.account_displayed_op_only else key
        return ViewResult("scope", opts, shown,
                          model=self.model)
