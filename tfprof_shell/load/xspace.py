"""XSpace files (``.xplane.pb``) -> per-host executions, step markers and Python frames.

The schema is our own wire-compatible copy (no TensorFlow needed). This module
only reads: it classifies the events of the host plane (TF ops, eager ops,
Python-tracer frames, step markers, memory events, executor ids) and of GPU
planes (kernels and the TF op each names, or for XLA programs the node
:mod:`.xla` maps them to), in picoseconds on one time axis. :mod:`.xplane`
turns them into a Model.

The file is never parsed whole (:mod:`.xspace_lazy`): :mod:`.xspace_pick`
first reads each host line as columns to pick the events worth a message
(:class:`.xspace_pick.Picked`), then each line is split into its events'
bytes and only the picked events are parsed, one line at a time. Executor
ids, one per executor event, matter only to Python stacks: a line's few are
read one event at a time, its many (as columns,
:func:`.event_columns.id_columns`) only when stacks are first looked up
(:meth:`Host.read_ids`).
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from dataclasses import dataclass
from functools import partial
from itertools import compress, islice
from operator import add, attrgetter, itemgetter, le, lt, not_
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

from google.protobuf.message import DecodeError

from ..errors import LoadError
from ..model import Frame
from ..proto import xplane_columns_pb2, xplane_stacks_pb2
from .event_columns import eager_values, event_times
from .files import read_unzipped
from .frame_lines import FrameLines, stacks_on
from .memory_columns import memory_columns
from .pystack import Line, attach_traces, eager_execs, subtract_nested
from .records import CPU_DEVICE, GPU_STREAM_ALL
from .xspace_lazy import HOST_PLANES, EventsByIndex, LazyLine, events_at
from .xspace_pick import (KIND_EAGER, KIND_EAGER_KERNEL, KIND_MEMORY, KIND_OP, KIND_OTHER, KIND_PY,
                          Picked, RawHostPlane, classify, ids_as_columns, parse_tf_op, pick_ids,
                          python_ids, raw_host_planes)

if TYPE_CHECKING:
    from .xla import KernelOp, XlaKernels

_OFFSET = attrgetter("offset_ps")
_DURATION = attrgetter("duration_ps")
TASK_ENV_PLANE = "Task Environment"
_GPU_PLANE = re.compile(r"/device:GPU:(\d+)")
#: Lines that XProf derives from other lines; reading them would count twice.
DERIVED_LINES = frozenset({
    "Steps", "Framework Ops", "TensorFlow Ops", "Framework Name Scope",
    "TensorFlow Name Scope", "XLA Ops", "XLA Modules", "Async XLA Ops", "Launch Stats",
    "Source code", "Host Offload Ops", "_counters_", "Sparse Core Steps"})
#: Stats that name the TensorFlow op a device kernel belongs to, best first.
KERNEL_OP_STATS = ("tf_op", "kernel_annotation", "annotation", "level 0", "tf_op_name")
_GZIP = b"\x1f\x8b"



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

    def of_metadata(self, md_id: int, ids: dict[int, str]) -> dict[str, Any]:
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
        base = self.of_metadata(event.metadata_id, ids)
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
        #: XLA thunks run on host threads (:mod:`.xla_cpu`), as self times, and
        #: the time whose step each counts for (see :func:`.xla_cpu.step_times`).
        self.thunks: list[Exec] = []
        self.thunk_times: list[int] = []
        #: (plane index, line index) -> the spans of its outermost thunks
        self._thunk_spans: dict[tuple[int, int], list[tuple[int, int]]] = {}
        #: memory events read one message each: (start ps, event name, stats, line)
        self.memory: list[tuple[int, str, dict[str, Any], tuple[int, int]]] = []
        #: memory events read as columns: (event name, line, starts ps, stat columns)
        self.memory_columns: list[tuple[str, tuple[int, int], list[int],
                                        dict[str, list[Any]]]] = []
        self.gpu_of: dict[str, int] = {}
        self.unattributed = 0
        #: XLA kernels, if any; made on the first (so TF-only profiles never load XLA's code).
        self.xla: Optional[XlaKernels] = None
        self._space = space
        #: line index -> its TF ops as columns (start, name, type, self ps), for
        #: lines read from columns with no op inside another (their ``ops`` stay
        #: empty; see :meth:`op_rows`)
        self.op_columns: dict[int, tuple[list[int], list[str], list[str], list[int]]] = {}
        #: indices in :attr:`lines` of the lines whose ids :meth:`read_ids` reads
        self._ids_later: list[int] = []
        for p, plane in enumerate(space.planes):
            if plane.name in HOST_PLANES:
                self._read_host(plane, p, picked or {})
                self._read_thunks(plane, p, picked or {})
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
        if self._thunk_spans:
            self._thunks_out_of_ops()
        self.has_frames = any(line.has_frames for line in self.lines)
        self._kept = space if not path and self.has_frames else None
        del self._space

    def _read_host(self, plane: Any, p: int, picked: dict[tuple[int, int], Picked]) -> None:
        stats = _Stats(plane)
        kinds: dict[int, int] = {}
        payloads: dict[int, Any] = {}
        for md_id, md in plane.event_metadata.items():
            kinds[md_id], payloads[md_id] = classify(md.name)
        frame_ids, py_ids = python_ids((k, v.name) for k, v in plane.event_metadata.items())
        # Only these stats matter on other events (executor ids, step markers).
        wanted = _wanted_stats(stats.names)
        step_stats = {k: v for k, v in wanted.items() if v == "step_num"}
        id_stats = [k for k, v in wanted.items() if v == "id"]
        eager_stats = {k: v for k, v in stats.names.items() if v in ("eager_op", "is_func")}
        special_ids = {k for k, kind in kinds.items() if kind not in (KIND_OP, KIND_PY, KIND_OTHER)}
        for li, xline in enumerate(plane.lines):
            if xline.name in DERIVED_LINES:
                continue
            line = Line(where=(p, li))
            base = (self.shift_ns + xline.timestamp_ns) * 1000
            pick = picked.get((p, li))
            try:
                # a picked line is read by index: each event read parsed alone
                events = (xline.event_bytes() if pick is not None and isinstance(xline, LazyLine)
                          else xline.events)
                n = len(events)
                if pick is not None and pick.n_events == n:  # no event left its id out
                    line.has_frames = pick.has_frames
                    self._read_ops(pick, events, base, payloads, line)
                    special = (list(compress(pick.rest_indices,
                                             map(special_ids.__contains__, pick.rest_ids)))
                               if special_ids else [])
                    if isinstance(events, EventsByIndex) and special:
                        special = self._read_eager_columns(special, events, base, kinds, stats,
                                                           eager_stats, line)
                    if isinstance(events, EventsByIndex) and special:
                        special = self._read_memory_columns(special, events, base, kinds,
                                                            payloads, stats, line)
                    self._read_events(special, events, base, kinds, payloads, stats,
                                      eager_stats, wanted, line)
                    # Executor ids only matter to Python stacks: many are read
                    # (as columns) when those are; a few, one by one now.
                    n_ids = sum(pick.stat_counts.get(k, 0) for k in id_stats)
                    later = ids_as_columns(n_ids, n)
                    self._read_other(pick, events, base, kinds, step_stats if later else wanted,
                                     line, self.markers)
                    if later:
                        self._ids_later.append(len(self.lines))
                else:
                    if isinstance(events, EventsByIndex):
                        events = xline.events
                    ids = [ev.metadata_id for ev in events]
                    line.has_frames = any(map(frame_ids.__contains__, ids))
                    # Python-tracer events (most of a traced thread) get no message at all.
                    chosen = compress(range(n), map(not_, map(py_ids.__contains__, ids)))
                    self._read_events(chosen, events, base, kinds, payloads, stats,
                                      eager_stats, wanted, line)
            except DecodeError:  # a line split from the file, read only now
                raise LoadError("--profile_path %s: not an XSpace (.xplane.pb) file"
                                % self.path) from None
            del events  # before the next line's are parsed
            self.lines.append(line)

    def read_ids(self) -> None:
        """Fill the executor ids (``Line.ids``) of the lines that have many (loading
        leaves them out: only Python stacks need them), reading those lines
        again from the file (or the kept XSpace) as columns."""
        later, self._ids_later = self._ids_later, []
        if not later:
            return
        where = {self.lines[i].where: self.lines[i] for i in later}
        planes = self._host_planes_again({p for p, _ in where})
        picked = pick_ids(planes, where)
        changed = LoadError("--profile_path %s: the file changed since it was loaded"
                            % self.path)
        for plane in planes:
            kinds = {k: classify(name)[0] for k, name in plane.names}
            wanted = _wanted_stats(plane.stat_names)
            for li, raw in enumerate(plane.lines):
                line = where.get((plane.index, li))
                if line is None:
                    continue
                pick = picked.get((plane.index, li))
                try:
                    split = xplane_stacks_pb2.LineSplit.FromString(raw)
                except DecodeError:
                    raise changed from None
                events = EventsByIndex(split.events)
                if pick is None or pick.n_events != len(events):
                    raise changed
                base = (self.shift_ns + split.timestamp_ns) * 1000
                # markers were read when loading
                self._read_other(pick, events, base, kinds, wanted, line, [])

    def _host_planes_again(self, wanted: set[int]) -> list[RawHostPlane]:
        """The host planes at indices ``wanted``, split from the file again (or
        from the kept XSpace)."""
        if self.path:
            planes = raw_host_planes(read_unzipped(self.path, "profile_path"))
            return [plane for plane in planes if plane.index in wanted]
        out = []
        for p, plane in enumerate(self._kept.planes if self._kept is not None else ()):
            if p in wanted:
                lines = [line.raw if isinstance(line, LazyLine) else line.SerializeToString()
                         for line in plane.lines]
                out.append(RawHostPlane(p, [(k, md.name) for k, md in plane.event_metadata.items()],
                                      {k: md.name for k, md in plane.stat_metadata.items()},
                                      lines))
        return out

    def _read_events(self, chosen: Iterable[int], events: Any, base: int,
                     kinds: dict[int, int], payloads: dict[int, Any], stats: _Stats,
                     eager_stats: dict[int, str], wanted: dict[int, str], line: Line) -> None:
        """Read the events at ``chosen`` (indices, ascending) one message each."""
        kind_of = kinds.get
        eager_name, value = eager_stats.get, stats.value
        ops = line.ops
        chosen = list(chosen)
        marks: list[int] = []
        for i, ev in zip(chosen, events_at(events, chosen)):
            md_id = ev.metadata_id
            kind = kind_of(md_id, KIND_OTHER)
            if kind == KIND_OTHER:
                if ev.stats:
                    marks.append(i)
                continue
            start = base + ev.offset_ps
            if kind == KIND_OP:
                dur = ev.duration_ps
                name, op = payloads[md_id]
                ops.append([start, start + dur, name, op, dur])
                continue
            end = start + ev.duration_ps
            if kind == KIND_EAGER_KERNEL:
                line.kernels.append((start, end))
            elif kind == KIND_EAGER:
                # stats.pick(ev, eager_stats) without the dict: the last of each wins
                defaults = stats.of_metadata(md_id, eager_stats)
                op, is_func = defaults.get("eager_op"), defaults.get("is_func")
                for st in ev.stats:
                    stat_name = eager_name(st.metadata_id)
                    if stat_name == "eager_op":
                        op = value(st)
                    elif stat_name is not None:
                        is_func = value(st)
                if op and not is_func:
                    line.eagers.append((start, end, op if type(op) is str else str(op)))
            elif kind == KIND_MEMORY:
                self.memory.append((start, payloads[md_id], stats.of(ev), line.where))
        if marks:
            ids: list[tuple[int, tuple[int, int, int]]] = []
            self._read_marks_at(marks, events, base, wanted, ids, self.markers)
            line.ids.extend(map(itemgetter(1), ids))

    def _read_eager_columns(self, special: list[int], events: EventsByIndex, base: int,
                            kinds: dict[int, int], stats: _Stats, eager_stats: dict[int, str],
                            line: Line) -> list[int]:
        """Read the eager ops and their kernels among ``special`` (ascending indices)
        as :meth:`_read_events` would, from columns (:func:`.event_columns.event_times`,
        :func:`.event_columns.eager_values`) where their events allow; returns the indices left
        to read one message each."""
        raw = events.raw()
        parts = list(map(raw.__getitem__, special))
        md_ids = xplane_columns_pb2.EventValues.FromString(b"".join(parts)).metadata_id[:]
        if len(md_ids) != len(special):  # an event of metadata id 0
            return special
        kind_of = kinds.get
        of_kind = list(map(kind_of, md_ids))
        left = []
        for kind in (KIND_EAGER_KERNEL, KIND_EAGER):
            mask = list(map(kind.__eq__, of_kind))
            these = list(compress(parts, mask))
            if not these:
                continue
            times = event_times(these)
            found = None
            if times is not None and kind == KIND_EAGER:
                found = eager_values(these, list(compress(md_ids, mask)), eager_stats,
                                     partial(stats.of_metadata, ids=eager_stats), stats.names)
            if times is None or (kind == KIND_EAGER and found is None):
                left += compress(special, mask)
                continue
            starts = list(map(base.__add__, times[0]))
            ends = list(map(add, starts, times[1]))
            if kind == KIND_EAGER_KERNEL:
                line.kernels.extend(zip(starts, ends))
                continue
            assert found is not None
            line.eagers.extend((start, end, op if type(op) is str else str(op))
                               for start, end, op, is_func in zip(starts, ends, *found)
                               if op and not is_func)
        for kind in set(of_kind).difference((KIND_EAGER_KERNEL, KIND_EAGER)):
            left += compress(special, map(kind.__eq__, of_kind))
        left.sort()
        return left

    def _read_memory_columns(self, special: list[int], events: EventsByIndex, base: int,
                             kinds: dict[int, int], payloads: dict[int, Any], stats: _Stats,
                             line: Line) -> list[int]:
        """Read the memory events among ``special`` (ascending indices) as columns
        (:func:`.memory_columns.memory_columns`), into :attr:`memory_columns`; returns
        the indices left to read one message each."""
        raw = events.raw()
        parts = list(map(raw.__getitem__, special))
        md_ids = xplane_columns_pb2.EventValues.FromString(b"".join(parts)).metadata_id[:]
        if len(md_ids) != len(special):  # an event of metadata id 0
            return special
        left: list[int] = []
        for md_id in sorted(set(md_ids)):
            mask = list(map(md_id.__eq__, md_ids))
            these = list(compress(special, mask))
            if kinds.get(md_id) != KIND_MEMORY:
                left += these
                continue
            groups = memory_columns(list(compress(parts, mask)), stats.names,
                                    stats.of_metadata(md_id, stats.names))
            if groups is None:
                left += these
                continue
            for _, offsets, columns in groups:
                self.memory_columns.append((payloads[md_id], line.where,
                                            list(map(base.__add__, offsets)), columns))
        left.sort()
        return left

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
            offsets = list(map(_OFFSET, events_at(events, chosen)))
        durations = pick.op_durations
        if durations is None:
            durations = list(map(_DURATION, events_at(events, chosen)))
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
                    wanted: dict[int, str], line: Line,
                    markers: list[tuple[int, int, int]]) -> None:
        """Step markers (into ``markers``) and executor ids (into ``line.ids``) as far as
        ``wanted`` names their stats: only events with a wanted stat count, and
        the line's stat column says how many wanted stats there are. Events whose
        metadata's first event has one are read first; the others only if those
        did not hold them all. Events the pick read as columns
        (:attr:`Picked.id_columns`) are not read again."""
        total = sum(pick.stat_counts.get(k, 0) for k in wanted)
        if not total:
            return
        kind_of = kinds.get
        idx, mds = pick.rest_indices, pick.rest_ids
        first = dict(zip(reversed(mds), reversed(idx)))  # linear in any metadata count
        likely = set()
        firsts = [(md_id, i) for md_id, i in first.items() if kind_of(md_id, KIND_OTHER) == KIND_OTHER]
        for (md_id, _), ev in zip(firsts, events_at(events, [i for _, i in firsts])):
            if any(map(wanted.__contains__, (st.metadata_id for st in ev.stats))):
                likely.add(md_id)
        as_columns = [found for md_id, found in (pick.id_columns or {}).items()
                      if md_id in likely]
        one_by_one = likely.difference(pick.id_columns or ())
        ids: list[tuple[int, tuple[int, int, int]]] = []
        found = 0
        if one_by_one:
            found = self._read_marks_at(list(compress(idx, map(one_by_one.__contains__, mds))),
                                        events, base, wanted, ids, markers)
        for indices, _, _, _ in as_columns:
            found += len(indices)  # one wanted stat each (see event_columns.id_columns)
        if found != total:
            others = [i for i, md_id in zip(idx, mds)
                      if md_id not in likely and kind_of(md_id, KIND_OTHER) == KIND_OTHER]
            self._read_marks_at(others, events, base, wanted, ids, markers)
        # each part is in event order; several are merged
        parts = [_spans(base, offsets, durations, values)
                 for _, offsets, durations, values in as_columns]
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
                       ids: list[tuple[int, tuple[int, int, int]]],
                       markers: list[tuple[int, int, int]]) -> int:
        """Step markers (into ``markers``) and executor ids (into ``ids``, with
        their event index) of the events at ``chosen``; an event with both is a
        marker. Returns how many wanted stats the events had."""
        get = wanted.get
        found = 0
        for i, ev in zip(chosen, events_at(events, chosen)):
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
        self.read_ids()
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

    def _read_thunks(self, plane: Any, p: int, picked: dict[tuple[int, int], Picked]) -> None:
        """The XLA thunks on the plane's lines (:mod:`.xla_cpu`), as executions on
        the host's cpu device, accounted through the stored HLO programs."""
        from .xla_cpu import may_hold_thunks, map_thunk, read_thunks, step_times

        if not may_hold_thunks(plane):
            return

        def counts(li: int) -> Optional[dict[int, int]]:
            pick = picked.get((p, li))
            return pick.stat_counts if pick is not None else None

        found = read_thunks(plane, p, self.shift_ns, counts, lambda: self._xla().programs,
                            DERIVED_LINES)
        if not found:
            return
        xla = self._xla()
        device = CPU_DEVICE % self.index
        mapped: dict[tuple[str, str, Optional[int], str], tuple[KernelOp, str]] = {}
        counts: Counter[tuple[str, str, Optional[int], str]] = Counter()
        for thunk, when in zip(found, step_times(found)):
            key = (thunk.hlo_op, thunk.module, thunk.program_id, thunk.name)
            known = mapped.get(key)
            if known is None:
                op = map_thunk(xla.programs, thunk)
                known = mapped[key] = (op, self.prefix + op.name)
            counts[key] += 1
            self.thunks.append(Exec(thunk.start, thunk.self_ps, known[1], known[0].op, device))
            self.thunk_times.append(when)
            if thunk.outermost:
                self._thunk_spans.setdefault(thunk.line, []).append((thunk.start, thunk.end))
        for key, n in counts.items():
            op, name = mapped[key]
            xla.record_thunks(name, op, key[3], n)

    def _thunks_out_of_ops(self) -> None:
        """TF ops lose the time of the thunks that ran inside them (see :mod:`.xla_cpu`)."""
        from .xla_cpu import take_from_enclosing

        for i, line in enumerate(self.lines):
            spans = self._thunk_spans.get(line.where)
            if not spans:
                continue
            columns = self.op_columns.get(i)
            if columns is not None:  # no op inside another: self times are durations
                starts, selfs = columns[0], columns[3]
                take_from_enclosing(starts, list(map(add, starts, selfs)), selfs, spans)
            elif line.ops:
                selfs = [op[4] for op in line.ops]
                take_from_enclosing([op[0] for op in line.ops], [op[1] for op in line.ops],
                                    selfs, spans)
                for op, self_ps in zip(line.ops, selfs):
                    op[4] = self_ps
        self._thunk_spans = {}

    def _xla(self) -> XlaKernels:
        """The host's XLA collector, made on first use."""
        if self.xla is None:
            from .xla import XlaKernels
            self.xla = XlaKernels.of_space(self._space)
        return self.xla

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


def _wanted_stats(names: dict[int, str]) -> dict[int, str]:
    """The stats that matter on events of no other kind: step markers and executor ids."""
    return {k: v for k, v in names.items() if v in ("step_num", "id")}


def op_of_annotation(text: str) -> Optional[tuple[str, str]]:
    """The TF op of a kernel annotation: the innermost ``name:Type`` of ``a::b::c``."""
    for part in reversed(text.split("::")):
        op = parse_tf_op(part.split("#", 1)[0].strip())
        if op:
            return op
    return None

def _spans(base: int, offsets: list[int], durations: list[int], values: list[int]
           ) -> list[tuple[int, int, int]]:
    """(start, end, value) of each event, ``base`` added to its offset."""
    starts = list(map(base.__add__, offsets))
    return list(zip(starts, map(add, starts, durations), values))
