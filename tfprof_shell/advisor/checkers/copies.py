"""CopiesChecker: host-to-device copies in every step (the batch, usually)."""

from __future__ import annotations

from ...model.intervals import MEMCPY_H2D
from ..catalog import COPIES as NAME
from .base import Checker, Findings, Subject
from .step_figures import step_figures

#: Below this rate (GB/s) a host-to-device copy is likely from pageable memory.
PAGEABLE_GBPS = 5.0


def check(subject: Subject) -> Findings:
    """One report when every step with device work copies from the host, naming the
    host ops that launched the copies where the trace links launches."""
    figures = step_figures(subject.model)
    findings = Findings()
    if figures is None:
        return findings
    steps = [s for s in figures.result.steps if s.devices]
    kinds = [s.devices[figures.busiest(s)].memory_kinds.get(MEMCPY_H2D) for s in steps]
    if not steps or any(k is None for k in kinds):
        return findings
    count = sum(k.count for k in kinds)  # type: ignore[union-attr]
    time = sum(k.time for k in kinds) // 1000  # type: ignore[union-attr]
    nbytes = sum(k.nbytes for k in kinds)  # type: ignore[union-attr]
    rate = nbytes / (time * 1000) if time and nbytes else None
    slow = rate is not None and rate < PAGEABLE_GBPS
    stepped = {s.step for s in steps}
    callers = figures.host_ops_at([e.launch for e in figures.intervals.devices
                                   if e.kind == MEMCPY_H2D and e.step in stepped
                                   and e.launch >= 0])
    findings.reports.append(
        "copies every step: %d host-to-device copies per step, %dus%s. Copy the next batch "
        "while this step runs: pinned memory (DataLoader pin_memory=True), "
        "non_blocking=True, a prefetching loader or dataset.prefetch to the device.%s"
        % (count // len(steps), time // len(steps),
           ", %d bytes at %.1f GB/s" % (nbytes // len(steps), rate) if rate else "",
           " %.1f GB/s suggests pageable (not pinned) host memory." % rate if slow else "")
        + (" Launched from: %s." % ", ".join(callers) if callers else ""))
    return findings


CHECKER = Checker(NAME, check)
