"""Python-tracer stacks and host executions of one XSpace thread line.

An op gets the Python stack that was open when it ran: the ``$file.py:line
function`` frames of its own thread, or of the thread whose executor event
(``id`` stat) started it. Loading does not read the frames (there can be
millions); :func:`attach_traces` asks for the stacks that pick each node's
trace when a view first asks for one, and :func:`nested_stacks` (a large line,
read by random access) or :func:`stacks` (frames kept as arrays) answers.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import islice
from operator import gt
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

from ..model import Frame

_PY_FRAME = re.compile(r"\$(.+?):(\d+) (.*)")


def parse_py_frame(text: str) -> Optional[Frame]:
    """The Frame of a Python-tracer event ``$file.py:12 func``; None for C calls."""
    m = _PY_FRAME.fullmatch(text)
    if m is None:
        return None
    line = int(m.group(2))
    return Frame(m.group(1), line, m.group(3), line)


@dataclass
class Line:
    """What one host thread recorded, in absolute picoseconds."""

    ops: list[list[Any]] = field(default_factory=list)  # [start, end, name, type, self_ps]
    #: Python-tracer frames, as parallel arrays (there can be millions); filled
    #: only while stacks are being looked up (see attach_traces).
    f_start: "array[int]" = field(default_factory=lambda: array("q"))
    f_end: "array[int]" = field(default_factory=lambda: array("q"))
    f_frame: list[Frame] = field(default_factory=list)
    f_sorted: bool = True
    #: Whether the line holds Python frames.
    has_frames: bool = False
    #: Where the line is in its XSpace: (plane index, line index).
    where: tuple[int, int] = (0, 0)
    eagers: list[tuple[int, int, str]] = field(default_factory=list)
    kernels: list[tuple[int, int]] = field(default_factory=list)
    ids: list[tuple[int, int, int]] = field(default_factory=list)
    #: (start, duration, op type) of the eager ops that count (see eager_execs).
    runs: list[tuple[int, int, str]] = field(default_factory=list)
    #: The line's executions, once the model is built: their starts and node names.
    exec_starts: "array[int]" = field(default_factory=lambda: array("q"))
    exec_names: list[str] = field(default_factory=list)
    #: Execution start -> its Python stack (set by attach_traces).
    traces: dict[int, Optional[list[Frame]]] = field(default_factory=dict)


_BLOCK = 1024
_AFTER_ALL = 1 << 62  # later than any time in picoseconds


def stacks(line: Line, times: set[int]) -> dict[int, list[Frame]]:
    """The Python frames open at each of ``times`` on one thread (outermost first).

    Frames are sorted by start; a frame is open at t if it started by t and ends
    after it. Few look-ups scan backwards, skipping blocks of frames that all
    ended by t; many look-ups sweep the thread once.
    """
    starts, ends, frames = line.f_start, line.f_end, line.f_frame
    n = len(starts)
    if not line.f_sorted:
        order = sorted(range(n), key=lambda i: (starts[i], -ends[i]))
        starts = array("q", (starts[i] for i in order))
        ends = array("q", (ends[i] for i in order))
        frames = [frames[i] for i in order]
    if len(times) * (n // _BLOCK + 8 * _BLOCK) >= n:
        return _sweep(starts, ends, frames, times)
    block_max = [max(ends[k:k + _BLOCK]) for k in range(0, n, _BLOCK)]
    out: dict[int, list[Frame]] = {}
    for t in times:
        found = []
        i = bisect_right(starts, t) - 1
        while i >= 0:
            if block_max[i // _BLOCK] <= t:
                i = (i // _BLOCK) * _BLOCK - 1
                continue
            if ends[i] > t:
                found.append(frames[i])
            i -= 1
        found.reverse()
        out[t] = found
    return out


#: Leaves stepped over one by one before :func:`nested_stacks` asks ``leaves``.
_LEAF_RUN = 16

#: ``leaves(k, t)``: the first index from k that is not a leaf closed by t (see
#: :func:`nested_stacks`), and the start of the event before it (None if it is k).
Leaves = Callable[[int, int], tuple[int, Optional[int]]]


def nested_stacks(count: int, start: Callable[[int], int], end: Callable[[int], int],
                  frame: Callable[[int], Optional[Frame]],
                  times: Iterable[int],
                  leaves: Optional[Leaves] = None) -> Optional[dict[int, list[Frame]]]:
    """:func:`stacks` for a line read by random access, touching few of its events.

    The line's ``count`` events (Python frames and others; ``frame(k)`` is None
    for the others) must be in start order and nest, as the profiler writes a
    thread: then the frames open at t are the frames on the path of events that
    contain t, found by descending from the outermost event and stepping over
    every event that ended by t without reading the events inside it. Queries
    are answered in time order, each resuming where the previous one stopped.
    None if the events read (and a sample of the line's starts) break the start
    order or the nesting; events not read are not checked.

    A run of leaves (events ending by the next one's start: most Python calls)
    is stepped over one event at a time. After a few, ``leaves(k, t)`` is asked
    for the first event from k that is not a leaf closed by t: an event with a
    negative duration, or that ends after t or after the next event's start.
    The caller can answer it for many events at once.
    """
    if count:  # a line in another order is found out at once, not by a first wrong stack
        samples = [start(k) for k in range(0, count, max(1, count // 256))]
        samples.append(start(count - 1))
        if samples != sorted(samples):
            return None
    out: dict[int, list[Frame]] = {}
    ends: list[int] = []  # the events containing the last query, outermost first
    frames: list[Optional[Frame]] = []
    snap: Optional[list[Frame]] = None
    k = 0  # the first event not read or stepped over
    floor = -_AFTER_ALL  # the start of the event before k, if read
    run = 0  # leaves stepped over just before k
    try:
        for t in sorted(times):
            if ends and ends[-1] <= t:
                closed = ends[-1]
                while ends and ends[-1] <= t:
                    closed = ends.pop()
                    frames.pop()
                # the events before the first one starting at `closed` were inside it
                k, floor = _first_from(start, k, count, closed, floor)
                snap = None
            while k < count:
                s = start(k)
                if s < floor:
                    return None
                if s > t:
                    break
                floor = s
                e = end(k)
                if e <= t:
                    after, floor = _first_from(start, k + 1, count, e, floor)
                    if after != k + 1:
                        run = 0
                    elif leaves is not None:
                        run += 1
                        if run >= _LEAF_RUN:
                            run = 0
                            after, before = leaves(after, t)
                            if before is not None:
                                floor = before
                    k = after
                    continue
                if ends and e > ends[-1]:
                    return None
                ends.append(e)
                frames.append(frame(k))
                snap = None
                k += 1
            if snap is None:
                snap = [f for f in frames if f is not None]
            out[t] = list(snap)
    except _OutOfOrder:
        return None
    return out


class _OutOfOrder(Exception):
    """The starts :func:`_first_from` read are not in order."""


def _first_from(start: Callable[[int], int], lo: int, count: int, value: int,
                floor: int) -> tuple[int, int]:
    """The first index from ``lo`` whose start is at least ``value``, and the start
    of the index before it if read (else ``floor``, a start read before ``lo``).
    Raises _OutOfOrder if the starts it reads are not in order."""
    step = 1
    hi = lo
    high = _AFTER_ALL
    while hi < count:  # gallop: the answer is usually near
        s = start(hi)
        if s < floor:
            raise _OutOfOrder
        if s >= value:
            high = s
            break
        floor = s
        lo = hi + 1
        hi = lo + step
        step *= 2
    hi = min(hi, count)
    while lo < hi:
        mid = (lo + hi) // 2
        s = start(mid)
        if not floor <= s <= high:
            raise _OutOfOrder
        if s < value:
            lo, floor = mid + 1, s
        else:
            hi, high = mid, s
    return lo, floor


def _sweep(starts: Sequence[int], ends: Sequence[int], frames: Sequence[Frame],
           times: set[int]) -> dict[int, list[Frame]]:
    out: dict[int, list[Frame]] = {}
    stack: list[int] = []
    j, n = 0, len(starts)
    for t in sorted(times):
        while j < n and starts[j] <= t:
            while stack and ends[stack[-1]] <= starts[j]:
                stack.pop()
            stack.append(j)
            j += 1
        while stack and ends[stack[-1]] <= t:
            stack.pop()
        out[t] = [frames[k] for k in stack]
    return out


def subtract_nested(ops: list[list[Any]]) -> None:
    """Each op's self time: its duration minus the TF ops directly inside it."""
    ops.sort(key=lambda o: (o[0], -o[1]))
    stack: list[list[Any]] = []
    for op in ops:
        while stack and stack[-1][1] <= op[0]:
            stack.pop()
        if stack and op[1] <= stack[-1][1]:
            stack[-1][4] -= op[1] - op[0]
        stack.append(op)


def eager_execs(line: Line) -> list[tuple[int, int, str]]:
    """(start, duration, op type) of the eager ops that ran no TF-op events inside.

    ``line.ops`` must be sorted by start (:func:`subtract_nested` does it).
    """
    kernels = sorted(line.kernels)
    k_starts = [k[0] for k in kernels]
    op_starts = [o[0] for o in line.ops]
    out = []
    for start, end, op in line.eagers:
        i = bisect_right(op_starts, start)
        if i < len(op_starts) and op_starts[i] < end:
            continue
        j = bisect_right(k_starts, start - 1)
        if j < len(kernels) and kernels[j][1] <= end:
            out.append((kernels[j][0], kernels[j][1] - kernels[j][0], op))
        else:
            out.append((start, end - start, op))
    return out


def _containing_id(ids: list[tuple[int, int, int]], starts: list[int], t: int) -> Optional[int]:
    i = bisect_right(starts, t) - 1
    for k in range(i, max(i - 8, -1), -1):  # executor events barely nest
        if ids[k][1] > t:
            return ids[k][2]
    return None


def attach_traces(lines: list[Line], exec_starts: list[list[int]], stacks_of: Any,
                  wanted: Optional[Callable[[int], bool]] = None) -> None:
    """Fill each line's ``traces``: for each start in ``exec_starts[i]`` (the
    executions of line i), the Python stack that was running it.

    ``stacks_of(j, times)`` gives the frames open on line j at each of ``times``
    (as :func:`stacks` does). Without ``wanted`` it is called once per line that
    holds stacks wanted. With it, only what picks each node's trace is looked up:
    for each node (``lines[i].exec_names``), its earliest start that is
    ``wanted`` and has a stack, after those before it that have none.
    """
    py_lines = [i for i, line in enumerate(lines) if line.has_frames]
    if not py_lines:
        return
    anchors: dict[int, tuple[int, int]] = {}
    for i in py_lines:
        for start, _, ident in lines[i].ids:
            anchors.setdefault(ident, (i, start))
    targets = [_targets(lines, i, anchors, py_lines) for i in range(len(lines))]
    if wanted is None:
        asked = [(i, s) for i, starts in enumerate(exec_starts) for s in starts]
        _look_up(lines, targets, asked, stacks_of)
        return
    # each node's starts per line, in time order, as far as they are looked at
    ordered: list[tuple[list[int], list[str]]] = []
    groups: dict[int, dict[str, list[int]]] = {}
    nodes: list[Iterator[tuple[int, int]]] = []
    for i, starts in enumerate(exec_starts):
        names = lines[i].exec_names
        if any(map(gt, starts, islice(starts, 1, None))):
            order = sorted(range(len(starts)), key=starts.__getitem__)
            starts = [starts[k] for k in order]
            names = [names[k] for k in order]
        ordered.append((starts, names))
        # read backwards, each node's earliest start is the one left
        firsts = dict(zip(reversed(names), reversed(starts)))
        nodes.extend(_node_starts(i, name, first, ordered, groups) for name, first in firsts.items())
    while nodes:
        asked, waiting = [], []
        for node in nodes:
            pick = next((x for x in node if wanted(x[1])), None)
            if pick is not None:
                asked.append(pick)
                waiting.append(node)
        _look_up(lines, targets, asked, stacks_of)
        nodes = [node for node, (i, s) in zip(waiting, asked) if lines[i].traces.get(s) is None]


def _node_starts(i: int, name: str, first: int, ordered: list[tuple[list[int], list[str]]],
                 groups: dict[int, dict[str, list[int]]]) -> Iterator[tuple[int, int]]:
    """(i, start) for a node's starts on line i in time order: ``first``, then the
    others, grouped by node (once per line) only when a node needs them."""
    yield i, first
    by_name = groups.get(i)
    if by_name is None:
        by_name = groups[i] = {}
        for s, n in zip(*ordered[i]):
            by_name.setdefault(n, []).append(s)
    for s in by_name[name][1:]:
        yield i, s


def _targets(lines: list[Line], i: int, anchors: dict[int, tuple[int, int]],
             py_lines: list[int]) -> Callable[[int], Optional[tuple[int, int]]]:
    """For an execution start on line i: (Python line, time) whose stack it takes."""
    line = lines[i]
    if line.has_frames:
        return lambda s: (i, s)
    ids = sorted(line.ids)
    id_starts = [x[0] for x in ids]
    only = py_lines[0] if len(py_lines) == 1 else None

    def target(s: int) -> Optional[tuple[int, int]]:
        found = _containing_id(ids, id_starts, s)
        anchor = anchors.get(found) if found is not None else None
        if anchor is not None:
            return anchor
        return (only, s) if only is not None else None
    return target


def _look_up(lines: list[Line], targets: list[Callable[[int], Optional[tuple[int, int]]]],
             asked: list[tuple[int, int]], stacks_of: Any) -> None:
    """Set ``lines[i].traces[s]`` for each asked (i, s) that has a Python line to ask."""
    by_line: dict[int, list[tuple[int, int, int]]] = {}
    for i, s in asked:
        where = targets[i](s)
        if where is not None:
            by_line.setdefault(where[0], []).append((i, s, where[1]))
    for j, triples in sorted(by_line.items()):
        found_at = {t: f or None for t, f in stacks_of(j, {t for _, _, t in triples}).items()}
        for i, s, t in triples:
            lines[i].traces[s] = found_at[t]
