"""The tree algorithm shared by the scope and code views.

Account (post-order: keep accounted nodes and ancestors of kept nodes),
optionally re-root at `-start_name_regexes`, then walk the kept tree to
decide what is displayed, re-accounting displayed nodes when
`-account_displayed_op_only` asks for it. The graph view differs (it
visits each node once); it lives in graph.py.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from ..engine.account import Accounting
from ..engine.filter import Filter
from ..model import stats as S
from .base import ZERO_TOTAL, DisplayNode, ViewNode, sum_totals, total_with


def show_tree(root: ViewNode,
              reaccount: Optional[Callable[[list[ViewNode]], list[ViewNode]]], flt: Filter,
              sort: Callable[[list[DisplayNode]], list[DisplayNode]], displayed_only: bool,
              code_rules: bool, nonnegative: Callable[[], bool] = lambda: False) -> DisplayNode:
    """One command on a scope or code tree: account, re-root, display, freeze.

    ``reaccount(nodes)`` accounts the trees below ``nodes`` and returns the
    kept ones (e.g. account_scope_tree); None reuses the
    accounting of the previous command (the caller knows it had the same
    step and account regexes and that its display did not re-account
    totals). ``sort`` orders sibling DisplayNodes. ``nonnegative()``, asked
    after accounting, says whether every node's own statistics are >= 0 (then
    so are all totals, and bounds <= 0 need no checks).
    """
    if reaccount is not None:
        root.kept = reaccount(root.children)
        root.total = sum_totals(root.kept)
    roots = root.kept
    if not flt.start_is_all:
        roots = search_roots(roots, flt.start)
    shown = print_tree([root], flt, 1, 0, root, roots, sort, displayed_only, code_rules,
                       nonnegative())
    if not shown:  # the root itself is cut (code view: max_depth < 1 or trimmed)
        return _freeze(root, 0, [], code_rules)
    return shown[0]


def account_scope_tree(nodes: list[ViewNode], step: int, accounting: Accounting) -> list[ViewNode]:
    """Post-order accounting of a scope tree; returns the kept nodes among ``nodes``.

    A node is kept when it is accounted or has kept descendants. Its own
    statistics are its graph node's for ``step``; it is accounted when one
    of its graph node's types matches the account regexes.
    """
    kept = []
    match_all = accounting.match_all
    accounts_types = accounting.accounts_types
    for node in nodes:
        children = node.children
        kept_children = account_scope_tree(children, step, accounting) if children else []
        gnode = node.gnode
        own = node.self = gnode.stats(step)
        account = node.account = match_all or accounts_types(gnode.op_types)
        if account or kept_children:
            node.kept = kept_children
            node.total = total_with(own, kept_children)
            kept.append(node)
        else:
            node.total = ZERO_TOTAL
    return kept


def postorder(roots: list[ViewNode]) -> list[ViewNode]:
    """``roots`` and all their descendants, children before their parent."""
    order: list[ViewNode] = []
    stack = list(roots)
    while stack:  # parents before their descendants, then reversed
        node = stack.pop()
        order.append(node)
        stack.extend(node.children)
    order.reverse()
    return order


def account_scope_all(order: list[ViewNode], roots: list[ViewNode],
                      step: int) -> tuple[list[ViewNode], bool]:
    """account_scope_tree under the match-all regex; ``order`` = postorder(roots).

    Every node is accounted, hence kept with all its children: one flat loop
    over the nodes, no new lists. Also says whether no node's own statistics
    are below 0 (see stats_nonnegative), found on the way.
    """
    zero = S.ZERO_SELF
    negative = False
    for node in order:
        own = node.self = node.gnode.stats(step)
        if own is not zero and min(own) < 0:
            negative = True
        node.account = True
        children = node.children
        node.kept = children
        node.total = total_with(own, children)
    return roots, not negative


def search_roots(nodes: list[ViewNode], start: Callable[[str], bool]) -> list[ViewNode]:
    """Topmost kept nodes whose name matches a start regex."""
    found = []
    for node in nodes:
        if start(node.name):
            found.append(node)
        else:
            found.extend(search_roots(node.kept, start))
    return found


def _freeze(node: ViewNode, depth: int, children: list[DisplayNode], multi: bool) -> DisplayNode:
    """One displayed node, its statistics as they are now."""
    picked = tuple(node.picked.values()) if multi else ()
    return DisplayNode(node.name, depth, node.account, node.self, tuple(node.total),
                       children, graph_node=node.gnode, graph_nodes=picked,
                       frame=node.frame, suffix=node.suffix, view_node=node)


def print_tree(nodes: list[ViewNode], flt: Filter, depth: int, indent: int,
               root: ViewNode, roots: list[ViewNode],
               sort: Callable[[list[DisplayNode]], list[DisplayNode]],
               displayed_only: bool, code_rules: bool,
               nonnegative: bool = False) -> list[DisplayNode]:
    """The displayed nodes below ``nodes`` (the engine's PrintScope), frozen.

    Walks the kept children (``roots`` below the root); each shown node
    becomes a DisplayNode once its totals are final, with its shown
    descendants as children. ``code_rules`` selects the code view's
    variant: a trimmed or too deep node is dropped with its subtree, and
    totals are never re-accounted. ``nonnegative``: no statistic of any node
    is below 0.
    """
    walk = _CodeWalk if code_rules else _ScopeWalk
    return walk(flt, root, roots, sort, displayed_only, nonnegative).visit(nodes, depth, indent)


class _ScopeWalk:
    """print_tree for the scope view (one walk; the state every level shares)."""

    def __init__(self, flt: Filter, root: ViewNode, roots: list[ViewNode],
                 sort: Callable[[list[DisplayNode]], list[DisplayNode]],
                 displayed_only: bool, nonnegative: bool = False) -> None:
        self.flt = flt
        self.root = root
        self.roots = roots
        self.sort = sort
        self.displayed_only = displayed_only
        self.floor = flt.tree_floor()
        self.nonnegative = nonnegative
        #: The floor bounds nothing a node can have: every node passes it.
        self.open = (nonnegative and self.floor is not None
                     and self.floor[1] <= 0 and self.floor[3] <= 0)

    def visit(self, nodes: list[ViewNode], depth: int, indent: int) -> list[DisplayNode]:
        root = self.root
        flt = self.flt
        self.passes = flt.passes()
        if len(nodes) == 1 and nodes[0] is root:  # the first call: the root is always shown
            below = self.roots if depth <= flt.max_depth and not flt.trim(root.name) else []
            return [self._shown(root, indent, self._visit(below, depth + 1, indent + 1)
                                if below else [])]
        return self._visit(nodes, depth, indent)

    def _visit(self, nodes: list[ViewNode], depth: int, indent: int) -> list[DisplayNode]:
        flt = self.flt
        if depth > flt.max_depth:  # nothing shown, nothing visited
            return []
        trim = flt.trim if flt.trims else None
        deeper = depth + 1 if depth < flt.max_depth else 0
        floor = self.floor
        if floor is not None:
            return self._visit_floor(nodes, deeper, indent, trim, floor)
        passes = self.passes
        shown_ = self._shown
        shown: list[DisplayNode] = []
        for node in nodes:
            show = passes(node)
            below = node.kept
            shown_children: list[DisplayNode] = []
            if below and deeper and (trim is None or not trim(node.name)):
                shown_children = self._visit(below, deeper, indent + 1 if show else indent)
            if show:
                shown.append(shown_(node, indent, shown_children))
            elif shown_children:
                shown.extend(shown_children)
        return shown

    def _visit_floor(self, nodes: list[ViewNode], deeper: int, indent: int,
                     trim: Optional[Callable[[str], bool]], floor: tuple) -> list[DisplayNode]:
        """_visit in the common case (see Filter.tree_floor), with passes and _shown
        inlined; when the floor is open (see __init__), without checking it."""
        get, least, self_get, self_least = floor
        open_ = self.open
        visit, sort, displayed_only = self._visit, self.sort, self.displayed_only
        shown: list[DisplayNode] = []
        append = shown.append
        for node in nodes:
            passed = open_ or (min(get(node.total)) >= least
                               and min(self_get(node.self)) >= self_least)
            below = node.kept
            if below and deeper and (trim is None or not trim(node.name)):
                if not passed:
                    shown.extend(visit(below, deeper, indent))
                    continue
                children = visit(below, deeper, indent + 1)
                if len(children) > 1:
                    children = sort(children)
            elif passed:
                children = []
            else:
                continue
            if displayed_only:
                node.set_total(children)  # DisplayNodes carry the same totals
            append(DisplayNode(node.name, indent, node.account, node.self, node.total,
                               children, node.gnode, (), (), node.frame, node.suffix, node))
        return shown

    def _shown(self, node: ViewNode, indent: int,
               shown_children: list[DisplayNode]) -> DisplayNode:
        if len(shown_children) > 1:
            shown_children = self.sort(shown_children)
        if self.displayed_only:
            node.set_total(shown_children)  # DisplayNodes carry the same totals
        return DisplayNode(node.name, indent, node.account, node.self, node.total,
                           shown_children, node.gnode, (), (), node.frame, node.suffix, node)


class _CodeWalk(_ScopeWalk):
    """print_tree for the code view: cut subtrees are skipped, totals are final."""

    def visit(self, nodes: list[ViewNode], depth: int, indent: int) -> list[DisplayNode]:
        flt = self.flt
        self.floor = flt.total_floor()
        if self.floor is not None and self.floor[1] <= 0 and self.nonnegative:
            self.floor = (self.floor[0], None)  # every node passes: see _floor_visit
        if depth > flt.max_depth:
            return []
        root = self.root
        if len(nodes) == 1 and nodes[0] is root:  # the first call
            if flt.trims and flt.trim(root.name):
                return []
            self.passes = flt.passes()
            return [self._shown(root, indent, self.visit(self.roots, depth + 1, indent + 1))]
        return self._visit(nodes, depth, indent)

    def _visit(self, nodes: list[ViewNode], depth: int, indent: int) -> list[DisplayNode]:
        flt = self.flt
        trim = flt.trim if flt.trims else None
        floor = self.floor
        if floor is None:
            return self._visit_any(nodes, depth + 1 if depth < flt.max_depth else 0, indent, trim)
        return _floor_visit(floor, trim, flt.max_depth, self.sort)(nodes, depth, indent)

    def _visit_any(self, nodes: list[ViewNode], deeper: int, indent: int,
                   trim: Optional[Callable[[str], bool]]) -> list[DisplayNode]:
        passes = self.passes
        shown_ = self._shown
        visit = self._visit
        shown: list[DisplayNode] = []
        for node in nodes:
            if trim is not None and trim(node.name):
                continue
            below = node.kept
            if passes(node):
                shown.append(shown_(node, indent, visit(below, deeper, indent + 1)
                                    if below and deeper else []))
            elif below and deeper:
                shown.extend(visit(below, deeper, indent))
        return shown

    def _shown(self, node: ViewNode, indent: int,
               shown_children: list[DisplayNode]) -> DisplayNode:
        if len(shown_children) > 1:
            shown_children = self.sort(shown_children)
        picked = node.picked
        return DisplayNode(node.name, indent, node.account, node.self, node.total,
                           shown_children, node.gnode,
                           tuple(picked.values()) if picked else (), (), node.frame,
                           node.suffix, node)


def _floor_visit(floor: tuple[Callable[[Sequence[int]], Sequence[int]], Optional[int]],
                 trim: Optional[Callable[[str], bool]], max_depth: int,
                 sort: Callable[[list[DisplayNode]], list[DisplayNode]]
                 ) -> Callable[[list[ViewNode], int, int], list[DisplayNode]]:
    """_CodeWalk._visit in the common case (see Filter.total_floor): passes and
    _shown inlined, the command's state in the closure (a call per shown parent,
    most of them frames with one child, sets up nothing). A floor of None is
    passed by every node."""
    get, least = floor
    open_ = least is None

    def visit(nodes: list[ViewNode], depth: int, indent: int) -> list[DisplayNode]:
        deeper = depth + 1 if depth < max_depth else 0
        shown: list[DisplayNode] = []
        append = shown.append
        for node in nodes:
            if trim is not None and trim(node.name):
                continue
            below = node.kept
            if open_ or min(get(node.total)) >= least:
                children = visit(below, deeper, indent + 1) if below and deeper else []
                if len(children) > 1:
                    children = sort(children)
                picked = node.picked
                append(DisplayNode(node.name, indent, node.account, node.self, node.total,
                                   children, node.gnode,
                                   tuple(picked.values()) if picked else (), (), node.frame,
                                   node.suffix, node))
            elif below and deeper:
                shown.extend(visit(below, deeper, indent))
        return shown

    return visit
