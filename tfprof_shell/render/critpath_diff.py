"""`critpath -base NAME`: each window's path against the same window of another profile.

Windows pair by step number when both sides have one, else by their order.
The text shows each pair's lengths, the bound categories summed over the
pairs, and the event names whose time on the path changed most.
"""

from __future__ import annotations

from typing import Any, Optional

from ..views.critpath_result import CritPath, CritPathResult
from .critpath import _t, _us, short, table, time_by_name

TOP_NAMES = 12


def pair_windows(current: CritPathResult, base: CritPathResult
                 ) -> list[tuple[Optional[CritPath], Optional[CritPath]]]:
    """(current, base) per window: by step when both have steps, else in order."""
    if (all(p.window.step is not None for p in current.paths)
            and all(p.window.step is not None for p in base.paths)):
        by_step = {p.window.step: p for p in base.paths}
        pairs: list[tuple[Optional[CritPath], Optional[CritPath]]] = [
            (p, by_step.pop(p.window.step, None)) for p in current.paths]
        pairs += [(None, p) for p in by_step.values()]
        return pairs
    n = max(len(current.paths), len(base.paths))
    return [(current.paths[i] if i < len(current.paths) else None,
             base.paths[i] if i < len(base.paths) else None) for i in range(n)]


def _sum_bounds(paths: list[CritPath]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in paths:
        for k, v in p.by_bound.items():
            out[k] = out.get(k, 0) + v
    return out


def _signed(ns: int) -> str:
    return ("+" if ns > 0 else "") + _t(ns)


def diff_parts(current: CritPathResult, base: CritPathResult
               ) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """(window rows, bound rows, name rows) in ns: (label, current, base) with None
    where a side has nothing."""
    pairs = pair_windows(current, base)
    windows = [((a or b).window.name if a is None or b is None or a.window.name == b.window.name
                else "%s / %s" % (a.window.name, b.window.name),
                a.length if a else None, b.length if b else None) for a, b in pairs]
    both = [(a, b) for a, b in pairs if a is not None and b is not None]
    cur_b, base_b = _sum_bounds([a for a, _ in both]), _sum_bounds([b for _, b in both])
    bounds = [(k, cur_b.get(k, 0), base_b.get(k, 0))
              for k in sorted(set(cur_b) | set(base_b),
                              key=lambda k: -abs(cur_b.get(k, 0) - base_b.get(k, 0)))]
    cur_n, base_n = (time_by_name([a for a, _ in both]), time_by_name([b for _, b in both]))
    keys = set(cur_n) | set(base_n)
    names = sorted(((k, cur_n.get(k, (0, 0))[0], base_n.get(k, (0, 0))[0]) for k in keys),
                   key=lambda r: (-abs(r[1] - r[2]), -r[1] - r[2], r[0]))
    return windows, bounds, names[:TOP_NAMES]


def diff_text(current_name: str, base_name: str, current: CritPathResult,
              base: CritPathResult) -> str:
    windows, bounds, names = diff_parts(current, base)

    def cells(a: Optional[int], b: Optional[int]) -> tuple[str, str, str]:
        return ("--" if a is None else _t(a), "--" if b is None else _t(b),
                "--" if a is None or b is None else _signed(a - b))

    lines = ["Critical path of %s against %s; times in us." % (current_name, base_name), ""]
    lines += table(("window", current_name, base_name, "change"),
                   [(w, *cells(a, b)) for w, a, b in windows])
    if bounds:
        lines += ["", "Bound by (windows in both):"]
        lines += table(("category", current_name, base_name, "change"),
                       [(k, *cells(a, b)) for k, a, b in bounds])
    if names:
        lines += ["", "Event names whose time on the path changed most (windows in both):"]
        lines += table(("name", "kind", current_name, base_name, "change"),
                       [(short(n), kind, *cells(a, b)) for (n, kind), a, b in names], (0, 1))
    return "\n".join(lines) + "\n"


def diff_document(current_name: str, base_name: str, current: CritPathResult,
                  base: CritPathResult) -> dict[str, Any]:
    windows, bounds, names = diff_parts(current, base)

    def row(a: Optional[int], b: Optional[int]) -> dict[str, Any]:
        return {"current": None if a is None else _us(a), "base": None if b is None else _us(b),
                "change": None if a is None or b is None else _us(a - b)}

    return {"windows": [dict(window=w, **row(a, b)) for w, a, b in windows],
            "by_bound": [dict(category=k, **row(a, b)) for k, a, b in bounds],
            "names": [dict(name=n, kind=kind, **row(a, b)) for (n, kind), a, b in names]}
