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
    out: list[list[int]] = []
    for start, end in sorted(intervals):
        if end <= start:
            continue
        if out and start <= out[-1][1]:
            if end > out[-1][1]:
                out[-1][1] = end
        else:
            out.append([start, end])
    return [(a, b) for a, b in out]


def length(merged: Iterable[Span]) -> int:
    """Total length of a merged list."""
    return sum(b - a for a, b in merged)


def intersect(a: list[Span], b: list[Span]) -> list[Span]:
    """The parts of ``a`` that are also in ``b``."""
    out: list[Span] = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if lo < hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def subtract(a: list[Span], b: list[Span]) -> list[Span]:
    """The parts of ``a`` not in ``b``."""
    out: list[Span] = []
    j = 0
    for start, end in a:
        cur = start
        while j < len(b) and b[j][1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] < end:
            if b[k][0] > cur:
                out.append((cur, b[k][0]))
            cur = max(cur, b[k][1])
            if cur >= end:
                break
            k += 1
        if cur < end:
            out.append((cur, end))
    return out


def clip(merged: list[Span], lo: int, hi: int) -> list[Span]:
    """``merged`` cut to [lo, hi)."""
    return intersect(merged, [(lo, hi)]) if lo < hi else []


def gaps(merged: list[Span]) -> list[Span]:
    """The holes between consecutive intervals of a merged list."""
    return [(merged[i][1], merged[i + 1][0]) for i in range(len(merged) - 1)]
