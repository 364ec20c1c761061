"""AcceleratorUtilizationChecker: how busy each GPU was in the last step.

For every node placed on a GPU, the record of the highest step it ran in
is taken; per device the span runs from the earliest non-zero start to the
latest end (every record of the node counts, e.g. ``stream:14``), and
the busy time is the sum of the nodes' accelerator (``stream:all``) time.
Where that sum exceeds the span (executions on several streams overlap, or
sub-µs kernels rounded up to 1 µs), the busy time is the union of the
executions instead, so the utilization never exceeds 1.0.
"""

from __future__ import annotations

from ..catalog import ACCELERATOR_UTILIZATION as NAME
from ...views.interval_math import length, union
from .base import Checker, Findings, Subject, on_accelerator


#: At or above this busy fraction a device is not reported as "low".
GOOD_UTILIZATION = 0.5


class _Span:
    __slots__ = ("start", "end", "busy", "execs")

    def __init__(self) -> None:
        self.start = 0
        self.end = 0
        self.busy = 0
        self.execs: list[tuple[int, int]] = []


def check(subject: Subject) -> Findings:
    """One report per accelerator device with a positive span, in device-name order."""
    spans: dict[str, _Span] = {}
    for node in subject.model.sorted_nodes():
        if not node.has_run() or not on_accelerator(node.canonical_device):
            continue
        span = spans.setdefault(node.canonical_device, _Span())
        last = node.exec_step(max(node.steps_run))
        if span.start == 0:
            span.start = last.all_start_micros
        elif last.all_start_micros != 0:
            span.start = min(span.start, last.all_start_micros)
        span.end = max(span.end, last.latest_end_micros)
        span.busy += last.accelerator_micros()
        span.execs.extend((t, t + d) for execs in last.accelerator_execs.values()
                          for t, d in execs)
    findings = Findings()
    for device in sorted(spans):
        span = spans[device]
        elapsed = span.end - span.start
        if elapsed <= 0:
            continue
        busy = span.busy
        if busy > elapsed:
            busy = min(length(union(span.execs)), elapsed)
        utilization = 1.0 * busy / elapsed
        low = "" if utilization >= GOOD_UTILIZATION else "low "
        findings.reports.append("device: %s %sutilization: %.2f" % (device, low, utilization))
    return findings


CHECKER = Checker(NAME, check)
