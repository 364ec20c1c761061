"""Per-step temporal breakdown by Holistic Trace Analysis (HTA), as a golden file.

HTA has no per-step breakdown; this runs its own ``get_temporal_breakdown`` on
each iteration's events (HTA's ``iteration`` column: a GPU event's step is the
step of the runtime call that launched it), with the last step included.

    python -m venv .venv-hta && .venv-hta/bin/pip install HolisticTraceAnalysis
    .venv-hta/bin/python bench/hta_steps.py sample_profiles/torch_cnn \
        tests/golden/hta/torch_cnn.steps.json
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import tempfile
from importlib.metadata import version


def hta_steps(trace_dir: str) -> dict:
    """{"hta_version", "steps": [{step, kernel_time, idle, compute, non_compute}]} in µs."""
    from hta.trace_analysis import TraceAnalysis

    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        # HTA reads every .json/.gz of the folder: give it only the traces.
        for name in os.listdir(trace_dir):
            if name.endswith((".pt.trace.json", ".pt.trace.json.gz")):
                shutil.copy(os.path.join(trace_dir, name), tmp)
        analyzer = TraceAnalysis(trace_dir=tmp, include_last_profiler_step=True)
        full = analyzer.t.get_trace(0)
        steps = []
        for it in sorted(int(i) for i in set(full.iteration) if i >= 0):
            analyzer.t.traces[0] = full[full.iteration == it]
            row = analyzer.get_temporal_breakdown(visualize=False).to_dict("records")[0]
            steps.append({"step": it, "kernel_time": int(row["kernel_time(us)"]),
                          "idle": int(row["idle_time(us)"]),
                          "compute": int(row["compute_time(us)"]),
                          "non_compute": int(row["non_compute_time(us)"])})
    return {"tool": "HolisticTraceAnalysis", "hta_version": version("HolisticTraceAnalysis"),
            "method": "get_temporal_breakdown on each iteration's events, "
                      "include_last_profiler_step=True", "steps": steps}


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: hta_steps.py TRACE_DIR OUT.json", file=sys.stderr)
        return 2
    doc = hta_steps(argv[1])
    with open(argv[2], "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=2)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
