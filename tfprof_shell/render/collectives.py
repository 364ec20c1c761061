"""`collectives`: the instances matched across ranks and each step's straggler, as
text and as the JSON document (times in µs, profiles as the session names them)."""

from __future__ import annotations

from statistics import median
from typing import Any, Mapping, Optional, Sequence

from ..errors import RequestError
from ..model import Model
from ..model.collectives import RankCollectives
from ..options import Options
from ..plan import select_profiles
from ..views.collective_causes import NO_EVENT
from ..views.collectives import (MODE_TEXT, CollectivesResult, Instance, StepVerdict, align,
                                 with_calls)
from .base import Rendered
from .steps import NA, table
from .document import deliver_document

_WRITTEN = ("stdout", "file", "json", "none", "timeline")
#: Up to this many ranks, the table has a wait column per rank.
WAIT_COLUMNS = 8


def gather(models: Mapping[str, Model], opts: Options
           ) -> tuple[list[tuple[str, RankCollectives]], list[str]]:
    """The chosen profiles' collective calls (all profiles without -profiles), and notes
    on the profiles left out; RequestError when fewer than two ranks have calls."""
    names = select_profiles(models, opts.profiles) if opts.profiles else list(models)
    if len(names) < 2:
        raise RequestError("collectives compares ranks: it needs at least two profiles (a "
                           "folder of rank traces, or several --profile NAME=PATH); %s: %s"
                           % ("chosen" if opts.profiles else "loaded", ", ".join(names)))
    found = with_calls(models, names)
    without = [n for n in names if n not in dict(found)]
    if len(found) < 2:
        raise RequestError("collectives needs at least two profiles with collective calls "
                           "(PyTorch traces of a distributed job: c10d:: ops or "
                           "record_param_comms); %s" % (
                               "none has any" if not found else "only %s has" % found[0][0]))
    notes = (["left out, no collective calls: %s" % ", ".join(without)] if without else [])
    return found, notes


def run_collectives(models: Mapping[str, Model], opts: Options) -> Rendered:
    """`collectives` over the loaded profiles (or -profiles), for -step and -output."""
    kind = opts.output.kind
    if kind not in _WRITTEN:
        raise RequestError("collectives cannot write -output %s; use stdout, file, json or "
                           "timeline" % kind)
    ranks, notes = gather(models, opts)
    result = align(ranks)
    step = opts.step if opts.step >= 0 else None
    if step is not None and not any(v.step == step for v in result.steps):
        raise RequestError("no collective is matched in step %d; steps with collectives: %s"
                           % (step, " ".join(str(v.step) for v in result.steps) or "none"))
    doc = collectives_document(result, step)
    if kind == "timeline":
        from .collectives_timeline import collectives_trace
        from .timeline import notice
        path = opts.output.outfile or ""
        return Rendered(notice(path), notes=notes,
                        writes=[(path, collectives_trace(result, step))], result=doc)
    out = deliver_document(collectives_text(result, step), doc, opts)
    out.notes[:0] = notes
    return out


def _us(value: float) -> float:
    return round(value, 3)


def clock_text(result: CollectivesResult) -> str:
    """One sentence on the ranks' clocks."""
    clock = result.clock
    if clock.shared:
        host = next(iter(clock.hosts), "")
        return "One host (%s): the ranks share one clock." % host
    hosts = "; ".join("%s: %s" % (h, ", ".join(n)) for h, n in clock.hosts.items())
    text = ("%d hosts (%s): arrival skews assume their clocks agree (each trace placed by "
            "its baseTimeNanoseconds)." % (len(clock.hosts), hosts))
    if clock.offsets:
        first = next(iter(clock.hosts))
        text += " The collectives' ends put %s (median of %d instances)." % (
            ", ".join("%s's clock %.0f us %s %s's" % (h, abs(v), "ahead of" if v >= 0
                                                      else "behind", first)
                      for h, v in clock.offsets.items()), clock.samples)
    else:
        text += " The traces give no collective's end to estimate the offsets."
    return text


def collectives_document(result: CollectivesResult, step: Optional[int] = None
                         ) -> dict[str, Any]:
    """The JSON document: ``collectives`` (one entry per instance) and ``steps``."""
    instances = [i for i in result.instances if step is None or i.step == step]
    verdicts = [v for v in result.steps if step is None or v.step == step]
    clock = result.clock
    return {
        "schema_version": 1, "mode": "collectives", "profiles": result.ranks,
        "matching": result.mode, "matching_text": MODE_TEXT[result.mode],
        "calls": result.calls, "mismatch": result.mismatch or None, "notes": result.notes,
        "clock": {"shared": clock.shared, "hosts": clock.hosts,
                  "offsets": {h: _us(v) for h, v in clock.offsets.items()},
                  "samples": clock.samples, "text": clock_text(result)},
        "collectives": [_instance_doc(i) for i in instances],
        "steps": [_verdict_doc(v) for v in verdicts],
    }


def _instance_doc(i: Instance) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "instance": i.index, "step": i.step, "op": i.op, "size": i.size,
        "skew": _us(i.skew), "last": i.last,
        "arrival": {n: _us(v) for n, v in i.arrival.items()},
        "wait": {n: _us(v) for n, v in i.wait.items()},
        "group": i.group or None, "seq": i.seq if i.seq >= 0 else None,
        "dtype": i.dtype or None, "end": {n: _us(v) for n, v in i.end.items()},
        "lateness": {n: _us(v) for n, v in i.lateness.items()}, "chained": i.chained,
        "device_arrival": {n: _us(v) for n, v in i.device_arrival.items()} or None,
        "device_skew": None if i.device_skew is None else _us(i.device_skew),
        "device_last": i.device_last or None,
    }
    return doc


def _verdict_doc(v: StepVerdict) -> dict[str, Any]:
    cause = v.cause
    return {
        "step": v.step, "straggler": v.straggler,
        "lateness": {n: _us(x) for n, x in v.lateness.items()},
        "cause": None if cause is None else {
            "region": cause.region, "excess": _us(cause.excess),
            "rank_us": _us(cause.rank_us), "others_us": _us(cause.others_us)},
        "instance": v.charged if v.charged >= 0 else None, "instances": v.instances,
    }


def collectives_text(result: CollectivesResult, step: Optional[int] = None) -> str:
    """The instance table, then the stragglers, then the notes."""
    instances = [i for i in result.instances if step is None or i.step == step]
    verdicts = [v for v in result.steps if step is None or v.step == step]
    names = result.ranks
    device = any(i.device_arrival for i in instances)
    head = ["step", "#", "op", "size", "skew", "last"]
    if device:
        head += ["dev skew", "dev last"]
    per_rank = len(names) <= WAIT_COLUMNS
    head += list(names) if per_rank else ["median wait", "max wait"]
    rows = []
    for i in instances:
        row = ["%d" % i.step, "%d" % i.index, i.op, "%d" % i.size if i.size >= 0 else NA,
               "%.0f" % i.skew, i.last]
        if device:
            row += [NA if i.device_skew is None else "%.0f" % i.device_skew,
                    i.device_last or NA]
        if per_rank:
            row += ["%.0f" % i.wait[n] if n in i.wait else NA for n in names]
        else:
            waits = [w for n, w in i.wait.items() if n != i.last]
            row += ["%.0f" % median(waits) if waits else NA,
                    "%.0f" % max(waits) if waits else NA]
        rows.append(row)
    count = len({i.step for i in instances})
    lines = ["Collectives of %d profiles (%s): %d instances in %d step%s, %s. %s Times in us."
             % (len(names), _list(names), len(instances), count, "" if count == 1 else "s",
                MODE_TEXT[result.mode], clock_text(result)), ""]
    arrival = "a rank's call into the collective on the host" + (
        "; dev: its kernel's start on the device" if device else "")
    lines += ["Each instance: its skew (last arrival - first; arrival = %s), the last "
              "rank, and %s wait for it." % (arrival, "each rank's" if per_rank
                                              else "the other ranks'"), ""]
    lines += table(head, rows, left=3)
    lines += ["", "Each step's straggler: the rank with the largest own lateness (lateness "
              "inherited from an earlier collective of a chain is charged there once), the "
              "instance where it was charged most (at #), and the cause: the region its rank "
              "spent more wall time in than the median of the others before that arrival.",
              ""]
    lines += table(("step", "straggler", "cause", "lateness", "at #", "rank", "others",
                    "excess"), [_verdict_row(v) for v in verdicts], left=3)
    extra = ([result.mismatch] if result.mismatch else []) + result.notes
    if any(v.cause is not None and v.cause.region == NO_EVENT for v in verdicts):
        extra.append("%s: time no event covers on the calling thread (Python code without "
                     "ops, a sleep, a blocking read, or waiting for the CPU)" % NO_EVENT)
    if extra:
        lines += [""] + ["Note: %s" % n for n in extra]
    return "\n".join(lines) + "\n"


def _verdict_row(v: StepVerdict) -> Sequence[str]:
    if v.straggler is None:
        return ("%d" % v.step, "none", NA, "0", NA, NA, NA, NA)
    c = v.cause
    at = "%d" % v.charged if v.charged >= 0 else NA
    late = "%.0f" % v.lateness[v.straggler]
    if c is None:
        return ("%d" % v.step, v.straggler, "none found", late, at, NA, NA, NA)
    return ("%d" % v.step, v.straggler, c.region, late, at, "%.0f" % c.rank_us,
            "%.0f" % c.others_us, "%.0f" % c.excess)


def _list(names: Sequence[str], most: int = 6) -> str:
    if len(names) <= most:
        return ", ".join(names)
    return "%s, ..., %s" % (", ".join(names[:most - 1]), names[-1])
