"""The op view: one entry per op type, listed with cumulative ("chain") totals.

Entries are sorted, then each accounted entry's total is its own value
plus the total of the next accounted entry, so the first row's total is the
grand total and each row shows the share of the rows from it to the end.
"""

from __future__ import annotations

from ..engine.account import Accounting, sum_stats
from ..engine.filter import Filter
from ..engine.order import sort_list_view
from ..model import Model
from ..options import Options
from ..model.stats import ZERO_SELF
from .base import EMPTY, ROOT_NAME, DisplayNode, ViewNode, ViewResult, sum_totals


class OpView:
    """Op-type entries, built once per model; :meth:`show` runs one command."""

    name = "op"

    def __init__(self, model: Model) -> None:
        self.model = model
        entries: dict[str, ViewNode] = {}
        for gnode in model.sorted_nodes():
            entry = entries.get(gnode.op)
            if entry is None:
                entry = entries[gnode.op] = ViewNode(gnode.op)
                entry.members = {}
            entry.members[gnode.name] = gnode  # type: ignore[index]
        self.entries = [entries[k] for k in sorted(entries)]
        self.root = ViewNode(ROOT_NAME)

    def show(self, opts: Options) -> ViewResult:
        """Account, chain, filter and freeze the op list for one command."""
        step = opts.step
        accounting = Accounting(opts.account_type_regexes)
        flt = Filter(opts, "op", self.model.signed_memory)
        root = self.root
        for entry in self.entries:
            snapshot(entry, accounting, step)
            entry.set_total(())
        ordered = sort_list_view(list(self.entries), opts.order_by)
        accounted = chain([e for e in ordered if e.account])
        root.total = sum_totals(accounted[:1])

        start = 0
        if opts.start_name_regexes and not flt.start_is_all:
            start = next((i for i, e in enumerate(accounted) if flt.start(e.name)),
                         len(accounted))
        shown = []
        for depth, entry in enumerate(accounted[start:]):
            if flt.trim(entry.name) or depth > flt.max_depth:
                break
            if flt.should_show(entry, depth):
                shown.append(entry)
        if opts.account_displayed_op_only:
            for entry in shown:
                entry.set_total(())
            chain(shown)
            root.total = sum_totals(shown[:1])
        rows = [display_entry(e, 1) for e in shown]
        top = DisplayNode(ROOT_NAME, 0, False, root.self, tuple(root.total), rows)
        return ViewResult("op", opts, top, model=self.model)


def snapshot(entry: ViewNode, accounting: Accounting, step: int) -> None:
    """Pick an entry's members for this command and sum their statistics."""
    members = entry.members
    if not members:  # most code view nodes: frames above the ops
        entry.picked = EMPTY
        entry.self = ZERO_SELF
        entry.account = accounting.match_all
        return
    if accounting.match_all:
        # Every member once; members are kept by name, as picked must be.
        entry.picked = members
        entry.self = sum_stats(list(members.values()), step)
        entry.account = True
        return
    picked = accounting.pick(list(members.values()))
    entry.picked = {n.name: n for n in sorted(set(picked), key=lambda n: n.name)}
    entry.self = sum_stats(picked, step)
    entry.account = bool(picked)


def chain(entries: list[ViewNode]) -> list[ViewNode]:
    """Make each entry's total include the next entry's total (from the end)."""
    nxt = None
    for entry in reversed(entries):
        if nxt is not None:
            entry.aggregate(nxt)
        nxt = entry
    return entries


def display_entry(entry: ViewNode, depth: int) -> DisplayNode:
    """Freeze one op or code entry."""
    return DisplayNode(entry.name, depth, entry.account, entry.self, tuple(entry.total),
                       [], graph_nodes=tuple(entry.picked.values()),
                       frame=entry.frame, suffix=entry.suffix, view_node=entry)
