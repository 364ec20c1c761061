"""The code traces of PyTorch traces (``with_stack=True``): each op's Python frames,
looked up only when a view first asks for one.

:mod:`.torch_trace` sorts each trace's Python frames and its scopes and ops per
thread (the tuples below) and hands them here with the nodes' executions.
"""

from __future__ import annotations

from typing import Any, Optional

from ..model import Frame

#: A scope or op of a thread, to be sorted: (start, -duration, input order, label,
#: the op's type (None for a scope), tag): an op's tag is its External id, a
#: ``user_annotation``'s its External id too, an ``nn.Module`` scope's MODULE_SCOPE.
Scoped = tuple[float, float, int, str, Optional[str], Any]
#: The tag of an ``nn.Module`` scope (a Python frame, not a profiler range: it owns no
#: device work).
MODULE_SCOPE = object()
#: A Python frame of a thread: (start, end, frame).
Framed = tuple[float, float, Frame]


class TorchTraces:
    """The code traces of a model's PyTorch traces, looked up when first asked for.

    A node's trace is the stack of Python frames open around the first of its
    executions (in start order, then node name) with a step whose start and op
    type match a cpu op with frames around it, file by file; a node that is a
    ``record_function`` range owning device work (no cpu op), the frames open around
    its first range.
    """

    def __init__(self) -> None:
        #: per file: per thread with frames, its frames and its scopes and ops;
        #: each node's executions with a step, sorted by start (row[0] the start,
        #: row[4] the op type); and the ranges' nodes: (start, label) of the first
        self.files: list[tuple[dict[Any, tuple[list[Framed], list[Scoped]]],
                               dict[str, list[tuple[Any, ...]]],
                               dict[str, tuple[float, str]]]] = []
        self.found: Optional[dict[str, list[Frame]]] = None

    def add(self, framed: dict[Any, list[Framed]], scoped: dict[Any, list[Scoped]],
            execs: dict[str, list[tuple[Any, ...]]],
            ranges: Optional[dict[str, tuple[float, str]]] = None) -> None:
        """One file's Python frames and scoped events per thread, its executions, and
        the (start, label) of each range node's first range."""
        if framed:
            threads = {key: (frames, scoped.get(key, [])) for key, frames in framed.items()}
            self.files.append((threads, execs, ranges or {}))

    @property
    def any(self) -> bool:
        """Whether any file has Python frames at all (else no node has a trace)."""
        return bool(self.files)

    def resolve(self) -> bool:
        """Look every trace up (once); whether any node has one."""
        if self.found is None:
            found: dict[str, list[Frame]] = {}
            for threads, execs, ranges in self.files:
                traces = _traces(threads)
                for name, rows in execs.items():
                    if name in found:
                        continue
                    first = ranges.get(name)
                    if first is not None:
                        trace = traces.get(first)
                        if trace:
                            found[name] = trace
                        continue
                    for row in rows:
                        trace = traces.get((row[0], row[4]))
                        if trace:
                            found[name] = trace
                            break
            self.files = []
            self.found = found
        return bool(self.found)

    def trace_of(self, name: str) -> Optional[list[Frame]]:
        """The trace of node ``name`` (looking all traces up on the first call)."""
        self.resolve()
        return self.found.get(name) if self.found else None


def _traces(threads: dict[Any, tuple[list[Framed], list[Scoped]]]
            ) -> dict[tuple[float, str], list[Frame]]:
    """(start, op type) of each cpu op, (start, label) of each ``record_function``
    range -> the Python frames open around it on its thread, outermost first."""
    traces: dict[tuple[float, str], list[Frame]] = {}
    for frames, scoped in threads.values():
        # (start, kind, end, frame or op type), kind 0 a frame, 1 an op or range;
        # frames in input order, ops in start order (ties in input order)
        items = [(start, 0, end, frame) for start, end, frame in frames]
        items.extend((start, 1, start - neg_dur, label if op is None else op)
                     for start, neg_dur, _, label, op, tag in scoped
                     if op is not None or tag is not MODULE_SCOPE)
        items.sort(key=lambda it: (it[0], it[1], -it[2]))
        ends: list[float] = []  # the open frames: their ends, and the frames
        open_frames: list[Frame] = []
        for start, kind, end, what in items:
            while ends and ends[-1] <= start:
                ends.pop()
                open_frames.pop()
            if kind == 0:
                ends.append(end)
                open_frames.append(what)
            elif ends:
                traces[(start, what)] = open_frames[:]
    return traces


def traces_wanted(traces: TorchTraces) -> list[str]:
    """The nodes that may get a trace: every node with an execution in a file with frames."""
    return list(dict.fromkeys(name for _, execs, _ in traces.files for name in execs))


class TraceOf:
    """A node's deferred trace (a small callable, cheaper than a closure per node)."""

    __slots__ = ("traces", "name")

    def __init__(self, traces: TorchTraces, name: str) -> None:
        self.traces, self.name = traces, name

    def __call__(self) -> Optional[list[Frame]]:
        return self.traces.trace_of(self.name)
