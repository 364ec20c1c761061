"""Unions, intersections and differences of half-open integer intervals.

A *merged* list is sorted, non-overlapping and non-adjacent ``(start, end)``
pairs with ``start < end``; every function here takes and returns merged
lists (except :func:`union`, which makes one from any intervals).
"""

from __future__ import annotations

from typing import Iterable

Span = tuple[int, int]


def union(intervals: Iterable[Span]) -> list[Span]:
    """The merged list covering exactly the given intervals (empty ones dropped)."""
    out: list[Span] = []
    lo = hi = None
    for start, end in sorted(intervals):
        if end <= start:
            continue
        if hi is not None and start <= hi:
            if end > hi:
                hi = end
        else:
            if hi is not None:
                out.append((lo, hi))
            lo, hi = start, end
    if hi is not None:
        out.append((lo, hi))
    return out


def length(merged: Iterable[Span]) -> int:
    """Total length of a merged list."""
    return sum([b - a for a, b in merged])


def intersect(a: list[Span], b: list[Span]) -> list[Span]:
    """The parts of ``a`` that are also in ``b``."""
    out: list[Span] = []
    na, nb = len(a), len(b)
    if not na or not nb:
        return out
    add = out.append
    i = j = 0
    a0, a1 = a[0]
    b0, b1 = b[0]
    while True:  # (plain locals: this runs per step and kind of a large trace)
        lo = a0 if a0 > b0 else b0
        hi = a1 if a1 < b1 else b1
        if lo < hi:
            add((lo, hi))
        if a1 < b1:
            i += 1
            if i == na:
                return out
            a0, a1 = a[i]
        else:
            j += 1
            if j == nb:
                return out
            b0, b1 = b[j]


def subtract(a: list[Span], b: list[Span]) -> list[Span]:
    """The parts of ``a`` not in ``b``."""
    out: list[Span] = []
    add = out.append
    nb = len(b)
    j = 0
    for start, end in a:
        cur = start
        while j < nb and b[j][1] <= cur:
            j += 1
        k = j
        while k < nb:
            b0, b1 = b[k]
            if b0 >= end:
                break
            if b0 > cur:
                add((cur, b0))
            if b1 > cur:
                cur = b1
            if cur >= end:
                break
            k += 1
        if cur < end:
            add((cur, end))
    return out


def clip(merged: list[Span], lo: int, hi: int) -> list[Span]:
    """``merged`` cut to [lo, hi)."""
    if lo >= hi:
        return []
    return [(a if a > lo else lo, b if b < hi else hi) for a, b in merged if a < hi and b > lo]


def gaps(merged: list[Span]) -> list[Span]:
    """The holes between consecutive intervals of a merged list."""
    return [(merged[i][1], merged[i + 1][0]) for i in range(len(merged) - 1)]
