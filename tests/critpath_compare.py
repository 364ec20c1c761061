"""Our critical path against an HTA golden (tests/golden/hta/*.critpath.*.json), as sets.

HTA numbers nodes and flows arbitrarily, so paths are compared as sets of
(name, ts) events, ts as the trace file writes it. Shared by the golden test
and the live HTA test.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Optional

from conftest import ROOT

GOLDENS = os.path.join(ROOT, "tests", "golden", "hta")
#: case -> (trace path relative to the repository, step); as make_critpath_goldens.py
CASES = {
    "torch_cnn.step2": ("sample_profiles/torch_cnn", 2),
    "torch_cnn.step3": ("sample_profiles/torch_cnn", 3),
    "mixed.step1": ("tests/critpath/mixed/mixed.pt.trace.json", 1),
    "mixed.step2": ("tests/critpath/mixed/mixed.pt.trace.json", 2),
    "launch_bound.step2": ("tests/critpath/launch_bound/launch_bound.pt.trace.json", 2),
    "gpu_bound.step2": ("tests/critpath/gpu_bound/gpu_bound.pt.trace.json", 2),
    "data_loader.step2": ("tests/critpath/data_loader/data_loader.pt.trace.json", 2),
}


def golden(case: str, mode: str) -> dict:
    with open(os.path.join(GOLDENS, "%s.critpath.%s.json" % (case, mode))) as fh:
        return json.load(fh)


@dataclass
class Comparison:
    """Ours against HTA's: the overlap of the event sets, lengths, dominant bounds."""

    ours: set
    theirs: set
    length: float
    hta_length: float
    bounds: dict
    hta_bounds: dict
    #: events HTA could have marked: those its inward rounding keeps (a whole µs)
    visible: Optional[set] = None

    @property
    def jaccard(self) -> float:
        return len(self.ours & self.theirs) / len(self.ours | self.theirs)

    @property
    def recall(self) -> float:
        """The share of HTA's events we mark too."""
        return len(self.ours & self.theirs) / len(self.theirs)

    @property
    def precision(self) -> float:
        """The share of our events HTA marks, of those it could have."""
        mine = self.ours & self.visible if self.visible is not None else self.ours
        return len(mine & self.theirs) / len(mine) if mine else 1.0

    @property
    def length_error(self) -> float:
        return abs(self.length - self.hta_length) / self.hta_length

    def dominant(self) -> tuple[str, float, str, float]:
        """(our dominant category, its share %, HTA's, its share %)."""
        ours = max(self.bounds, key=self.bounds.get)
        theirs = max(self.hta_bounds, key=self.hta_bounds.get)
        return (ours, 100 * self.bounds[ours] / self.length,
                theirs, 100 * self.hta_bounds[theirs] / self.hta_length)


def visible_to_hta(events) -> set:
    """(name, ts) of the events HTA's rounding keeps: ceil(ts) < floor(ts + dur)."""
    out = set()
    for e in events:
        ts, dur = e[7], e[8]
        if isinstance(ts, (int, float)) and math.ceil(ts) < math.floor(ts + dur):
            out.add((e[3], ts))
    return out


def rounded_length(path) -> float:
    """The length of our path with each event rounded inward to whole µs, as HTA
    rounds (weightless edges stay 0): what HTA measures along the same path. HTA
    drops the events that rounding leaves no time; around them the edges telescope,
    so their -1s are summed, not clamped."""
    ev = path.input.events

    def at(i: int, end: bool) -> int:
        ts, dur = ev[i][7], ev[i][8]
        return math.floor(ts + dur) if end else math.ceil(ts)

    return float(sum(at(s.dst, s.dst_end) - at(s.src, s.src_end)
                     for s in path.steps if s.weight))


def compare(path, gold: dict) -> Comparison:
    """Compare a views.critpath.CritPath with a golden document."""
    ev = path.input.events
    ours = {(ev[i][3], ev[i][7]) for i in path.events}
    theirs = {tuple(x) for x in gold["events"]}
    return Comparison(ours, theirs, path.length / 1000.0, gold["length"],
                      {k: v / 1000.0 for k, v in path.by_bound.items()}, gold["by_bound"],
                      visible_to_hta(ev) if gold["rounding"] else None)
