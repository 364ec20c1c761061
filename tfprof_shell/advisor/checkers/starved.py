"""StarvedDeviceChecker: a device idle most of its span, waiting for the host to
launch, or busy with many tiny kernels (launch overhead)."""

from __future__ import annotations

from ..catalog import STARVED_DEVICE as NAME
from .base import Checker, Findings, Subject
from .step_figures import share, step_figures

#: Idle at or above this share of the span, with host wait the larger part, is starved.
IDLE_SHARE = 0.5
#: At least this many kernels per step, and this share of them under 10 µs, is "many tiny".
TINY_COUNT = 100
TINY_SHARE = 0.5


def check(subject: Subject) -> Findings:
    """Reports on the average step and names the host ops that ran in the slowest
    step's host-wait gaps."""
    figures = step_figures(subject.model)
    findings = Findings()
    if figures is None or not any(s.devices for s in figures.result.steps):
        return findings
    steps = [s for s in figures.result.steps if s.devices]
    devs = [figures.device(s) or {} for s in steps]
    idle = sum(d.get("idle") or 0 for d in devs)
    span = sum(d.get("span") or 0 for d in devs)
    wait = [d.get("idle_host_wait") for d in devs]
    if share(idle, span) >= IDLE_SHARE:
        if None in wait:
            findings.reports.append(
                "idle device: the device is idle %.0f%% of its span on average (this "
                "format records no launch times, so host wait and queueing cannot be told "
                "apart)." % (100 * share(idle, span)))
        elif share(sum(wait), idle) >= 0.5:  # type: ignore[arg-type]
            slow = max(steps, key=lambda s: s.wall)
            waits = figures.device_spans(slow, "idle: host wait")
            ops, lines = figures.host_ops_over(waits), figures.python_lines_over(waits)
            findings.reports.append(
                "starved device: idle %.0f%% of its span, %.0f%% of that waiting for the "
                "host to launch the next work (host wait %dus of %dus per step). The host "
                "is the bottleneck: fewer, larger kernels (torch.compile, CUDA graphs, "
                "jit), less Python per step, a larger batch.%s"
                % (100 * share(idle, span), 100 * share(sum(wait), idle),  # type: ignore
                   sum(wait) // len(devs), span // len(devs),  # type: ignore[arg-type]
                   " In step %d the host ran: %s." % (slow.step, ", ".join(ops))
                   if ops else "") + _lines(lines))
    kernels = sum(s.devices[figures.busiest(s)].kernel_count for s in steps)
    tiny = sum(s.devices[figures.busiest(s)].short_kernels for s in steps)
    if kernels / len(steps) >= TINY_COUNT and share(tiny, kernels) >= TINY_SHARE:
        findings.reports.append(
            "many tiny kernels: %d kernels per step, %.0f%% of them under 10us, where "
            "launch overhead dominates. Fuse them (torch.compile, XLA), use CUDA graphs, "
            "or batch more work per kernel; see the kernels command."
            % (kernels // len(steps), 100 * share(tiny, kernels)))
    return findings


def _lines(lines: list[str]) -> str:
    return " Your Python lines meanwhile: %s." % ", ".join(lines) if lines else ""


CHECKER = Checker(NAME, check)
