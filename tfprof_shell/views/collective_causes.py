"""Why a straggler arrived late, and how the ranks' clocks relate.

The cause of a step's straggler is looked for before the instance where it
was charged the most own lateness. Each rank's window runs from its previous
collective call (its return, or the last arrival at that call's instance if
that came later: time spent waiting for the slowest is not work) to its
arrival. In that window the wall time of each top-level region (an
annotation such as ``load_batch``, or an op), clipped to the window, is added
up by name, and so is the time covered by no event at all (:data:`NO_EVENT`:
Python code without ops, a sleep, a blocking read). The region whose wall
time exceeds the median of the other ranks' by the most is the cause.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import accumulate
from statistics import median
from typing import Optional, Sequence

from ..model.collectives import CollectiveCall, RankCollectives
from .collective_result import Cause, Clock, Instance, StepVerdict

#: The name of the time in a window that no event covers.
NO_EVENT = "(no event)"


class CauseFinder:
    """Finds the causes of one alignment's stragglers (indexes built once, on use)."""

    def __init__(self, instances: Sequence[Instance], data: dict[str, RankCollectives],
                 shift: dict[str, float], colls: dict[str, list[CollectiveCall]]) -> None:
        self.instances = instances
        self.data = data
        self.shift = shift
        self.colls = colls
        self.by_call = {(n, c): i for i in instances for n, c in i.calls.items()}
        self.indexes: dict[str, _RegionIndex] = {}
        self.positions: dict[str, dict[int, int]] = {}

    def cause_of(self, verdict: StepVerdict) -> Optional[Cause]:
        """The cause of ``verdict``'s straggler being late (None: nothing in excess)."""
        who = verdict.straggler
        if who is None or verdict.charged < 0:
            return None
        inst = self.instances[verdict.charged]
        walls = {name: self._window_walls(name, call) for name, call in inst.calls.items()}
        own = walls.pop(who, {})
        best: Optional[Cause] = None
        for region, value in own.items():
            others = median([w.get(region, 0.0) for w in walls.values()]) if walls else 0.0
            excess = value - others
            if excess > 0 and (best is None or excess > best.excess):
                best = Cause(region, excess, value, others, inst.index)
        return best

    def _window_walls(self, name: str, call: CollectiveCall) -> dict[str, float]:
        """Wall time per top-level region name (and NO_EVENT) in the rank's window
        before ``call``; times on the rank's own clock."""
        calls, data = self.colls[name], self.data[name]
        positions = self.positions.get(name)
        if positions is None:
            positions = self.positions[name] = {id(c): i for i, c in enumerate(calls)}
        pos = positions[id(call)]
        end = call.start
        if pos > 0:
            prev = calls[pos - 1]
            start = prev.end
            matched = self.by_call.get((name, prev))
            if matched is not None:
                start = max(start, max(matched.arrival.values()) - self.shift[name])
        else:
            start = next((a for _, a, b in data.steps if a <= end < b), None)
            if start is None:
                start = data.regions[0].start if data.regions else end
        if end <= start:
            return {}
        index = self.indexes.get(name)
        if index is None:
            index = self.indexes[name] = _RegionIndex(data)
        return index.walls(start, end)


class _RegionIndex:
    """A rank's regions by start, with the running maximum of their ends (regions of
    two threads may overlap)."""

    def __init__(self, data: RankCollectives) -> None:
        self.regions = data.regions
        self.starts = [r.start for r in data.regions]
        self.max_end = list(accumulate((r.end for r in data.regions), max))

    def walls(self, start: float, end: float) -> dict[str, float]:
        """Wall time of each region name clipped to [start, end), and NO_EVENT."""
        regions, max_end = self.regions, self.max_end
        i = bisect_left(self.starts, end) - 1
        out: dict[str, float] = {}
        pieces = []  # clipped, in descending start order
        while i >= 0 and max_end[i] > start:
            a, b, name = regions[i]
            if a < start:
                a = start
            if b > end:
                b = end
            if b > a:
                out[name] = out.get(name, 0.0) + (b - a)
                pieces.append((a, b))
            i -= 1
        covered = 0.0
        reach = start
        for a, b in reversed(pieces):
            if b > reach:
                covered += b - (a if a > reach else reach)
                reach = b
        out[NO_EVENT] = (end - start) - covered
        return out


def clock_of(ranks: Sequence[tuple[str, RankCollectives]], instances: Sequence[Instance],
             shift: dict[str, float]) -> Clock:
    """The hosts, and each other host's clock offset from the first host's, estimated
    from when the ranks saw each collective finish (they leave it together): the median
    over instances of the difference of the hosts' median ends."""
    hosts: dict[str, list[str]] = {}
    for name, d in ranks:
        hosts.setdefault(d.host or "(unknown host)", []).append(name)
    clock = Clock(hosts)
    if clock.shared:
        return clock
    host_of = {n: h for h, names in hosts.items() for n in names}
    reference = host_of[ranks[0][0]]
    diffs: dict[str, list[float]] = {}
    for inst in instances:
        done = {n: c.done + shift[n] for n, c in inst.calls.items() if c.done >= 0}
        if len(done) < len(inst.calls):
            continue
        per_host: dict[str, list[float]] = {}
        for n, t in done.items():
            per_host.setdefault(host_of[n], []).append(t)
        if reference not in per_host:
            continue
        ref = median(per_host[reference])
        for host, times in per_host.items():
            if host != reference:
                diffs.setdefault(host, []).append(median(times) - ref)
        clock.samples += 1
    clock.offsets = {h: median(v) for h, v in diffs.items()}
    return clock
