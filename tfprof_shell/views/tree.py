"""The tree algorithm shared by the scope and code views.

Account (post-order: keep accounted nodes and ancestors of kept nodes),
optionally re-root at `-start_name_regexes`, then walk the kept tree to
decide what is displayed, re-accounting displayed nodes when
`-account_displayed_op_only` asks for it. The graph view differs (it
visits each node once); it lives in graph.py.
"""

from __future__ import annotations

from typing import Callable, Optional

from ..engine.filter import Filter
from .base import ZERO_TOTAL, DisplayNode, ViewNode, sum_totals


def show_tree(root: ViewNode, reaccount: Optional[Callable[[ViewNode], bool]], flt: Filter,
              sort: Callable[[list[ViewNode]], list[ViewNode]], displayed_only: bool,
              code_rules: bool) -> DisplayNode:
    """One command on a scope or code tree: account, re-root, display, freeze.

    ``reaccount`` None reuses the accounting of the previous command (the
    caller knows it had the same step and account regexes and that its
    display did not re-account totals).
    """
    if reaccount is not None:
        root.kept = account_tree(root.children, reaccount)
        root.total = sum_totals(root.kept)
    roots = root.kept
    if not flt.start_is_all:
        roots = search_roots(roots, flt.start)
    displays: dict[int, DisplayNode] = {}
    shown = print_tree([root], flt, 1, 0, root, roots, sort, displayed_only, code_rules,
                       displays)
    if not shown:  # the root itself is cut (code view: max_depth < 1 or trimmed)
        root.show_children = []
        return _freeze(root, 0, [], code_rules)
    return displays[id(root)]


def account_tree(nodes: list[ViewNode], reaccount: Callable[[ViewNode], bool]) -> list[ViewNode]:
    """Post-order accounting; returns the kept nodes among ``nodes``."""
    kept = []
    for node in nodes:
        kept_children = account_tree(node.children, reaccount) if node.children else []
        node.account = reaccount(node)
        if node.account or kept_children:
            node.kept = kept_children
            node.set_total(kept_children)
            kept.append(node)
        else:
            node.total = ZERO_TOTAL
    return kept


def search_roots(nodes: list[ViewNode], start: Callable[[str], bool]) -> list[ViewNode]:
    """Topmost kept nodes whose name matches a start regex."""
    found = []
    for node in nodes:
        if start(node.name):
            found.append(node)
        else:
            found.extend(search_roots(node.kept, start))
    return found


def to_display(node: ViewNode, depth: int, multi: bool, indents: dict[int, int]) -> DisplayNode:
    """Freeze a displayed ViewNode subtree into DisplayNodes."""
    children = [to_display(c, indents[id(c)], multi, indents) for c in node.show_children]
    return _freeze(node, depth, children, multi)


def _freeze(node: ViewNode, depth: int, children: list[DisplayNode], multi: bool) -> DisplayNode:
    """One displayed node, its statistics as they are now."""
    picked = tuple(node.picked.values()) if multi else ()
    return DisplayNode(node.name, depth, node.account, node.self, tuple(node.total),
                       children, graph_node=node.gnode, graph_nodes=picked,
                       frame=node.frame, suffix=node.suffix, view_node=node)


def print_tree(nodes: list[ViewNode], flt: Filter, depth: int, indent: int,
               root: ViewNode, roots: list[ViewNode],
               sort: Callable[[list[ViewNode]], list[ViewNode]],
               displayed_only: bool, code_rules: bool,
               displays: dict[int, DisplayNode]) -> list[ViewNode]:
    """Decide the displayed nodes below ``nodes`` (the engine's PrintScope).

    Walks the kept children (``roots`` below the root) and sets each shown
    node's ``show_children``. ``code_rules`` selects the code view's
    variant: a trimmed or too deep node is dropped with its subtree, and
    totals are never re-accounted. ``displays`` receives each shown node's
    DisplayNode (by ``id`` of the ViewNode), made once its totals are final.
    """
    shown = []
    for node in nodes:
        if code_rules and (flt.trim(node.name) or depth > flt.max_depth):
            continue
        show = node is root or flt.should_show(node, depth)
        child_indent = indent + 1 if show else indent
        shown_children: list[ViewNode] = []
        if code_rules or (not flt.trim(node.name) and depth <= flt.max_depth):
            shown_children = print_tree(roots if node is root else node.kept, flt, depth + 1,
                                        child_indent, root, roots, sort, displayed_only,
                                        code_rules, displays)
        if show:
            shown_children = sort(shown_children)
            node.show_children = shown_children
            if displayed_only and not code_rules:
                node.set_total(shown_children)
            displays[id(node)] = _freeze(node, indent,
                                         [displays[id(c)] for c in shown_children], code_rules)
            shown.append(node)
        else:
            shown.extend(shown_children)
    return shown
