"""Shared pieces of the four views: working nodes, displayed nodes, results.

A view builds its structure once (:class:`ViewNode` trees or lists) and
re-derives statistics for every command, as the engine does. What a
command shows is returned as an immutable tree of :class:`DisplayNode`
inside a :class:`ViewResult`, which renderers turn into text, JSON,
timelines or pprof files without touching the view again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import add, attrgetter
from types import MappingProxyType
from typing import Any, Iterator, Mapping, Optional, Protocol, Sequence, TypeVar

from ..model import Frame, GraphNode, Model
from ..model import stats as S
from ..options import Options

ROOT_NAME = "_TFProfRoot"
SCOPE_PARENT = "_kTFScopeParent"
GRAPH_PARENT = "_TFGraphParent"
ZERO_TOTAL: tuple[int, ...] = (0,) * S.N_TOTAL
#: The definition count a node adds to its own statistics in its total.
ONE = (1,)
#: ZERO_SELF + ONE, shared by every node with no statistics of its own (most nodes
#: of a large model: sharing it spares a tuple per node and command).
ZERO_ONE = S.ZERO_SELF + ONE
#: A read-only empty mapping shared by view nodes until they get their own.
EMPTY: Mapping = MappingProxyType({})


class ViewNode:
    """A node of a view's structure plus the working state of one command."""

    __slots__ = ("name", "gnode", "children", "kept", "account", "self",
                 "total", "members", "picked", "frame", "suffix", "child_index")

    def __init__(self, name: str, gnode: Optional[GraphNode] = None) -> None:
        self.name = name
        #: The graph node behind a scope/graph node; None for synthetic parents.
        self.gnode = gnode
        #: Structural children (built once).
        self.children: list[ViewNode] = []
        # Large views hold one ViewNode per graph node: the fields below start
        # out as shared empty values and are replaced (never changed in place)
        # by the views that use them, except where noted.
        #: Children kept by the current accounting (they or their subtrees are accounted).
        self.kept: Sequence[ViewNode] = ()
        self.account = False
        self.self: tuple[int, ...] = S.ZERO_SELF
        self.total: tuple[int, ...] = ZERO_TOTAL
        #: op/code views: graph nodes aggregated here, by name (a view that
        #: adds members first gives the node its own dict).
        self.members: Mapping[str, GraphNode] = EMPTY
        #: op/code views: the members picked by the account regexes this command.
        self.picked: Mapping[str, GraphNode] = EMPTY
        #: code view: the call-stack frame this node stands for, and its label suffix.
        self.frame: Optional[Frame] = None
        self.suffix = ""
        #: code view: label -> child, for building (its own dict from its second child on).
        self.child_index: Mapping[str, ViewNode] = EMPTY

    def __repr__(self) -> str:
        return "ViewNode(%r)" % self.name

    # -- the engine's total-statistics operations -----------------------------

    def set_total(self, children: Sequence["ViewNode"]) -> None:
        """Total = own statistics and one definition, plus the totals of ``children``."""
        self.total = total_with(self.self, children)

    def aggregate(self, child: "ViewNode") -> None:
        self.total = tuple(map(add, self.total, child.total))


#: Up to this many children, totals are summed through chained maps (see total_with).
_FEW = 4


def total_with(own: tuple[int, ...], children: Sequence[Any]) -> tuple[int, ...]:
    """A node's total: its ``own`` statistics and one definition, plus the totals of ``children``."""
    own = ZERO_ONE if own is S.ZERO_SELF else own + ONE
    if not children:
        return own
    if len(children) <= _FEW:
        for child in children:  # chained maps: cheaper than zip for a few children
            own = map(add, own, child.total)  # type: ignore[assignment]
        return tuple(own)
    return tuple(map(sum, zip(own, *[c.total for c in children])))


def stats_nonnegative(nodes: Sequence[ViewNode]) -> bool:
    """True if no statistic of the nodes' own (accounted) statistics is below 0.

    Then no total is either (totals add own statistics and definition counts).
    """
    return min(map(min, map(_own, nodes)), default=0) >= 0


_own = attrgetter("self")


def sum_totals(nodes: Sequence[ViewNode]) -> tuple[int, ...]:
    """Element-wise sum of the nodes' totals (zeros for none)."""
    return tuple(map(sum, zip(ZERO_TOTAL, *[n.total for n in nodes])))


class DisplayNode:
    """One displayed node of a command's result (immutable by convention).

    ``self_stats`` and ``total`` are indexed by model.stats. ``graph_node``
    is set in the scope and graph views; ``graph_nodes`` (unique, by name)
    in the op and code views. A plain class with slots rather than a
    dataclass: a command makes one per displayed row.
    """

    __slots__ = ("name", "depth", "account", "self_stats", "total", "children", "graph_node",
                 "graph_nodes", "member_stats", "frame", "suffix", "view_node")
    __hash__ = None  # type: ignore[assignment]  # compared by value, like a dataclass

    def __init__(self, name: str, depth: int, account: bool, self_stats: tuple[int, ...],
                 total: tuple[int, ...], children: Optional[list["DisplayNode"]] = None,
                 graph_node: Optional[GraphNode] = None,
                 graph_nodes: tuple[GraphNode, ...] = (),
                 member_stats: tuple[tuple[int, ...], ...] = (),
                 frame: Optional[Frame] = None, suffix: str = "",
                 view_node: Optional[ViewNode] = None) -> None:
        self.name = name
        self.depth = depth
        self.account = account
        self.self_stats = self_stats
        self.total = total
        self.children: list[DisplayNode] = [] if children is None else children
        self.graph_node = graph_node
        #: op/code views: each picked graph node (for occurrence, shapes).
        self.graph_nodes = graph_nodes
        #: op/code views: each picked member's own statistics (for occurrence, shapes).
        self.member_stats = member_stats
        self.frame = frame
        self.suffix = suffix
        #: The view structure node behind this one (code view pprof needs its
        #: full subtree, not only the displayed part).
        self.view_node = view_node

    def _fields(self) -> tuple:
        return tuple(getattr(self, f) for f in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return "DisplayNode(%s)" % ", ".join("%s=%r" % (f, getattr(self, f))
                                              for f in self.__slots__)

    def walk(self) -> Iterator["DisplayNode"]:
        """This node and all displayed descendants, in display order."""
        return preorder(self)


class _Tree(Protocol):
    @property
    def children(self) -> Sequence[Any]: ...


T = TypeVar("T", bound=_Tree)


def preorder(root: T) -> Iterator[T]:
    """``root`` and its descendants, parents before children, children in order."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


@dataclass
class ViewResult:
    """What one view command displays, ready for any renderer.

    For the op view ``root.children`` is the displayed list in order (the
    engine's result proto nests it as a chain; the proto exporter does that).
    """

    view: str
    options: Options
    root: DisplayNode
    #: Lines for stderr (e.g. "3 gradient nodes not accounted").
    notes: list[str] = field(default_factory=list)
    #: The model the view was built from (timeline and pprof renderers need it).
    model: Optional[Model] = None
    #: Renderers' outputs of this result, by renderer (a repeated command
    #: gets the same result back: its text is made once).
    rendered: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def missing_accelerator_stream(self) -> bool:
        """The profile has accelerator ops without accelerator stream records."""
        return self.model is not None and self.model.miss_accelerator_stream
