"""InputBoundChecker: steps whose host waits a large share of the wall time on input."""

from __future__ import annotations

from ...model.intervals import INPUT
from ..catalog import INPUT_BOUND as NAME
from .base import Checker, Findings, Subject
from .step_figures import share, step_figures

#: Input at or above this share of a step's wall time is reported.
INPUT_SHARE = 0.10


def check(subject: Subject) -> Findings:
    """One report with the average input share and the worst step, naming its input
    waits and the host ops that ran during them."""
    figures = step_figures(subject.model)
    findings = Findings()
    if figures is None:
        return findings
    rows = [(share(figures.host(s)["input"], figures.host(s)["wall"]), s)
            for s in figures.result.steps]
    bad = [(r, s) for r, s in rows if r >= INPUT_SHARE]
    if not bad:
        return findings
    worst, step = max(bad, key=lambda x: x[0])
    mean = sum(r for r, _ in rows) / len(rows)
    host = figures.host(step)
    spans = figures.host_spans(step, INPUT)
    waits, ops = figures.host_ops_over(spans, kind=INPUT), figures.host_ops_over(spans)
    lines = figures.python_lines_over(spans)
    findings.reports.append(
        "input-bound: %d of %d steps wait on the input pipeline for %.0f%% of their time or "
        "more (%.0f%% on average; step %d: %dus of %dus). Look at the data loader: more "
        "workers (DataLoader num_workers, tf.data num_parallel_calls), prefetching "
        "(prefetch_factor, dataset.prefetch), and work moved out of __getitem__ / map.%s%s"
        % (len(bad), len(rows), 100 * INPUT_SHARE, 100 * mean, step.step, host["input"] or 0,
           host["wall"] or 0,
           " In step %d the input waited in: %s." % (step.step, ", ".join(waits)) if waits
           else "",
           " Host ops meanwhile: %s." % ", ".join(ops) if ops else "")
        + (" Your Python lines meanwhile: %s." % ", ".join(lines) if lines else ""))
    return findings


CHECKER = Checker(NAME, check)
