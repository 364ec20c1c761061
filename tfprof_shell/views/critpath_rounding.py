"""`critpath -precision us`: the events rounded to whole µs the way HTA rounds them.

Holistic Trace Analysis rounds every event of a trace whose times are not whole
µs inward before it builds its graph (``hta/common/trace_parser.py``): the start
up, ``ceil(ts)``, and the end down, ``floor(ts + dur)``, both in the trace's µs.
An event shorter than the rounding leaves no time (its end is at or before its
start) and drops out of the graph; every other edge loses up to 1 µs. Applying
the same rounding to the path inputs reproduces HTA's figures; the default keeps
the trace's nanoseconds.
"""

from __future__ import annotations

import math
from typing import Any

from ..model.path_input import PathInput

def _inward(ts: Any, dur: Any) -> tuple[int, int]:
    """(start, end) ns of an event of trace time ``ts`` and ``dur`` (µs), rounded as
    HTA rounds them: the sum first, then ceil and floor."""
    return math.ceil(ts) * 1000, math.floor(ts + dur) * 1000


def rounded(inp: PathInput) -> PathInput:
    """``inp`` with each event's times rounded inward to whole µs (made once, kept on
    ``inp``); events whose trace times are not numbers keep theirs."""
    got = inp.derived.get("rounded_us")
    if got is None:
        events = []
        add = events.append
        for e in inp.events:
            ts, dur = e[7], e[8]
            try:
                start, end = _inward(ts, dur)
            except (TypeError, ValueError, OverflowError):
                add(e)
                continue
            add((start, end) + e[2:])
        got = inp.derived["rounded_us"] = PathInput(
            events, inp.definition, inp.origin, inp.launch_names, inp.blocking_names,
            inp.one_to_many, inp.steps, inp.default_step)
        got.derived["precision"] = "us"
    return got


__all__ = ["rounded"]
