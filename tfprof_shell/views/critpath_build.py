"""HTA's critical-path graph of one window of a timeline (hta/analyzers/critical_path_analysis.py).

Nodes are the start and end of each host op, runtime call and data-loading
span that starts in the window, and of each device event launched by one of
those calls. Edges:

* the call stack of each thread: parent start -> first child start, a child's
  end -> the next child's start, the last child's end -> the parent's end, a
  leaf's start -> its end, each weighing the time between; the exit of a
  blocking call (a sync, a copy) weighs nothing, since the device path carries
  the wait; consecutive top-level ops of a thread are joined by a zero-weight
  dependency (``host_gaps``: the gap's real weight), and so are runtime calls
  of different threads that overlap (the CUDA runtime's lock);
* a kernel launch delay (launch start -> kernel start) when the stream had
  nothing queued at the launch and the kernel was the only one queued until it
  started, and the previous kernel of the stream had ended before the launch;
  otherwise a kernel-kernel delay from the previous kernel of the stream, when
  the gap is under 1.5 ms;
* zero-weight sync edges from Kineto's ``cuda_sync`` records: Context Sync
  joins the last kernel of every stream to the sync call's end, Stream Sync
  that stream's last kernel, Event Sync the kernel launched (on the recorded
  stream, by any thread) before the matching ``cudaEventRecord``, and Stream
  Wait Event makes the next kernel launched on the waiting stream (by the
  waiting thread) depend on that kernel.

Times are the trace's own, in ns (HTA rounds each event inward to whole µs).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from itertools import chain
from typing import Any

from ..model.path_input import HTA
from .critpath_graph import (CPU, DATA_LOADING, DEPENDENCY, GPU_COMMUNICATION, GPU_COMPUTE,
                             KERNEL_KERNEL, KERNEL_KERNEL_OVERHEAD, LAUNCH, LAUNCH_OVERHEAD,
                             NONE, OPERATOR, SYNC as SYNC_EDGE, PathGraph, pack)
from .critpath_timeline import BLOCKING, IS_DATA, IS_RUNTIME, Timeline

#: A kernel-kernel delay only joins kernels closer than this (ns).
KERNEL_GAP_LIMIT = 1_500_000
_COMM = re.compile(r"nccl.*Kernel")


class Built:
    """A window's graph and what reading its path needs: the start and end node of
    each runtime call and device event, the enclosing event of each host event (for
    -whatif), and notes."""

    def __init__(self, graph: PathGraph) -> None:
        self.graph = graph
        self.start_of: dict[int, int] = {}
        self.end_of: dict[int, int] = {}
        self.parent: dict[int, int] = {}
        self.notes: list[str] = []


_DEP = pack(DEPENDENCY, NONE, -1)
_GAP = pack(DEPENDENCY, CPU, -1)
_SYNC = pack(SYNC_EDGE, NONE, -1)
_LAUNCH = pack(LAUNCH, LAUNCH_OVERHEAD, -1)
_KK = pack(KERNEL_KERNEL, KERNEL_KERNEL_OVERHEAD, -1) & 63


def build_window(tl: Timeline, lo: int, hi: int, host_gaps: bool = False,
                 parents: bool = False) -> Built:
    """The graph of the window [lo, hi] ns (events starting in it, HTA's clipping);
    with ``parents``, each host event's enclosing event too (for -whatif)."""
    g = PathGraph()
    out = Built(g)
    runtimes: list[int] = []
    # the walk lays each node out as four items (time, event, chain weight, chain info)
    # in one list, split into the graph's columns after
    flat: list[int] = []
    for thread in tl.threads:
        _walk(flat, out, thread, lo, hi, host_gaps, parents, runtimes)
    g.time, g.event, g.chain_w, g.chain_info = flat[0::4], flat[1::4], flat[2::4], flat[3::4]
    _lock_edges(g, tl.events, runtimes, out.end_of)
    _device_edges(tl, out, runtimes)
    return out


def _walk(flat: list[int], out: Built,
          thread: tuple[list[int], list[tuple[int, int, int, int]]], lo: int, hi: int,
          host_gaps: bool, parents: bool, runtimes: list[int]) -> None:
    """Add one thread's call stack in the window to ``flat`` (each node as its time,
    event, chain weight and chain info): its events walked in start order (the stack
    holds (end, event, flags)), each node joined by a chain edge to the node added
    before it (at ``prev_time``)."""
    starts, rows = thread
    k0, k1 = bisect_left(starts, lo), bisect_right(starts, hi)
    if k0 == k1:
        return
    add = flat.extend
    start_of, end_of, parent_of = out.start_of, out.end_of, out.parent
    add_runtime = runtimes.append
    stack: list[tuple[int, int, int]] = []
    push, pop = stack.append, stack.pop
    never = 1 << 62
    top = never  # the end of the innermost open event
    depth = data_depth = 0
    # the event a start's edge is attributed to inside a scope: after a start, that
    # event; after an end, the innermost open event (possibly an annotation)
    scope = -1
    prev_time = -1
    cpu_op, data_op = CPU << 3 | OPERATOR, DATA_LOADING << 3 | OPERATOR
    bound = cpu_op
    gap_info = _GAP if host_gaps else _DEP
    # each event with the next one's start (a leaf's test; the window's last event is
    # a leaf), then a sentinel that closes everything
    nexts = starts[k0 + 1:k1]
    nexts.append(never)
    for (start, negdur, i, f), nxt in chain(zip(rows[k0:k1], nexts),
                                            (((never - 1, 0, -1, -1), 0),)):
        end = start - negdur
        while top <= start:
            closed, j, fj = pop()
            top = stack[-1][0] if stack else never
            if not fj:
                continue
            depth -= 1
            # a parent's end, after its last child
            if fj & IS_RUNTIME:
                end_of[j] = len(flat) >> 2
            add((closed, ~j, 0 if fj & BLOCKING or closed < prev_time else closed - prev_time,
                 (j + 1) << 6 | bound))
            prev_time = closed
            if fj & IS_DATA:
                data_depth -= 1
                if not data_depth:
                    bound = cpu_op
            if depth:
                scope = stack[-1][1]
        if f < 0:
            break
        if parents and stack:
            parent_of[i] = stack[-1][1]
        if not f:  # an annotation: a scope, not a node
            push((end, i, 0))
            top = end
            continue
        if depth:
            w = start - prev_time if start > prev_time else 0
            info = (scope + 1) << 6 | bound
        elif prev_time < 0:
            w = info = -1
        else:  # the next top-level op
            w = start - prev_time if host_gaps and start > prev_time else 0
            info = gap_info
        if nxt >= end:
            # a leaf: its end follows at once (as if pushed and popped)
            if f != 1:
                if f & IS_RUNTIME:
                    start_of[i] = v = len(flat) >> 2
                    end_of[i] = v + 1
                    add_runtime(i)
                add((start, i, w, info if info >= 0 else 0,
                     end, ~i, 0 if f & BLOCKING else end - start,
                     (i + 1) << 6 | (data_op if f & IS_DATA else bound)))
            else:
                add((start, i, w, info if info >= 0 else 0,
                     end, ~i, end - start, (i + 1) << 6 | bound))
            prev_time = end
            if depth:
                scope = stack[-1][1]
            continue
        if f & IS_RUNTIME:
            start_of[i] = len(flat) >> 2
            add_runtime(i)
        add((start, i, w, info if info >= 0 else 0))
        prev_time = start
        scope = i
        depth += 1
        if f & IS_DATA:
            data_depth += 1
            bound = data_op
        push((end, i, f))
        top = end


def _lock_edges(g: PathGraph, ev: list, runtimes: list[int], end_of: dict[int, int]) -> None:
    """Zero-weight edges between runtime calls of different threads that overlap: the
    later one ends after the earlier one released the runtime's lock."""
    if not runtimes:
        return
    first = ev[runtimes[0]]
    thread = (first[5], first[6])
    if all((ev[r][5], ev[r][6]) == thread for r in runtimes):
        return  # one thread: its calls never overlap another's
    active: list[int] = []
    for _, i in sorted(zip([ev[r][0] for r in runtimes], runtimes)):
        e = ev[i]
        if active:
            active = [a for a in active if ev[a][1] > e[0]]
            for a in active:
                other = ev[a]
                if (other[5], other[6]) != (e[5], e[6]) and other[1] <= e[1]:
                    g.edge(end_of[a], end_of[i], 0, _DEP)
        active.append(i)


def _device_edges(tl: Timeline, out: Built, runtimes: list[int]) -> None:
    g, ev, start_of, end_of = out.graph, tl.events, out.start_of, out.end_of
    linked = tl.linked_items
    items: list[tuple[int, int, int]] = []
    for r in runtimes:
        got = linked.get(r)
        if got is not None:
            items += got
    if not items:
        return
    items.sort()
    time, events = g.time, g.event
    two_times, two_events, two_ws, two_infos = (time.extend, events.extend, g.chain_w.extend,
                                                g.chain_info.extend)
    edge = g.edge
    approximate = tl.input.definition != HTA
    end_bound = tl.end_bound
    launch_of, launch_ok = tl.launch_of, tl.launch_ok
    last_node: dict[tuple[Any, Any], int] = {}
    kernel_sync: dict[int, int] = {}
    for _, is_sync, i in items:
        e = ev[i]
        if is_sync:
            call = end_of.get(tl.call_of_sync[i])
            name = e[3]
            if name in ("Stream Wait Event", "Event Sync"):
                src = tl.record_src.get(e[12][1]) if e[12] else None
                if src is None:
                    continue
                if name == "Stream Wait Event":
                    dest = tl.wait_dest.get(i)
                    if dest is not None:
                        kernel_sync[dest] = src
                elif src in end_of and call is not None:
                    edge(end_of[src], call, 0, _SYNC)
            elif call is not None:
                if name == "Context Sync":
                    ends = list(last_node.values())
                else:
                    end = last_node.get((e[5], e[10]))
                    ends = [end] if end is not None else []
                if approximate:  # only work that had ended when the call returned
                    ends = [x for x in ends if time[x] <= time[call]]
                for end in ends:
                    edge(end, call, 0, _SYNC)
            continue
        key = (e[5], e[10])
        start, stop = e[0], e[1]
        # the event's start node (a chain of its own) and its end node
        s = start_of[i] = len(time)
        end_of[i] = s + 1
        two_times((start, stop))
        two_events((i, ~i))
        two_ws((-1, stop - start if stop > start else 0))
        bound = end_bound.get(e[3])
        if bound is None:
            bound = end_bound[e[3]] = GPU_COMMUNICATION if _COMM.match(e[3]) else GPU_COMPUTE
        two_infos((0, (i + 1) << 6 | bound << 3 | OPERATOR))
        waited_end = -1
        if kernel_sync:
            waited = kernel_sync.pop(i, None)
            waited_end = end_of.get(waited, -1) if waited is not None else -1
            if waited_end >= 0:
                if tl.stream(waited) == key:
                    out.notes.append("a sync between two kernels of one stream was left out")
                    waited_end = -1
                else:
                    edge(waited_end, s, 0, _SYNC)
        call = launch_of[i]
        call_start = ev[call][0]
        prev = last_node.get(key, -1)
        if (i in launch_ok and (prev < 0 or time[prev] < call_start)
                and (waited_end < 0 or time[waited_end] < call_start)):
            edge(start_of[call], s, start - call_start, _LAUNCH)
        elif prev >= 0:
            prev_end = time[prev]
            if ((waited_end < 0 or time[waited_end] < prev_end)
                    and start - prev_end < KERNEL_GAP_LIMIT):
                edge(prev, s, start - prev_end, (~events[prev] + 1) << 6 | _KK)
        last_node[key] = s + 1
