"""What the Steps and Kernels pages look up on a click: the contents of a step's segment
(views/step_segments.py) with the ops that launched its kernels, and a kernel's launch
configurations and launching ops, read from the profile's trace lanes.

The op that launched a device event is PyTorch's: the innermost ``cpu_op`` around
the launch its flow names, on the launching thread; on XSpace files the HLO op and
framework op name the kernel carries (``hlo_op``, ``name``).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Iterable, Optional

from ..errors import UsageError
from ..model.lanes import DEVICE, TraceLanes
from ..views.step_segments import segment_contents
from .timeline import trace_lanes

if TYPE_CHECKING:
    from .runner import LineRunner

#: Launch-configuration arguments, in the order they are shown.
CONFIG_KEYS = ("grid", "block", "registers", "shared_memory", "static_shared_memory",
               "dynamic_shared_memory", "blocks_per_sm", "warps_per_sm", "occupancy_pct",
               "theoretical_occupancy_pct")
#: At most this many ops or configurations are listed.
LIMIT = 50


def launching_op(lanes: TraceLanes, event: int) -> str:
    """The op that launched device event ``event`` ("" if the trace does not say)."""
    args = lanes.args.get(event, {})
    for key in ("name", "hlo_op"):  # XSpace kernels name their op
        if args.get(key):
            return str(args[key])
    launch = lanes.flows.get(event)
    if launch is None:
        return ""
    ops = [e for e in lanes.enclosing(launch) if lanes.category(e) == "cpu_op"]
    return lanes.text(ops[-1]) if ops else ""


def _device_events(lanes: TraceLanes, names: Optional[set[str]] = None) -> Iterable[int]:
    wanted = None if names is None else {k for k, s in enumerate(lanes.strings) if s in names}
    for k, lane in enumerate(lanes.lanes):
        if lane.kind != DEVICE:
            continue
        for row in lane.rows:
            for e in row:
                if wanted is None or lanes.name[e] in wanted:
                    yield e


def _ops(lanes: TraceLanes, events: Iterable[int]) -> list[dict[str, Any]]:
    count: Counter[str] = Counter()
    time: Counter[str] = Counter()
    for e in events:
        op = launching_op(lanes, e) or "(no launching op recorded)"
        count[op] += 1
        time[op] += lanes.dur[e]
    return [{"name": op, "count": count[op], "time": time[op]}
            for op, _ in time.most_common(LIMIT)]


def _lanes(runner: "LineRunner", name: str = "") -> Optional[TraceLanes]:
    kept = trace_lanes(runner, name or runner.session.current)
    return kept.lanes if kept is not None else None


def kernel_facts(runner: "LineRunner", name: str) -> dict[str, Any]:
    """A kernel name's launch configurations (with counts) and the ops that launched it,
    from the trace; empty lists where the profile has no trace of events."""
    with runner.lock:
        lanes = _lanes(runner)
        if lanes is None:
            return {"name": name, "launches": 0, "configs": [], "ops": [], "traced": False}
        events = list(_device_events(lanes, {name}))
        configs: Counter[tuple] = Counter()
        for e in events:
            args = lanes.args.get(e, {})
            configs[tuple((k, _hashable(args[k])) for k in CONFIG_KEYS if k in args)] += 1
        return {"name": name, "launches": len(events), "traced": True,
                "configs": [{"config": {k: v for k, v in c}, "count": n}
                            for c, n in configs.most_common(LIMIT)],
                "ops": _ops(lanes, events)}


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def step_segment(runner: "LineRunner", profile: str, step: int, device: str,
                 part: str) -> dict[str, Any]:
    """One segment of the Steps page: its device and host events, and the ops that
    launched its device events (where the profile has a trace)."""
    with runner.lock:
        session = runner.session
        name = profile or session.current
        if name not in session.profiles:
            raise UsageError("steps: no profile %s" % name)
        model = session.profiles[name].model
        try:
            out = segment_contents(model.intervals(), step, device, part)
        except KeyError as exc:
            raise UsageError("steps: profile %s has no %s" % (name, exc.args[0])) from None
        out["profile"] = name
        out["ops"] = []
        names = {r["name"] for r in out["device_events"]}
        if names and not part.startswith("idle"):
            lanes = _lanes(runner, name)
            if lanes is not None:
                marks = {m.step: m for m in model.intervals().marks}
                in_step = [e for e in _device_events(lanes, names)
                           if _step_of(model, e, lanes, marks) == step
                           and lanes.lanes[lanes.lane[e]].group == device]
                out["ops"] = _ops(lanes, in_step)
        return out


def _step_of(model: Any, event: int, lanes: TraceLanes, marks: dict) -> Optional[int]:
    """The step of a device event: that of its launch (else of its start), as the
    intervals decide it."""
    launch = lanes.flows.get(event)
    t = lanes.start[launch] if launch is not None else lanes.start[event]
    for step, m in marks.items():
        if m.start <= t < m.end:
            return step
    return None
