"""Collective calls matched across ranks: arrivals, skew, the last rank, lateness.

:func:`align` takes each rank's calls (model/collectives.py) and matches each
call to the same call on the other ranks, by the best key every rank's trace
has: (process group, Seq); else (process group, i-th call in the group); else
(step, i-th call in the step), the only key of gloo CPU traces. At each
matched instance the op, size and dtype must agree; the first instance where
they do not stops the matching, with a note.

Per instance: arrival = each rank's host call into the collective (and its
kernel's start, for NCCL), skew = latest - earliest arrival, the last rank,
and each rank's wait for it. Lateness = arrival - earliest arrival; a rank's
own lateness at an instance is all of it, unless the instance is chained to
the previous one of its group (some rank arrived at it before the last rank
arrived at the previous one: asynchronous buckets queued behind a late one),
then only what it adds. Per step, the straggler has the largest own
lateness, and views/collective_causes.py says what it did first.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping, Optional, Sequence

from ..model import Model
from ..model.collectives import CollectiveCall, RankCollectives
from .collective_causes import CauseFinder, clock_of
from .collective_result import (BY_GROUP_ORDER, BY_SEQ, BY_STEP_ORDER, MODE_TEXT,
                                CollectivesResult, Instance, StepVerdict)

__all__ = ["BY_GROUP_ORDER", "BY_SEQ", "BY_STEP_ORDER", "MODE_TEXT", "CollectivesResult",
           "Instance", "StepVerdict", "align", "align_models", "with_calls"]


def with_calls(models: Mapping[str, Model], names: Sequence[str]
               ) -> list[tuple[str, RankCollectives]]:
    """The profiles among ``names`` whose traces have collective calls, with them."""
    out = []
    for name in names:
        calls = models[name].collectives()
        if calls is not None and calls.calls:
            out.append((name, calls))
    return out


def align_models(models: Mapping[str, Model], names: Optional[Sequence[str]] = None
                 ) -> Optional[CollectivesResult]:
    """The alignment of the profiles (``names``, default all) that have collective calls;
    None when fewer than two have, or nothing matched."""
    ranks = with_calls(models, list(models) if names is None else names)
    if len(ranks) < 2:
        return None
    result = align(ranks)
    return result if result.instances else None


def align(ranks: Sequence[tuple[str, RankCollectives]]) -> CollectivesResult:
    """Match the calls of ``ranks`` (profile name, its calls) and measure every instance
    and step. Linear in calls x ranks (after sorting each rank's calls)."""
    ranks = _ordered(ranks)
    names = [n for n, _ in ranks]
    data = dict(ranks)
    shift = _shifts(ranks)
    notes: list[str] = []
    colls = {n: [c for c in d.calls if not c.point_to_point] for n, d in ranks}
    p2p = sum(len(d.calls) - len(colls[n]) for n, d in ranks)
    if p2p:
        notes.append("%d point-to-point calls (send, recv) are not aligned: they involve "
                     "two ranks, not the group" % p2p)
    mode = _mode(colls.values())
    keyed = {n: _keys(calls, mode) for n, calls in colls.items()}
    members = _members(mode, ranks, colls)
    instances, mismatch, dropped = _match(names, keyed, members, shift, mode)
    if dropped:
        notes.append("%d calls left out: not in the trace of every rank of their group "
                     "(the traces start or end at different calls)" % dropped)
    _chain(instances)
    steps = _verdicts(instances)
    finder = CauseFinder(instances, data, shift, colls)
    for verdict in steps:
        if verdict.straggler is not None:
            verdict.cause = finder.cause_of(verdict)
    return CollectivesResult(names, mode, instances, steps, clock_of(ranks, instances, shift),
                             notes, mismatch, {n: len(d.calls) for n, d in ranks}, data, shift)


def _ordered(ranks: Sequence[tuple[str, RankCollectives]]
             ) -> list[tuple[str, RankCollectives]]:
    """By global rank where every trace gives a distinct one, else as given."""
    numbers = [d.rank for _, d in ranks]
    if all(r >= 0 for r in numbers) and len(set(numbers)) == len(numbers):
        return sorted(ranks, key=lambda nd: nd[1].rank)
    return list(ranks)


def _shifts(ranks: Sequence[tuple[str, RankCollectives]]) -> dict[str, float]:
    """µs to add to each rank's times: its trace's wall-clock base against the first's
    (0 on one host, where the bases agree)."""
    bases = [d.base_ns for _, d in ranks]
    if not bases or not all(bases):
        return {n: 0.0 for n, _ in ranks}
    return {n: (d.base_ns - bases[0]) / 1000.0 for n, d in ranks}


def _mode(colls: Iterable[list[CollectiveCall]]) -> str:
    """The best key every call has (see the module docstring)."""
    calls = [c for rank in colls for c in rank]
    if calls and all(c.group and c.seq >= 0 for c in calls):
        return BY_SEQ
    if calls and all(c.group for c in calls):
        return BY_GROUP_ORDER
    return BY_STEP_ORDER


#: (process group or step, Seq or position): what a call is matched by.
Key = tuple[str, int]


def _keys(calls: list[CollectiveCall], mode: str) -> dict[Key, CollectiveCall]:
    """Each call by its key (the first call of a key, should a trace repeat one)."""
    out: dict[Key, CollectiveCall] = {}
    counters: Counter[object] = Counter()
    for call in calls:
        if mode == BY_SEQ:
            key: Key = (call.group, call.seq)
        elif mode == BY_GROUP_ORDER:
            key = (call.group, counters[call.group])
            counters[call.group] += 1
        else:
            key = ("%d" % call.step, counters[call.step])
            counters[call.step] += 1
        out.setdefault(key, call)
    return out


def _members(mode: str, ranks: Sequence[tuple[str, RankCollectives]],
             colls: dict[str, list[CollectiveCall]]) -> dict[str, set[str]]:
    """Group name -> the profiles that must take part ("" -> all, in step order)."""
    names = {n for n, _ in ranks}
    if mode == BY_STEP_ORDER:
        return {"": names}
    by_rank = {d.rank: n for n, d in ranks if d.rank >= 0}
    out: dict[str, set[str]] = {}
    for n, calls in colls.items():
        for c in calls:
            out.setdefault(c.group, set()).add(n)
    for n, d in ranks:
        for group, members in d.groups.items():
            listed = {by_rank[r] for r in members if r in by_rank}
            if group in out and listed and len(by_rank) == len(ranks):
                out[group] = listed & names
    return out


def _match(names: list[str], keyed: dict[str, dict[Key, CollectiveCall]],
           members: dict[str, set[str]], shift: dict[str, float], mode: str
           ) -> tuple[list[Instance], str, int]:
    """The instances in time order up to the first disagreement, the disagreement,
    and how many calls were left out for missing on a rank."""
    keys: dict[Key, float] = {}
    for n in names:
        for key, call in keyed[n].items():
            t = call.start + shift[n]
            if key not in keys or t < keys[key]:
                keys[key] = t
    dropped = 0
    out: list[Instance] = []
    for key in sorted(keys, key=keys.__getitem__):
        group = key[0] if mode != BY_STEP_ORDER else ""
        want = [n for n in names if n in members.get(group, ())]
        have = [n for n in want if key in keyed[n]]
        if len(have) < len(want):
            if mode != BY_STEP_ORDER:
                dropped += len(have)
                continue
            missing = [n for n in want if n not in have]
            first = keyed[have[0]][key]
            return out, ("step %d: %s has a collective call #%d (%s) that %s has not; "
                         "matching stops there" % (first.step, have[0], key[1] + 1,
                                                   first.op, ", ".join(missing))), dropped
        if len(have) < 2:
            continue
        calls = {n: keyed[n][key] for n in have}
        problem = _disagreement(calls)
        if problem:
            where = ("step %s, collective #%d" % (key[0], key[1] + 1)
                     if mode == BY_STEP_ORDER else "group %s, %s %d" % (
                         key[0], "Seq" if mode == BY_SEQ else "call", key[1]))
            return out, "%s: %s; matching stops there" % (where, problem), dropped
        out.append(_instance(len(out), calls, shift))
    return out, "", dropped


def _disagreement(calls: dict[str, CollectiveCall]) -> str:
    """What the ranks' calls disagree on ("" when op, size and dtype agree)."""
    for what, of in (("op", lambda c: c.op), ("size", lambda c: c.size),
                     ("dtype", lambda c: c.dtype)):
        seen: dict[object, str] = {}
        for n, c in calls.items():
            value = of(c)
            if value in (-1, ""):
                continue
            seen.setdefault(value, n)
        if len(seen) > 1:
            return "the ranks disagree on the %s (%s)" % (
                what, ", ".join("%s %s" % (n, v) for v, n in seen.items()))
    return ""


def _instance(index: int, calls: dict[str, CollectiveCall], shift: dict[str, float]
              ) -> Instance:
    arrival = {n: c.start + shift[n] for n, c in calls.items()}
    end = {n: c.end + shift[n] for n, c in calls.items()}
    first = min(arrival.values())
    last = max(arrival, key=lambda n: (arrival[n], n))
    steps = Counter(c.step for c in calls.values())
    step = min(s for s, k in steps.items() if k == max(steps.values()))
    one = next(iter(calls.values()))
    sizes = [c.size for c in calls.values() if c.size >= 0]
    inst = Instance(index, step, one.op, one.group, one.seq, sizes[0] if sizes else -1,
                    next((c.dtype for c in calls.values() if c.dtype), ""), arrival, end,
                    arrival[last] - first, last,
                    {n: arrival[last] - a for n, a in arrival.items()}, calls=calls)
    if all(c.device_start >= 0 for c in calls.values()):
        dev = {n: c.device_start + shift[n] for n, c in calls.items()}
        inst.device_arrival = dev
        inst.device_last = max(dev, key=lambda n: (dev[n], n))
        inst.device_skew = dev[inst.device_last] - min(dev.values())
    return inst


def _chain(instances: list[Instance]) -> None:
    """Each instance's own lateness per rank (see the module docstring)."""
    previous: dict[str, Instance] = {}
    for inst in instances:
        first = min(inst.arrival.values())
        late = {n: a - first for n, a in inst.arrival.items()}
        prev = previous.get(inst.group)
        inst.chained = prev is not None and first < max(prev.arrival.values())
        if inst.chained:
            assert prev is not None
            before = {n: a - min(prev.arrival.values()) for n, a in prev.arrival.items()}
            inst.lateness = {n: max(0.0, v - before.get(n, 0.0)) for n, v in late.items()}
        else:
            inst.lateness = late
        previous[inst.group] = inst


def _verdicts(instances: list[Instance]) -> list[StepVerdict]:
    by_step: dict[int, list[Instance]] = {}
    for inst in instances:
        by_step.setdefault(inst.step, []).append(inst)
    out = []
    for step in sorted(by_step):
        total: dict[str, float] = {}
        for inst in by_step[step]:
            for n, v in inst.lateness.items():
                total[n] = total.get(n, 0.0) + v
        straggler = max(total, key=lambda n: (total[n], n)) if total else None
        if straggler is not None and total[straggler] <= 0:
            straggler = None
        verdict = StepVerdict(step, straggler, total, instances=len(by_step[step]))
        if straggler is not None:
            verdict.charged = max(by_step[step], key=lambda i: i.lateness.get(straggler, 0.0)
                                  ).index
        out.append(verdict)
    return out
