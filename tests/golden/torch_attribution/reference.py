#!/usr/bin/env python3
"""Self device time per op of a PyTorch profiler trace, by PyTorch's own rule, from the
raw events alone: the reference the loader (tfprof_shell/load/torch_trace.py) is
tested against. It shares no code with tfprof-shell and is written to be read, not
to be fast (it looks every launch's enclosing ranges up by scanning).

    python reference.py TRACE.json[.gz] ...      # writes NAME.reference.json beside this file
    python reference.py --check TRACE ...        # exit 1 if a golden differs

The rule (what ``key_averages``' self device time does, on every Kineto generation):

1. A device event is device work: category ``kernel``, ``gpu_memcpy``, ``gpu_memset``,
   ``mtia_ccp_events`` (or the first traces' ``Kernel``, ``Memcpy``, ``Memset``).
2. Its launch is the host event of a launching category (``cuda_runtime``,
   ``cuda_driver``, ``mtia_runtime``, ``xpu_runtime``, ``xpu_driver``,
   ``privateuse1_runtime``, ``privateuse1_driver``, ``hpu_op``, ``glow_runtime``, or
   ``Runtime``, ``Driver``, ``runtime``) with the same ``args.correlation``.
3. Its owner is the innermost profiler range open at the launch's start on the
   launch's (pid, tid): a ``cpu_op`` / ``operator`` / ``Operator`` or
   ``user_annotation`` event with start <= launch start < start + dur; innermost =
   latest start, then shortest, then latest in the file. A ``ProfilerStep#N``
   range owns as ``ProfilerStep*`` (key_averages' name).
4. Work whose launch no range encloses is unattributed ("launched outside any op").
5. Work with no launch in the trace: if the trace's ``External id``s agree with rule
   3 wherever both are known (a device event's ``External id``, or the first traces'
   ``external id``, equals its owner's, for every owner that is an op or annotation),
   the cpu op with the event's External id owns it, unless that id equals the
   event's own correlation (older traces wrote the correlation there); else it is
   unattributed ("no launch in the trace").
6. A device is FAMILY:INDEX: the launch category's family (cuda_* gpu, mtia_* mtia,
   xpu_* xpu, privateuse1_* privateuse1, hpu_op hpu), else mtia for
   ``mtia_ccp_events``, else the one family of all the trace's launches, else gpu;
   INDEX is ``args.device``, else the event's pid.

Output (JSON): self device µs per owner name (``ops``), the unattributed µs by reason,
µs per device, the total, and the External id agreement counts. Durations are the
trace's own (floats), summed without rounding.
"""

from __future__ import annotations

import gzip
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

DEVICE = {"kernel", "gpu_memcpy", "gpu_memset", "mtia_ccp_events", "Kernel", "Memcpy",
          "Memset"}
LAUNCH_FAMILY = {"cuda_runtime": "gpu", "cuda_driver": "gpu", "Runtime": "gpu",
                 "runtime": "gpu", "Driver": "gpu", "mtia_runtime": "mtia",
                 "xpu_runtime": "xpu", "xpu_driver": "xpu",
                 "privateuse1_runtime": "privateuse1", "privateuse1_driver": "privateuse1",
                 "hpu_op": "hpu", "glow_runtime": ""}
RANGES = {"cpu_op", "operator", "Operator", "user_annotation"}
CPU_OPS = {"cpu_op", "operator", "Operator"}
OUTSIDE = "launched outside any op"
NO_LAUNCH = "no launch in the trace"


def read_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        doc = json.load(fh)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return [e for e in events if isinstance(e, dict) and e.get("ph") == "X"]


def args_of(e):
    return e.get("args") or {}


def external_id(e):
    a = args_of(e)
    return a["External id"] if "External id" in a else a.get("external id")


def innermost_range(ranges, launch):
    """The innermost range open at the launch's start on its thread, or None."""
    best = None
    for index, r in ranges:
        if (r.get("pid"), r.get("tid")) != (launch.get("pid"), launch.get("tid")):
            continue
        start, dur = float(r["ts"]), float(r.get("dur", 0))
        if start <= float(launch["ts"]) < start + dur:
            key = (start, -dur, index)
            if best is None or key > best[0]:
                best = (key, r)
    return best[1] if best else None


def owner_name(r):
    name = str(r["name"])
    return "ProfilerStep*" if name.startswith("ProfilerStep#") else name


def reference(events):
    ranges = [(i, e) for i, e in enumerate(events) if e.get("cat") in RANGES]
    launches = {}
    for e in events:
        if e.get("cat") in LAUNCH_FAMILY and args_of(e).get("correlation") is not None:
            launches[args_of(e)["correlation"]] = e
    families = {LAUNCH_FAMILY[e["cat"]] for e in launches.values()} - {""}
    default_family = families.pop() if len(families) == 1 else "gpu"
    ops, unattributed, devices = {}, {OUTSIDE: 0.0, NO_LAUNCH: 0.0}, {}
    checked = disagree = 0
    no_launch = []
    for e in events:
        if e.get("cat") not in DEVICE:
            continue
        dur = float(e.get("dur", 0))
        launch = launches.get(args_of(e).get("correlation"))
        family = LAUNCH_FAMILY[launch["cat"]] if launch is not None else ""
        if not family:
            family = "mtia" if e["cat"] == "mtia_ccp_events" else default_family
        index = args_of(e).get("device")
        device = "%s:%d" % (family, int(index if index is not None else e.get("pid")))
        devices[device] = devices.get(device, 0.0) + dur
        if launch is None:
            no_launch.append(e)
            continue
        owner = innermost_range(ranges, launch)
        if owner is None:
            unattributed[OUTSIDE] += dur
            continue
        name = owner_name(owner)
        ops[name] = ops.get(name, 0.0) + dur
        ext = external_id(e)
        if ext is not None and name != "ProfilerStep*":
            checked += 1
            disagree += ext != external_id(owner)
    by_ext = {}
    if not disagree:
        for _, r in ranges:
            if r.get("cat") in CPU_OPS and external_id(r) is not None:
                by_ext.setdefault(external_id(r), r)
    for e in no_launch:
        dur = float(e.get("dur", 0))
        ext = external_id(e)
        owner = by_ext.get(ext) if ext != args_of(e).get("correlation") else None
        if owner is None:
            unattributed[NO_LAUNCH] += dur
        else:
            ops[owner_name(owner)] = ops.get(owner_name(owner), 0.0) + dur
    total = sum(ops.values()) + sum(unattributed.values())
    return {"ops": {k: round(v, 3) for k, v in sorted(ops.items())},
            "unattributed": {k: round(v, 3) for k, v in unattributed.items()},
            "devices": {k: round(v, 3) for k, v in sorted(devices.items())},
            "total": round(total, 3),
            "external_id": {"checked": checked, "disagree": disagree}}


def golden_path(trace):
    """tests/golden/torch_attribution/NAME.reference.json for a trace NAME.pt.trace.json.gz."""
    name = os.path.basename(trace)
    for suffix in (".gz", ".json", ".pt.trace"):
        if name.endswith(suffix):
            name = name[:-len(suffix)]
    return os.path.join(HERE, name + ".reference.json")


def main(argv):
    check = "--check" in argv
    failed = 0
    for trace in (a for a in argv if a != "--check"):
        text = json.dumps(dict(reference(read_events(trace)), trace=os.path.basename(trace)),
                          indent=1, sort_keys=True) + "\n"
        path = golden_path(trace)
        if check:
            with open(path, encoding="utf-8") as fh:
                if fh.read() != text:
                    print("differs: %s" % path)
                    failed = 1
        else:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            print("wrote %s" % path)
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
