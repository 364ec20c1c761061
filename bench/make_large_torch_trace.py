#!/usr/bin/env python3
"""Write a large PyTorch trace for benchmarks: a real trace's steps repeated.

Every ``ProfilerStep#N`` of the input is copied end to end until the output
reaches the size asked for; each copy gets new step numbers, correlation and
External ids, so launches still pair with their kernels::

    python bench/make_large_torch_trace.py sample_profiles/torch_cnn/worker0.*.json.gz \
        OUT.pt.trace.json [--mb 170]
"""

from __future__ import annotations

import argparse
import gzip
import json
import re


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("out")
    parser.add_argument("--mb", type=float, default=170.0)
    args = parser.parse_args()
    opener = gzip.open if args.trace.endswith(".gz") else open
    with opener(args.trace, "rt") as fh:
        doc = json.load(fh)
    events = doc["traceEvents"]
    timed = [e for e in events if isinstance(e.get("ts"), (int, float))]
    start = min(e["ts"] for e in timed)
    end = max(e["ts"] + e.get("dur", 0) for e in timed)
    period = end - start + 100.0
    steps = sorted({int(m.group(1)) for e in events
                    for m in [re.fullmatch(r"ProfilerStep#(\d+)", str(e.get("name", "")))] if m})
    one = len(json.dumps(events))
    copies = max(1, int(args.mb * 1e6 / one))
    ids = max([int(e.get("args", {}).get(k, 0) or 0) for e in events
               for k in ("correlation", "External id")] + [0]) + 1
    out = []
    for c in range(copies):
        for e in timed:
            e2 = dict(e)
            e2["ts"] = e["ts"] + c * period
            a = e.get("args")
            if isinstance(a, dict):
                a = dict(a)
                for k in ("correlation", "External id"):
                    if isinstance(a.get(k), int):
                        a[k] += c * ids
                e2["args"] = a
            m = re.fullmatch(r"ProfilerStep#(\d+)", str(e.get("name", "")))
            if m:
                e2["name"] = "ProfilerStep#%d" % (int(m.group(1)) + c * len(steps))
            if e.get("ph") in ("s", "f") and isinstance(e.get("id"), int):
                e2["id"] = e["id"] + c * ids
            out.append(e2)
    out += [e for e in events if not isinstance(e.get("ts"), (int, float))]
    doc["traceEvents"] = out
    with open(args.out, "w") as fh:
        json.dump(doc, fh)
    print("%s: %d copies of %d steps, %d events" % (args.out, copies, len(steps), len(out)))


if __name__ == "__main__":
    main()
