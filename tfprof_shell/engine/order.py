"""Ordering of sibling nodes by an `-order_by` key.

Numeric keys sort descending, ``name`` ascending (byte order); an empty key
leaves the order alone. The engine uses std::stable_sort for the scope and
graph views and std::sort for op and code; a stable sort reproduced the
engine's order of ties in every case we compared, so both use it here.
``occurrence`` sorts op and code entries by their number of graph nodes and
falls back to name in the tree views, as in the engine.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from .. import metrics

T = TypeVar("T")


def sort_key(order_by: str, list_view: bool, displayed: bool = False) -> Callable[[T], object]:
    """The sort key for ``order_by`` in a tree view or a list (op/code) view.

    ``displayed``: the nodes are DisplayNodes (their graph nodes are the picked ones).
    """
    stat = metrics.ORDER_KEYS.get(order_by)
    if stat is not None:
        return lambda n: -n.total[stat]
    if order_by == "occurrence" and list_view:
        if displayed:
            return lambda n: -len(n.graph_nodes)
        return lambda n: -len(n.picked)
    return lambda n: n.name


def sort_stable(nodes: list[T], order_by: str) -> list[T]:
    """Scope/graph ordering."""
    if not order_by or len(nodes) < 2:
        return nodes
    return sorted(nodes, key=sort_key(order_by, list_view=False))


def sort_list_view(nodes: list[T], order_by: str, displayed: bool = False) -> list[T]:
    """Op/code ordering (of DisplayNodes if ``displayed``)."""
    if not order_by or len(nodes) < 2:
        return nodes
    return sorted(nodes, key=sort_key(order_by, list_view=True, displayed=displayed))


def sorter(order_by: str, list_view: bool, displayed: bool = False
           ) -> Callable[[list[T]], list[T]]:
    """A function ordering sibling lists as sort_stable / sort_list_view do, its
    key made once (a command sorts thousands of sibling lists)."""
    if not order_by:
        return lambda nodes: nodes
    key = sort_key(order_by, list_view, displayed)
    return lambda nodes: sorted(nodes, key=key)
