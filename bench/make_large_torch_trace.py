#!/usr/bin/env python3
"""Write a large PyTorch profiler trace made of copies of a real step.

The template is one step of the real trace in sample_profiles/torch_cnn (a
CNN plus a transformer layer, PyTorch 2.11 on an H100): every event the
profiler recorded between the start and the end of ``ProfilerStep#2`` on the
host (``cpu_op``, ``cuda_runtime``, ``cuda_driver``, ``user_annotation``,
``python_function`` unless --no-python, memory instants, flow events), and
the GPU events (``kernel``, ``gpu_memcpy``, ``gpu_memset``) launched from it.
Step i is the template shifted by i step lengths, its ``ProfilerStep#`` marker
renumbered and its ``External id``, ``correlation``, ``Python id`` and flow
ids moved to a range of their own, so every copy is linked as the real one is.
The output is an uncompressed ``.pt.trace.json`` (the form both tfprof-shell
and Holistic Trace Analysis read fastest)::

    python bench/make_large_torch_trace.py OUT.pt.trace.json --steps 300 [--no-python]
"""

from __future__ import annotations

import argparse
import gzip
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(os.path.dirname(HERE), "sample_profiles", "torch_cnn")
TEMPLATE_STEP = "ProfilerStep#2"
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")
#: Arguments holding ids that must stay unique per copy, and each one's stride field.
ID_ARGS = ("External id", "correlation", "Python id", "Python parent id")


def template(doc: dict, python: bool) -> tuple[list[dict], list[dict], float]:
    """(metadata events, the step's events, the step's length in microseconds)."""
    events = doc["traceEvents"]
    mark = next(e for e in events if e.get("name") == TEMPLATE_STEP)
    start, end = mark["ts"], mark["ts"] + mark["dur"]
    meta = [e for e in events if e.get("ph") == "M"]
    host = []
    for e in events:
        if e.get("ph") == "M" or e.get("cat") in GPU_CATS:
            continue
        if not python and e.get("cat") == "python_function":
            continue
        ts = e.get("ts")
        if isinstance(ts, (int, float)) and start <= ts < end and isinstance(e.get("pid"), int):
            host.append(e)
    ext = {(e.get("args") or {}).get("External id") for e in host} - {None}
    gpu = [e for e in events if e.get("cat") in GPU_CATS
           and (e.get("args") or {}).get("External id") in ext]
    # Flow ends on the GPU side of the launches kept above.
    corr = {(e.get("args") or {}).get("correlation") for e in gpu} - {None}
    host_ids = {e.get("id") for e in host if e.get("ph") in ("s", "f")}
    flows = [e for e in events if e.get("ph") in ("s", "f") and e.get("id") in corr
             and e.get("id") not in host_ids]
    return meta, host + gpu + flows, end - start


def strides(step: list[dict]) -> dict[str, int]:
    """For each id field, a stride larger than any value it takes in the template."""
    out = {name: 1 for name in ID_ARGS + ("id",)}
    for e in step:
        args = e.get("args") or {}
        for name in ID_ARGS:
            if isinstance(args.get(name), int):
                out[name] = max(out[name], args[name] + 1)
        if isinstance(e.get("id"), int):
            out["id"] = max(out["id"], e["id"] + 1)
    return out


def write(out_path: str, steps: int, python: bool) -> int:
    """Write the trace; returns its size in bytes."""
    src = glob.glob(os.path.join(SAMPLE, "*.pt.trace.json.gz"))[0]
    with gzip.open(src, "rt") as f:
        doc = json.load(f)
    meta, step, length = template(doc, python)
    gap = 40.0  # microseconds between steps, as between the real ones
    period = length + gap
    stride = strides(step)
    header = {k: v for k, v in doc.items() if k != "traceEvents"}
    header["traceName"] = os.path.basename(out_path)
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    with open(out_path, "w") as out:
        head = dumps(header)
        out.write(head[:-1] + ',"traceEvents":[\n')
        out.write(",\n".join(dumps(e) for e in meta))
        for i in range(steps):
            shift = i * period
            lines = []
            for e in step:
                c = dict(e)
                c["ts"] = round(e["ts"] + shift, 3)
                if c.get("name") == TEMPLATE_STEP:
                    c["name"] = "ProfilerStep#%d" % i
                if isinstance(e.get("id"), int):
                    c["id"] = e["id"] + i * stride["id"]
                args = e.get("args")
                if args:
                    args = dict(args)
                    for name in ID_ARGS:
                        if isinstance(args.get(name), int):
                            args[name] += i * stride[name]
                    c["args"] = args
                lines.append(dumps(c))
            out.write(",\n" + ",\n".join(lines))
        out.write("\n]}\n")
    return os.path.getsize(out_path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="the .pt.trace.json file to write")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--no-python", action="store_true",
                    help="leave out the python_function events (a trace without with_stack)")
    args = ap.parse_args(argv)
    size = write(args.out, args.steps, not args.no_python)
    print("%s: %d steps, %.1f MB" % (args.out, args.steps, size / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
