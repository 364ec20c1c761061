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


def build_window(tl: Timeline, lo: int, hi: int, host_gaps: bool = False,
                 parents: bool = False) -> Built:
    """The graph of the window [lo, hi] ns (events starting in it, HTA's clipping);
    with ``parents``, each host event's enclosing event too (for -whatif)."""
    g = PathGraph()
    out = Built(g)
    ev = tl.events
    start_of, end_of, parent_of = out.start_of, out.end_of, out.parent
    add_time, add_event = g.time.append, g.event.append
    add_w, add_info = g.chain_w.append, g.chain_info.append
    runtimes: list[int] = []
    nid = 0
    cpu_op, data_op = CPU << 3 | OPERATOR, DATA_LOADING << 3 | OPERATOR
    for starts, ends, order, flags in tl.threads:
        k0, k1 = bisect_left(starts, lo), bisect_right(starts, hi)
        if k0 == k1:
            continue
        # the call stack, walked in start order: (end, event, flags); the nodes are
        # added in the walk's order, each joined to the one before (the last added,
        # at prev_time: an event's start, or its end with prev_end)
        stack: list[tuple[int, int, int]] = []
        top = 1 << 62  # the end of the innermost open event
        depth = data_depth = 0
        last_parent = prev_event = -1
        prev_time = -1
        prev_end = False
        bound = cpu_op
        for k in range(k0, k1 + 1):
            start = starts[k] if k < k1 else (1 << 62) - 1  # the end: close everything
            while top <= start:
                end, j, f = stack.pop()
                top = stack[-1][0] if stack else 1 << 62
                if not f:
                    continue
                depth -= 1
                # a leaf's own time, or a parent's after its last child: the event's
                add_time(end)
                add_event(~j)
                add_w(0 if f & BLOCKING or end < prev_time else end - prev_time)
                add_info((j + 1) << 6 | bound)
                if f & IS_RUNTIME:
                    end_of[j] = nid
                prev_time = end
                prev_end = True
                prev_event = j
                nid += 1
                if f & IS_DATA:
                    data_depth -= 1
                    if not data_depth:
                        bound = cpu_op
                if depth:
                    last_parent = stack[-1][1]
            if k == k1:
                break
            i = order[k]
            f = flags[k]
            end = ends[k]
            up = stack[-1][1] if stack else -1
            if parents and up >= 0:
                parent_of[i] = up
            if f:
                if prev_time < 0:
                    add_w(-1)
                    add_info(0)
                elif not depth:  # the next top-level op
                    if host_gaps:
                        add_w(start - prev_time if start > prev_time else 0)
                        add_info(_GAP)
                    else:
                        add_w(0)
                        add_info(_DEP)
                else:
                    add_w(start - prev_time if start > prev_time else 0)
                    # from the parent's start: the parent's; from a sibling's end: the scope's
                    add_info(((last_parent if prev_end else prev_event) + 1) << 6 | bound)
                add_time(start)
                add_event(i)
                if f & IS_RUNTIME:
                    start_of[i] = nid
                    runtimes.append(i)
                nid += 1
                if k + 1 == k1 or starts[k + 1] >= end:
                    # a leaf: its end follows at once (as if pushed and popped)
                    add_time(end)
                    add_event(~i)
                    add_w(0 if f & BLOCKING or end < start else end - start)
                    add_info((i + 1) << 6 | (data_op if f & IS_DATA else bound))
                    if f & IS_RUNTIME:
                        end_of[i] = nid
                    nid += 1
                    prev_time = end
                    prev_end = True
                    prev_event = i
                    if depth:
                        last_parent = up
                    continue
                prev_time = start
                prev_end = False
                prev_event = i
                depth += 1
                if f & IS_DATA:
                    data_depth += 1
                    bound = data_op
                last_parent = up
            stack.append((end, i, f))
            top = end
    _lock_edges(g, ev, runtimes, end_of)
    _device_edges(tl, out, runtimes)
    return out


def _lock_edges(g: PathGraph, ev: list, runtimes: list[int], end_of: dict[int, int]) -> None:
    """Zero-weight edges between runtime calls of different threads that overlap: the
    later one ends after the earlier one released the runtime's lock."""
    active: list[int] = []
    for i in sorted(runtimes, key=lambda r: (ev[r][0], r)):
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
    items: list[tuple[int, int, int]] = []
    for r in runtimes:
        for d in tl.launched.get(r, ()):
            items.append((ev[d][0], 0, d))
        for s in tl.syncs.get(r, ()):
            items.append((ev[s][1], 1, s))
    items.sort()
    time, edge, node = g.time, g.edge, g.node
    approximate = tl.input.definition != HTA
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
        s = start_of[i] = node(i, e[0], False)
        end_of[i] = node(i, e[1], True, max(e[1] - e[0], 0),
                         pack(OPERATOR, GPU_COMMUNICATION if _COMM.match(e[3]) else GPU_COMPUTE,
                              i))
        waited = kernel_sync.pop(i, None)
        waited_end = end_of.get(waited, -1) if waited is not None else -1
        if waited_end >= 0:
            if tl.stream(waited) == key:
                out.notes.append("a sync between two kernels of one stream was left out")
                waited_end = -1
            else:
                edge(waited_end, s, 0, _SYNC)
        call = tl.launch_of[i]
        call_start = ev[call][0]
        prev = last_node.get(key, -1)
        if (i in tl.launch_ok and (prev < 0 or time[prev] < call_start)
                and (waited_end < 0 or time[waited_end] < call_start)):
            edge(start_of[call], s, e[0] - call_start, _LAUNCH)
        elif (prev >= 0 and (waited_end < 0 or time[waited_end] < time[prev])
              and e[0] - time[prev] < KERNEL_GAP_LIMIT):
            edge(prev, s, e[0] - time[prev],
                 pack(KERNEL_KERNEL, KERNEL_KERNEL_OVERHEAD, ~g.event[prev]))
        last_node[key] = end_of[i]
