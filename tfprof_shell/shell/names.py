"""Names from a loaded profile, indexed once for instant prefix completion.

:class:`NameIndex` walks the model a single time and keeps sorted lists:
node names arranged by name scope (completed one level at a time, like
paths), op types, every type a node is accounted under, and code-view
labels. A lookup is a bisect plus the matches; the model is never rescanned
per keystroke.
"""

from __future__ import annotations

import bisect
from typing import Iterator, Optional, Sequence

from ..model import Frame, Model

#: RE2 metacharacters escaped in completed names ('.' is kept readable:
#: it still matches itself, and node names rarely contain one).
_META = set("\\^$*+?()[]{}|")


#: Characters that end a shell word (space) or a regex list item (comma): written as
#: ``\xHH`` so a completed name stays one item of one word.
_SEPARATORS = {" ": "\\x20", ",": "\\x2c"}


def escape_name(name: str) -> str:
    """``name`` as a regex that matches it (for the *_regexes options), with no space
    or comma in it."""
    return "".join(_SEPARATORS.get(ch) or ("\\" + ch if ch in _META else ch) for ch in name)


class SortedNames:
    """A sorted list of names with a description each, searched by prefix."""

    def __init__(self, described: dict[str, str]) -> None:
        self.names = sorted(described)
        self.meta = described

    def __len__(self) -> int:
        return len(self.names)

    def with_prefix(self, prefix: str, limit: int) -> list[str]:
        """Up to ``limit`` names starting with ``prefix``, in sorted order."""
        names = self.names
        i = bisect.bisect_left(names, prefix)
        found: list[str] = []
        while i < len(names) and names[i].startswith(prefix) and len(found) < limit:
            found.append(names[i])
            i += 1
        return found


class NameIndex:
    """Names of one model for completion, built once (see :meth:`from_model`)."""

    def __init__(self, node_ops: dict[str, str], account_types: dict[str, int],
                 code_labels: Sequence[str] = ()) -> None:
        #: scope path ("" = top level) -> sorted child segments
        self._children: dict[str, SortedNames] = {}
        below: dict[str, int] = {}
        segments: dict[str, dict[str, str]] = {}
        for name in node_ops:
            cut = name.find("/")
            while cut >= 0:
                scope = name[:cut]
                below[scope] = below.get(scope, 0) + 1
                cut = name.find("/", cut + 1)
        for name in set(node_ops) | set(below):
            parent, _, leaf = name.rpartition("/")
            segments.setdefault(parent, {})[leaf] = _node_meta(node_ops.get(name), below.get(name))
        self._children = {p: SortedNames(d) for p, d in segments.items()}
        op_counts: dict[str, int] = {}
        for op in node_ops.values():
            if op:
                op_counts[op] = op_counts.get(op, 0) + 1
        self.op_types = SortedNames({op: "op type, %s" % _plural(n, "node")
                                     for op, n in op_counts.items()})
        self.account_types = SortedNames({t: "type of %s" % _plural(n, "node")
                                          for t, n in account_types.items()})
        self.code_labels = SortedNames({label: "code location" for label in code_labels})
        self.node_count = len(node_ops)

    @classmethod
    def from_model(cls, model: Model) -> "NameIndex":
        """Index ``model``'s node names, op types and code labels (one pass)."""
        from ..views.code import frame_label  # the code view owns its label format
        node_ops: dict[str, str] = {}
        account_types: dict[str, int] = {}
        frames: set[Frame] = set()
        traces_seen: set[int] = set()  # loaders share one list among identical stacks
        for name, node in model.nodes.items():
            node_ops[name] = node.op
            for t in node.op_types:
                account_types[t] = account_types.get(t, 0) + 1
            trace = node.trace
            if trace and id(trace) not in traces_seen:
                traces_seen.add(id(trace))
                frames.update(trace)
        return cls(node_ops, account_types, sorted({frame_label(f) for f in frames}))

    def scoped(self, prefix: str, limit: int = 200) -> Iterator[tuple[str, str, str]]:
        """(regex, display, description) of the names one scope level below ``prefix``.

        ``prefix`` is unescaped text. ``layer1/M`` gives ``layer1/MatMul``...;
        ``layer1/`` first gives ``layer1/.*`` (everything below), then every
        child of ``layer1``. Names come back escaped for use as regexes.
        """
        parent, slash, partial = prefix.rpartition("/")
        level = self._children.get(parent)
        if level is None:
            return
        if slash and not partial:
            yield escape_name(parent) + "/.*", ".*", "everything below %s" % parent
        base = parent + slash
        for segment in level.with_prefix(partial, limit):
            yield escape_name(base + segment), segment, level.meta[segment]


def _node_meta(op: Optional[str], below: Optional[int]) -> str:
    if below and op:
        return "%s, scope of %s" % (op, _plural(below, "node"))
    if below:
        return "scope of %s" % _plural(below, "node")
    return op or "node"


def _plural(n: int, word: str) -> str:
    return "%d %s%s" % (n, word, "" if n == 1 else "s")
