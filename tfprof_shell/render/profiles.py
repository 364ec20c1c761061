"""The `profiles` command's table: one row per loaded profile, * on the current one."""

from __future__ import annotations

from dataclasses import dataclass


from ..formats import format_time
from ..model import Model
from ..model import stats as S
from .base import Rendered

#: Longer step lists are shown as first..last (count).
_STEPS_SHOWN = 6


@dataclass(frozen=True)
class ProfileRow:
    """One loaded profile: its name, whether it is current, and its model."""

    name: str
    current: bool
    model: Model


def total_micros(model: Model) -> int:
    """The profile's total execution time, each node averaged over its steps."""
    return sum(node.stats(-1)[S.EXEC] for node in model.nodes.values())


def format_steps(steps: list[int]) -> str:
    """``0,1,2``; ``0..599 (600)`` for long lists; ``none``."""
    if not steps:
        return "none"
    if len(steps) > _STEPS_SHOWN:
        return "%d..%d (%d)" % (steps[0], steps[-1], len(steps))
    return ",".join(str(s) for s in steps)


def render_profiles(rows: list[ProfileRow]) -> Rendered:
    """The table as text."""
    table = [("*" if r.current else "", r.name, r.model.source.kind, format_steps(r.model.steps),
              len(r.model.nodes), format_time(total_micros(r.model)),
              ", ".join(r.model.source.paths) or "-")
             for r in rows]
    from tabulate import tabulate  # here: only the profiles command needs it (start-up time)
    text = tabulate(table, headers=["", "name", "kind", "steps", "nodes", "total time",
                                    "source"], tablefmt="plain", disable_numparse=True)
    return Rendered("\n".join(line.rstrip() for line in text.split("\n")) + "\n")
