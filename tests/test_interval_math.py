"""Interval arithmetic and the per-kind host unions, against sets of integer points."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tfprof_shell.model.intervals import HostEvent
from tfprof_shell.views.interval_math import clip, gaps, intersect, length, subtract, union
from tfprof_shell.views.steps import _host_unions

spans = st.lists(st.tuples(st.integers(-5, 60), st.integers(-5, 60)), max_size=12)


def points(intervals):
    return {t for a, b in intervals for t in range(a, b)}


def is_merged(merged):
    return all(a < b for a, b in merged) and all(
        merged[i][1] < merged[i + 1][0] for i in range(len(merged) - 1))


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(a=spans, b=spans, lo=st.integers(-5, 60), hi=st.integers(-5, 60))
def test_each_operation_is_its_set_operation(a, b, lo, hi):
    ma, mb = union(a), union(b)
    assert is_merged(ma) and points(ma) == points(a)
    assert length(ma) == len(points(a))
    for got, want in ((intersect(ma, mb), points(a) & points(b)),
                      (subtract(ma, mb), points(a) - points(b)),
                      (clip(ma, lo, hi), {t for t in points(a) if lo <= t < hi})):
        assert is_merged(got) and points(got) == want
    assert points(gaps(ma)) == set(range(ma[0][0], ma[-1][1])) - points(a) if ma else True


kinds = st.sampled_from(["sync", "ops", "launch"])


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(raw=st.lists(st.tuples(st.integers(0, 50), st.integers(-3, 20), kinds), max_size=15),
       presorted=st.booleans())
def test_host_unions_merge_each_kind_sorted_or_not(raw, presorted):
    host = [HostEvent(s, s + d, k, "op") for s, d, k in raw]
    if presorted:
        host.sort()
    got = _host_unions(host)
    for kind in ("sync", "ops", "launch"):
        want = union((e.start, e.end) for e in host if e.kind == kind)
        assert got.get(kind, []) == want
