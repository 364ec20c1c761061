"""The `kernels` command's output: one row per kernel name, as text or JSON."""

from __future__ import annotations

from typing import Any, Sequence

from ..views.kernels import KernelRow
from ..views.step_values import us
from .steps import SCHEMA_VERSION, table

#: Kernel names longer than this are cut in the text table (JSON keeps them whole).
NAME_WIDTH = 80


def kernels_document(rows: Sequence[KernelRow], step: int, device: str) -> dict[str, Any]:
    """``{"mode": "kernels", "kernels": [...]}``, times in µs (mean, min, max may round)."""
    total = sum(r.total for r in rows)
    return {"schema_version": SCHEMA_VERSION, "mode": "kernels", "unit": "microseconds",
            "step": step, "device": device or "all",
            "kernels": [{"name": r.name, "kind": r.kind, "count": r.count,
                         "total": us(r.total), "mean": us(r.mean), "min": us(r.min),
                         "max": us(r.max),
                         "share": round(r.total / total, 6) if total else 0.0}
                        for r in rows]}


def kernels_text(rows: Sequence[KernelRow], where: str) -> str:
    """The kernel table; share is of the summed durations of all rows shown."""
    total = sum(r.total for r in rows)
    out = []
    for r in rows:
        name = r.name if len(r.name) <= NAME_WIDTH else r.name[:NAME_WIDTH - 3] + "..."
        share = 100.0 * r.total / total if total else 0.0
        out.append((name, r.kind, "%d" % r.count, "%.3f" % (r.total / 1000),
                    "%.3f" % (r.mean / 1000), "%.3f" % (r.min / 1000),
                    "%.3f" % (r.max / 1000), "%.1f%%" % share))
    lines = ["%d kernel name%s on %s; times in us (summed durations, not their union)."
             % (len(rows), "" if len(rows) == 1 else "s", where), ""]
    lines += table(("name", "kind", "count", "total", "mean", "min", "max", "share"), out,
                   left=2)
    return "\n".join(lines) + "\n"
