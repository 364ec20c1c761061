"""XSpace files (``.xplane.pb``) -> per-host executions, step markers and Python frames.

The schema is our own wire-compatible copy (no TensorFlow needed). This module
only reads: it classifies the events of the host plane (TF ops, eager ops,
Python-tracer frames, step markers, memory events, executor ids) and of GPU
planes (kernels and the TF op each names, or for XLA programs the node
:mod:`.xla` maps them to), in picoseconds on one time axis. :mod:`.xplane`
turns them into a Model.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from dataclasses import dataclass
from itertools import compress, islice, repeat
from operator import add, attrgetter, itemgetter, le, lt, not_
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

from ..errors import LoadError
from ..model import Frame
from ..proto import xplane_columns_pb2, xplane_pb2, xplane_stacks_pb2
from .files import parse_binary, read_unzipped
from .frame_lines import FrameLines, stacks_on
from .pystack import Line, attach_traces, eager_execs, parse_py_frame, subtract_nested
from .records import GPU_STREAM_ALL
from .wire import LEN, top_fields

if TYPE_CHECKING:
    from .xla import KernelOp, XlaKernels

HOST_PLANES = ("/host:CPU", "Host Threads")
TASK_ENV_PLANE = "Task Environment"
_GPU_PLANE = re.compile(r"/device:GPU:(\d+)")
#: Lines that XProf derives from other lines; reading them would count twice.
DERIVED_LINES = frozenset({
    "Steps", "Framework Ops", "TensorFlow Ops", "Framework Name Scope",
    "TensorFlow Name Scope", "XLA Ops", "XLA Modules", "Async XLA Ops", "Launch Stats",
    "Source code", "Host Offload Ops", "_counters_", "Sparse Core Steps"})
#: Stats that name the TensorFlow op a device kernel belongs to, best first.
KERNEL_OP_STATS = ("tf_op", "kernel_annotation", "annotation", "level 0", "tf_op_name")
_TF_OP = re.compile(r"([A-Za-z0-9.][A-Za-z0-9_./>-]*):([A-Z_][A-Za-z0-9_]*)")
_GZIP = b"\x1f\x8b"

_SLICE = 1 << 18
#: Executor ids are read as columns (see :func:`_id_columns`) from a line with at
#: least this many of them, and at least one in this many of its events (the
#: line's events are split into their bytes first, which costs per event).
IDS_AS_COLUMNS_AT_LEAST = 1024
_IDS_AS_COLUMNS_DENSITY = 64
#: A stat put before each event's bytes to find the events' boundaries in the
#: merged stat column: metadata id -1, which no writer uses (ids count from 0).
_BOUNDARY_ID = -1
_BOUNDARY = b"\x22\x0b\x08" + b"\xff" * 9 + b"\x01"
_OFFSET = attrgetter("offset_ps")
_DURATION = attrgetter("duration_ps")
# Event kinds on host lines, decided once per event metadata.
_OP, _PY, _EAGER, _EAGER_KERNEL, _MEMORY, _OTHER = range(6)


def parse_tf_op(text: str) -> Optional[tuple[str, str]]:
    """(op name, op type) of an ``op_name:OpType`` event name, else None."""
    m = _TF_OP.fullmatch(text)
    return (m.group(1), m.group(2)) if m else None


@dataclass
class Picked:
    """What the columns tell of one host line (see :func:`read_xspace_picked`).

    Events are split by their metadata: TF-op events (``op_*``, their times too
    where the line's offset or duration column is aligned, else None), and
    the rest (``rest_*``) that are not Python-tracer events; Python-tracer
    events get no message at all.
    """

    n_events: int
    has_frames: bool
    op_indices: list[int]
    op_ids: list[int]
    op_offsets: Optional[list[int]]
    op_durations: Optional[list[int]]
    rest_indices: list[int]
    rest_ids: list[int]
    #: stat metadata id -> how many stats of the line's events have it
    stat_counts: dict[int, int]
    #: event metadata id -> its events (among ``rest``), when every one of them
    #: has the same number of stats, all int64 (or all uint64) valued, and one
    #: of them, always at the same place, is an executor ``id`` and none a
    #: ``step_num``: (indices, offsets, durations, id values) as columns
    #: (see :func:`_id_columns`); only for metadata whose first event has an id
    id_columns: Optional[dict[int, tuple[list[int], list[int], list[int], list[int]]]] = None


def read_xspace_picked(path: str, pick: bool = True) -> tuple[Any, dict[tuple[int, int], Picked]]:
    """One ``.xplane.pb`` (optionally gzip-compressed) parsed; LoadError if it is
    not one. With ``pick``, also each host line's :class:`Picked` by (plane index,
    line index), from the same bytes read with ``xplane_columns.proto`` (each
    line's event fields as arrays)."""
    if path.endswith(".riegeli"):
        raise LoadError("--profile_path %s: .xplane.riegeli files are not supported; "
                        "use the .xplane.pb files of the same run" % path)
    data = read_unzipped(path, "profile_path")
    picked: dict[tuple[int, int], Picked] = {}
    if pick:
        # Parsed first and dropped before the full parse, so both never coexist.
        columns = parse_binary(xplane_columns_pb2.XSpaceColumns, data)
        if columns is not None:
            picked = _pick(columns, data)
        del columns
    space = parse_binary(xplane_pb2.XSpace, data)
    if space is None or not _looks_like_xspace(space):
        raise LoadError("--profile_path %s: not an XSpace (.xplane.pb) file" % path)
    return space, picked


def _pick(columns: Any, data: Optional[bytes] = None) -> dict[tuple[int, int], Picked]:
    out: dict[tuple[int, int], Picked] = {}
    line_bytes: Optional[dict[int, list[Any]]] = None
    for p, plane in enumerate(columns.planes):
        if plane.name not in HOST_PLANES:
            continue
        names = [(k, v.name) for k, v in plane.event_metadata.items()]
        frame_ids, py_ids = _python_ids(names)
        kinds = [(k, _classify(name)[0]) for k, name in names]
        op_ids = {k for k, kind in kinds if kind == _OP}
        other_ids = {k for k, kind in kinds if kind == _OTHER}
        stat_names = {k: v.name for k, v in plane.stat_metadata.items()}
        id_stats = {k for k, name in stat_names.items() if name == "id"}
        marker_stats = {k for k, name in stat_names.items() if name == "step_num"}
        keep_of = dict.fromkeys(py_ids, False)
        for li, line in enumerate(plane.lines):
            events = line.events
            ids = events.metadata_id
            n = len(ids)
            offsets = events.offset_ps if len(events.offset_ps) == n else None
            durations = events.duration_ps if len(events.duration_ps) == n else None
            ops: list[int] = []
            op_md: list[int] = []
            op_offsets: list[int] = []
            op_durations: list[int] = []
            rest: list[int] = []
            rest_md: list[int] = []
            has_frames = False
            # In slices: a list of millions of ints would cost hundreds of MB.
            # Reading a column costs per element, so the time columns are
            # sliced where most events are ops and indexed where few are.
            # Lists, not arrays: an array is several times slower to fill.
            for k in range(0, n, _SLICE):
                part = ids[k:k + _SLICE]
                has_frames = has_frames or not frame_ids.isdisjoint(part)
                mask = list(map(keep_of.get, part, repeat(True)))
                count = mask.count(True)
                if not count:
                    continue
                if count == len(part):
                    kept, kept_md = list(range(k, k + count)), part
                else:
                    local = (list(compress(range(len(part)), mask)) if count * 16 > len(part)
                             else _positions(mask, count))
                    kept = list(map(k.__add__, local)) if k else local
                    kept_md = list(map(part.__getitem__, local))
                if op_ids.isdisjoint(kept_md):
                    rest += kept
                    rest_md += kept_md
                    continue
                is_op = list(map(op_ids.__contains__, kept_md))
                these = list(compress(kept, is_op))
                ops += these
                op_md += compress(kept_md, is_op)
                rest += compress(kept, map(not_, is_op))
                rest_md += compress(kept_md, map(not_, is_op))
                if len(these) * 4 >= len(part):
                    in_part = (is_op if len(kept) == len(part)
                               else list(map(op_ids.__contains__, part)))
                for column, into in ((offsets, op_offsets), (durations, op_durations)):
                    if column is None:
                        continue
                    if len(these) * 4 >= len(part):
                        into += compress(column[k:k + _SLICE], in_part)
                    else:
                        into += map(column.__getitem__, these)
            stat_counts = Counter(events.stats.metadata_id)
            picked = out[(p, li)] = Picked(
                n, has_frames, ops, op_md, op_offsets if offsets is not None else None,
                op_durations if durations is not None else None, rest, rest_md, stat_counts)
            n_ids = sum(stat_counts.get(k, 0) for k in id_stats)
            if (data is not None and n_ids >= IDS_AS_COLUMNS_AT_LEAST
                    and n_ids * _IDS_AS_COLUMNS_DENSITY >= n):
                if line_bytes is None:
                    line_bytes = _host_line_bytes(data, [
                        q for q, plane in enumerate(columns.planes) if plane.name in HOST_PLANES])
                lines = line_bytes.get(p)
                if lines is not None and len(lines) == len(plane.lines):
                    raw = lines[li]
                    picked.id_columns = _line_id_columns(
                        xplane_stacks_pb2.LineRaw.FromString(raw).events, rest, rest_md,
                        other_ids, id_stats, marker_stats)
    return out


def _host_line_bytes(data: bytes, hosts: list[int]) -> dict[int, list[Any]]:
    """The bytes of each line of the planes at ``hosts`` (plane indices), found
    without a parse (a plane is left out if its bytes do not split)."""
    out: dict[int, list[Any]] = {}
    top = top_fields(data, limit=1 << 20)
    planes = [v for number, wire, v in top or () if number == 1 and wire == LEN]
    for p in hosts:
        fields = top_fields(planes[p], limit=1 << 30) if p < len(planes) else None
        if fields is not None:
            out[p] = [v for number, wire, v in fields if number == 3 and wire == LEN]
    return out


def _line_id_columns(raw_events: Any, rest: list[int], rest_md: list[int],
                     other_ids: set[int], id_stats: set[int], marker_stats: set[int]
                     ) -> dict[int, tuple[list[int], list[int], list[int], list[int]]]:
    """:attr:`Picked.id_columns` of a line (``raw_events``: its events' bytes)."""
    first = dict(zip(reversed(rest_md), reversed(rest)))
    candidates = [md for md in first if md in other_ids]
    wanted = id_stats | marker_stats
    per_event = _stats_per_event([raw_events[first[md]] for md in candidates])
    out = {}
    for md, stats in zip(candidates, per_event):
        if stats is None or not id_stats.intersection(stats) or marker_stats.intersection(stats):
            continue
        indices = list(compress(rest, map(md.__eq__, rest_md)))
        found = _id_columns(raw_events, indices, id_stats, wanted)
        if found is not None:
            out[md] = found
    return out


def _stats_per_event(events: list[bytes]) -> list[Optional[list[int]]]:
    """Each event's stat metadata ids (None if the boundaries are not found)."""
    parsed = xplane_columns_pb2.EventValues.FromString(_BOUNDARY + _BOUNDARY.join(events))
    ids = list(parsed.stats.metadata_id)
    if ids.count(_BOUNDARY_ID) != len(events):
        return [None] * len(events)
    out: list[Optional[list[int]]] = []
    at = ids.index(_BOUNDARY_ID) if events else 0
    for _ in events:
        nxt = ids.index(_BOUNDARY_ID, at + 1) if len(out) + 1 < len(events) else len(ids)
        out.append(ids[at + 1:nxt])
        at = nxt
    return out


def _id_columns(raw_events: Any, indices: list[int], id_stats: set[int], wanted: set[int]
                ) -> Optional[tuple[list[int], list[int], list[int], list[int]]]:
    """(indices, offsets, durations, id values) of the events at ``indices``, read
    from their bytes joined (one parse, no message per event), or None unless
    every event wrote an offset and a duration and has the same number of stats,
    exactly one of them wanted (always at the same place) and an id, every stat
    valued int64 (or every one uint64). Then each event is what
    :meth:`Host._read_marks_at` would read one message at a time: one wanted
    stat, an executor id of value ``int64_value or uint64_value``.

    The stats of the joined events merge into one column; a boundary stat put
    before each event shows where each event's stats begin.
    """
    n = len(indices)
    parsed = xplane_columns_pb2.EventValues.FromString(
        _BOUNDARY + _BOUNDARY.join(map(raw_events.__getitem__, indices)))
    offsets, durations = parsed.offset_ps[:], parsed.duration_ps[:]
    if len(offsets) != n or len(durations) != n or parsed.num_occurrences or not n:
        return None
    stats = parsed.stats
    ids = stats.metadata_id[:]
    each, left = divmod(len(ids), n)  # stats per event, the boundary included
    if left or each < 2 or ids.count(_BOUNDARY_ID) != n or ids[::each].count(_BOUNDARY_ID) != n:
        return None
    slot = None
    for j in range(1, each):
        at_j = set(ids[j::each])
        if at_j.isdisjoint(wanted):
            continue
        if slot is not None or not at_j <= id_stats:
            return None
        slot = j
    if slot is None:
        return None
    per = each - 1  # values per event, if every stat has one of the same kind
    kinds = (stats.int64_value, stats.uint64_value, stats.double_value, stats.str_value,
             stats.bytes_value, stats.ref_value)
    sizes = [len(k) for k in kinds]
    if sizes[0] == per * n and not any(sizes[1:]):
        values = stats.int64_value[slot - 1::per]
    elif sizes[1] == per * n and not sizes[0] and not any(sizes[2:]):
        values = stats.uint64_value[slot - 1::per]
    else:
        return None
    return indices, offsets, durations, values


def _positions(mask: list[bool], count: int) -> list[int]:
    """The indices of the ``count`` True values of ``mask`` (few of many: a
    C-level search for each is cheaper than a pass over all)."""
    out = []
    i = -1
    find = mask.index
    for _ in range(count):
        i = find(True, i + 1)
        out.append(i)
    return out


def _python_ids(names: Iterable[tuple[int, str]]) -> tuple[set[int], set[int]]:
    """(ids of Python frames, ids of all Python-tracer events incl. C calls)."""
    frames, python = set(), set()
    for md_id, name in names:
        if name.startswith("$"):
            python.add(md_id)
            if parse_py_frame(name) is not None:
                frames.add(md_id)
    return frames, python


def _looks_like_xspace(space: Any) -> bool:
    if not space.planes:
        return bool(space.hostnames)
    return all(p.name and p.name.isprintable() for p in space.planes)


def time_origin(space: Any) -> tuple[int, int]:
    """(epoch ns that line timestamps count from, the earliest line start in them).

    TensorFlow writes line timestamps relative to the session start, which the
    ``profile_start_time`` stat of the Task Environment plane holds; other
    writers use absolute (epoch) timestamps.
    """
    starts = [line.timestamp_ns for plane in space.planes for line in plane.lines]
    first = min(starts) if starts else 0
    for plane in space.planes:
        if plane.name != TASK_ENV_PLANE:
            continue
        names = {k: v.name for k, v in plane.stat_metadata.items()}
        for st in plane.stats:
            if names.get(st.metadata_id) == "profile_start_time":
                epoch = st.uint64_value or st.int64_value
                if epoch and (not starts or max(starts) < epoch // 2):
                    return epoch, first
    return 0, first


class _Stats:
    """Stat names and values of one plane (metadata ids are per plane)."""

    def __init__(self, plane: Any) -> None:
        self.names = {k: v.name for k, v in plane.stat_metadata.items()}
        self.md = plane.event_metadata
        #: (id of a name table, event metadata id) -> that metadata's stats by name
        self._md_stats: dict[tuple[int, int], dict[str, Any]] = {}

    def _of_md(self, md_id: int, ids: dict[int, str]) -> dict[str, Any]:
        """The stats of event metadata ``md_id`` named by ``ids``, read once."""
        key = (id(ids), md_id)
        found = self._md_stats.get(key)
        if found is None:
            found = self._md_stats[key] = {}
            md = self.md.get(md_id)
            for st in (md.stats if md is not None else ()):
                name = ids.get(st.metadata_id)
                if name:
                    found[name] = self.value(st)
        return found

    def of(self, event: Any) -> dict[str, Any]:
        """An event's stats by name, its metadata's stats filling in."""
        return self.pick(event, self.names)

    def pick(self, event: Any, ids: dict[int, str]) -> dict[str, Any]:
        """The stats of :meth:`of` whose metadata ids are in ``ids`` (id -> name)."""
        base = self._of_md(event.metadata_id, ids)
        out = dict(base) if base else {}
        for st in event.stats:
            name = ids.get(st.metadata_id)
            if name:
                out[name] = self.value(st)
        return out

    def value(self, st: Any) -> Any:
        which = st.WhichOneof("value")
        if which == "ref_value":
            return self.names.get(st.ref_value, "")
        if which == "bytes_value":
            raw = st.bytes_value
            if raw[:2] == _GZIP:  # large string stats may be stored compressed
                try:
                    raw = zlib.decompress(raw, 31)
                except zlib.error:
                    return raw
            return raw.decode("utf-8", "replace")
        return getattr(st, which) if which else None


@dataclass
class Exec:
    start: int
    dur: int
    name: str
    op: str
    device: str
    step: Optional[int] = None
    trace: Optional[list[Frame]] = None


class Host:
    """One host's XSpace reduced to executions, markers and memory events.

    Python frames are not read here; :meth:`take_stacks` reads them (from the
    file again) when a trace is first asked for.
    """

    def __init__(self, space: Any, index: int, prefix: str, shift_ns: int = 0,
                 path: str = "", picked: Optional[dict[tuple[int, int], Picked]] = None) -> None:
        """``shift_ns`` moves line timestamps onto the common time axis of all hosts;
        ``path`` is the file ``space`` was read from (without one, ``space`` is
        kept for :meth:`take_stacks`); ``picked`` its :func:`read_xspace_picked`."""
        self.index, self.prefix, self.shift_ns = index, prefix, shift_ns
        self.path = path
        self.lines: list[Line] = []
        self.markers: list[tuple[int, int, int]] = []
        self.kernels: list[Exec] = []
        self.memory: list[tuple[int, str, dict[str, Any]]] = []
        self.gpu_of: dict[str, int] = {}
        self.unattributed = 0
        #: XLA kernels, if any; made on the first (so TF-only profiles never load XLA's code).
        self.xla: Optional[XlaKernels] = None
        self._space = space
        #: line index -> its TF ops as columns (start, name, type, self ps), for
        #: lines read from columns with no op inside another (their ``ops`` stay
        #: empty; see :meth:`op_rows`)
        self.op_columns: dict[int, tuple[list[int], list[str], list[str], list[int]]] = {}
        for p, plane in enumerate(space.planes):
            if plane.name in HOST_PLANES:
                self._read_host(plane, p, picked or {})
            else:
                m = _GPU_PLANE.fullmatch(plane.name)
                if m:
                    self._read_device(plane, int(m.group(1)))
        for i, line in enumerate(self.lines):
            if i not in self.op_columns:
                subtract_nested(line.ops)
            elif line.eagers:  # eager_execs reads the ops
                line.ops = [[start, start + dur, name, op, dur]
                            for start, name, op, dur in zip(*self.op_columns.pop(i))]
            line.runs = eager_execs(line)
        self.has_frames = any(line.has_frames for line in self.lines)
        self._kept = space if not path and self.has_frames else None
        del self._space

    def _read_host(self, plane: Any, p: int, picked: dict[tuple[int, int], Picked]) -> None:
        stats = _Stats(plane)
        kinds: dict[int, int] = {}
        payloads: dict[int, Any] = {}
        for md_id, md in plane.event_metadata.items():
            kinds[md_id], payloads[md_id] = _classify(md.name)
        frame_ids, py_ids = _python_ids((k, v.name) for k, v in plane.event_metadata.items())
        # Only these stats matter on other events (executor ids, step markers).
        wanted = {k: v for k, v in stats.names.items() if v in ("step_num", "id")}
        eager_stats = {k: v for k, v in stats.names.items() if v in ("eager_op", "is_func")}
        special_ids = {k for k, kind in kinds.items() if kind not in (_OP, _PY, _OTHER)}
        for li, xline in enumerate(plane.lines):
            if xline.name in DERIVED_LINES:
                continue
            line = Line(where=(p, li))
            base = (self.shift_ns + xline.timestamp_ns) * 1000
            events = xline.events
            n = len(events)
            pick = picked.get((p, li))
            if pick is not None and pick.n_events == n:  # no event left its id out
                line.has_frames = pick.has_frames
                self._read_ops(pick, events, base, payloads, line)
                special = (list(compress(pick.rest_indices,
                                         map(special_ids.__contains__, pick.rest_ids)))
                           if special_ids else [])
                self._read_events(special, events, base, kinds, payloads, stats,
                                  eager_stats, wanted, line)
                self._read_other(pick, events, base, kinds, wanted, line)
            else:
                ids = [ev.metadata_id for ev in events]
                line.has_frames = any(map(frame_ids.__contains__, ids))
                # Python-tracer events (most of a traced thread) get no message at all.
                chosen = compress(range(n), map(not_, map(py_ids.__contains__, ids)))
                self._read_events(chosen, events, base, kinds, payloads, stats,
                                  eager_stats, wanted, line)
            self.lines.append(line)

    def _read_events(self, chosen: Iterable[int], events: Any, base: int,
                     kinds: dict[int, int], payloads: dict[int, Any], stats: _Stats,
                     eager_stats: dict[int, str], wanted: dict[int, str], line: Line) -> None:
        """Read the events at ``chosen`` (indices, ascending) one message each."""
        kind_of = kinds.get
        ops = line.ops
        chosen = list(chosen)
        marks: list[int] = []
        for i, ev in zip(chosen, map(events.__getitem__, chosen)):
            md_id = ev.metadata_id
            kind = kind_of(md_id, _OTHER)
            if kind == _OTHER:
                if ev.stats:
                    marks.append(i)
                continue
            start = base + ev.offset_ps
            if kind == _OP:
                dur = ev.duration_ps
                name, op = payloads[md_id]
                ops.append([start, start + dur, name, op, dur])
                continue
            end = start + ev.duration_ps
            if kind == _EAGER_KERNEL:
                line.kernels.append((start, end))
            elif kind == _EAGER:
                st = stats.pick(ev, eager_stats)
                op = st.get("eager_op")
                if op and not st.get("is_func"):
                    line.eagers.append((start, end, op if type(op) is str else str(op)))
            elif kind == _MEMORY:
                self.memory.append((start, payloads[md_id], stats.of(ev)))
        if marks:
            ids: list[tuple[int, tuple[int, int, int]]] = []
            self._read_marks_at(marks, events, base, wanted, ids)
            line.ids.extend(map(itemgetter(1), ids))

    def _read_ops(self, pick: Picked, events: Any, base: int, payloads: dict[int, Any],
                  line: Line) -> None:
        """The line's TF-op events, from the columns where they are aligned; kept as
        columns (:attr:`op_columns`) if they are in start order with no op
        inside another, as :func:`.pystack.subtract_nested` would leave them."""
        chosen = pick.op_indices
        if not chosen:
            return
        offsets = pick.op_offsets
        if offsets is None:
            offsets = list(map(_OFFSET, map(events.__getitem__, chosen)))
        durations = pick.op_durations
        if durations is None:
            durations = list(map(_DURATION, map(events.__getitem__, chosen)))
        starts = list(map(base.__add__, offsets))
        ends = list(map(add, starts, durations))
        named = list(map(payloads.__getitem__, pick.op_ids))
        names = list(map(itemgetter(0), named))
        types = list(map(itemgetter(1), named))
        if (all(map(lt, starts, islice(starts, 1, None)))
                and all(map(le, ends, islice(starts, 1, None)))):
            self.op_columns[len(self.lines)] = (starts, names, types, list(durations))
        else:
            line.ops = list(map(list, zip(starts, ends, names, types, durations)))

    def op_rows(self, i: int) -> tuple[list[int], list[str], list[str], list[int]]:
        """Line i's TF ops as columns (start ps, name, type, self ps), in start order
        (after :func:`.pystack.subtract_nested`)."""
        found = self.op_columns.get(i)
        if found is not None:
            return found
        ops = self.lines[i].ops
        return (list(map(itemgetter(0), ops)), list(map(itemgetter(2), ops)),
                list(map(itemgetter(3), ops)), list(map(itemgetter(4), ops)))

    def _read_other(self, pick: Picked, events: Any, base: int, kinds: dict[int, int],
                    wanted: dict[int, str], line: Line) -> None:
        """Step markers and executor ids: only events with a wanted stat count, and
        the line's stat column says how many wanted stats there are. Events whose
        metadata's first event has one are read first; the others only if those
        did not hold them all. Events the pick read as columns
        (:attr:`Picked.id_columns`) are not read again."""
        total = sum(pick.stat_counts.get(k, 0) for k in wanted)
        if not total:
            return
        kind_of = kinds.get
        idx, mds = pick.rest_indices, pick.rest_ids
        first = {md_id: idx[mds.index(md_id)] for md_id in set(mds)}
        likely = set()
        for md_id, i in first.items():
            if kind_of(md_id, _OTHER) == _OTHER and any(
                    map(wanted.__contains__, (st.metadata_id for st in events[i].stats))):
                likely.add(md_id)
        as_columns = [found for md_id, found in (pick.id_columns or {}).items()
                      if md_id in likely]
        one_by_one = likely.difference(pick.id_columns or ())
        ids: list[tuple[int, tuple[int, int, int]]] = []
        found = 0
        if one_by_one:
            found = self._read_marks_at(list(compress(idx, map(one_by_one.__contains__, mds))),
                                        events, base, wanted, ids)
        for indices, _, _, _ in as_columns:
            found += len(indices)  # one wanted stat each (see _id_columns)
        if found != total:
            others = [i for i, md_id in zip(idx, mds)
                      if md_id not in likely and kind_of(md_id, _OTHER) == _OTHER]
            self._read_marks_at(others, events, base, wanted, ids)
        # each part is in event order; several are merged
        parts = [[(base + offset, base + offset + dur, value) for offset, dur, value
                  in zip(offsets, durations, values)] for _, offsets, durations, values in as_columns]
        if len(parts) + bool(ids) > 1:
            for (indices, _, _, _), part in zip(as_columns, parts):
                ids.extend(zip(indices, part))
            parts = []
        if ids:
            ids.sort(key=itemgetter(0))
            line.ids.extend(map(itemgetter(1), ids))
        for part in parts:
            line.ids.extend(part)

    def _read_marks_at(self, chosen: list[int], events: Any, base: int,
                       wanted: dict[int, str],
                       ids: list[tuple[int, tuple[int, int, int]]]) -> int:
        """Step markers (into :attr:`markers`) and executor ids (into ``ids``, with
        their event index) of the events at ``chosen``; an event with both is a
        marker. Returns how many wanted stats the events had."""
        get = wanted.get
        found = 0
        markers = self.markers
        for i, ev in zip(chosen, map(events.__getitem__, chosen)):
            step = ident = None
            for st in ev.stats:
                name = get(st.metadata_id)
                if name is None:
                    continue
                found += 1
                if name == "step_num":
                    step = st
                else:  # "id"
                    ident = st
            if step is None and ident is None:
                continue
            start = base + ev.offset_ps
            end = start + ev.duration_ps
            if step is not None:
                markers.append((start, end, int(step.int64_value or step.uint64_value)))
            else:
                ids.append((i, (start, end, ident.int64_value or ident.uint64_value)))
        return found

    def take_stacks(self, wanted: Optional[Callable[[int], bool]] = None) -> None:
        """Fill each line's ``traces`` for its ``exec_starts``: the Python stack
        that ran each execution (with ``wanted``, only those that pick each
        node's trace; see :func:`.pystack.attach_traces`). Reads the file's
        lines with Python frames again (once)."""
        if not self.has_frames:
            return
        source = FrameLines(self._kept, self.path,
                            [line.where for line in self.lines if line.has_frames])
        self._kept = None
        lines, shift_ns = self.lines, self.shift_ns
        attach_traces(lines, [list(line.exec_starts) for line in lines],
                      lambda i, times: stacks_on(lines[i], source, shift_ns, times), wanted)

    def _read_device(self, plane: Any, gpu: int) -> None:
        stats = _Stats(plane)
        device = GPU_STREAM_ALL % (self.index, gpu)
        for xline in plane.lines:
            if xline.name in DERIVED_LINES:
                continue
            base = (self.shift_ns + xline.timestamp_ns) * 1000
            line = (gpu, xline.id)
            for ev in xline.events:
                st = stats.of(ev)
                op = None
                if "hlo_op" in st:  # XLA first, as XProf does; see .xla
                    md = plane.event_metadata.get(ev.metadata_id)
                    kernel = md.name if md is not None and md.name else "kernel"
                    op = self._xla_op(st, kernel)
                    if op is not None and op.resolved:
                        self._add_xla(op, kernel, base + ev.offset_ps, ev.duration_ps,
                                      gpu, device, line)
                        continue
                named = next((op_of_annotation(str(st[k])) for k in KERNEL_OP_STATS
                              if st.get(k)), None)
                if named is None:
                    if op is not None:
                        self._add_xla(op, kernel, base + ev.offset_ps, ev.duration_ps,
                                      gpu, device, line)
                    else:
                        self.unattributed += 1
                    continue
                name = self.prefix + named[0]
                self.gpu_of.setdefault(name, gpu)
                start = base + ev.offset_ps
                self.kernels.append(Exec(start, ev.duration_ps, name, named[1], device))

    def _xla_op(self, st: dict[str, Any], kernel: str) -> Optional[KernelOp]:
        """Where an XLA kernel is accounted (None if its stats name no XLA program)."""
        if self.xla is None:
            from .xla import XlaKernels
            self.xla = XlaKernels.of_space(self._space)
        return self.xla.map(st, kernel)

    def _add_xla(self, op: KernelOp, kernel: str, start: int, dur: int, gpu: int,
                 device: str, line: Any) -> None:
        assert self.xla is not None
        ex = Exec(start, dur, self.prefix + op.name, op.op, device)
        self.kernels.append(ex)
        self.xla.record(ex, op, kernel, gpu, line)


def _classify(name: str) -> tuple[int, Any]:
    if name.startswith("$"):
        return _PY, parse_py_frame(name)
    if name == "EagerExecute":
        return _EAGER, None
    if name == "EagerKernelExecute":
        return _EAGER_KERNEL, None
    if name in ("MemoryAllocation", "MemoryDeallocation"):
        return _MEMORY, name
    op = parse_tf_op(name)
    return (_OP, op) if op else (_OTHER, None)


def op_of_annotation(text: str) -> Optional[tuple[str, str]]:
    """The TF op of a kernel annotation: the innermost ``name:Type`` of ``a::b::c``."""
    for part in reversed(text.split("::")):
        op = parse_tf_op(part.split("#", 1)[0].strip())
        if op:
            return op
    return None
