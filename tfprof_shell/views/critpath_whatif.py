"""`critpath -whatif 'REGEX=FACTOR'`: the critical path if some work took FACTOR times as long.

A rule names events by name (``aten::mm``), by the trace's category
(``cat:kernel``) or names a bound category (``bound:gpu_kernel_launch_overhead``,
any edge that category bounds). A name or category rule scales the own time
of the matching events and of everything they contain or launch: ``aten::mm=0.5``
halves the op, the calls inside it and the kernels they launched. The first rule
that matches an edge decides its factor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from .. import regex
from ..options import check_whatif
from ..model.path_input import DEVICE
from .critpath_build import Built
from .critpath_timeline import Timeline
from .critpath_graph import BOUNDS, OPERATOR

_FIELDS = ("cat", "bound")


@dataclass(frozen=True)
class WhatIfRule:
    """One ``-whatif`` rule: what it matches (name, cat or bound), the pattern, the factor."""

    field: str
    pattern: str
    factor: float
    text: str


def parse_rule(text: str) -> WhatIfRule:
    """``REGEX=FACTOR``, ``cat:REGEX=FACTOR`` or ``bound:REGEX=FACTOR`` as a rule
    (OptionError when it is none of these)."""
    check_whatif(text)
    pattern, _, number = text.rpartition("=")
    kind, colon, rest = pattern.partition(":")
    if colon and kind in _FIELDS and rest:
        return WhatIfRule(kind, rest, float(number), text)
    return WhatIfRule("name", pattern, float(number), text)


def scaled_weights(tl: Timeline, built: Built, rules: Sequence[WhatIfRule]
                   ) -> tuple[list[int], list[int], int]:
    """(the chain weights, the other edges' weights, how many edges changed) of the
    window's graph with the rules applied."""
    g = built.graph
    ev = tl.events
    texts: dict[tuple[int, str], bool] = {}
    memo: dict[int, frozenset[int]] = {}

    def hits(k: int, text: str) -> bool:
        got = texts.get((k, text))
        if got is None:
            got = texts[(k, text)] = regex.fullmatch(rules[k].pattern, text)
        return got

    def matched(event: int) -> frozenset[int]:
        """The name and category rules that match ``event`` or what holds it."""
        got = memo.get(event)
        if got is None:
            chain = []
            i: Optional[int] = event
            while i is not None and i >= 0:
                chain.append(ev[i])
                i = tl.launch_of.get(i) if ev[i][2] == DEVICE else built.parent.get(i)
            got = memo[event] = frozenset(
                k for k, rule in enumerate(rules) if rule.field != "bound"
                and any(hits(k, str(e[4 if rule.field == "cat" else 3])) for e in chain))
        return got

    def edge_factor(info: int) -> Optional[float]:
        etype, bound, attr = info & 7, (info >> 3) & 7, (info >> 6) - 1
        own = matched(attr) if etype == OPERATOR and attr >= 0 else frozenset()
        for k, rule in enumerate(rules):
            if rule.field == "bound":
                if hits(k, BOUNDS[bound] or "none"):
                    return rule.factor
            elif k in own:
                return rule.factor
        return None

    changed = 0
    chain_w = list(g.chain_w)
    for v, w in enumerate(chain_w):
        if w > 0:
            f = edge_factor(g.chain_info[v])
            if f is not None:
                chain_w[v] = int(round(w * f))
                changed += 1
    xw = list(g.xw)
    for e, w in enumerate(xw):
        if w > 0:
            f = edge_factor(g.xinfo[e])
            if f is not None:
                xw[e] = int(round(w * f))
                changed += 1
    return chain_w, xw, changed
