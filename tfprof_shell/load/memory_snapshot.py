"""PyTorch memory snapshots (``torch.cuda.memory._dump_snapshot``, ``.pickle``) -> Model.

A snapshot is a pickle, and ``pickle.load`` runs whatever code the file names:
someone else's snapshot is read here by an unpickler that refuses every global
(:func:`read_snapshot`), so only plain data (dicts, lists, strings, numbers)
comes out of it; a file that names any class or function is refused.

What it holds: per device, a trace of the allocator's actions (``device_traces``:
``alloc``, ``free_requested``, ``free_completed``, ``segment_alloc`` ...; each with
the block's ``addr`` and ``size``, the Python and C++ ``frames`` that made it and,
from the allocator, ``time_us``), and the state at the end (``segments`` and their
``blocks``). A block is allocated at ``alloc`` and freed at ``free_completed`` (or
``free_requested`` where the trace has no completion); segment events give the
reserved bytes. Blocks active at the end whose allocation the trace does not hold
(it keeps only the last ``max_entries`` actions) were allocated before it. The
trace has no steps: the whole trace is step 0; without ``time_us`` an action's
time is its place in the trace (1 µs apart). PyTorch's ``_profile_to_snapshot``
writes a profiler's memory as a snapshot (with a ``category`` per allocation and
no times) and puts the CPU after the GPUs: such a file's last device is ``cpu``.
"""

from __future__ import annotations

import io
import pickle
import re
from typing import Any, Sequence

from ..errors import LoadError
from ..model import ExecMemory, ExecStep, Frame, GraphNode, Model, Source
from ..model.intervals import StepMark
from ..model.memory import (HAS_CODE, HAS_FREES, HAS_REGION, HAS_RESERVED, DeviceEvents,
                            MemoryProfile, Tables, build_device)
from .files import read_bytes
from .own_code import code_label, own_code

_PY_NAME = re.compile(r"(.+)\((\d+)\): (.+)")
_FREED = ("free_completed", "free_requested")


class _DataOnly(pickle.Unpickler):
    """An unpickler that builds plain data only: it refuses every global (a class or a
    function the file names), so no code of the file's choosing can run."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError("it names %s.%s" % (module, name))

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("it holds a persistent reference")


def read_snapshot(path: str) -> dict:
    """A snapshot's data, read without running code from it; LoadError if it is not
    a memory snapshot, or names anything but plain data."""
    data = read_bytes(path, "profile_path")
    try:
        snapshot = _DataOnly(io.BytesIO(data)).load()
    except pickle.UnpicklingError as exc:
        raise LoadError("--profile_path %s: refused: not plain data (%s); a memory snapshot "
                        "holds only dicts, lists, strings and numbers" % (path, exc)) from None
    except (EOFError, ValueError, TypeError, IndexError, KeyError, AttributeError,
            RecursionError, MemoryError):
        raise LoadError("--profile_path %s: not a pickle" % path) from None
    if not isinstance(snapshot, dict) or not isinstance(snapshot.get("device_traces"), list):
        raise LoadError("--profile_path %s: a pickle, but not a PyTorch memory snapshot "
                        "(no device_traces)" % path)
    return snapshot


def _frames(entry: dict) -> tuple[Frame, ...]:
    """An action's stack, outermost first (snapshots list the innermost first)."""
    out = []
    for f in entry.get("frames") or ():
        if not isinstance(f, dict):
            continue
        name, filename = str(f.get("name", "")), str(f.get("filename", ""))
        line = f.get("line") if isinstance(f.get("line"), int) else 0
        if filename in ("", "none") or not line:
            m = _PY_NAME.fullmatch(name)
            if not m:
                continue  # a module scope or a C function: not a line
            filename, line, name = m.group(1), int(m.group(2)), m.group(3)
        if filename.endswith((".py", ".pyi")):
            out.append(Frame(filename, line, name, line))
    return tuple(reversed(out))


def _device_names(snapshot: dict) -> list[str]:
    traces = snapshot["device_traces"]
    from_profile = any(isinstance(e, dict) and "category" in e and "time_us" not in e
                       for trace in traces for e in trace)
    names = ["gpu:%d" % i for i in range(len(traces))]
    if from_profile and names:
        names[-1] = "cpu"
    return names


def load_snapshot(paths: Sequence[str], note: str = "") -> Model:
    """Read PyTorch memory snapshots (one model; several files: their traces one after
    another) into a Model whose nodes are the lines of your code holding blocks at the
    end of the trace."""
    model = Model(Source("snapshot", tuple(paths), note))
    if note:
        model.notes.append(note)
    snapshots = [read_snapshot(p) for p in paths]
    source = SnapshotMemory(snapshots)
    model.set_memory_source(source)
    model.add_step(0)
    profile = source()
    for device in profile.devices:
        b = device.blocks
        end = len(device.times)
        for i in range(len(b)):
            if b.last[i] < end:
                continue
            frames = profile.traces[b.code[i]] if b.code[i] >= 0 else ()
            chosen = next((f for f in reversed(frames) if own_code(f)),
                          frames[-1] if frames else None)
            name = code_label(chosen) if chosen is not None else "(no stack)"
            node = model.nodes.get(name)
            if node is None:
                node = model.nodes[name] = GraphNode(name, "block", len(model.nodes))
                if frames:
                    node.trace = list(frames)
                    model.has_trace = True
            rec = node.execs.setdefault(0, ExecStep())
            rec.memory_execs.append(ExecMemory(requested_bytes=b.nbytes[i],
                                               peak_bytes=b.nbytes[i],
                                               residual_bytes=b.nbytes[i]))
    return model


class SnapshotMemory:
    """Builds the memory profile of PyTorch memory snapshots (see the module)."""

    def __init__(self, snapshots: list[dict]) -> None:
        self.snapshots = snapshots
        self._built: Any = None

    def __call__(self) -> MemoryProfile:
        if self._built is not None:
            return self._built
        tables = Tables()
        devices: dict[str, DeviceEvents] = {}
        reserved: dict[str, int] = {}
        clock = 0
        lo, hi = None, 0
        for snapshot in self.snapshots:
            names = _device_names(snapshot)
            seen: set[tuple[str, Any]] = set()
            for index, trace in enumerate(snapshot["device_traces"]):
                name = names[index]
                raw = devices.setdefault(name, DeviceEvents(name, reserved=[]))
                completed = any(isinstance(e, dict) and e.get("action") == "free_completed"
                                for e in trace)
                for entry in trace:
                    if not isinstance(entry, dict):
                        continue
                    clock += 1000
                    action = entry.get("action")
                    size = entry.get("size") if isinstance(entry.get("size"), int) else 0
                    t = (int(entry["time_us"]) * 1000 if isinstance(entry.get("time_us"), int)
                         else clock)
                    if action in ("segment_alloc", "segment_map"):
                        reserved[name] = reserved.get(name, 0) + size
                        continue
                    if action in ("segment_free", "segment_unmap"):
                        reserved[name] = reserved.get(name, 0) - size
                        continue
                    addr = entry.get("addr")
                    if action == "alloc":
                        seen.add((name, addr))
                        category = entry.get("category")
                        raw.add(t, size, addr, code=tables.trace(_frames(entry)),
                                region=tables.label(str(category)) if category else -1)
                    elif action == (_FREED[0] if completed else _FREED[1]):
                        raw.add(t, -size, addr)
                    else:
                        continue
                    raw.reserved.append(reserved.get(name, 0))  # type: ignore[union-attr]
                    lo = t if lo is None else min(lo, t)
                    hi = max(hi, t + 1)
            for name, nbytes, frames in _active_at_end(snapshot, names):
                if (name, nbytes[0]) not in seen and name in devices:
                    devices[name].before.append((nbytes[1], tables.trace(frames)))
        built = [build_device(raw) for _, raw in sorted(devices.items()) if raw.times]
        has = {HAS_FREES, HAS_CODE, HAS_REGION}
        if any(reserved.values()):
            has.add(HAS_RESERVED)
        else:
            for device in built:
                device.reserved = None
        marks = [StepMark(0, lo, hi)] if lo is not None else []
        notes = ["a memory snapshot has no steps: its whole trace is step 0"]
        self._built = tables.profile(built, marks, frozenset(has), notes,
                                     "PyTorch memory snapshot")
        return self._built


def _active_at_end(snapshot: dict, names: list[str]
                   ) -> list[tuple[str, tuple[Any, int], tuple[Frame, ...]]]:
    """The blocks allocated at the end: (device, (address, bytes), stack)."""
    out = []
    for seg in snapshot.get("segments") or ():
        if not isinstance(seg, dict) or not isinstance(seg.get("address"), int):
            continue
        device = seg.get("device", 0)
        if not isinstance(device, int) or not 0 <= device < len(names):
            continue
        addr = seg["address"]
        for block in seg.get("blocks") or ():
            if not isinstance(block, dict) or not isinstance(block.get("size"), int):
                continue
            if block.get("state") == "active_allocated":
                out.append((names[device], (addr, block["size"]), _frames(block)))
            addr += block["size"]
    return out


def is_snapshot_name(path: str) -> bool:
    """Whether a file's name says pickle (``.pickle``, ``.pkl``)."""
    return path.lower().endswith((".pickle", ".pkl"))
