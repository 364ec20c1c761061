"""A dependency graph of points in time and its longest path (the critical path).

Most edges of a critical-path graph run along a chain: a thread's call stack
walked in order, a kernel's start to its end. So nodes are numbered in chain
order and such an edge is implicit: node ``v`` may have an edge from ``v - 1``
(``chain_w[v] >= 0`` is its weight). The other edges (launches, kernel gaps,
syncs, dependencies between threads) are kept as columns. Each edge carries
``info``: its type, what bounds it and the event its time is attributed to,
packed in one int (:func:`pack`). :meth:`PathGraph.longest` is a topological
pass (Kahn's algorithm) that follows chains without queueing; a cycle raises
:class:`GraphCycle`.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from typing import Optional, Sequence

# Edge types, HTA's (CPEdgeType) without its "critical_path_" prefix.
OPERATOR = 0
DEPENDENCY = 1
LAUNCH = 2
KERNEL_KERNEL = 3
SYNC = 4
EDGE_TYPES = ("operator", "dependency", "kernel_launch_delay", "kernel_kernel_delay",
              "sync_dependency")

# What bounds an edge, HTA's bound_by names (NONE: a zero-weight dependency).
NONE = 0
CPU = 1
GPU_COMPUTE = 2
GPU_COMMUNICATION = 3
LAUNCH_OVERHEAD = 4
KERNEL_KERNEL_OVERHEAD = 5
DATA_LOADING = 6
BOUNDS = ("", "cpu_bound", "gpu_compute_bound", "gpu_communication_bound",
          "gpu_kernel_launch_overhead", "gpu_kernel_kernel_overhead", "data_loading")


def pack(etype: int, bound: int, attr: int) -> int:
    """One int for an edge's type, bound and attributed event (-1: none)."""
    return (attr + 1) << 6 | bound << 3 | etype


def unpack(info: int) -> tuple[int, int, int]:
    """(type, bound, attributed event) of a packed ``info``."""
    return info & 7, (info >> 3) & 7, (info >> 6) - 1


class GraphCycle(ValueError):
    """The graph has a cycle: it has no longest path."""


#: An edge of a path: (from node, to node, weight in ns, packed info).
Edge = tuple[int, int, int, int]


class PathGraph:
    """Nodes (time, event and whether its start or end) in chain order, and the
    other edges."""

    __slots__ = ("time", "event", "chain_w", "chain_info",
                 "xsrc", "xdst", "xw", "xinfo", "xout", "xin")

    def __init__(self) -> None:
        self.time: list[int] = []
        #: a start node's event, or ~event for an end node
        self.event: list[int] = []
        #: weight of the edge (v - 1) -> v, -1: none
        self.chain_w: list[int] = []
        self.chain_info: list[int] = []
        self.xsrc: list[int] = []
        self.xdst: list[int] = []
        self.xw: list[int] = []
        self.xinfo: list[int] = []
        self.xout: dict[int, list[int]] = {}
        self.xin: dict[int, int] = {}

    def event_of(self, node: int) -> tuple[int, bool]:
        """(the event of ``node``, whether it is the event's end)."""
        e = self.event[node]
        return (~e, True) if e < 0 else (e, False)

    @property
    def nodes(self) -> int:
        return len(self.time)

    @property
    def edges(self) -> int:
        return len(self.chain_w) - self.chain_w.count(-1) + len(self.xsrc)

    def node(self, event: int, time: int, is_end: bool, weight: int = -1, info: int = 0
             ) -> int:
        """Add a node; ``weight >= 0`` joins it to the node added before (its chain)."""
        v = len(self.time)
        self.time.append(time)
        self.event.append(~event if is_end else event)
        self.chain_w.append(weight)
        self.chain_info.append(info)
        return v

    def edge(self, u: int, v: int, weight: int, info: int) -> int:
        """Add u -> v off the chains (a negative weight counts as 0); its id."""
        e = len(self.xsrc)
        self.xsrc.append(u)
        self.xdst.append(v)
        self.xw.append(weight if weight > 0 else 0)
        self.xinfo.append(info)
        out = self.xout.get(u)
        if out is None:
            self.xout[u] = [e]
        else:
            out.append(e)
        self.xin[v] = self.xin.get(v, 0) + 1
        return e

    def chain_starts(self) -> list[int]:
        """The nodes without a chain edge into them."""
        chain, out, v = self.chain_w, [], -1
        try:
            while True:
                v = chain.index(-1, v + 1)
                out.append(v)
        except ValueError:
            return out

    def all_edges(self) -> list[Edge]:
        """Every edge: the chains' then the others."""
        out = [(v - 1, v, w, self.chain_info[v]) for v, w in enumerate(self.chain_w)
               if w >= 0]
        out += list(zip(self.xsrc, self.xdst, self.xw, self.xinfo))
        return out

    def longest(self, chain_w: Optional[Sequence[int]] = None,
                xw: Optional[Sequence[int]] = None) -> tuple[int, list[Edge]]:
        """(length, the path's edges in order) of the longest path, with other weights
        if given (-1 in ``chain_w`` still means no edge). Of equal predecessors a chain
        edge wins, then the earliest added edge; the path ends at the earliest node of
        the greatest distance and starts where no edge leads further back (through
        zero weights too)."""
        top, pieces = self._solve(chain_w, xw)
        cw = self.chain_w if chain_w is None else chain_w
        path: list[Edge] = []
        for lo, hi, e in pieces:
            if e < 0:
                path += zip(range(lo, hi), range(lo + 1, hi + 1), cw[lo + 1:hi + 1],
                            self.chain_info[lo + 1:hi + 1])
            else:
                path.append((self.xsrc[e], self.xdst[e], (self.xw if xw is None else xw)[e],
                             self.xinfo[e]))
        return top, path

    def longest_events(self, chain_w: Optional[Sequence[int]] = None,
                       xw: Optional[Sequence[int]] = None) -> tuple[int, list[Edge]]:
        """As :meth:`longest`, each edge's ends given as events (an event, or ~event
        for its end: see critpath_result.Packed) instead of nodes."""
        top, pieces = self._solve(chain_w, xw)
        cw = self.chain_w if chain_w is None else chain_w
        w = self.xw if xw is None else xw
        ev = self.event
        path: list[Edge] = []
        for lo, hi, e in pieces:
            if e < 0:
                path += zip(ev[lo:hi], ev[lo + 1:hi + 1], cw[lo + 1:hi + 1],
                            self.chain_info[lo + 1:hi + 1])
            else:
                path.append((ev[self.xsrc[e]], ev[self.xdst[e]], w[e], self.xinfo[e]))
        return top, path

    def _solve(self, chain_w: Optional[Sequence[int]], xw: Optional[Sequence[int]]
               ) -> tuple[int, list[tuple[int, int, int]]]:
        """(length, the path in order as pieces): ``(lo, hi, -1)`` the chain edges
        from node ``lo`` to node ``hi``, ``(u, v, e)`` the other edge ``e``."""
        n = len(self.time)
        if not n:
            return 0, []
        cw = self.chain_w if chain_w is None else chain_w
        w = self.xw if xw is None else xw
        xdst, xout, xin = self.xdst, self.xout, self.xin
        # "Special" nodes start a chain or have other edges; between two of them a
        # chain is a plain run, whose distances are running sums (computed in C);
        # the others wait for all their predecessors.
        chain = self.chain_w
        ready = [v for v in self.chain_starts() if v not in xin]
        wait = {v: k + (chain[v] >= 0) for v, k in xin.items()}
        specials = sorted(set(ready).union(xin, xout))
        special = bytearray(n)
        for v in specials:
            special[v] = 1
        dist = [0] * n
        best = [-1] * n  # -2: the chain edge, e >= 0: edge e; plain nodes keep -1
        pop, push = ready.pop, ready.append
        done = 0
        while ready:
            u = pop()
            while True:
                done += 1
                du = dist[u]
                out = xout.get(u)
                if out is not None:
                    for e in out:
                        v = xdst[e]
                        d = du + w[e]
                        b = best[v]
                        if b == -1 or d > dist[v] or (d == dist[v] and 0 <= e < b):
                            dist[v] = d
                            best[v] = e
                        k = wait[v] - 1
                        wait[v] = k
                        if not k:
                            push(v)
                v = u + 1
                if v < n and cw[v] >= 0:
                    if not special[v]:  # a plain run up to the next special node
                        r = specials[bisect_right(specials, v)] if specials[-1] > v else n
                        dist[u:r] = accumulate(cw[v:r], initial=du)
                        done += r - v
                        u = r - 1
                        du = dist[u]
                        v = r
                        if v >= n or cw[v] < 0:
                            break
                    d = du + cw[v]
                    if best[v] == -1 or d >= dist[v]:
                        dist[v] = d
                        best[v] = -2
                    k = wait.get(v, 1) - 1
                    if v in wait:
                        wait[v] = k
                    if not k:
                        u = v
                        continue
                break
        if done < n:
            raise GraphCycle("%d of %d nodes are on a cycle" % (n - done, n))
        top = max(dist)
        time = self.time
        end, v = -1, -1
        try:  # the earliest node of the greatest distance (HTA: the first in its order)
            while True:
                v = dist.index(top, v + 1)
                if end < 0 or time[v] < time[end]:
                    end = v
        except ValueError:
            pass
        # back from the end: a plain node's predecessor is the node before it, so a
        # run of them down to the special node below is one piece
        pieces: list[tuple[int, int, int]] = []
        xsrc = self.xsrc
        while True:
            e = best[end]
            if e >= 0:
                pieces.append((xsrc[e], end, e))
                end = xsrc[e]
            elif e == -2 or not special[end]:
                lo = end - 1
                if not special[lo]:
                    lo = specials[bisect_right(specials, lo) - 1]
                pieces.append((lo, end, -1))
                end = lo
            else:
                break
        pieces.reverse()
        return top, pieces
