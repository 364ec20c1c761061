#!/usr/bin/env python3
"""Regenerate XProf's per-step time breakdown of the JAX GPU samples (needs
``pip install xprof``).

Runs XProf's converter ``xspace_to_tool_data([path], "input_pipeline_analyzer",
{})`` on each sample and keeps its step-time table (one row per step: step
number, then the columns named in ``columns``, in ms as XProf gives them) as
``<sample>.steps.json``. Nothing here uses tfprof-shell::

    python tests/golden/xprof/make_xprof_steps.py
"""

from __future__ import annotations

import glob
import json
import os
from importlib.metadata import version

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SAMPLES = ("jax_gpt", "jax_attention")


def step_table(path: str) -> dict:
    """XProf's step-time table of one .xplane.pb (the input pipeline tool's second table)."""
    from xprof.convert import raw_to_tool_data

    data, _ = raw_to_tool_data.xspace_to_tool_data([path], "input_pipeline_analyzer", {})
    tables = json.loads(data)
    table = next(t for t in tables if any(c.get("id") == "stepTimeMs" for c in t["cols"]))
    ids = [c["id"] for c in table["cols"]]
    keep = [i for i in ids if i != "tooltip"]
    rows = [[row["c"][ids.index(i)]["v"] for i in keep] for row in table["rows"]]
    return {"columns": keep, "rows": rows}


def main() -> None:
    for name in SAMPLES:
        path = glob.glob(os.path.join(ROOT, "sample_profiles", name, "**", "*.xplane.pb"),
                         recursive=True)[0]
        doc = {"made_by": "xprof %s: xspace_to_tool_data([<xplane.pb>], "
                          "'input_pipeline_analyzer', {})" % version("xprof"),
               "sample": os.path.relpath(path, ROOT)}
        cache = os.path.join(os.path.dirname(path), "ALL_HOSTS.op_stats_v2.pb")
        had_cache = os.path.exists(cache)
        doc.update(step_table(path))
        if not had_cache and os.path.exists(cache):
            os.remove(cache)  # XProf caches its op stats beside the sample
        with open(os.path.join(HERE, name + ".steps.json"), "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)
            fh.write("\n")


if __name__ == "__main__":
    main()
