#!/usr/bin/env python3
"""What the argument groups cost a Chrome trace's typed decode, and the decode against other
revisions, in-process CPU time, the variants taking turns (best and median of --runs)::

    python bench/bench_trace_parse.py TRACE [--runs 5] [--rev e808941 --rev main]

Rows: ``as loaded`` (``parse_trace_events``: the groups the trace's header calls for),
the decode with no group, with each group of ``trace_events.ARG_GROUPS`` alone and with
all of them; and ``parse_trace_events`` of each ``--rev`` (its ``load/trace_events.py``
and ``load/json_doc.py`` taken from git). A trace whose header calls for no group and
that has no event calling for one decodes as ``no group``.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import os
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Union

import msgspec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tfprof_shell.load import trace_events  # noqa: E402


def _decoder(groups: frozenset[str]) -> Callable[[bytes], Any]:
    _, event, doc = trace_events.event_types(groups)
    return msgspec.json.Decoder(Union[doc, list[event]]).decode  # type: ignore[valid-type]


def _revision(rev: str, into: str) -> Callable[[bytes], Any]:
    """parse_trace_events of git revision ``rev``, imported from a copy in ``into``."""
    package = os.path.join(into, "rev_" + "".join(c if c.isalnum() else "_" for c in rev))
    os.makedirs(package)
    open(os.path.join(package, "__init__.py"), "w").close()
    for name in ("trace_events.py", "json_doc.py"):
        text = subprocess.run(["git", "-C", ROOT, "show", "%s:tfprof_shell/load/%s" % (rev, name)],
                              check=True, capture_output=True).stdout
        with open(os.path.join(package, name), "wb") as fh:
            fh.write(text)
    sys.path.insert(0, into)
    module = __import__(os.path.basename(package) + ".trace_events", fromlist=["x"])
    return module.parse_trace_events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rev", action="append", default=[],
                        help="also time this git revision's parse_trace_events")
    args = parser.parse_args()
    with open(args.trace, "rb") as fh:
        data = fh.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    _, header = trace_events.parse_trace_document(data)
    variants: dict[str, Callable[[bytes], Any]] = {
        "as loaded (%s)" % (",".join(sorted(header.groups)) or "no group"):
            trace_events.parse_trace_events,
        "no group": _decoder(frozenset())}
    for name in sorted(trace_events.ARG_GROUPS):
        variants["group " + name] = _decoder(frozenset((name,)))
    variants["every group"] = _decoder(frozenset(trace_events.ARG_GROUPS))
    with tempfile.TemporaryDirectory() as tmp:
        for rev in args.rev:
            variants["revision " + rev] = _revision(rev, tmp)
        times: dict[str, list[float]] = {name: [] for name in variants}
        order = list(variants)
        gc.disable()
        for run in range(args.runs):
            for name in (order if run % 2 == 0 else order[::-1]):
                gc.collect()
                t = time.process_time()
                out = variants[name](data)
                times[name].append(time.process_time() - t)
                del out
    print("%s: %.0f MB; CPU s, best and median of %d alternating runs"
          % (args.trace, len(data) / 1e6, args.runs))
    base = min(times["no group"])
    for name in order:
        xs = sorted(times[name])
        print("  %-34s %6.3f  %6.3f  %5.2fx no group" % (name, xs[0], xs[len(xs) // 2],
                                                       xs[0] / base))


if __name__ == "__main__":
    main()
