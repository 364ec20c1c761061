#!/usr/bin/env python3
"""Reference facts of a folder of gloo rank traces, straight from the raw events.

    python tests/golden/collectives/make_collectives_reference.py FOLDER OUT.json

Uses only the standard library and no tfprof-shell code. For each rank (the
trace's ``distributedInfo.rank``) it reads the ``c10d::*`` cpu ops (the
outermost ones of each thread), the ``ProfilerStep#N`` annotations and the
top-level events of the calling thread, then writes:

* ``instances``: the k-th collective call of each step on every rank, with
  op, size (elements of the first argument's ``Input Dims``), each rank's
  arrival (the call's ``ts``), the skew (latest - earliest) and the last rank;
* ``steps``: per step, each rank's own lateness (see below), the straggler
  (the largest), its cause (the top-level region name whose wall time in the
  window before its most charged arrival exceeds the other ranks' median the
  most, "(no event)" for uncovered time) and, for comparison, the rank with the
  longest ``ProfilerStep`` wall (the old criterion);
* ``last_counts``: how often each rank arrived last.

Own lateness: lateness = arrival - earliest arrival; when some rank arrives at
an instance before the last rank arrived at the previous one (an asynchronous
chain), a rank is charged only what its lateness grew since that instance.
The cause's window on a rank runs from the later of its previous call's end
and the last arrival at that call's instance, to its arrival.
"""

from __future__ import annotations

import glob
import gzip
import json
import os
import statistics
import sys


def read_rank(path):
    with gzip.open(path, "rt") as fh:
        doc = json.load(fh)
    rank = doc["distributedInfo"]["rank"]
    events = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    steps = []
    for e in events:
        if e["name"].startswith("ProfilerStep#"):
            steps.append((e["ts"], e["ts"] + e["dur"], int(e["name"].split("#")[1]), e["tid"]))
    steps.sort()
    calls = []
    for e in events:
        if e.get("cat") == "cpu_op" and e["name"].startswith("c10d::"):
            calls.append(e)
    calls.sort(key=lambda e: (e["tid"], e["ts"], -e["dur"]))
    outer, open_end, open_tid = [], None, None
    for e in calls:
        if open_tid == e["tid"] and e["ts"] < open_end:
            continue
        outer.append(e)
        open_end, open_tid = e["ts"] + e["dur"], e["tid"]
    outer.sort(key=lambda e: e["ts"])
    out = []
    for e in outer:
        op = e["name"][len("c10d::"):].rstrip("_")
        if op in ("send", "recv", "recv_any_source"):
            continue
        step = next((s for a, b, s, _ in steps if a <= e["ts"] < b), -1)
        dims = e["args"]["Input Dims"][0]
        shapes = dims if dims and isinstance(dims[0], list) else [dims]
        size = 0
        for shape in shapes:
            n = 1
            for d in shape:
                n *= d
            size += n
        out.append({"start": e["ts"], "end": e["ts"] + e["dur"], "op": op, "size": size,
                    "step": step, "tid": e["tid"]})
    threads = {c["tid"] for c in out} | {t for *_, t in steps}
    tops = []
    for tid in threads:
        mine = sorted((e for e in events if e["tid"] == tid
                       and e.get("cat") in ("cpu_op", "user_annotation")
                       and not e["name"].startswith("ProfilerStep#")),
                      key=lambda e: (e["ts"], -e["dur"]))
        reach = None
        for e in mine:
            if reach is not None and e["ts"] < reach:
                continue
            tops.append((e["ts"], e["ts"] + e["dur"], e["name"]))
            reach = e["ts"] + e["dur"]
    tops.sort()
    return rank, out, steps, tops


def walls_in(tops, start, end):
    walls, pieces = {}, []
    for a, b, name in tops:
        a, b = max(a, start), min(b, end)
        if b > a:
            walls[name] = walls.get(name, 0.0) + (b - a)
            pieces.append((a, b))
    covered, reach = 0.0, start
    for a, b in sorted(pieces):
        if b > reach:
            covered += b - max(a, reach)
            reach = b
    walls["(no event)"] = (end - start) - covered
    return walls


def main(folder, out_path):
    ranks = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.pt.trace.json.gz"))):
        rank, calls, steps, tops = read_rank(path)
        ranks["rank%d" % rank] = (calls, steps, tops)
    names = sorted(ranks, key=lambda n: int(n[4:]))
    # the k-th call of each step on every rank
    keyed = {}
    for name in names:
        counts = {}
        for call in ranks[name][0]:
            k = counts.get(call["step"], 0)
            counts[call["step"]] = k + 1
            keyed.setdefault((call["step"], k), {})[name] = call
    order = sorted(keyed, key=lambda key: min(c["start"] for c in keyed[key].values()))
    instances = []
    previous = None
    where = {}
    for index, key in enumerate(order):
        calls = keyed[key]
        assert len(calls) == len(names), "a rank misses %s" % (key,)
        assert len({(c["op"], c["size"]) for c in calls.values()}) == 1, key
        arrival = {n: calls[n]["start"] for n in names}
        first = min(arrival.values())
        last = max(names, key=lambda n: (arrival[n], n))
        late = {n: arrival[n] - first for n in names}
        own = dict(late)
        if previous is not None and first < max(previous["arrival"].values()):
            before = previous["late"]
            own = {n: max(0.0, late[n] - before[n]) for n in names}
        inst = {"instance": index, "step": key[0], "op": calls[names[0]]["op"],
                "size": calls[names[0]]["size"], "arrival": arrival,
                "skew": arrival[last] - first, "last": last, "late": late, "own": own,
                "calls": calls}
        for n in names:
            where[(n, id(calls[n]))] = inst
        instances.append(inst)
        previous = inst
    steps_out = []
    for step in sorted({i["step"] for i in instances}):
        mine = [i for i in instances if i["step"] == step]
        total = {n: sum(i["own"][n] for i in mine) for n in names}
        straggler = max(names, key=lambda n: (total[n], n))
        charged = max(mine, key=lambda i: i["own"][straggler])
        walls = {}
        for n in names:
            calls, marks, tops = ranks[n]
            call = charged["calls"][n]
            pos = calls.index(call)
            if pos > 0:
                prev = calls[pos - 1]
                start = max(prev["end"], max(where[(n, id(prev))]["arrival"].values()))
            else:
                start = next(a for a, b, _, _ in marks if a <= call["start"] < b)
            walls[n] = walls_in(tops, start, call["start"]) if call["start"] > start else {}
        own_walls = walls[straggler]
        best = None
        for region, value in own_walls.items():
            others = statistics.median([walls[n].get(region, 0.0) for n in names
                                        if n != straggler])
            if best is None or value - others > best["excess"]:
                best = {"region": region, "excess": value - others, "rank_us": value,
                        "others_us": others}
        if best is not None and best["excess"] <= 0:
            best = None
        wall = {n: next(b - a for a, b, s, _ in ranks[n][1] if s == step) for n in names}
        steps_out.append({"step": step, "straggler": straggler, "lateness": total,
                          "instance": charged["instance"], "cause": best,
                          "longest_wall": max(names, key=lambda n: wall[n]), "wall": wall})
    doc = {"folder": os.path.basename(os.path.normpath(folder)), "ranks": names,
           "instances": [{k: v for k, v in i.items() if k not in ("calls", "late", "own")}
                         for i in instances],
           "steps": steps_out,
           "last_counts": {n: sum(1 for i in instances if i["last"] == n) for n in names}}
    with open(out_path, "w") as fh:
        json.dump(doc, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
