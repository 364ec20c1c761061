"""TensorFlow 1 memory over time: run metadata, ProfileProto records and ``show_memory`` timelines.

* RunMetadata (``--graph_path`` with ``--run_meta_path``, file i = step i): each
  node's ``memory`` entries hold, per allocator, its allocation records (time,
  bytes: + allocated, - freed; frees seen while the op's tracking allocator
  lived); a free matches the latest open allocation of the same size by the same
  node. An output tensor of that size names the block's shape and makes its
  region ``output``; a block freed before its op ended is ``temp``. The files
  are read again when the memory profile is first asked for.
* ProfileProto: TensorFlow's profiler keeps allocation records of GPU allocators
  only (and no allocator name): those, per node and step, on device ``gpu``.
* Chrome timelines written with ``show_memory=True``: each output tensor is an
  object created when its op ran and deleted after its last use, with its
  description (allocator, requested bytes, type and shape); TensorFlow's own
  ``Memory`` counters are the running sum of those, in the order it sorts them
  (at one time, frees first, then by size and name), which is kept.

None records the allocator's own counter on the CPU: the level is the bytes of
the blocks the profile saw.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Optional, Sequence

from ..model import Model
from ..model.intervals import StepMark
from ..model.memory import (HAS_FREES, HAS_OWNER, HAS_REGION, HAS_SHAPE, DeviceEvents,
                            MemoryProfile, Tables, build_device, sorted_marks)

_DTYPE = re.compile(r"dtype: DT_(\w+)")
_DIM = re.compile(r"size: (-?\d+)")
_REQUESTED = re.compile(r"requested_bytes: (\d+)")
_ALLOCATOR = re.compile(r"allocator_name: (\S+)")
#: TensorFlow's DataType enum: the names of the usual ones, by number and by enum name.
DTYPES = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8",
          7: "string", 8: "complex64", 9: "int64", 10: "bool", 14: "bfloat16", 17: "uint16",
          18: "complex128", 19: "float16", 20: "resource", 21: "variant", 22: "uint32",
          23: "uint64"}
_TF1_TYPES = {"FLOAT": "float32", "DOUBLE": "float64", "INT32": "int32", "INT64": "int64",
              "HALF": "float16", "BFLOAT16": "bfloat16", "BOOL": "bool", "UINT8": "uint8",
              "INT8": "int8", "INT16": "int16", "STRING": "string", "RESOURCE": "resource",
              "VARIANT": "variant", "COMPLEX64": "complex64"}


def dtype_name(value: Any) -> str:
    """A TF data type's name: from its enum number (``1``) or name (``FLOAT``)."""
    if isinstance(value, int):
        return DTYPES.get(value, "dtype%d" % value if value else "")
    text = str(value or "")
    return _TF1_TYPES.get(text, text.lower())
_NOTE = ("TensorFlow 1 records no allocator counter on the CPU: the level is the bytes of "
         "the allocations the profile saw")


def _shape_label(dtype: Any, dims: Sequence[int]) -> str:
    return "%s[%s]" % (dtype_name(dtype), ",".join("%d" % d for d in dims))


class _Pairing:
    """Synthetic addresses for blocks named only by owner and size: a free takes the
    latest open block of its owner and size."""

    def __init__(self) -> None:
        self.serial = 0
        self.open: dict[tuple[Any, ...], list[int]] = {}

    def alloc(self, key: tuple[Any, ...]) -> int:
        self.serial += 1
        self.open.setdefault(key, []).append(self.serial)
        return self.serial

    def free(self, key: tuple[Any, ...]) -> int:
        ids = self.open.get(key)
        if ids:
            return ids.pop()
        self.serial += 1
        return self.serial  # a block allocated before the profile


class RunMetaMemory:
    """Builds the memory profile of TF1 RunMetadata files (file i is step ``step_ids[i]``)."""

    def __init__(self, paths: Sequence[str], step_ids: Optional[Sequence[int]] = None) -> None:
        self.paths = tuple(paths)
        self.step_ids = tuple(step_ids) if step_ids else tuple(range(len(paths)))

    def __call__(self) -> MemoryProfile:
        from .graph import read_run_metadata

        tables = Tables()
        devices: dict[str, DeviceEvents] = {}
        marks = []
        pairing = _Pairing()
        for step, path in zip(self.step_ids, self.paths):
            rm = read_run_metadata(path)
            lo, hi = 1 << 62, -(1 << 62)
            for dev in rm.step_stats.dev_stats:
                for ns in dev.node_stats:
                    if ns.all_start_micros > 0:
                        lo = min(lo, ns.all_start_micros)
                        hi = max(hi, ns.all_start_micros + max(ns.op_end_rel_micros, 0))
                    _add_node_stats(devices, tables, pairing, ns)
            if hi > lo:
                marks.append(StepMark(step, lo * 1000, hi * 1000 + 1))
        built = [build_device(raw) for _, raw in sorted(devices.items())]
        return tables.profile(built, sorted_marks(marks),
                              frozenset((HAS_FREES, HAS_OWNER, HAS_SHAPE, HAS_REGION)), [_NOTE],
                              "RunMetadata allocation records")


def _add_node_stats(devices: dict[str, DeviceEvents], tables: Tables, pairing: _Pairing,
                    ns: Any) -> None:
    """One node execution's allocation records, with its output tensors' shapes."""
    node = ns.node_name.split(":", 1)[0]
    op = ns.timeline_label.split(" = ", 1)[-1].split("(", 1)[0] if ns.timeline_label else ""
    owner = tables.owner(op, node)
    end = (ns.all_start_micros + max(ns.op_end_rel_micros, 0)) * 1000
    shapes: dict[tuple[str, int], list[str]] = {}
    for out in ns.output:
        td = out.tensor_description
        ad = td.allocation_description
        nbytes = max(ad.allocated_bytes, ad.requested_bytes)
        label = _shape_label(int(td.dtype), [d.size for d in td.shape.dim])
        shapes.setdefault((ad.allocator_name, nbytes), []).append(label)
    for mem in ns.memory:
        records = sorted((r.alloc_micros, r.alloc_bytes) for r in mem.allocation_records)
        if not records:
            continue
        name = mem.allocator_name or "allocator"
        raw = devices.get(name)
        if raw is None:
            raw = devices[name] = DeviceEvents(name)
        freed_early: set[int] = set()
        pending: list[tuple[int, int, int]] = []
        for micros, nbytes in records:
            t = micros * 1000
            if nbytes >= 0:
                addr = pairing.alloc((node, name, nbytes))
                pending.append((t, nbytes, addr))
            else:
                addr = pairing.free((node, name, -nbytes))
                if t <= end:
                    freed_early.add(addr)
                raw.add(t, nbytes, addr)
        for t, nbytes, addr in pending:
            labels = shapes.get((name, nbytes))
            shape = labels.pop(0) if labels else ""
            region = "output" if shape else ("temp" if addr in freed_early else "")
            raw.add(t, nbytes, addr, owner=owner, shape=tables.label(shape),
                    region=tables.label(region))


class ProfileMemory:
    """Builds the memory profile of a ProfileProto's records: the GPU allocation
    records TensorFlow's profiler keeps, per node and step."""

    def __init__(self, model: Model) -> None:
        self.model = model

    def __call__(self) -> MemoryProfile:
        tables = Tables()
        raw = DeviceEvents("gpu")
        pairing = _Pairing()
        bounds: dict[int, list[int]] = {}
        for node in self.model.nodes.values():
            owner = -1
            for step in node.steps_run:
                rec = node.exec_step(step)
                if rec is None or not rec.allocations:
                    continue
                if owner < 0:
                    owner = tables.owner(node.op, node.name)
                span = bounds.setdefault(step, [1 << 62, -(1 << 62)])
                for micros, nbytes in sorted(rec.allocations):
                    t = micros * 1000
                    span[0], span[1] = min(span[0], t), max(span[1], t + 1)
                    if nbytes >= 0:
                        raw.add(t, nbytes, pairing.alloc((node.name, nbytes)), owner=owner)
                    else:
                        raw.add(t, nbytes, pairing.free((node.name, -nbytes)))
        devices = [build_device(raw)] if raw.times else []
        marks = [StepMark(s, lo, hi) for s, (lo, hi) in sorted(bounds.items())]
        return tables.profile(devices, sorted_marks(marks), frozenset((HAS_FREES, HAS_OWNER)),
                              ["TensorFlow's profiler keeps allocation records of GPU "
                               "allocators only"], "ProfileProto allocation records")


class TimelineTensors:
    """The tensor objects of TF1 timelines written with ``show_memory``, file by file."""

    def __init__(self) -> None:
        self.tables = Tables()
        #: allocator -> (time ns, signed bytes, tensor name, object id, owner, shape)
        self.events: dict[str, list[tuple[int, int, str, Any, int, int]]] = {}
        self.marks: list[StepMark] = []

    def add(self, step: int, events: Iterable[Any],
            reread: Optional[Callable[[Iterable[Any]], Optional[Iterable[Any]]]] = None
            ) -> None:
        """One timeline's tensor objects (``Tensor`` N/O/D events), as step ``step``.
        ``reread`` gives the events the fields a tensor event calls for (its id and
        snapshot: .trace_events.ARG_GROUPS): None if the events held have them now, else
        the events to take instead."""
        created: dict[Any, tuple[int, str]] = {}
        described: dict[Any, str] = {}
        deleted: dict[Any, int] = {}
        op_of: dict[str, str] = {}
        lo, hi = 1 << 62, -(1 << 62)
        for ev in events:
            ph = ev.ph
            if ev.cat != "Tensor" or ph not in ("N", "O", "D"):
                if ph == "X":
                    t = _ns(ev.ts)
                    lo, hi = min(lo, t), max(hi, t + _ns(ev.dur))
                    args = ev.args
                    if args is not None and isinstance(args.name, str) and isinstance(args.op,
                                                                                      str):
                        op_of[args.name] = args.op
                continue
            if reread is not None:
                again = reread([ev])
                if again is not None:
                    return self.add(step, again)
                reread = None
            key = (ev.pid, ev.id, str(ev.name))
            t = _ns(ev.ts)
            if ph == "N":
                created[key] = (t, str(ev.name))
            elif ph == "D":
                deleted[key] = t
            else:
                snap = (ev.args.snapshot if ev.args is not None else None) or {}
                text = snap.get("tensor_description") if isinstance(snap, dict) else None
                if isinstance(text, str):
                    described[key] = text
        for key, (t, name) in created.items():
            text = described.get(key, "")
            m = _REQUESTED.search(text)
            nbytes = int(m.group(1)) if m else 0
            allocator = _ALLOCATOR.search(text)
            device = allocator.group(1) if allocator else "allocator"
            dtype = _DTYPE.search(text)
            shape = (self.tables.label(_shape_label(dtype.group(1), [int(d) for d in
                                                                      _DIM.findall(text)]))
                     if dtype else -1)
            node = name.split(":", 1)[0]
            owner = self.tables.owner(op_of.get(node, ""), node)
            out = self.events.setdefault(device, [])
            out.append((t, nbytes, name, key, owner, shape))
            end = deleted.get(key)
            if end is not None:
                out.append((end, -nbytes, name, key, owner, shape))
        if hi > lo:
            self.marks.append(StepMark(step, lo, hi))

    def source(self) -> "TimelineMemory":
        """What the model keeps to build its memory profile."""
        return TimelineMemory(self.tables, self.events, self.marks)


def _ns(value: Any) -> int:
    try:
        return int(round(float(value) * 1000))
    except (TypeError, ValueError):
        return 0


class TimelineMemory:
    """Builds the memory profile of TF1 ``show_memory`` timelines."""

    def __init__(self, tables: Tables, events: dict[str, list[tuple]], marks: list[StepMark]
                 ) -> None:
        self.tables, self.events, self.marks = tables, events, marks

    def __call__(self) -> MemoryProfile:
        devices = []
        for name, events in sorted(self.events.items()):
            raw = DeviceEvents(name)
            # TensorFlow's order for its counters: by time, then size (frees first), name
            for t, nbytes, tensor, key, owner, shape in sorted(events, key=lambda e: e[:3]):
                if nbytes >= 0:
                    raw.add(t, nbytes, key, owner=owner, shape=shape,
                            region=self.tables.label("output"))
                else:
                    raw.add(t, nbytes, key)
            devices.append(build_device(raw))
        return self.tables.profile(devices, sorted_marks(self.marks),
                                   frozenset((HAS_FREES, HAS_OWNER, HAS_SHAPE, HAS_REGION)),
                                   ["a TensorFlow timeline's memory is its output tensors, "
                                    "alive from their op to their last use"],
                                   "timeline tensor objects")
