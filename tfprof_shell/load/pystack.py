"""Python-tracer stacks and host executions of one XSpace thread line.

An op gets the Python stack that was open when it ran: the ``$file.py:line
function`` frames of its own thread, or of the thread whose executor event
(``id`` stat) started it. :class:`StackStream` answers those look-ups while
the line is read, so frames need not be kept; :func:`stacks` answers any
look-up from kept frames (lines not written in start order, or times of
other lines).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from ..model import Frame


@dataclass
class Line:
    """What one host thread recorded, in absolute picoseconds."""

    ops: list[list[Any]] = field(default_factory=list)  # [start, end, name, type, self_ps]
    #: Python-tracer frames, as parallel arrays (there can be millions); kept only
    #: for lines whose stacks could not be taken while reading (see StackStream).
    f_start: "array[int]" = field(default_factory=lambda: array("q"))
    f_end: "array[int]" = field(default_factory=lambda: array("q"))
    f_frame: list[Frame] = field(default_factory=list)
    f_sorted: bool = True
    #: How many Python frames the line holds.
    n_frames: int = 0
    eagers: list[tuple[int, int, str]] = field(default_factory=list)
    kernels: list[tuple[int, int]] = field(default_factory=list)
    ids: list[tuple[int, int, int]] = field(default_factory=list)
    #: (start, duration, op type) of the eager ops that count (see eager_execs).
    runs: list[tuple[int, int, str]] = field(default_factory=list)
    #: Stacks taken while reading: start time -> open frames (outermost first).
    snapshots: Optional[dict[int, tuple[Frame, ...]]] = None
    #: Execution start -> its Python stack (set by attach_traces).
    traces: dict[int, Optional[list[Frame]]] = field(default_factory=dict)


class StackStream:
    """The open frames of one thread, followed while its events are read in start order.

    The reader pushes frames onto ``ends`` / ``frames`` itself (popping those
    that ended by the new frame's start, counting pushes; both start with a
    sentinel entry that never ends) and appends the times
    whose stack is wanted to ``pending``; :meth:`resolve` takes those stacks
    once every frame starting by then has been pushed, i.e. before the first
    later frame (and :meth:`close` at the end). This is the stack discipline of
    :func:`_sweep`, so both give the same answers.
    """

    __slots__ = ("ends", "frames", "pending", "out", "_snap", "_pushes")

    def __init__(self) -> None:
        # a bottom entry that never ends, so popping needs no emptiness test
        self.ends: list[int] = [1 << 62]
        self.frames: list[Any] = [None]
        self.pending: list[int] = []
        self.out: dict[int, tuple[Frame, ...]] = {}
        self._snap: tuple[Frame, ...] = ()
        self._pushes = 0

    def resolve(self, before: Optional[int], pushes: int) -> None:
        """Take the stacks of the pending times before ``before`` (all if None);
        ``pushes`` is how many frames were pushed so far."""
        ends, frames, out, pending = self.ends, self.frames, self.out, self.pending
        snap = self._snap if pushes == self._pushes else None
        keep = []
        for t in pending:
            if before is not None and t >= before:
                keep.append(t)
                continue
            while ends[-1] <= t:
                ends.pop()
                frames.pop()
                snap = None
            if snap is None:
                snap = tuple(frames[1:])
            out[t] = snap
        if snap is not None:
            self._snap, self._pushes = snap, pushes
        else:
            self._pushes = -1
        pending[:] = keep

    def close(self, in_order: bool, pushes: int) -> Optional[dict[int, tuple[Frame, ...]]]:
        """The stacks asked for; None if the line was not read in start order."""
        if not in_order:
            return None
        if not pushes:  # no frames: nothing will be asked of this line
            return {}
        self.resolve(None, pushes)
        return self.out


_BLOCK = 1024


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


def attach_traces(lines: list[Line], exec_starts: list[list[int]],
                  reread: Any) -> None:
    """Fill each line's ``traces``: for each start in ``exec_starts[i]`` (the
    executions of line i), the Python stack that was running it.

    Stacks come from the snapshots taken while reading; a line whose snapshots
    lack a wanted time is read again, keeping its frames, by ``reread(i)``.
    """
    py_lines = [i for i, line in enumerate(lines) if line.n_frames]
    if not py_lines:
        return
    anchors: dict[int, tuple[int, int]] = {}
    for i in py_lines:
        for start, _, ident in lines[i].ids:
            anchors.setdefault(ident, (i, start))
    wanted: dict[int, list[tuple[int, int, int]]] = {i: [] for i in py_lines}
    for i, starts in enumerate(exec_starts):
        line = lines[i]
        if line.n_frames:
            wanted[i].extend((i, s, s) for s in starts)
            continue
        ids = sorted(line.ids)
        id_starts = [x[0] for x in ids]
        for s in starts:
            found = _containing_id(ids, id_starts, s)
            anchor = anchors.get(found) if found is not None else None
            if anchor is not None:
                wanted[anchor[0]].append((i, s, anchor[1]))
            elif len(py_lines) == 1:
                wanted[py_lines[0]].append((i, s, s))
    for j, triples in wanted.items():
        times = {t for _, _, t in triples}
        snaps = lines[j].snapshots
        if snaps is not None and all(t in snaps for t in times):
            found_at: dict[int, Optional[list[Frame]]] = {
                t: list(snaps[t]) or None for t in times}
        else:
            reread(j)
            found_at = {t: f or None for t, f in stacks(lines[j], times).items()}
            line = lines[j]
            line.f_start, line.f_end, line.f_frame = array("q"), array("q"), []
        for i, s, t in triples:
            lines[i].traces[s] = found_at[t]
    for line in lines:
        line.snapshots = None
