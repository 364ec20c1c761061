"""`critpath`: what bounds each step, the longest path through its dependency graph.

Windows come from step markers (``-step N``, or every step), or from every
annotation a regular expression names (``-region``). Each window's graph is
built with HTA's rules (critpath_build.py) from the model's path inputs and
its longest path read out: its length, its events, its edges and the time
each category bounds. ``-host_gaps`` weighs the host time between top-level
ops; ``-whatif`` scales the edges of matching events and finds the new path
(critpath_whatif.py). TensorFlow 1 graphs take the dataflow route
(critpath_dataflow.py).
"""

from __future__ import annotations

from dataclasses import replace
from operator import itemgetter
from typing import Sequence

from .. import regex
from ..errors import RequestError
from ..model import Model
from ..model.path_input import ANNOTATION, DATA, DEVICE, HTA, OP, PathInput
from .critpath_build import Built, build_window
from .critpath_timeline import Timeline
from .critpath_dataflow import dataflow_paths
from .critpath_graph import GraphCycle
from .critpath_result import CritPath, CritPathResult, WhatIf, Window
from .critpath_rounding import rounded
from .critpath_whatif import WhatIfRule, scaled_weights

#: How each kind of path is defined, for its label.
DEFINITIONS = {
    "hta": "HTA's definition, at the trace's ns precision",
    "hta_us": "HTA's definition, each event rounded inward to whole us as HTA rounds it",
    "host": "host only: the profile has no device events, so no device path",
    "xplane": "approximate: a TF2/JAX profile records no waits between streams",
    "dataflow": "TensorFlow 1: the longest dataflow chain of measured op times",
}


def timeline_of(inp: PathInput) -> Timeline:
    """The prepared timeline of ``inp`` (made once, kept on the input)."""
    tl = inp.derived.get("critpath")
    if tl is None:
        tl = inp.derived["critpath"] = Timeline(inp)
    return tl


def definition_of(inp: PathInput) -> str:
    """The DEFINITIONS key of an input's paths."""
    got = inp.derived.get("definition")
    if got is None:
        # from the end: loaders list device events after the host's
        got = ("host" if DEVICE not in map(itemgetter(2), reversed(inp.events)) else
               "hta" if inp.definition == HTA else "xplane")
        if got == "hta" and inp.derived.get("precision") == "us":
            got = "hta_us"
        inp.derived["definition"] = got
    return got


def windows(inputs: Sequence[PathInput], step: int = -1, region: str = "") -> list[Window]:
    """The windows ``-step``/``-region`` choose (default: every step), in time order
    within each timeline; RequestError naming what exists when none match."""
    found: list[Window] = []
    if region:
        named: dict[str, bool] = {}
        for t, inp in enumerate(inputs):
            hits = []
            for i, e in enumerate(inp.events):
                if e[2] in (ANNOTATION, DATA, OP) and e[1] > e[0]:
                    name = str(e[3])
                    hit = named.get(name)
                    if hit is None:
                        hit = named[name] = regex.fullmatch(region, name)
                    if hit:
                        hits.append(i)
            hits.sort(key=lambda i: inp.events[i][0])
            for i in hits:
                e = inp.events[i]
                found.append(Window(str(e[3]), 0, e[0], e[1], inp.steps.get(i), t, e[7], e[8]))
        if not found:
            raise RequestError("-region %s matches no annotation or op of this profile" % region)
    else:
        for t, inp in enumerate(inputs):
            marks = sorted(inp.steps, key=lambda i: inp.events[i][0])
            for i in marks:
                e = inp.events[i]
                if step < 0 or inp.steps[i] == step:
                    found.append(Window(str(e[3]), 0, e[0], e[1], inp.steps[i], t, e[7], e[8]))
            if not marks and (step < 0 or inp.default_step == step):
                host = [e for e in inp.events if e[2] != DEVICE]
                if host:
                    found.append(Window("trace" if len(inputs) == 1 else "file %d" % t, 0,
                                        min(e[0] for e in host), max(e[1] for e in host),
                                        inp.default_step, t))
        if not found:
            known = sorted({s for inp in inputs for s in inp.steps.values()}
                           | {inp.default_step for inp in inputs
                              if not inp.steps and inp.default_step is not None})
            if step >= 0:
                raise RequestError("-step %d not found; available steps: %s"
                                   % (step, " ".join(map(str, known)) or "none"))
            raise RequestError("this profile has no events to find a critical path in")
    for n, w in enumerate(found):
        w.instance = n
    return found


def critical_paths(model: Model, step: int = -1, region: str = "", host_gaps: bool = False,
                   whatif: Sequence[WhatIfRule] = (), graph_events: bool = False,
                   precision: str = "ns") -> CritPathResult:
    """The critical path of each chosen window of ``model`` (RequestError when the
    format records no dependencies, or no window matches); with ``precision`` "us",
    from events rounded as HTA rounds them (RequestError unless HTA's definition)."""
    inputs = model.path_inputs()
    if precision == "us":
        if inputs is None or any(definition_of(inp) != "hta" for inp in inputs):
            raise RequestError("-precision us rounds events as Holistic Trace Analysis does, "
                               "for PyTorch GPU traces only; this profile's path is not "
                               "HTA's: use -precision ns")
        inputs = [rounded(inp) for inp in inputs]
    if inputs is None:
        return dataflow_paths(model, step, region, whatif)
    result = CritPathResult([], host_gaps=host_gaps)
    for window in windows(inputs, step, region):
        inp = inputs[window.timeline]
        result.paths.append(window_path(inp, window, host_gaps, whatif, graph_events))
    return result


def window_path(inp: PathInput, window: Window, host_gaps: bool = False,
                whatif: Sequence[WhatIfRule] = (), graph_events: bool = False) -> CritPath:
    """The critical path of one window of ``inp`` (a plain one is kept: later commands
    on the same window reuse it)."""
    plain = not whatif and not graph_events
    kept: dict[tuple[int, int, bool], CritPath] = inp.derived.setdefault("paths", {})
    key = (window.start, window.end, host_gaps)
    if plain and key in kept:
        found = kept[key]
        return replace(found, window=window, notes=list(found.notes))
    tl = timeline_of(inp)
    built = build_window(tl, window.start, window.end, host_gaps, parents=bool(whatif))
    g = built.graph
    try:
        length, packed = g.longest_events()
    except GraphCycle as exc:
        raise RequestError("the dependency graph of %s has a cycle (%s): no critical path"
                           % (window.name, exc)) from None
    path = CritPath(window, definition_of(inp), inp, length, packed, g.nodes, g.edges,
                    list(dict.fromkeys(built.notes)))
    if plain:
        kept[key] = path
    if whatif:
        path.whatif = _whatif(tl, built, whatif, path)
    if graph_events:
        shown = {e if e >= 0 else ~e for e in g.event}
        shown.update(i for i, e in enumerate(inp.events)
                     if e[2] == ANNOTATION and window.start <= e[0] <= window.end)
        path.graph_events = sorted(shown)
    return path


def _whatif(tl: Timeline, built: Built, rules: Sequence[WhatIfRule], path: CritPath) -> WhatIf:
    chain_w, xw, changed = scaled_weights(tl, built, rules)
    length, packed = built.graph.longest_events(chain_w, xw)
    return WhatIf(tuple(rules), changed, length, packed,
                  path.wall - (path.length - length))
