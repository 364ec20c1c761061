"""Filter.total_floor and tree_floor: the shortcuts the code and scope walks take
must agree with passes()."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from tfprof_shell.engine.filter import Filter
from tfprof_shell.model import stats as S
from tfprof_shell.options import DEFAULTS
from tfprof_shell.views.base import ViewNode

BOUNDS = st.sampled_from([0, 1, 5])


@given(totals=st.lists(st.integers(-10, 10), min_size=S.N_TOTAL, max_size=S.N_TOTAL),
       min_bytes=BOUNDS, min_micros=BOUNDS, min_params=BOUNDS)
def test_floor_agrees_with_passes(totals: list[int], min_bytes: int, min_micros: int,
                                  min_params: int) -> None:
    opts = dataclasses.replace(DEFAULTS, min_bytes=min_bytes, min_micros=min_micros,
                               min_params=min_params)
    flt = Filter(opts, "code")
    node = ViewNode("n")
    node.total = tuple(totals)
    floor = flt.total_floor()
    if floor is not None:
        get, least = floor
        assert (min(get(node.total)) >= least) == flt.passes()(node)
    assert flt.passes()(node) == flt.should_show(node, 0)


@given(totals=st.lists(st.integers(-10, 10), min_size=S.N_TOTAL, max_size=S.N_TOTAL),
       own=st.lists(st.integers(-10, 10), min_size=S.N_SELF, max_size=S.N_SELF),
       min_bytes=BOUNDS, min_micros=BOUNDS, min_params=BOUNDS, min_float_ops=BOUNDS,
       min_occurrence=BOUNDS)
def test_tree_floor_agrees_with_passes(totals: list[int], own: list[int], min_bytes: int,
                                       min_micros: int, min_params: int, min_float_ops: int,
                                       min_occurrence: int) -> None:
    opts = dataclasses.replace(DEFAULTS, min_bytes=min_bytes, min_micros=min_micros,
                               min_params=min_params, min_float_ops=min_float_ops,
                               min_occurrence=min_occurrence)
    flt = Filter(opts, "scope")
    node = ViewNode("n")
    node.total = tuple(totals)
    node.self = tuple(own)
    floor = flt.tree_floor()
    if floor is not None:
        get, least, self_get, self_least = floor
        shortcut = min(get(node.total)) >= least and min(self_get(node.self)) >= self_least
        assert shortcut == flt.passes()(node)
    assert flt.passes()(node) == flt.should_show(node, 0)
