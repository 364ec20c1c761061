"""The code view: nodes arranged by the Python call stacks that created them.

Each frame becomes a node labelled ``file.py:line:function``; a graph node
hangs under the last frame of its stack. Gradient nodes (``.../gradients/
X_grad/...``) hang under a copy of their forward op's stack whose labels end
in `` (gradient)``.
"""

from __future__ import annotations

from typing import Optional

from ..engine.account import Accounting, sum_stats
from ..engine.filter import Filter
from ..engine.order import sorter
from ..model import Frame, GraphNode, Model
from ..model.stats import DEFS, N_TOTAL, ZERO_SELF
from ..options import Options
from .base import (EMPTY, ROOT_NAME, ZERO_TOTAL, ViewNode, ViewResult, stats_nonnegative,
                   total_with)
from .op import snapshot
from .tree import show_tree

GRADIENT_SUFFIX = " (gradient)"
assert DEFS == N_TOTAL - 1  # _account_all counts a definition by replacing the last total


def frame_label(frame: Frame) -> str:
    """``basename:lineno:function``, long function names cut to 17 bytes + '...'."""
    base = frame.file.rsplit("/", 1)[-1]
    func = frame.function.encode("utf-8")
    if len(func) >= 20:
        func = func[:17] + b"..."
    return "%s:%d:%s" % (base, frame.lineno, func.decode("utf-8", "replace"))


def forward_name(name: str) -> Optional[str]:
    """For a gradient node name, the forward op's name; None otherwise.

    Mirrors the engine, including its unsigned length: when ``_grad/``
    comes before ``gradients/`` the rest of the name is taken.
    """
    prefix = name.find("gradients/")
    suffix = name.find("_grad/")
    if prefix < 0 or suffix < 0:
        return None
    start = prefix + len("gradients/")
    if suffix == start:
        return None
    return name[start:suffix] if suffix > start else name[start:]


class CodeView:
    """Call-stack tree, built once per model; :meth:`show` runs one command."""

    name = "code"

    def __init__(self, model: Model) -> None:
        self.model = model
        self.root = ViewNode(ROOT_NAME)
        self.notes: list[str] = []
        # Loaders share one frame list among nodes with the same stack: walk each once.
        self._leaves: dict[tuple[int, str], ViewNode] = {}
        self._labels: dict[Frame, str] = {}
        #: Nodes that got members (the only ones with own statistics).
        self._with_members: list[ViewNode] = []
        #: Every node below the root in the order made: each after its ancestors.
        self._made: list[ViewNode] = []
        forward: dict[str, GraphNode] = {}
        gradients: dict[str, list[GraphNode]] = {}
        for gnode in model.sorted_nodes():
            trace = gnode.trace
            if not trace:
                continue
            fwd = forward_name(gnode.name)
            if fwd is not None:
                gradients.setdefault(fwd, []).append(gnode)
                continue
            forward[gnode.name] = gnode
            self._add_member(self._path(trace, ""), gnode)
        unaccounted = 0
        for fwd in sorted(gradients):
            fnode = forward.get(fwd)
            if fnode is None:
                unaccounted += 1
                continue
            leaf = self._path(fnode.trace, GRADIENT_SUFFIX)
            for gnode in gradients[fwd]:
                self._add_member(leaf, gnode)
        if unaccounted:
            self.notes.append("%d gradient nodes not accounted" % unaccounted)
        for node in self._with_members:
            if len(node.members) > 1:
                node.members = dict(sorted(node.members.items()))
        self._leaves.clear()  # keyed by id(): only valid while building
        self._labels.clear()
        #: (step, account regexes) of the accounting the tree holds.
        self._accounted: Optional[tuple[int, tuple[str, ...]]] = None
        #: Nodes without members hold the match-all accounting (as made: see _walk).
        self._bare_all = True
        #: Whether no own statistic of the accounting the tree holds is below 0.
        self._nonnegative = True

    def _add_member(self, leaf: ViewNode, gnode: GraphNode) -> None:
        members = leaf.members
        if members is EMPTY:
            members = leaf.members = {}
            self._with_members.append(leaf)
        members.setdefault(gnode.name, gnode)  # type: ignore[attr-defined]

    def _path(self, frames: list[Frame], suffix: str) -> ViewNode:
        key = (id(frames), suffix)
        leaf = self._leaves.get(key)
        if leaf is None:
            leaf = self._leaves[key] = self._walk(frames, suffix)
        return leaf

    def _walk(self, frames: list[Frame], suffix: str) -> ViewNode:
        node = self.root
        labels = self._labels
        made = self._made.append
        fresh = False  # node was made by this walk: it has no children to look up
        for frame in frames:
            label = labels.get(frame)
            if label is None:
                label = labels[frame] = frame_label(frame)
            if suffix:
                label += suffix
            siblings = node.children
            if not fresh and siblings:
                # Most frames have one child: a node gets its label index with its second.
                index = node.child_index
                if index is EMPTY:
                    only = siblings[0]
                    if only.name == label:
                        node = only
                        continue
                    index = node.child_index = {only.name: only}
                else:
                    known = index.get(label)
                    if known is not None:
                        node = known
                        continue
                child = index[label] = ViewNode(label)  # type: ignore[index]
            else:
                child = ViewNode(label)
            fresh = True
            child.frame = frame
            child.suffix = suffix
            # The match-all accounting of a node without members, made once
            # (kept is the children list itself, complete once built).
            child.account = True
            child.kept = child.children
            made(child)
            siblings.append(child)
            node = child
        return node

    def show(self, opts: Options) -> ViewResult:
        """Account, filter, sort and freeze the call-stack tree for one command."""
        step = opts.step
        accounting = Accounting(opts.account_type_regexes)
        flt = Filter(opts, "code", self.model.signed_memory)
        notes = list(self.notes)
        if opts.account_displayed_op_only:
            notes.append("Note: code view ignores account_displayed_op_only")

        def reaccount(nodes: list[ViewNode]) -> list[ViewNode]:
            if accounting.match_all:
                bare, self._bare_all = self._bare_all, True
                kept = _account_all(self._made, nodes, step, bare)
            else:
                self._bare_all = False
                kept = _account(nodes, step, accounting)
            # Nodes without members have zero own statistics.
            self._nonnegative = stats_nonnegative(self._with_members)
            return kept

        # The code view never re-accounts displayed nodes, so the accounting of
        # the last command is reusable whenever step and regexes are the same.
        key = (step, accounting.patterns)
        reuse, self._accounted = key == self._accounted, None
        shown = show_tree(self.root, None if reuse else reaccount, flt,
                          sorter(opts.order_by, list_view=True, displayed=True), False, True,
                          lambda: self._nonnegative)
        self._accounted = key
        return ViewResult("code", opts, shown,
                          notes=notes, model=self.model)



def _account(nodes: list[ViewNode], step: int, accounting: Accounting) -> list[ViewNode]:
    """Post-order accounting of the call-stack tree (op.snapshot inlined for the common cases).

    Most nodes are frames above the ops (no members): under the match-all
    regex they are accounted with zero statistics of their own.
    """
    kept = []
    match_all = accounting.match_all
    for node in nodes:
        children = node.children
        kept_children = _account(children, step, accounting) if children else []
        members = node.members
        if not members:
            node.picked = EMPTY
            own = node.self = ZERO_SELF
            account = node.account = match_all
        elif match_all:
            node.picked = members  # every member once, by name
            own = node.self = sum_stats(list(members.values()), step)
            account = node.account = True
        else:
            snapshot(node, accounting, step)
            own, account = node.self, node.account
        if account or kept_children:
            node.kept = kept_children
            node.total = total_with(own, kept_children)
            kept.append(node)
        else:
            node.total = ZERO_TOTAL
    return kept


def _account_all(made: list[ViewNode], roots: list[ViewNode], step: int,
                 bare: bool) -> list[ViewNode]:
    """_account under the match-all regex, ``made`` being every node, each after its ancestors.

    Every node is accounted, hence kept with all its children: one flat loop
    over the nodes (reversed: each after its descendants), no new lists.
    ``bare``: the nodes without members already hold their match-all state
    (everything but the total).
    """
    for node in reversed(made):
        members = node.members
        if members:
            node.picked = members
            if len(members) == 1:
                for gnode in members.values():
                    own = gnode.stats(step)
            else:
                own = sum_stats(list(members.values()), step)
            node.self = own
            node.account = True
            node.kept = node.children
        else:
            if not bare:
                node.picked = EMPTY
                node.self = ZERO_SELF
                node.account = True
                node.kept = node.children
            children = node.children
            if len(children) == 1:  # most frames: the child's total and one definition
                total = children[0].total
                node.total = total[:DEFS] + (total[DEFS] + 1,)
                continue
            own = ZERO_SELF
        node.total = total_with(own, node.children)
    return roots
