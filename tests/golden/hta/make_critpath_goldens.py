#!/usr/bin/env python3
"""Critical paths by Holistic Trace Analysis (HTA), as golden files.

For each case (a PyTorch trace folder and a ``ProfilerStep#N``), HTA's own
``critical_path_analysis`` finds the path and this script writes what it
marks, in the trace's terms so any tool can be compared with it: the events
on the path as ``[name, ts]`` (``ts`` as the trace file writes it, looked up
by HTA's event index), the path's edges as ``[from name, from ts, from start?,
to name, to ts, to start?, type, weight]`` (HTA numbers nodes and flows
arbitrarily: compare them as sets), the path's length (sum of its edge
weights, µs) and HTA's breakdown by what bounds each edge (``bound_by``, µs).

Each case is run twice: as HTA does by default (every event rounded inward to
whole µs) and with ``HTA_DISABLE_NS_ROUNDING=1`` (the trace's own times, as
tfprof-shell keeps them). HTA 0.5.0 needs ``pandas<3`` here::

    python -m venv .venv-hta && .venv-hta/bin/pip install HolisticTraceAnalysis 'pandas<3'
    .venv-hta/bin/python tests/golden/hta/make_critpath_goldens.py     # all cases
    .venv-hta/bin/python tests/golden/hta/make_critpath_goldens.py --list
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import version
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

#: case name -> (trace folder relative to the repository, step)
CASES: dict[str, tuple[str, int]] = {
    "torch_cnn.step2": ("sample_profiles/torch_cnn", 2),
    "torch_cnn.step3": ("sample_profiles/torch_cnn", 3),
    "mixed.step1": ("tests/critpath/mixed", 1),
    "mixed.step2": ("tests/critpath/mixed", 2),
    "launch_bound.step2": ("tests/critpath/launch_bound", 2),
    "gpu_bound.step2": ("tests/critpath/gpu_bound", 2),
    "data_loader.step2": ("tests/critpath/data_loader", 2),
}
TRACE_FILES = (".pt.trace.json", ".pt.trace.json.gz")
MODES = {"rounded": {}, "ns": {"HTA_DISABLE_NS_ROUNDING": "1"}}


def _raw_events(folder: str) -> list[dict[str, Any]]:
    name = next(n for n in sorted(os.listdir(folder)) if n.endswith(TRACE_FILES))
    path = os.path.join(folder, name)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)["traceEvents"]


def hta_critical_path(folder: str, step: int) -> dict[str, Any]:
    """HTA's critical path of ``ProfilerStep#<step>`` in the trace of ``folder``
    (the environment's HTA_DISABLE_NS_ROUNDING applies)."""
    from hta.trace_analysis import TraceAnalysis

    logging.disable(logging.WARNING)
    raw = _raw_events(folder)
    with tempfile.TemporaryDirectory() as tmp:
        for name in os.listdir(folder):
            if name.endswith(TRACE_FILES):
                shutil.copy(os.path.join(folder, name), tmp)
        analyzer = TraceAnalysis(trace_dir=tmp, include_last_profiler_step=True)
        graph, ok = analyzer.critical_path_analysis(
            rank=0, annotation="ProfilerStep#%d" % step, instance_id=0)
    if not ok:
        raise SystemExit("HTA found no critical path for step %d of %s" % (step, folder))

    def where(node_id: int) -> list[Any]:
        node = graph.node_list[node_id]
        ev = raw[node.ev_idx]
        return [ev["name"], ev["ts"], bool(node.is_start)]

    edges = []
    for e in graph.critical_path_edges_set:
        edges.append(where(e.begin) + where(e.end) + [e.type.value.replace("critical_path_", ""),
                                                      float(e.weight)])
    edges.sort(key=lambda r: (r[1], r[4], r[0], r[3]))
    events = sorted([raw[i]["name"], raw[i]["ts"]] for i in graph.critical_path_events_set)
    breakdown = graph.get_critical_path_breakdown()
    by_bound = {str(k): float(v) for k, v in
                breakdown.groupby("bound_by").duration.sum().items() if k}
    return {"tool": "HolisticTraceAnalysis", "hta_version": version("HolisticTraceAnalysis"),
            "rounding": os.environ.get("HTA_DISABLE_NS_ROUNDING") != "1",
            "annotation": "ProfilerStep#%d" % step, "instance": 0,
            "length": float(sum(e[-1] for e in edges)), "by_bound": by_bound,
            "events": events, "edges": edges}


def _write(case: str, mode: str) -> None:
    folder, step = CASES[case]
    env = dict(os.environ, **MODES[mode])
    env.pop("HTA_DISABLE_NS_ROUNDING", None) if mode == "rounded" else None
    out = os.path.join(HERE, "%s.critpath.%s.json" % (case, mode))
    # each mode in its own process: HTA reads the rounding flag when it parses
    code = ("import json, sys; sys.path.insert(0, %r); import make_critpath_goldens as m; "
            "doc = m.hta_critical_path(%r, %d); "
            "open(%r, 'w').write(json.dumps(doc, indent=1) + '\\n')"
            % (HERE, os.path.join(ROOT, folder), step, out))
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    print("wrote", os.path.relpath(out, ROOT))


def main(argv: list[str]) -> int:
    if "--list" in argv:
        print("\n".join(CASES))
        return 0
    for case in [a for a in argv if not a.startswith("-")] or list(CASES):
        for mode in MODES:
            _write(case, mode)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
