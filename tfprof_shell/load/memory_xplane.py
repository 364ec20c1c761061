"""TF2 and JAX ``MemoryAllocation``/``MemoryDeallocation`` events -> per-op memory and the
memory profile.

Each event (read as columns by :mod:`.memory_columns`) holds the allocator's
state after it: ``bytes_allocated`` (plus ``bytes_reserved``, which XProf adds
to it), ``bytes_available``, ``fragmentation``; and the block: ``allocator_name``
and ``addr`` (a free matches its allocation by both), ``allocation_bytes``;
allocations only name their ``tf_op``, ``region_type``, ``data_type`` and
``shape``. JAX's events name no op: an allocation is its jitted program's,
found from the host spans open around it (``PjitFunction(f)``,
``...Execute (jit_f)``), looked up when the memory profile is first built.

An op's columns, per step (its allocations are those naming it):

* ``bytes``: the bytes its allocations requested (``requested_bytes``);
* ``peak_bytes``: the most its own blocks held at once;
* ``residual_bytes``: its blocks still alive when the op event they were
  allocated in ended;
* ``output_bytes``: its blocks of region ``output``.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import repeat
from operator import add
from typing import Any, Callable, Optional, Sequence

from ..model.intervals import StepMark
from ..model.memory import (HAS_CAPACITY, HAS_COUNTER, HAS_FRAGMENTATION, HAS_FREES,
                            HAS_OWNER, HAS_REGION, HAS_REQUESTED, HAS_SHAPE, DeviceEvents,
                            MemoryProfile, Tables, build_device, sorted_marks)
from .memory_tf1 import dtype_name
from .xspace_pick import parse_tf_op

_ALLOCATION = "MemoryAllocation"
#: Host spans that name the jitted program an allocation happened in (JAX).
_PROGRAM = re.compile(r"PjitFunction\((.+)\)|.*Execute \((.+)\)")


def _ints(values: Optional[list[Any]], n: int) -> array:
    if values is None:
        return array("q", bytes(8 * n))
    try:
        return array("q", values)
    except TypeError:  # a value of another kind (None, a float)
        return array("q", [int(v or 0) for v in values])


@dataclass
class HostMemory:
    """One host's memory events as columns, in the order read (not sorted)."""

    prefix: str
    #: the host's shift onto the common time axis (see .xspace.Host)
    shift_ns: int = 0
    time: array = field(default_factory=lambda: array("q"))
    alloc: bytearray = field(default_factory=bytearray)
    nbytes: array = field(default_factory=lambda: array("q"))
    addr: array = field(default_factory=lambda: array("q"))
    requested: array = field(default_factory=lambda: array("q"))
    allocated: array = field(default_factory=lambda: array("q"))
    available: array = field(default_factory=lambda: array("q"))
    fragmentation: array = field(default_factory=lambda: array("d"))
    allocator: list[str] = field(default_factory=list)
    op: list[str] = field(default_factory=list)
    region: list[str] = field(default_factory=list)
    shape: list[str] = field(default_factory=list)
    where: list[tuple[int, int]] = field(default_factory=list)
    #: each allocation's op event end (ps; -1 unknown)
    exec_end: array = field(default_factory=lambda: array("q"))

    def add(self, name: str, where: tuple[int, int], starts: Sequence[int],
            stats: dict[str, list[Any]]) -> None:
        """A group of events of one name (allocations or frees) with their stat columns."""
        n = len(starts)
        get = stats.get
        self.time.extend(starts)
        self.alloc.extend(b"\x01" * n if name == _ALLOCATION else b"\x00" * n)
        self.nbytes.extend(_ints(get("allocation_bytes"), n))
        self.addr.extend(_ints(get("addr"), n))
        self.requested.extend(_ints(get("requested_bytes"), n))
        allocated = _ints(get("bytes_allocated"), n)
        reserved = get("bytes_reserved")
        if reserved is not None and any(reserved):
            allocated = array("q", map(add, allocated, _ints(reserved, n)))
        self.allocated.extend(allocated)
        self.available.extend(_ints(get("bytes_available"), n))
        frag = get("fragmentation")
        if frag is None:
            self.fragmentation.extend(array("d", bytes(8 * n)))
        else:
            try:
                self.fragmentation.extend(array("d", frag))
            except TypeError:
                self.fragmentation.extend(array("d", [float(f or 0) for f in frag]))
        for column, key in ((self.allocator, "allocator_name"), (self.op, "tf_op"),
                            (self.region, "region_type")):
            values = get(key)
            column.extend(values if values is not None else repeat("", n))
        shapes = get("shape") or get("tensor_shape")
        dtypes = get("data_type")
        if name != _ALLOCATION or (shapes is None and dtypes is None):
            self.shape.extend(repeat("", n))
        else:
            self.shape.extend(map(_shape, dtypes or repeat(None, n), shapes or repeat("", n)))
        self.where.extend(repeat(where, n))

    def __len__(self) -> int:
        return len(self.time)

    def allocations(self) -> list[int]:
        """The indices of the allocations."""
        alloc = self.alloc
        return [k for k, a in enumerate(alloc) if a]


def _shape(dtype: Any, shape: Any) -> str:
    """``float32[256,1024]`` from a data_type enum value and a shape stat."""
    name = dtype_name(dtype)
    return (name + str(shape or "")) if (name or shape) else ""


def host_memory(host: Any) -> HostMemory:
    """The memory events of a :class:`.xspace.Host` (columns and one-by-one reads),
    with each allocation's op event end found on its line (before the model is
    built from the host, which drops its op spans)."""
    mem = HostMemory(host.prefix, host.shift_ns)
    for name, where, starts, stats in host.memory_columns:
        mem.add(name, where, starts, stats)
    for start, name, stats, where in host.memory:
        mem.add(name, where, [start], {k: [v] for k, v in stats.items()})
    host.memory_columns, host.memory = [], []
    mem.exec_end = _exec_ends(host, mem)
    return mem


def _exec_ends(host: Any, mem: HostMemory) -> array:
    """Each allocation's enclosing op event end on its line (the innermost one of the
    op it names, else the innermost one), -1 where none encloses it. Only the lines
    holding allocations are read (most profiles have none)."""
    out = array("q", [-1]) * len(mem)
    time, where, ops = mem.time, mem.where, mem.op
    allocations = mem.allocations()
    lines = {where[k] for k in allocations}
    spans: dict[tuple[int, int], tuple[list[int], list[tuple[int, int, str]]]] = {}
    for i, line in enumerate(host.lines):
        if line.where not in lines:
            continue
        found = host.op_columns.get(i)
        if found is not None:
            starts, names, _, durations = found
            rows = [(s, s + d, n) for s, n, d in zip(starts, names, durations)]
        else:
            rows = [(o[0], o[1], o[2]) for o in line.ops]
        rows += [(a, b, op) for a, b, op in line.eagers]
        rows.sort()
        spans[line.where] = ([r[0] for r in rows], rows)
    for k in allocations:
        found = spans.get(where[k])
        if found is None:
            continue
        starts, rows = found
        t = time[k]
        op = _op_name(ops[k])
        i = bisect_right(starts, t) - 1
        best = -1
        for j in range(i, max(i - 64, -1), -1):
            start, end, name = rows[j]
            if end > t:
                if name == op:
                    best = end
                    break
                if best < 0:
                    best = end
        out[k] = best
    return out


@lru_cache(maxsize=None)
def _op_name(op: str) -> str:
    """The op name of a tf_op stat (``name:Type`` or just a name)."""
    named = parse_tf_op(op)
    return named[0] if named else op


def node_of(mem: HostMemory, k: int) -> str:
    """The node an allocation names (its tf_op's op name, with the host's prefix)."""
    op = mem.op[k]
    return mem.prefix + _op_name(op) if op else ""


def node_memory(mems: Sequence[HostMemory],
                steps_of: Callable[[list[int]], list[Optional[int]]]
                ) -> dict[str, dict[int, list[int]]]:
    """node -> step -> (requested, peak, residual, output) bytes (see the module);
    ``steps_of``: the step of each of ascending times."""
    out: dict[str, dict[int, list[int]]] = {}
    for mem in mems:
        order = sorted(range(len(mem)), key=mem.time.__getitem__)
        steps = steps_of([mem.time[k] for k in order])
        live: dict[tuple[str, int], int] = {}
        open_at: dict[tuple[str, int], list[Any]] = {}
        blocks: list[list[Any]] = []  # [values, node, step, bytes, exec end, freed at]
        alloc, allocator, addr, time = mem.alloc, mem.allocator, mem.addr, mem.time
        nbytes, requested, region, exec_end = mem.nbytes, mem.requested, mem.region, mem.exec_end
        names: dict[str, str] = {}
        prefix = mem.prefix
        for k, step in zip(order, steps):
            key = (allocator[k], addr[k])
            if not alloc[k]:
                block = open_at.pop(key, None)
                if block is not None:
                    live[block[1]] -= block[2]
                    block[4] = time[k]
                continue
            op = mem.op[k]
            node = names.get(op)
            if node is None:
                node = names[op] = prefix + _op_name(op) if op else ""
            if step is None or not node:
                open_at.pop(key, None)
                continue
            by_step = out.get(node)
            if by_step is None:
                by_step = out[node] = {}
            values = by_step.get(step)
            if values is None:
                values = by_step[step] = [0, 0, 0, 0]
            n = nbytes[k]
            values[0] += requested[k]
            if region[k] == "output":
                values[3] += n
            held = live.get(id(values), 0) + n
            live[id(values)] = held
            if held > values[1]:
                values[1] = held
            block = [values, id(values), n, exec_end[k], -1]
            blocks.append(block)
            open_at[key] = block
        for values, _, n, end, freed in blocks:
            if freed < 0 or freed >= end:
                values[2] += n
    return out


class XPlaneMemorySource:
    """Builds the memory profile of TF2/JAX hosts (see the module)."""

    def __init__(self, mems: list[HostMemory], marks: list[StepMark], op_types: dict[str, str],
                 paths: Sequence[str], several: bool) -> None:
        self.mems, self.marks, self.op_types = mems, marks, op_types
        self.paths, self.several = list(paths), several

    def __call__(self) -> MemoryProfile:
        tables = Tables()
        devices = []
        needs_program = any(not op for mem in self.mems for op, a in zip(mem.op, mem.alloc)
                            if a)
        for h, mem in enumerate(self.mems):
            programs = (_programs(self.paths[h], mem) if needs_program and h < len(self.paths)
                        else {})
            by_allocator: dict[str, list[int]] = {}
            for k, name in enumerate(mem.allocator):
                by_allocator.setdefault(name, []).append(k)
            for name, ks in sorted(by_allocator.items()):
                devices.append(build_device(self._events(mem, name, ks, tables, programs)))
        devices.sort(key=lambda d: d.name)
        has = {HAS_COUNTER, HAS_FREES, HAS_CAPACITY, HAS_FRAGMENTATION, HAS_OWNER, HAS_REGION,
               HAS_SHAPE, HAS_REQUESTED}
        notes = []
        if needs_program:
            notes.append("JAX's memory events name no op: each allocation is attributed to "
                         "the jitted program running around it")
        return tables.profile(devices, sorted_marks(self.marks), frozenset(has), notes,
                              "MemoryAllocation events")


    def _events(self, mem: HostMemory, name: str, ks: list[int], tables: Tables,
                programs: dict[int, str]) -> DeviceEvents:
        """The DeviceEvents of allocator ``name``: the events at ``ks``, as columns."""
        every = len(ks) == len(mem)
        pick: Callable[[Sequence[Any]], list[Any]] = (
            list if every else (lambda column: [column[k] for k in ks]))
        alloc = pick(mem.alloc)
        nbytes = pick(mem.nbytes)
        owners: dict[str, int] = {}
        labels: dict[str, int] = {}
        owner, shape, region = [], [], []
        op_types, label = self.op_types, tables.label
        for j, k in enumerate(ks):
            if not alloc[j]:
                owner.append(-1)
                shape.append(-1)
                region.append(-1)
                continue
            op = mem.op[k]
            found = owners.get(op) if op else None
            if found is None:
                if op:
                    node = node_of(mem, k)
                    found = owners[op] = tables.owner(op_types.get(node, ""), node)
                else:
                    program = programs.get(k, "")
                    found = tables.owner(program, program) if program else -1
            owner.append(found)
            for text, out in ((mem.shape[k], shape), (mem.region[k], region)):
                index = labels.get(text)
                if index is None:
                    index = labels[text] = label(text)
                out.append(index)
        raw = DeviceEvents(mem.prefix + (name or "allocator"))
        raw.times = [t // 1000 for t in pick(mem.time)]
        raw.size = [n if a else -n for a, n in zip(alloc, nbytes)]
        raw.addr = pick(mem.addr)
        raw.requested = pick(mem.requested)
        raw.owner, raw.shape, raw.region = owner, shape, region
        raw.code = [-1] * len(ks)
        raw.allocated = pick(mem.allocated)
        raw.fragmentation = pick(mem.fragmentation)
        raw.available = pick(mem.available)
        return raw


def _programs(path: str, mem: HostMemory) -> dict[int, str]:
    """Allocation index -> the jitted program whose host span (``PjitFunction(f)``,
    ``...Execute (jit_f)``) is innermost around it on its line, from the file read
    again (only lines with allocations that name no op)."""
    from ..proto import xplane_columns_pb2, xplane_pb2, xplane_stacks_pb2
    from .files import read_unzipped
    from .xspace_pick import raw_host_planes

    wanted: dict[tuple[int, int], list[int]] = {}
    for k in range(len(mem)):
        if mem.alloc[k] and not mem.op[k]:
            wanted.setdefault(mem.where[k], []).append(k)
    out: dict[int, str] = {}
    if not wanted:
        return out
    for plane in raw_host_planes(read_unzipped(path, "profile_path")):
        programs = {}
        for md_id, name in plane.names:
            m = _PROGRAM.fullmatch(name)
            if m:
                programs[md_id] = "jit_" + m.group(1) if m.group(1) else m.group(2)
        if not programs:
            continue
        for li, raw in enumerate(plane.lines):
            ks = wanted.get((plane.index, li))
            if not ks:
                continue
            base = (mem.shift_ns + xplane_stacks_pb2.LineHead.FromString(raw).timestamp_ns) * 1000
            line = xplane_columns_pb2.XLineColumns.FromString(raw).events
            ids, offsets, durations = line.metadata_id, line.offset_ps, line.duration_ps
            if len(offsets) == len(ids) and len(durations) == len(ids):
                spans = sorted((offsets[i], offsets[i] + durations[i], programs[m])
                               for i, m in enumerate(ids) if m in programs)
            else:  # zero offsets or durations left out: the events one by one
                spans = sorted((ev.offset_ps, ev.offset_ps + ev.duration_ps,
                                programs[ev.metadata_id])
                               for ev in xplane_pb2.XLine.FromString(raw).events
                               if ev.metadata_id in programs)
            for k in ks:
                t = mem.time[k] - base
                inner = [s for s in spans if s[0] <= t < s[1]]
                if inner:
                    out[k] = max(inner, key=lambda s: s[0])[2]
    return out

