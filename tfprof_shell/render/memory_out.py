"""`memory -output timeline` and `-output pprof`: the level as counter tracks beside the
steps, and the blocks alive at the peak as a pprof profile of their call stacks."""

from __future__ import annotations

import json
from typing import Any

from ..model import Model
from ..model.node import Frame
from ..proto import pprof_profile_pb2
from ..views.memory import BEFORE_PROFILE, MemoryResult, alive_at, device_memory
from .pprof import gzip_bytes


def memory_trace(result: MemoryResult) -> str:
    """Chrome-trace JSON: a process per device with its level (and reserved bytes) as a
    counter track and an instant at the peak, and a row of step markers; times in µs
    after the result's start."""
    origin = result.start
    events: list[dict[str, Any]] = [{"ph": "M", "name": "process_name", "pid": 0,
                                     "args": {"name": "Steps"}}]
    for m in result.marks:
        events.append({"ph": "X", "name": "step %d" % m.step, "cat": "step", "pid": 0,
                       "tid": 0, "ts": (m.start - origin) / 1000,
                       "dur": (m.end - m.start) / 1000, "args": {"step": m.step}})
    for pid, d in enumerate(result.devices, start=1):
        events.append({"ph": "M", "name": "process_name", "pid": pid,
                       "args": {"name": "Memory %s" % d.name}})
        times, allocated, reserved = d.timeline
        for i, t in enumerate(times):
            args = {"allocated": allocated[i]}
            if reserved is not None:
                args["reserved"] = reserved[i]
            events.append({"ph": "C", "name": "memory %s" % d.name, "cat": "memory",
                           "pid": pid, "tid": 0, "ts": (t - origin) / 1000, "args": args})
        top = {r.key: r.nbytes for r in d.live[:10]}
        events.append({"ph": "i", "s": "p", "name": "peak", "cat": "memory", "pid": pid,
                       "tid": 0, "ts": (d.peak.time - origin) / 1000,
                       "args": {"bytes": d.peak.nbytes, "step": d.peak.step,
                                "largest (%s)" % result.by: top}})
    return json.dumps({"traceEvents": events, "displayTimeUnit": "ns"}) + "\n"


class _Tables:
    def __init__(self) -> None:
        self.strings: dict[str, int] = {"": 0}
        self.functions: dict[tuple[str, str, int], int] = {}
        self.locations: dict[tuple[int, int], int] = {}
        self.profile = pprof_profile_pb2.Profile()

    def string(self, text: str) -> int:
        found = self.strings.get(text)
        if found is None:
            found = self.strings[text] = len(self.strings)
        return found

    def location(self, frame: Frame) -> int:
        key = (frame.file, frame.function, frame.func_start_line)
        fid = self.functions.get(key)
        if fid is None:
            fid = self.functions[key] = len(self.functions) + 1
            self.profile.function.add(id=fid, name=self.string(frame.function),
                                      filename=self.string(frame.file),
                                      start_line=frame.func_start_line)
        lkey = (fid, frame.lineno)
        lid = self.locations.get(lkey)
        if lid is None:
            lid = self.locations[lkey] = len(self.locations) + 1
            loc = self.profile.location.add(id=lid)
            loc.line.add(function_id=fid, line=frame.lineno)
        return lid


def memory_pprof(model: Model, result: MemoryResult) -> bytes:
    """The blocks alive at each device's peak as a gzipped pprof profile: a sample per
    call stack (innermost first) and labels (device, op, scope, shape), values
    [blocks, bytes]; a block without a stack is a sample without locations, and what
    no block explains is one sample labelled as allocated before the profile."""
    profile = model.memory()
    tables = _Tables()
    out = tables.profile
    out.sample_type.add(type=tables.string("blocks"), unit=tables.string("count"))
    out.sample_type.add(type=tables.string("space"), unit=tables.string("bytes"))
    samples: dict[tuple, list[int]] = {}
    for d in result.devices:
        mem = device_memory(model, d.name)
        if mem is None or d.peak.index < 0:
            continue
        b = mem.blocks
        for i in alive_at(mem, d.peak.index):
            owner = profile.owners[b.owner[i]] if b.owner[i] >= 0 else None
            frames = profile.traces[b.code[i]] if b.code[i] >= 0 else ()
            if not frames and owner is not None:
                node = model.nodes.get(owner.scope)
                frames = tuple(node.trace or ()) if node is not None else ()
            shape = profile.labels[b.shape[i]] if b.shape[i] >= 0 else ""
            key = (d.name, tuple(frames), owner.op if owner else "",
                   owner.scope if owner else "", shape, b.first[i] < 0)
            found = samples.setdefault(key, [0, 0])
            found[0] += 1
            found[1] += b.nbytes[i]
        if d.unexplained:
            found = samples.setdefault((d.name, (), "", "", "", True), [0, 0])
            found[1] += d.unexplained
    for (device, frames, op, scope, shape, before), (count, nbytes) in sorted(
            samples.items(), key=lambda kv: -kv[1][1]):
        sample = out.sample.add()
        sample.location_id.extend(tables.location(f) for f in reversed(frames))
        sample.value.extend((count, nbytes))
        for k, v in (("device", device), ("op", op), ("scope", scope), ("shape", shape),
                     ("origin", BEFORE_PROFILE if before else "")):
            if v:
                sample.label.add(key=tables.string(k), str=tables.string(v))
    out.string_table.extend(sorted(tables.strings, key=tables.strings.__getitem__))
    return gzip_bytes(out.SerializeToString())
