#!/usr/bin/env python3
"""Regenerate XProf's memory profile of the samples with allocator events (needs
``pip install xprof``).

Runs XProf's converter ``xspace_to_tool_data([path], "memory_profile", {})`` on
each sample's ``.xplane.pb`` and keeps, per allocator, its profile summary (the
peak's stats, time and the capacity), its special allocations (what XProf does
not attribute, e.g. "unused preallocated device memory") and how many active
allocations it lists at the peak, as ``<name>.memory_profile.json``. Nothing here
uses tfprof-shell::

    python tests/golden/xprof/make_xprof_memory.py
"""

from __future__ import annotations

import glob
import json
import os
from importlib.metadata import version

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
#: golden name -> the sample's directory under sample_profiles/
SAMPLES = {"jax_gpt": "jax_gpt", "memory_tf2": "memory/tf2",
           "memory_tf2_leak": "memory/tf2_leak"}


def memory_profile(path: str) -> dict:
    """XProf's memory profile of one .xplane.pb, per allocator, reduced (see the module)."""
    from xprof.convert import raw_to_tool_data

    data, _ = raw_to_tool_data.xspace_to_tool_data([path], "memory_profile", {})
    doc = json.loads(data)
    out = {}
    for allocator, profile in sorted(doc.get("memoryProfilePerAllocator", {}).items()):
        out[allocator] = {"profileSummary": profile["profileSummary"],
                          "specialAllocations": profile.get("specialAllocations", []),
                          "activeAllocations": len(profile.get("activeAllocations", []))}
    return out


def main() -> None:
    for name, sample in SAMPLES.items():
        found = glob.glob(os.path.join(ROOT, "sample_profiles", sample, "**", "*.xplane.pb"),
                          recursive=True)
        if len(found) != 1:
            raise SystemExit("%s: expected one .xplane.pb, found %d" % (sample, len(found)))
        result = {"xprof": version("xprof"), "sample": sample,
                  "allocators": memory_profile(found[0])}
        out = os.path.join(HERE, "%s.memory_profile.json" % name)
        with open(out, "w") as fh:
            json.dump(result, fh, indent=1, sort_keys=True)
            fh.write("\n")
        print("wrote %s" % os.path.relpath(out, ROOT))


if __name__ == "__main__":
    main()
