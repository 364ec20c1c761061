"""Which nodes a command shows: the engine's ShouldShow / ShouldTrim rules.

The thresholds compare different values per view (see TFPROF spec §4.2):
scope/graph compare total bytes and times but *self* params, float ops and
run count; code compares totals and ignores min_occurrence; op compares
chain totals and bounds min_occurrence by the number of graph nodes.
"""

from __future__ import annotations

from operator import itemgetter, lt
from typing import Any, Callable, Optional, Sequence

from .. import metrics, regex
from ..model import stats as S
from ..options import Options

_SELF_IN_TREE = (S.PARAMS, S.FLOPS, S.RUN_COUNT)
_MEMORY = (S.REQUESTED, S.PEAK, S.RESIDUAL, S.OUTPUT)


class Filter:
    """ShouldShow and ShouldTrim for one command, with regexes compiled once."""

    def __init__(self, opts: Options, view: str, signed_memory: bool = False) -> None:
        """``signed_memory``: bytes may be below 0 (see Model.signed_memory), so the
        memory bounds apply only above 0."""
        self.max_depth = opts.max_depth
        self.view = view
        self._show = regex.any_matcher(opts.show_name_regexes)
        self._hide = regex.any_matcher(opts.hide_name_regexes)
        self.trim: Callable[[str], bool] = regex.any_matcher(opts.trim_name_regexes)
        self.trims = bool(opts.trim_name_regexes)
        self.start: Callable[[str], bool] = regex.any_matcher(opts.start_name_regexes)
        self.start_is_all = tuple(opts.start_name_regexes) == regex.MATCH_ALL
        self.min_occurrence = opts.min_occurrence
        total_bounds = []
        self_bounds = []
        for option, stat in metrics.MIN_FILTERS.items():
            bound = getattr(opts, option)
            if signed_memory and bound <= 0 and stat in _MEMORY:
                continue
            if view in ("scope", "graph") and stat in _SELF_IN_TREE:
                self_bounds.append((stat, bound))
            elif stat == S.RUN_COUNT:
                continue  # code: not applied; op: bounds the node count below
            else:
                total_bounds.append((stat, bound))
        self._total = total_bounds
        self._self = self_bounds
        # The same checks as C-level maps: should_show runs once per candidate row.
        self._total_get, self._total_min = _getter(total_bounds)
        self._self_get, self._self_min = _getter(self_bounds)
        self._all_names = (tuple(opts.show_name_regexes) == regex.MATCH_ALL
                           and not opts.hide_name_regexes)

    def passes(self) -> Callable[[Any], bool]:
        """should_show without its depth check (the caller's walk stops at max_depth)."""
        total_get, total_min = self._total_get, self._total_min
        self_get, self_min = self._self_get, self._self_min
        if self.view == "op" or not self._all_names:
            return lambda node: self.should_show(node, 0)
        if total_min and self_min:
            return lambda node: not (any(map(lt, total_get(node.total), total_min))
                                     or any(map(lt, self_get(node.self), self_min)))
        if total_min:
            return lambda node: not any(map(lt, total_get(node.total), total_min))
        if self_min:
            return lambda node: not any(map(lt, self_get(node.self), self_min))
        return lambda node: True

    def total_floor(self) -> Optional[tuple[Callable[[Sequence[int]], Sequence[int]], int]]:
        """(get, floor) when passes(node) is ``min(get(node.total)) >= floor``, else None.

        That is when only totals are bounded, all by the same value (the
        defaults bound them all by 0).
        """
        if (self.view == "op" or not self._all_names or self._self_min
                or not self._total_min or len(set(self._total_min)) != 1):
            return None
        return self._total_get, self._total_min[0]

    def tree_floor(self) -> Optional[tuple[Callable[[Sequence[int]], Sequence[int]], int,
                                           Callable[[Sequence[int]], Sequence[int]], int]]:
        """(get, floor, self_get, self_floor) when passes(node) is
        ``min(get(node.total)) >= floor and min(self_get(node.self)) >= self_floor``, else None.

        That is when both totals and self statistics are bounded, each group
        by one value (the scope view's defaults bound them all by 0).
        """
        if (self.view == "op" or not self._all_names or not self._self_min
                or not self._total_min or len(set(self._total_min)) != 1
                or len(set(self._self_min)) != 1):
            return None
        return self._total_get, self._total_min[0], self._self_get, self._self_min[0]

    def should_show(self, node, depth: int) -> bool:
        """The engine's ShouldShow for a ViewNode at ``depth`` (root = 1)."""
        if depth > self.max_depth:
            return False
        if self._total_min and any(map(lt, self._total_get(node.total), self._total_min)):
            return False
        if self._self_min and any(map(lt, self._self_get(node.self), self._self_min)):
            return False
        if self.view == "op" and self.min_occurrence > len(node.picked):
            return False
        if self._all_names:
            return True
        name = node.name
        return self._show(name) and not self._hide(name)


def _getter(bounds: list[tuple[int, int]]) -> tuple[Callable[[Sequence[int]], tuple[int, ...]],
                                                    tuple[int, ...]]:
    """(the bounded statistics of a stats tuple, their bounds), for an element-wise check."""
    stats = tuple(stat for stat, _ in bounds)
    mins = tuple(bound for _, bound in bounds)
    if not stats:
        return (lambda values: ()), mins
    if len(stats) == 1:
        only = stats[0]
        return (lambda values: (values[only],)), mins
    return itemgetter(*stats), mins
