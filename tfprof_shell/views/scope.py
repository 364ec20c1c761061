"""The scope view: nodes arranged by their name scopes (`a/b/c` under `a/b`)."""

from __future__ import annotations

from operator import attrgetter
from typing import Optional

from ..engine.account import Accounting
from ..engine.filter import Filter
from ..engine.order import sorter
from ..model import GraphNode, Model, ScopeNode
from ..options import Options
from .base import ROOT_NAME, SCOPE_PARENT, ViewNode, ViewResult, stats_nonnegative
from .tree import account_scope_all, account_scope_tree, postorder, show_tree


class ScopeView:
    """Name-scope tree, built once per model; :meth:`show` runs one command."""

    name = "scope"

    def __init__(self, model: Model) -> None:
        self.model = model
        by_name: dict[str, ViewNode] = {}
        roots: list[ViewNode] = []
        # Nodes come in any order (sorting 50k names would cost more than
        # sorting the sibling lists): a scope made as a parent before its own
        # graph node came gets that node then.
        for gnode in model.nodes.values():
            name = gnode.name
            node = by_name.get(name)
            if node is not None:
                node.gnode = gnode
                continue
            node = by_name[name] = ViewNode(name, gnode)
            cut = name.rfind("/")
            while cut >= 0:
                scope = name[:cut]
                parent = by_name.get(scope)
                if parent is not None:
                    parent.children.append(node)
                    break
                parent = by_name[scope] = ViewNode(scope, ScopeNode(scope, SCOPE_PARENT))
                parent.children.append(node)
                node, name = parent, scope
                cut = name.rfind("/")
            else:
                roots.append(node)
        # Siblings sort by name.
        by = attrgetter("name")
        roots.sort(key=by)
        for node in by_name.values():
            if len(node.children) > 1:
                node.children.sort(key=by)
        self.root = ViewNode(ROOT_NAME, GraphNode(ROOT_NAME, SCOPE_PARENT))
        self.root.children = roots
        #: (step, account regexes) of the accounting the tree holds, if reusable.
        self._accounted: Optional[tuple[int, tuple[str, ...]]] = None
        #: Every node below the root, children first (made on first use).
        self._order: Optional[list[ViewNode]] = None
        #: step -> whether no node has a statistic below 0 in it.
        self._nonnegative: dict[int, bool] = {}

    def show(self, opts: Options) -> ViewResult:
        """Account, filter, sort and freeze the tree for one command."""
        step = opts.step
        accounting = Accounting(opts.account_type_regexes)
        flt = Filter(opts, "scope", self.model.signed_memory)

        def reaccount(nodes: list[ViewNode]) -> list[ViewNode]:
            if accounting.match_all:
                if self._order is None:
                    self._order = postorder(self.root.children)
                kept, self._nonnegative[step] = account_scope_all(self._order, nodes, step)
                return kept
            return account_scope_tree(nodes, step, accounting)

        def nonnegative() -> bool:  # own statistics are the graph nodes', whatever the accounting
            known = self._nonnegative.get(step)
            if known is None:
                if not reuse:
                    # Finding out reads every node: with the accounting it just
                    # made, a command spares more by checking only what it shows.
                    return False
                if self._order is None:
                    self._order = postorder(self.root.children)
                known = self._nonnegative[step] = stats_nonnegative(self._order)
            return known

        key = (step, accounting.patterns)
        reuse, self._accounted = key == self._accounted, None
        shown = show_tree(self.root, None if reuse else reaccount, flt,
                          sorter(opts.order_by, list_view=False),
                          opts.account_displayed_op_only, False, nonnegative)
        # Re-accounting displayed nodes rewrites totals: the next command starts over.
        self._accounted = None if opts.account_displayed_op_only else key
        return ViewResult("scope", opts, shown,
                          model=self.model)

