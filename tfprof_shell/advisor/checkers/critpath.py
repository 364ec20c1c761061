"""CriticalPathChecker: what bounds the steps, read off their critical paths."""

from __future__ import annotations

from ...errors import RequestError
from ...model.intervals import HAS_DEVICE
from ...model.path_input import KIND_NAMES
from ...views.critpath import DEFINITIONS, critical_paths
from ...views.critpath_graph import BOUNDS
from ..catalog import CRITICAL_PATH as NAME
from .base import Checker, Findings, Subject

#: What each bound category means and what usually shortens it.
_ADVICE = {
    "cpu_bound": ("host work", "the device waits for the host: fewer, larger ops "
                  "(torch.compile, jit, CUDA graphs) and less Python between launches "
                  "shorten it"),
    "gpu_compute_bound": ("device kernels", "faster kernels shorten it (mixed precision, "
                          "fusion, larger batches per kernel); host work is hidden behind "
                          "them"),
    "gpu_communication_bound": ("collectives", "overlap communication with compute "
                                "(bucketing, asynchronous collectives) or send less"),
    "gpu_kernel_launch_overhead": ("kernel launch latency", "the device's queue runs empty "
                                   "between launches: launch earlier, or batch launches in "
                                   "CUDA graphs"),
    "gpu_kernel_kernel_overhead": ("gaps between kernels", "many short kernels: fuse them"),
    "data_loading": ("data loading", "more DataLoader workers, pinned memory and prefetching "
                     "shorten it"),
}
#: TensorFlow 1 graph profiles: their path is the dataflow chain of the nodes.
_GRAPH_KINDS = ("profile", "graph")
#: Names listed for the dominant category.
TOP = 3


def _pct(part: int, whole: int) -> str:
    share = 100.0 * part / whole
    return "<1%" if share < 0.5 else "%.0f%%" % share


def check(subject: Subject) -> Findings:
    """One report: the category that bounds most of the steps' critical paths, the
    work in it that the paths spend most time on, and what usually helps."""
    findings = Findings()
    model = subject.model
    graph = model.source.kind in _GRAPH_KINDS
    if graph and not any(n.inputs for n in model.nodes.values()):
        return findings
    if not graph and HAS_DEVICE not in model.intervals().has:
        return findings  # a CPU-only trace: host work bounds it, nothing to add
    try:
        result = critical_paths(model)
    except RequestError as exc:
        findings.notes.append("%s: %s" % (NAME, exc.message))
        return findings
    total = sum(p.length for p in result.paths)
    if not total:
        return findings
    bounds: dict[str, int] = {}
    names: dict[str, dict[str, int]] = {}
    for p in result.paths:
        ev = p.input.events if p.input is not None else None
        for _, _, w, info in p.packed:
            if not w:
                continue
            bound, attr = BOUNDS[(info >> 3) & 7] or "cpu_bound", (info >> 6) - 1
            bounds[bound] = bounds.get(bound, 0) + w
            if attr >= 0 and ev is not None:
                by_name = names.setdefault(bound, {})
                key = "%s (%s)" % (ev[attr][3], KIND_NAMES[ev[attr][2]])
                by_name[key] = by_name.get(key, 0) + w
    top, time = max(bounds.items(), key=lambda kv: kv[1])
    what, advice = _ADVICE.get(top, (top, ""))
    if all(p.definition == "dataflow" for p in result.paths):
        what, advice = ("ops on the graph's longest dataflow chain",
                        "they run one after another: faster ops on this chain, or a graph "
                        "whose work runs in parallel with it, shorten the step")
    heavy = sorted(names.get(top, {}).items(), key=lambda kv: -kv[1])[:TOP]
    wall = sum(p.wall for p in result.paths)
    others = ", ".join("%s %s" % (k, _pct(v, total))
                       for k, v in sorted(bounds.items(), key=lambda kv: -kv[1]) if k != top)
    defs = sorted({p.definition for p in result.paths})
    findings.reports.append(
        "critical path: %.0f%% of the steps' critical path is %s (%s): %dus of %dus of path "
        "over %d window%s of %dus%s. %s%s.%s"
        % (100.0 * time / total, what, top, time // 1000, total // 1000, len(result.paths),
           "" if len(result.paths) == 1 else "s", wall // 1000,
           "; the rest: %s" % others if others else "",
           "Most of it: %s. " % ", ".join("%s %dus" % (n, t // 1000) for n, t in heavy)
           if heavy else "", advice[:1].upper() + advice[1:] if advice else "",
           " (Path: %s.)" % "; ".join(DEFINITIONS[d] for d in defs if d != "hta")
           if any(d != "hta" for d in defs) else ""))
    return findings


CHECKER = Checker(NAME, check)
