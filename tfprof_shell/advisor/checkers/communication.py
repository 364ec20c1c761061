"""CommunicationChecker: steps bound by communication, and poor overlap with compute."""

from __future__ import annotations

from ...model.intervals import COMMUNICATION as COLLECTIVE, HOST_COMMUNICATION
from ..catalog import COMMUNICATION as NAME
from .base import Checker, Findings, Subject
from ...views.interval_math import union
from .step_figures import share, step_figures

#: Communication outside compute at or above this share of the span is "bound".
EXPOSED_SHARE = 0.2
#: Communication of at least this share of the span, overlapping compute less than
#: OVERLAP_SHARE of its time, overlaps poorly.
COMM_SHARE = 0.1
OVERLAP_SHARE = 0.5


def check(subject: Subject) -> Findings:
    """Reports on the sums over the steps of each step's busiest device, naming the
    collectives that took longest."""
    figures = step_figures(subject.model)
    findings = Findings()
    if figures is None:
        return findings
    devs = [d for d in (figures.device(s) for s in figures.result.steps) if d]
    if not devs:
        return findings
    span = sum(d["span"] or 0 for d in devs)
    comm = sum(d["communication"] or 0 for d in devs)
    exposed = sum(d["communication_exposed"] or 0 for d in devs)
    overlap = sum(d["overlap"] or 0 for d in devs)
    host_comm = sum(figures.host(s)["communication"] or 0 for s in figures.result.steps)
    wall = sum(s.wall for s in figures.result.steps) // 1000
    kernels = figures.device_names_of(COLLECTIVE)
    named = " Collectives: %s." % ", ".join(kernels) if kernels else ""
    if share(exposed, span) >= EXPOSED_SHARE:
        findings.reports.append(
            "communication-bound: collectives outside compute take %.0f%% of the device "
            "span (%dus per step). Overlap them with compute (DDP bucket sizes, "
            "gradient accumulation, async collectives) or communicate less.%s"
            % (100 * share(exposed, span), exposed // len(devs), named))
    if share(comm, span) >= COMM_SHARE and share(overlap, comm) < OVERLAP_SHARE:
        findings.reports.append(
            "poor overlap: only %.0f%% of communication (%dus per step) runs while compute "
            "runs. Start collectives earlier (bucketing, prefetching parameters) so they "
            "hide behind compute.%s" % (100 * share(overlap, comm), comm // len(devs), named))
    if share(host_comm, wall) >= COMM_SHARE:
        spans = union(span for s in figures.result.steps
                      for span in figures.host_spans(s, HOST_COMMUNICATION))
        calls = figures.host_ops_over(spans, kind=HOST_COMMUNICATION)
        findings.reports.append(
            "host collectives: the host spends %.0f%% of the step in CPU collectives (gloo "
            "and the like, %dus per step); NCCL on the GPU is usually faster.%s"
            % (100 * share(host_comm, wall), host_comm // len(figures.result.steps),
               " Calls: %s." % ", ".join(calls) if calls else ""))
    return findings


CHECKER = Checker(NAME, check)
