#!/usr/bin/env python3
"""Write N rank traces of a data-parallel job, made of copies of the real recorded ones.

    python bench/make_rank_traces.py OUT_DIR --ranks 64 --blocks 8 [--slow 37]

The templates are the four ranks of sample_profiles/torch_ddp/delayed (PyTorch 2.13,
gloo, six traced steps of five all-reduces each, rank 3 sleeping 30 ms per step).
Rank r is template r % 3 (a rank without the delay), except rank ``--slow``, which is
template 3. Each output holds ``--blocks`` copies of its template's events, copy b
shifted by b times the templates' longest span (the same shift on every rank, so the
ranks stay on one clock), its ``ProfilerStep#`` markers renumbered (step 2 + 6b + j)
and its ``External id`` moved to a range of its own. The header's ``distributedInfo``
says rank r of N. Outputs are uncompressed ``rank<r>.bench.pt.trace.json``.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATES = os.path.join(os.path.dirname(HERE), "sample_profiles", "torch_ddp", "delayed")


def load_templates() -> list[dict]:
    docs = []
    for path in sorted(glob.glob(os.path.join(TEMPLATES, "*.pt.trace.json.gz"))):
        with gzip.open(path, "rt") as fh:
            docs.append(json.load(fh))
    return sorted(docs, key=lambda d: d["distributedInfo"]["rank"])


def _span(doc: dict) -> tuple[float, float]:
    times = [(e["ts"], e["ts"] + e.get("dur", 0)) for e in doc["traceEvents"]
             if e.get("ph") == "X"]
    return min(t[0] for t in times), max(t[1] for t in times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--slow", type=int, default=37)
    args = parser.parse_args()
    templates = load_templates()
    spans = [_span(d) for d in templates]
    period = max(b for _, b in spans) - min(a for a, _ in spans) + 1000.0
    os.makedirs(args.out_dir, exist_ok=True)
    for rank in range(args.ranks):
        doc = templates[3 if rank == args.slow else rank % 3]
        events = []
        for block in range(args.blocks):
            shift = block * period
            for ev in doc["traceEvents"]:
                if ev.get("ph") == "M":
                    if block == 0:
                        events.append(ev)
                    continue
                ev = dict(ev)
                if "ts" in ev:
                    ev["ts"] = ev["ts"] + shift
                name = ev.get("name", "")
                if isinstance(name, str) and name.startswith("ProfilerStep#"):
                    ev["name"] = "ProfilerStep#%d" % (int(name[13:]) + 6 * block)
                if isinstance(ev.get("args"), dict) and "External id" in ev["args"]:
                    ev["args"] = dict(ev["args"])
                    ev["args"]["External id"] += block * 1_000_000
                if ev.get("ph") in ("s", "f") and "id" in ev:
                    ev["id"] = ev["id"] + block * 1_000_000
                events.append(ev)
        header = {k: v for k, v in doc.items() if k != "traceEvents"}
        info = dict(header["distributedInfo"], rank=rank, world_size=args.ranks)
        info["pg_config"] = [dict(info["pg_config"][0], pg_size=args.ranks,
                                  ranks=list(range(args.ranks)))]
        header["distributedInfo"] = info
        header["traceEvents"] = events
        path = os.path.join(args.out_dir, "rank%d.bench.pt.trace.json" % rank)
        with open(path, "w") as fh:
            json.dump(header, fh)


if __name__ == "__main__":
    main()
