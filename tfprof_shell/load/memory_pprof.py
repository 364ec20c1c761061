"""JAX device memory profiles (``jax.profiler.device_memory_profile()``, pprof) -> Model.

Such a file is one moment: the buffers alive then, each sample a call stack (the
Python lines that created them, innermost first) with labels ``kind``
(``buffer``; ``executable`` samples hold no bytes) and ``device``, and values
[count, bytes]. Several files are several moments, file i taken at the end of
step i (the step number in its name where every name has a distinct one, as
``step_3.prof``). Blocks are matched from one moment to the next by device,
stack and size: more of a kind than before are allocations in that step, fewer
are frees, so the memory profile has a level per moment, blocks with lifetimes
and growth; peaks between two moments are not seen.

The model's nodes are the stacks' lines of the program's own code (``file.py:
LINE:function``, the stack as the code trace), typed ``buffer``; a node's
``bytes`` (and ``peak_bytes``, ``residual_bytes``) in a step are the bytes of its
buffers alive at that moment: the profile records no executions.
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from typing import Sequence

from google.protobuf.message import DecodeError

from ..errors import LoadError
from ..model import ExecMemory, ExecStep, Frame, GraphNode, Model, Source
from ..model.intervals import StepMark
from ..model.memory import (HAS_CODE, HAS_FREES, DeviceEvents, MemoryProfile, Tables,
                            build_device)
from ..proto import pprof_profile_pb2
from .files import read_bytes
from .own_code import code_label, own_code

#: The time of moment i (ns): the middle of step i's second (the files hold no time).
_SECOND = 1_000_000_000
_NUMBER = re.compile(r"(\d+)\D*$")


def read_pprof(path: str) -> pprof_profile_pb2.Profile:
    """One pprof file (gzipped or not); LoadError if it is not one."""
    data = read_bytes(path, "profile_path")
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            raise LoadError("--profile_path %s: gzip data does not decompress" % path) from None
    try:
        profile = pprof_profile_pb2.Profile.FromString(data)
    except DecodeError:
        profile = None
    if profile is None or not profile.sample_type or not profile.string_table:
        raise LoadError("--profile_path %s: not a pprof profile (no sample types)" % path)
    return profile


def looks_like_pprof(data: bytes) -> bool:
    """Whether ``data`` (a file's bytes, maybe gzipped) parses as a pprof profile with
    sample types and a string table starting with ""."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            return False
    try:
        p = pprof_profile_pb2.Profile.FromString(data)
    except DecodeError:
        return False
    return bool(p.sample_type) and bool(p.string_table) and p.string_table[0] == ""


def _steps(paths: Sequence[str]) -> list[int]:
    """Each file's step: the number ending its name where all differ, else its index."""
    numbers = []
    for p in paths:
        m = _NUMBER.search(os.path.basename(p).split(".")[0])
        numbers.append(int(m.group(1)) if m else None)
    if None in numbers or len(set(numbers)) != len(numbers):
        return list(range(len(paths)))
    return numbers  # type: ignore[return-value]


def _frames(profile: pprof_profile_pb2.Profile, location_ids: Sequence[int],
            locations: dict, functions: dict) -> tuple[Frame, ...]:
    """A sample's stack, outermost first."""
    st = profile.string_table
    out = []
    for lid in reversed(location_ids):
        loc = locations.get(lid)
        if loc is None:
            continue
        for line in reversed(loc.line):
            fn = functions.get(line.function_id)
            if fn is None:
                continue
            out.append(Frame(st[fn.filename], line.line, st[fn.name], fn.start_line))
    return tuple(out)


def load_pprof(paths: Sequence[str], note: str = "") -> Model:
    """Read device memory profiles (file i: the moment ending step i) into a Model."""
    model = Model(Source("pprof", tuple(paths), note))
    if note:
        model.notes.append(note)
    steps = _steps(paths)
    tables = Tables()
    # per moment: (device, stack index, block size) -> how many blocks
    moments: list[dict[tuple[str, int, int], int]] = []
    for path in paths:
        profile = read_pprof(path)
        st = profile.string_table
        types = [st[t.type] for t in profile.sample_type]
        if "space" not in types:
            raise LoadError("--profile_path %s: a pprof profile without a space (bytes) "
                            "sample type: not a device memory profile" % path)
        space = types.index("space")
        count = types.index("allocations") if "allocations" in types else -1
        locations = {loc.id: loc for loc in profile.location}
        functions = {fn.id: fn for fn in profile.function}
        held: dict[tuple[str, int, int], int] = {}
        for sample in profile.sample:
            nbytes = sample.value[space]
            if nbytes <= 0:
                continue
            labels = {st[lb.key]: st[lb.str] for lb in sample.label}
            blocks = max(sample.value[count], 1) if count >= 0 else 1
            frames = _frames(profile, sample.location_id, locations, functions)
            key = (labels.get("device", "device"), tables.trace(frames), nbytes // blocks)
            held[key] = held.get(key, 0) + blocks
        moments.append(held)
    _add_nodes(model, steps, moments, tables)
    model.set_memory_source(PprofMemory(steps, moments, tables))
    return model


def _add_nodes(model: Model, steps: list[int], moments: list[dict[tuple[str, int, int], int]],
               tables: Tables) -> None:
    """One node per line of the program's own code holding buffers, with its bytes per
    step (its buffers alive at that moment)."""
    for step, held in zip(steps, moments):
        model.add_step(step)
        by_node: dict[str, int] = {}
        traces: dict[str, tuple[Frame, ...]] = {}
        for (_, trace, size), blocks in held.items():
            frames = tables.traces[trace] if trace >= 0 else ()
            chosen = next((f for f in reversed(frames) if own_code(f)),
                          frames[-1] if frames else None)
            name = code_label(chosen) if chosen is not None else "(no stack)"
            by_node[name] = by_node.get(name, 0) + size * blocks
            traces.setdefault(name, frames)
        for name, nbytes in by_node.items():
            node = model.nodes.get(name)
            if node is None:
                node = model.nodes[name] = GraphNode(name, "buffer", len(model.nodes))
                if traces[name]:
                    node.trace = list(traces[name])
                    model.has_trace = True
            rec = node.execs.setdefault(step, ExecStep())
            rec.memory_execs.append(ExecMemory(requested_bytes=nbytes, peak_bytes=nbytes,
                                               residual_bytes=nbytes))


class PprofMemory:
    """Builds the memory profile of device memory profiles (see the module)."""

    def __init__(self, steps: list[int], moments: list[dict[tuple[str, int, int], int]],
                 tables: Tables) -> None:
        self.steps, self.moments, self.tables = steps, moments, tables

    def __call__(self) -> MemoryProfile:
        devices: dict[str, DeviceEvents] = {}
        before: dict[tuple[str, int, int], int] = {}
        serial = 0
        # blocks alive of each key, newest last (freed newest first)
        alive: dict[tuple[str, int, int], list[int]] = {}
        for i, held in enumerate(self.moments):
            t = i * _SECOND + _SECOND // 2
            for key in sorted(set(held) | set(before)):
                device, trace, size = key
                raw = devices.get(device)
                if raw is None:
                    raw = devices[device] = DeviceEvents(device)
                now, was = held.get(key, 0), before.get(key, 0)
                ids = alive.setdefault(key, [])
                for _ in range(was - now):
                    raw.add(t, -size, ids.pop())
                for _ in range(now - was):
                    serial += 1
                    ids.append(serial)
                    raw.add(t, size, serial, code=trace)
            before = held
        marks = [StepMark(step, i * _SECOND, (i + 1) * _SECOND)
                 for i, step in enumerate(self.steps)]
        built = [build_device(raw) for _, raw in sorted(devices.items())]
        notes = ["a device memory profile is one moment per file (the end of each step): "
                 "peaks between them are not seen, and blocks are matched from one moment "
                 "to the next by stack and size"]
        return self.tables.profile(built, marks, frozenset((HAS_FREES, HAS_CODE)), notes,
                                   "device memory profiles")


def is_pprof_name(path: str) -> bool:
    """Whether a file's name says pprof (``.prof``, ``.pprof``, maybe ``.gz``)."""
    return path.lower().endswith((".prof", ".pprof", ".prof.gz", ".pprof.gz"))


__all__ = ["PprofMemory", "is_pprof_name", "load_pprof", "looks_like_pprof", "read_pprof"]
