"""The kernel table: device events grouped by name (XProf's kernel_stats, HTA's
kernel breakdown), from the profile's intervals."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ..model.intervals import Intervals


@dataclass
class KernelRow:
    """One kernel name: its kind, launches and durations (ns)."""

    name: str
    kind: str
    count: int
    total: int
    min: int
    max: int

    @property
    def mean(self) -> int:
        return self.total // self.count if self.count else 0


def kernel_rows(iv: Intervals, step: Optional[int] = None, device: str = "",
                keep: Callable[[str], bool] = lambda name: True) -> list[KernelRow]:
    """Rows of the device events in ``step`` (all if None) on ``device`` (all if
    empty) whose name ``keep`` accepts, largest total first."""
    rows: dict[tuple[str, str], KernelRow] = {}
    for e in iv.devices:
        if step is not None and e.step != step:
            continue
        if device and e.device != device:
            continue
        dur = e.end - e.start
        row = rows.get((e.name, e.kind))
        if row is None:
            if not keep(e.name):
                continue
            rows[(e.name, e.kind)] = KernelRow(e.name, e.kind, 1, dur, dur, dur)
        else:
            row.count += 1
            row.total += dur
            row.min = min(row.min, dur)
            row.max = max(row.max, dur)
    return sorted(rows.values(), key=lambda r: (-r.total, r.name))
