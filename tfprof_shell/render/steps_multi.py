"""`steps` over several profiles: ranks x steps with the straggler of each step
(-profiles; by arrival lateness at the collectives where the traces have them, else
by step wall), and category by category against a base profile (-base)."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ..views.collective_result import CollectivesResult
from ..views.step_values import device_values, host_values, main_device, us, waited_on
from ..views.steps import StepBreakdown, StepsResult, average
from .steps import NA, table


def stragglers(results: Sequence[tuple[str, StepsResult]],
               arrivals: Optional[CollectivesResult] = None) -> list[dict[str, Any]]:
    """Per step present in any profile: the straggler, its wall, the spread and what it
    waited on. Where the collectives of the step were aligned (``arrivals``) the straggler
    is the rank with the largest arrival lateness ("by": "arrival"), else the profile
    with the longest step wall ("by": "wall")."""
    by_step: dict[int, list[tuple[str, StepBreakdown, frozenset[str]]]] = {}
    for name, r in results:
        for s in r.steps:
            by_step.setdefault(s.step, []).append((name, s, r.has))
    late = {v.step: v for v in (arrivals.steps if arrivals else ()) if v.straggler}
    out = []
    for step in sorted(by_step):
        runs = by_step[step]
        verdict = late.get(step)
        chosen = [x for x in runs if verdict is not None and x[0] == verdict.straggler]
        name, slow, has = chosen[0] if chosen else max(runs, key=lambda x: x[1].wall)
        fast = min(x[1].wall for x in runs)
        what, value = waited_on(slow, has)
        entry = {"step": step, "profile": name, "wall": us(slow.wall),
                 "spread": us(max(x[1].wall for x in runs) - fast), "profiles": len(runs),
                 "waited_on": what, "waited_us": value, "by": "arrival" if chosen else "wall"}
        if chosen:
            assert verdict is not None
            entry["lateness_us"] = round(verdict.lateness[name])
            entry["cause"] = verdict.cause.region if verdict.cause else None
        out.append(entry)
    return out


def ranks_text(results: Sequence[tuple[str, StepsResult]],
               arrivals: Optional[CollectivesResult] = None) -> str:
    """The ranks x steps table: one row per (step, profile); * marks each step's straggler."""
    slow = {s["step"]: s for s in stragglers(results, arrivals)}
    rows = []
    for step in sorted(slow):
        for name, r in results:
            s = next((x for x in r.steps if x.step == step), None)
            if s is None:
                rows.append(("%d" % step, name, NA, NA, NA, NA, NA, ""))
                continue
            dev = main_device(s, r.has)
            mark = "*" if slow[step]["profile"] == name else ""
            what, value = waited_on(s, r.has)

            def cell(key: str) -> str:
                v = dev.get(key) if dev else None
                return NA if v is None else "%d" % v
            rows.append(("%d" % step, name + mark, "%d" % us(s.wall), cell("span"),
                         cell("compute"), cell("idle"), cell("idle_host_wait"),
                         "%s %dus" % (what, value) if value else what))
    by_arrival = any(s["by"] == "arrival" for s in slow.values())
    rule = ("the rank with the largest arrival lateness at the step's collectives"
            if by_arrival else "the profile with the longest step")
    lines = ["Steps across %d profiles; times in us; * the straggler of each step: %s "
             "(its busiest device's figures)." % (len(results), rule), ""]
    lines += table(("step", "profile", "wall", "span", "compute", "idle", "host_wait",
                    "largest wait"), rows, left=2)
    lines += ["", "Stragglers%s:" % (" (lateness: own arrival lateness at the collectives, "
                                     "see the collectives command)" if by_arrival else "")]
    head = ["step", "straggler", "by", "wall", "spread", "waited on"]
    if by_arrival:
        head[3:3] = ["lateness", "cause"]
    table_rows = []
    for s in slow.values():
        row = ["%d" % s["step"], s["profile"], s["by"], "%d" % s["wall"], "%d" % s["spread"],
               "%s (%dus)" % (s["waited_on"], s["waited_us"]) if s["waited_us"]
               else s["waited_on"]]
        if by_arrival:
            row[3:3] = ["%d" % s["lateness_us"] if "lateness_us" in s else NA,
                        s.get("cause") or NA]
        table_rows.append(row)
    lines += table(head, table_rows, left=3)
    return "\n".join(lines) + "\n"


def _categories(r: StepsResult, device: str) -> dict[str, Optional[int]]:
    avg = average(r.steps)
    host = host_values(avg.host, r.has)
    out: dict[str, Optional[int]] = {"wall": host["wall"]}
    d = avg.devices.get(device)
    if d is not None:
        v = device_values(d, r.has)
        for key in ("span", "busy", "compute", "communication_exposed", "memory_exposed",
                    "other", "sync", "idle", "idle_host_wait", "idle_queued", "overlap"):
            if key != "sync" or v[key] is not None:  # sync only where recorded
                out["device." + key] = v[key]
    for key in ("sync", "communication", "input", "launch", "ops", "rest", "launch_count"):
        out["host." + key] = host[key]
    return out


def diff_rows(cur: StepsResult, base: StepsResult, devices: Sequence[str]
              ) -> list[tuple[str, Optional[int], Optional[int]]]:
    """(category, current, base) for every category of the step averages; device
    categories for each device both profiles have, prefixed by its name."""
    rows = []
    for device in devices or [""]:
        a, b = _categories(cur, device), _categories(base, device)
        for key in a:
            if device and not key.startswith("device.") and device != devices[0]:
                continue
            label = key.replace("device.", device + " ") if device else key.replace("device.", "")
            label = label.replace("host.", "host ")
            rows.append((label, a.get(key), b.get(key)))
    return rows


def diff_text(cur_name: str, base_name: str, rows: Sequence[tuple[str, Optional[int],
                                                                  Optional[int]]],
              step: Optional[int] = None) -> str:
    """The -base table: current, base, change and change in % per category (of step
    ``step`` when one was chosen, else of the step averages)."""
    out = []
    for label, a, b in rows:
        if a is None or b is None:
            out.append((label, NA if a is None else "%d" % a, NA if b is None else "%d" % b,
                        NA, NA))
            continue
        pct = NA if b == 0 else "%+.1f%%" % (100.0 * (a - b) / b)
        out.append((label, "%d" % a, "%d" % b, "%+d" % (a - b), pct))
    what = "Step averages" if step is None else "Step %d" % step
    lines = ["%s of %s against -base %s; times in us." % (what, cur_name, base_name), ""]
    lines += table(("category", cur_name, base_name, "change", "change%"), out)
    return "\n".join(lines) + "\n"
