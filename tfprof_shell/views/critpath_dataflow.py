"""The critical path of a TensorFlow 1 graph: its longest dataflow chain of measured op times.

A TF1 profile (a ProfileProto, or a GraphDef with RunMetadata) records no
launches or streams, but it has what a trace lacks: the graph's real data and
control dependencies. In each step, an op that ran depends on each of its
inputs that ran before it (by start time, which also breaks the back edges of
loops); the path is the chain whose summed op times (accelerator plus cpu,
µs precision) is largest. An op counts as gpu_compute_bound when most of its
time ran on an accelerator, else as cpu_bound.
"""

from __future__ import annotations

from typing import Optional, Sequence

from .. import regex
from ..errors import RequestError
from ..model import Model
from ..model.path_input import OP, PathInput
from .critpath_result import CritPath, CritPathResult, Packed, WhatIf, Window
from .critpath_graph import CPU, DEPENDENCY, GPU_COMPUTE, NONE, OPERATOR, pack
from .critpath_whatif import WhatIfRule


def dataflow_paths(model: Model, step: int = -1, region: str = "",
                   whatif: Sequence[WhatIfRule] = ()) -> CritPathResult:
    """The dataflow path of each step (or of ``step``) of a graph profile."""
    if not any(n.inputs for n in model.nodes.values()):
        raise RequestError("this profile records no dependencies between its events (no "
                           "graph inputs, no launches or call stacks): no critical path; "
                           "give the GraphDef (--graph_path) with TensorFlow 1 run metadata")
    if region:
        raise RequestError("-region needs annotations, which a TensorFlow 1 graph profile "
                           "does not have; use -step N")
    steps = list(model.steps)
    if step >= 0 and step not in steps:
        raise RequestError("-step %d not found; available steps: %s"
                           % (step, " ".join(map(str, steps)) or "none"))
    result = CritPathResult([])
    for n, s in enumerate([step] if step >= 0 else steps):
        result.paths.append(_step_path(model, s, n, whatif))
    return result


def _step_path(model: Model, step: int, instance: int,
               rules: Sequence[WhatIfRule]) -> CritPath:
    events = []
    index: dict[str, int] = {}
    cost: list[tuple[int, int]] = []  # (accelerator ns, cpu ns) per event
    for node in model.sorted_nodes():
        rec = node.exec_step(step)
        if rec is None or not rec.run_count:
            continue
        acc, cpu = rec.accelerator_micros() * 1000, rec.cpu_micros() * 1000
        start, end = rec.all_start_micros * 1000, rec.latest_end_micros * 1000
        index[node.name] = len(events)
        device = sorted(rec.devices)[0] if rec.devices else ""
        events.append((start, max(end, start), OP, node.name, node.op, "graph", device,
                       rec.all_start_micros, rec.latest_end_micros - rec.all_start_micros,
                       None, None, None, None))
        cost.append((acc, cpu))
    if not events:
        raise RequestError("step %d ran no op with a recorded time" % step)
    inp = PathInput(events, "dataflow", "TensorFlow 1 graph and run metadata")
    window = Window("step %d" % step, instance, min(e[0] for e in events),
                    max(e[1] for e in events), step)
    preds = [[index[src] for src in model.nodes[e[3]].inputs.values() if src in index]
             for e in events]
    length, path = _longest(events, preds, [a + c for a, c in cost])
    out = CritPath(window, "dataflow", inp, length, _steps(path, cost, [a + c for a, c in cost]),
                   len(events), sum(len(p) for p in preds))
    if rules:
        weights = []
        changed = 0
        for e, (a, c) in zip(events, cost):
            f = _factor(rules, e)
            weights.append(a + c if f is None else int(round((a + c) * f)))
            changed += f is not None
        new_length, new_path = _longest(events, preds, weights)
        out.whatif = WhatIf(tuple(rules), changed, new_length, _steps(new_path, cost, weights),
                            out.wall - (length - new_length))
    return out


def _factor(rules: Sequence[WhatIfRule], e: tuple) -> Optional[float]:
    for rule in rules:
        if rule.field == "bound":
            continue
        if regex.fullmatch(rule.pattern, str(e[4] if rule.field == "cat" else e[3])):
            return rule.factor
    return None


def _longest(events: list[tuple], preds: list[list[int]], weight: list[int]
             ) -> tuple[int, list[int]]:
    """(length, the ops of the longest chain in order); an op depends on inputs that
    started before it (ties: the input listed first in name order)."""
    order = sorted(range(len(events)), key=lambda i: (events[i][0], i))
    rank = {i: r for r, i in enumerate(order)}
    dist = [0] * len(events)
    best = [-1] * len(events)
    for v in order:
        top, via = 0, -1
        for u in preds[v]:
            if rank[u] < rank[v] and (via < 0 or dist[u] > top):
                top, via = dist[u], u
        dist[v] = top + weight[v]
        best[v] = via
    end = max(range(len(events)), key=lambda v: (dist[v], -rank[v]))
    chain = []
    while end >= 0:
        chain.append(end)
        end = best[end]
    chain.reverse()
    return dist[chain[-1]], chain


def _steps(chain: list[int], cost: list[tuple[int, int]], weight: list[int]) -> list[Packed]:
    """Each op's own time as one edge (bound by the larger of its accelerator and cpu
    time), joined by zero-weight dependencies."""
    out: list[Packed] = []
    for k, v in enumerate(chain):
        if k:
            out.append((~chain[k - 1], v, 0, pack(DEPENDENCY, NONE, -1)))
        acc, cpu = cost[v]
        out.append((v, ~v, weight[v], pack(OPERATOR, GPU_COMPUTE if acc > cpu else CPU, v)))
    return out
