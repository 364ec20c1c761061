"""XSpace files (``.xplane.pb``) -> per-host executions, step markers and Python frames.

The schema is our own wire-compatible copy (no TensorFlow needed). This module
only reads: it classifies the events of the host plane (TF ops, eager ops,
Python-tracer frames, step markers, memory events, executor ids) and of GPU
planes (kernels and the TF op each names, or for XLA programs the node
:mod:`.xla` maps them to), in picoseconds on one time axis. :mod:`.xplane`
turns them into a Model.

The file is never parsed whole (:mod:`.xspace_lazy`): host lines are first
read as columns (``xplane_columns.proto``: each line's event fields as
arrays, no message per event) to pick the events worth a message
(:class:`Picked`), then each line is split into its events' bytes and only
the picked events are parsed, one line at a time. Executor ids, one per
executor event, matter only to Python stacks: a line's few are read one
event at a time, its many (as columns, :func:`.event_columns.id_columns`) only when stacks
are first looked up (:meth:`Host.read_ids`). On a multi-core POSIX machine a large file's largest
lines are picked by a forked child process while the parent picks the
others (:class:`_PickingChild`); the child's result is the parent's own, and
anywhere else (or if the child fails) the parent picks every line itself.
"""

from __future__ import annotations

import os
import pickle
import re
import signal
import sys
import zlib
from array import array
from collections import Counter
from dataclasses import dataclass
from functools import partial
from itertools import compress, islice, repeat
from operator import add, attrgetter, itemgetter, le, lt, not_
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

from google.protobuf.message import DecodeError

from ..errors import LoadError
from ..model import Frame
from ..proto import xplane_columns_pb2, xplane_pb2, xplane_stacks_pb2
from .event_columns import eager_values, event_times, id_columns, stats_per_event
from .files import parse_binary, read_unzipped
from .frame_lines import FrameLines, stacks_on
from .pystack import Line, attach_traces, eager_execs, parse_py_frame, subtract_nested
from .records import CPU_DEVICE, GPU_STREAM_ALL
from .xspace_bytes import PlaneFields, plane_bytes
from .xspace_lazy import (HOST_PLANES, EventsByIndex, HostPlane, LazyLine, SplitSpace,
                          events_at, split_space)

if TYPE_CHECKING:
    from .xla import KernelOp, XlaKernels

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
#: Executor ids are read as columns (see :func:`.event_columns.id_columns`) from a line with at
#: least this many of them, and at least one in this many of its events (the
#: line's events are split into their bytes first, which costs per event).
IDS_AS_COLUMNS_AT_LEAST = 1024
_IDS_AS_COLUMNS_DENSITY = 64
#: ... and only the events of metadata with at least this many events there.
_ID_GROUP_AT_LEAST = 64
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
    events get no message at all. The rest holds every other event only where
    the line has step markers or executor ids are read (see :func:`_pick`);
    else just the events of special kinds (eager ops, kernels, memory).
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
    #: (see :func:`.event_columns.id_columns`); only for metadata whose first event has an id
    id_columns: Optional[dict[int, tuple[list[int], list[int], list[int], list[int]]]] = None


def read_xspace_picked(path: str, pick: bool = True) -> tuple[Any, dict[tuple[int, int], Picked]]:
    """One ``.xplane.pb`` (optionally gzip-compressed) split into its parts (a
    :class:`.xspace_lazy.SplitSpace`: host lines parsed only when read; an
    ``XSpace`` message where the bytes do not split so); LoadError if it is
    not one. With ``pick``, also each host line's :class:`Picked` by (plane
    index, line index), from the same bytes read with ``xplane_columns.proto``
    (each line's event fields as arrays)."""
    if path.endswith(".riegeli"):
        raise LoadError("--profile_path %s: .xplane.riegeli files are not supported; "
                        "use the .xplane.pb files of the same run" % path)
    data = read_unzipped(path, "profile_path")
    planes = _host_planes(data) if pick else []

    def split() -> tuple[Any, bool]:
        split_data = split_space(data)
        return split_data, split_data is not None and _lines_parse(split_data)

    picked, (space, heads) = _pick_beside_child(
        planes, _child_share(planes, len(data)), lambda key: True, split)
    del planes
    if space is not None and not (heads and _lines_parse(space, picked)):
        space = None
    if space is None:  # a full parse reads what did not split, or fails
        space = parse_binary(xplane_pb2.XSpace, data)
    if space is None or not _looks_like_xspace(space):
        raise LoadError("--profile_path %s: not an XSpace (.xplane.pb) file" % path)
    return space, picked


def _lines_parse(space: SplitSpace,
                 picked: Optional[dict[tuple[int, int], Picked]] = None) -> bool:
    """Whether each host line's header parses (parsed once, then kept), and with
    ``picked``, the events of each line not picked (a picked line's events
    parsed as columns already)."""
    try:
        for p, plane in enumerate(space.planes):
            if isinstance(plane, HostPlane):
                for li, line in enumerate(plane.lines):
                    line.name  # noqa: B018 (parses the header)
                    if picked is not None and (p, li) not in picked:
                        line.events  # noqa: B018
    except DecodeError:
        return False
    return True


#: Files at least this large (bytes) are picked partly in a forked process
#: while this one picks the rest and splits the file (see :class:`_PickingChild`).
FORK_AT_LEAST = 32 << 20
#: The share of the host lines' bytes the child picks: it gets the largest
#: line (in a traced profile, the Python thread: millions of frames, few
#: picks), then smaller lines as far as they fit; the parent splits the file
#: besides its own share's picks, and the picks the child sends back cost
#: time on both ends.
_CHILD_SHARE = 0.5
#: ... and only if what is left to the parent is at least this share of them.
_PARENT_SHARE_AT_LEAST = 0.25


def _child_share(planes: list[_HostPlane], size: int) -> set[tuple[int, int]]:
    """The lines (plane index, line index) a forked child should pick: the
    largest, then others up to :data:`_CHILD_SHARE` of the bytes ({} where forking does not
    pay or is not safe: small files, one line most of them, one core or no idle
    one, no ``os.fork``, a worker of a process pool, other threads)."""
    if (size < FORK_AT_LEAST or not hasattr(os, "fork") or _cores() < 2
            or _in_pool_worker() or _busy()):
        return set()
    lines = sorted(((len(raw), (plane.index, li)) for plane in planes
                    for li, raw in enumerate(plane.lines)), reverse=True)
    total = sum(n for n, _ in lines)
    budget = _CHILD_SHARE * total
    out: set[tuple[int, int]] = set()
    for n, key in lines:  # the largest line, then those that fit what is left
        if n <= budget or not out:
            out.add(key)
            budget -= n
    if total - (_CHILD_SHARE * total - budget) < _PARENT_SHARE_AT_LEAST * total:
        return set()  # one line is most of the file: the parent would only wait
    return out


class _PickingChild:
    """:func:`_pick` of some lines in a forked child process, on a second core.

    The one-shot CLI is one process, and reading a large XSpace's lines as
    columns is single-threaded work: a child forked once the bytes are read
    and split picks the largest lines while the parent picks the others and
    splits the file into its parts, then sends its Picked back through a pipe
    as packed arrays. Only where ``os.fork`` exists (not Windows), with two or
    more cores of which one was idle over the last minute, for large files,
    and not inside a worker of a process pool (:mod:`.parallel`); elsewhere
    the parent picks every line itself, with the same result. The parent always waits
    for the child (it never leaves a zombie or a running child: on its own
    errors it kills it first); if the child fails in any way, :meth:`result`
    is None and the parent picks the child's lines too.
    """

    def __init__(self, pid: int, fd: int) -> None:
        self.pid, self.fd = pid, fd

    @classmethod
    def start(cls, planes: list[_HostPlane], only: Callable[[tuple[int, int]], bool],
              with_ids: bool = False) -> Optional["_PickingChild"]:
        """The child picking the lines ``only`` accepts (None if forking fails);
        ``with_ids`` as :func:`_pick`'s."""
        try:
            read_fd, write_fd = os.pipe()
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            return None
        if pid == 0:  # the child: never returns
            status = 1
            try:
                os.close(read_fd)
                payload = _pack_picked(_pick(planes, only, with_ids=True) if with_ids
                                       else _pick(planes, only))
                with os.fdopen(write_fd, "wb") as out:
                    out.write(payload)
                status = 0
            finally:
                os._exit(status)
        os.close(write_fd)
        return cls(pid, read_fd)

    def result(self) -> Optional[dict[tuple[int, int], Picked]]:
        """The child's picks (None if it failed); the child has ended on return."""
        payload = b""
        try:
            with os.fdopen(self.fd, "rb", closefd=False) as pipe:
                payload = pipe.read()
        except OSError:
            payload = b""
        finally:
            os.close(self.fd)
            status = self._reap()
        if status != 0 or not payload:
            return None
        try:
            return _unpack_picked(payload)
        except Exception:  # a damaged payload: the parent picks itself
            return None


    def abandon(self) -> None:
        """Stop the child (the parent failed) and wait for it."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        os.close(self.fd)
        self._reap()

    def _reap(self) -> int:
        while True:
            try:
                return os.waitpid(self.pid, 0)[1]
            except InterruptedError:
                continue
            except ChildProcessError:  # reaped elsewhere (a SIGCHLD handler)
                return -1


def _busy() -> bool:
    """Whether the child would wait for a core: more processes run (or wait to)
    than all cores but one."""
    running = _running()
    return running is not None and running > _cores() - 1


def _running() -> Optional[float]:
    """How many processes run or wait to run now, this one included (Linux), else
    the load average over the last minute, else None. (A load average lags: a
    benchmark that runs one process after another keeps it near one.)"""
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _in_pool_worker() -> bool:
    """Whether this process is a pool's worker, or has other threads (which a
    fork would not copy, with whatever locks they hold)."""
    mp = sys.modules.get("multiprocessing")
    threads = sys.modules.get("threading")
    return ((mp is not None and mp.current_process().name != "MainProcess")
            or (threads is not None and threads.active_count() > 1))


_PICKED_LISTS = ("op_indices", "op_ids", "op_offsets", "op_durations", "rest_indices",
                 "rest_ids")


def _packed(values: Optional[list[int]]) -> Any:
    """An int list as an int64 array (a tenth of the pickle), if it fits one."""
    if values is None:
        return None
    try:
        return array("q", values)
    except OverflowError:  # uint64 values
        return list(values)


def _listed(values: Any) -> Any:
    return values.tolist() if isinstance(values, array) else values


def _pack_picked(picked: dict[tuple[int, int], Picked]) -> bytes:
    rows = []
    for key, p in picked.items():
        columns = ({md: tuple(map(_packed, found)) for md, found in p.id_columns.items()}
                   if p.id_columns is not None else None)
        rows.append((key, p.n_events, p.has_frames,
                     [_packed(getattr(p, name)) for name in _PICKED_LISTS],
                     dict(p.stat_counts), columns))
    return pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL)


def _unpack_picked(payload: bytes) -> dict[tuple[int, int], Picked]:
    out = {}
    for key, n_events, has_frames, lists, stat_counts, columns in pickle.loads(payload):
        p = Picked(n_events, has_frames, *map(_listed, lists), stat_counts)
        if columns is not None:
            p.id_columns = {md: tuple(map(_listed, found)) for md, found in columns.items()}
        out[key] = p
    return out


@dataclass
class _HostPlane:
    """A host plane's bytes split without a parse: what picking its lines needs."""

    index: int
    #: (event metadata id, name)
    names: list[tuple[int, str]]
    stat_names: dict[int, str]
    #: each line's bytes
    lines: list[Any]


def _host_planes(data: bytes) -> list[_HostPlane]:
    """The host planes of an XSpace's bytes ([] if the bytes do not split)."""
    out: list[_HostPlane] = []
    for p, raw in enumerate(plane_bytes(data) or ()):
        plane = PlaneFields.split(raw)
        if plane is None:
            return []
        try:
            if plane.name() not in HOST_PLANES:
                continue
            events, stats = plane.event_names(), plane.stat_names()
        except (UnicodeDecodeError, DecodeError):
            continue
        out.append(_HostPlane(p, list(events.items()), stats, plane.lines()))
    return out


def _pick(planes: list[_HostPlane], only: Optional[Callable[[tuple[int, int]], bool]] = None,
          with_ids: bool = False) -> dict[tuple[int, int], Picked]:
    """Each host line's :class:`Picked` (with ``only``, of the lines it accepts),
    each line's bytes read with ``xplane_columns.proto`` (its event fields as
    arrays); a line that does not parse gets none. With ``with_ids``, the picks
    :meth:`Host.read_ids` reads executor ids by (they matter only to Python
    stacks): with :attr:`Picked.id_columns`, the ops' times left as the
    columns give them."""
    out: dict[tuple[int, int], Picked] = {}
    for plane in planes:
        p, names = plane.index, plane.names
        frame_ids, py_ids = _python_ids(names)
        kinds = [(k, _classify(name)[0]) for k, name in names]
        op_ids = {k for k, kind in kinds if kind == _OP}
        other_ids = {k for k, kind in kinds if kind == _OTHER}
        special_ids = {k for k, kind in kinds if kind not in (_OP, _PY, _OTHER)}
        id_stats = {k for k, name in plane.stat_names.items() if name == "id"}
        marker_stats = {k for k, name in plane.stat_names.items() if name == "step_num"}
        keep_of = dict.fromkeys(py_ids, False)
        for li, raw in enumerate(plane.lines):
            if only is not None and not only((p, li)):
                continue
            try:
                events = xplane_columns_pb2.XLineColumns.FromString(raw).events
            except DecodeError:
                continue
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
            stat_counts = Counter(events.stats.metadata_id)
            n_ids = sum(stat_counts.get(k, 0) for k in id_stats)
            # All the rest only where markers or ids are read from it (ids read
            # as columns are left for later); else only the events of special
            # kinds (eager ops, memory).
            all_rest = (with_ids or any(map(stat_counts.get, marker_stats))
                        or (n_ids > 0 and not ids_as_columns(n_ids, n)))
            # In slices: a list of millions of ints would cost hundreds of MB.
            # Reading a column costs per element, so the time columns are
            # sliced where most events are ops and indexed where few are.
            # Lists, not arrays: an array is several times slower to fill.
            for k in range(0, n, _SLICE):
                part = ids[k:k + _SLICE]
                if py_ids.isdisjoint(part):  # no Python-tracer event: keep all
                    count = len(part)
                else:
                    has_frames = has_frames or not frame_ids.isdisjoint(part)
                    mask = list(map(keep_of.get, part, repeat(True)))
                    count = mask.count(True)
                if not count:
                    continue
                if count == len(part):
                    kept, kept_md = range(k, k + count), part
                else:
                    local = (list(compress(range(len(part)), mask)) if count * 16 > len(part)
                             else _positions(mask, count))
                    kept = list(map(k.__add__, local)) if k else local
                    kept_md = list(map(part.__getitem__, local))
                if op_ids.isdisjoint(kept_md):
                    if all_rest:
                        rest += kept
                        rest_md += kept_md
                    elif not special_ids.isdisjoint(kept_md):
                        is_special = list(map(special_ids.__contains__, kept_md))
                        rest += compress(kept, is_special)
                        rest_md += compress(kept_md, is_special)
                    continue
                is_op = list(map(op_ids.__contains__, kept_md))
                these = list(compress(kept, is_op))
                ops += these
                op_md += compress(kept_md, is_op)
                if all_rest:
                    rest += compress(kept, map(not_, is_op))
                    rest_md += compress(kept_md, map(not_, is_op))
                elif not special_ids.isdisjoint(kept_md):  # no op is special
                    is_special = list(map(special_ids.__contains__, kept_md))
                    rest += compress(kept, is_special)
                    rest_md += compress(kept_md, is_special)
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
            del events, ids, offsets, durations
            picked = out[(p, li)] = Picked(
                n, has_frames, ops, op_md, op_offsets if len(op_offsets) == len(ops) else None,
                op_durations if len(op_durations) == len(ops) else None, rest, rest_md,
                stat_counts)
            as_columns = with_ids and ids_as_columns(n_ids, n)
            untimed = not with_ids and len(ops) >= IDS_AS_COLUMNS_AT_LEAST and (
                picked.op_offsets is None or picked.op_durations is None)
            if as_columns or untimed:
                raw_events = xplane_stacks_pb2.LineRaw.FromString(raw).events
                if as_columns:
                    picked.id_columns = _lineid_columns(raw_events, rest, rest_md, other_ids,
                                                         id_stats, marker_stats)
                if untimed:
                    _time_ops(picked, raw_events)
    return out


def _pick_beside_child(planes: list[_HostPlane], theirs: set[tuple[int, int]],
                       wanted: Callable[[tuple[int, int]], bool],
                       meanwhile: Optional[Callable[[], Any]] = None, with_ids: bool = False
                       ) -> tuple[dict[tuple[int, int], Picked], Any]:
    """:func:`_pick` of the ``wanted`` lines, those in ``theirs`` by a forked child
    (:class:`_PickingChild`) while this process picks the others and then runs
    ``meanwhile``; and what ``meanwhile`` returned. If the child cannot start or
    fails, its lines are picked here: the result is the same."""
    child = _PickingChild.start(planes, theirs.__contains__, with_ids) if theirs else None
    if child is None:
        theirs = set()
    try:
        picked = _pick(planes, lambda key: wanted(key) and key not in theirs, with_ids=with_ids)
        extra = meanwhile() if meanwhile is not None else None
    except BaseException:
        if child is not None:
            child.abandon()
        raise
    if child is not None:
        got = child.result()
        picked.update(got if got is not None
                      else _pick(planes, theirs.__contains__, with_ids=with_ids))
    return picked, extra


def _pick_ids(planes: list[_HostPlane], where: Iterable[tuple[int, int]]
              ) -> dict[tuple[int, int], Picked]:
    """:func:`_pick` ``with_ids`` of the lines at ``where``, the largest half of
    their bytes in a forked child where that pays (as when loading)."""
    wanted = set(where)
    sizes = [_HostPlane(plane.index, [], {}, [raw if (plane.index, li) in wanted else b""
                                             for li, raw in enumerate(plane.lines)])
             for plane in planes]
    theirs = _child_share(sizes, sum(len(raw) for plane in sizes for raw in plane.lines))
    picked, _ = _pick_beside_child(planes, theirs & wanted, wanted.__contains__, with_ids=True)
    return picked


def _spans(base: int, offsets: list[int], durations: list[int], values: list[int]
           ) -> list[tuple[int, int, int]]:
    """(start, end, value) of each event, ``base`` added to its offset."""
    starts = list(map(base.__add__, offsets))
    return list(zip(starts, map(add, starts, durations), values))


def ids_as_columns(n_ids: int, n_events: int) -> bool:
    """Whether a line's executor ids (``n_ids`` of them, among ``n_events``
    events) are read as columns (:func:`.event_columns.id_columns`), else one event at a time."""
    return n_ids >= IDS_AS_COLUMNS_AT_LEAST and n_ids * _IDS_AS_COLUMNS_DENSITY >= n_events


def _time_ops(picked: Picked, raw_events: Any) -> None:
    """Fill a Picked's op offsets and durations missing from the line's columns
    (an event that wrote no duration, such as a zero-length marker, shifts them)
    from the ops' own bytes joined, where every op wrote both."""
    ops = picked.op_indices
    parsed = xplane_columns_pb2.EventValues.FromString(b"".join(map(raw_events.__getitem__, ops)))
    if parsed.num_occurrences:
        return
    if picked.op_offsets is None and len(parsed.offset_ps) == len(ops):
        picked.op_offsets = parsed.offset_ps[:]
    if picked.op_durations is None and len(parsed.duration_ps) == len(ops):
        picked.op_durations = parsed.duration_ps[:]


def _lineid_columns(raw_events: Any, rest: list[int], rest_md: list[int],
                     other_ids: set[int], id_stats: set[int], marker_stats: set[int]
                     ) -> dict[int, tuple[list[int], list[int], list[int], list[int]]]:
    """:attr:`Picked.id_columns` of a line (``raw_events``: its events' bytes), for
    metadata with enough events to pay for it (the others are read one by one)."""
    sizes = Counter(rest_md)
    candidates = [md for md, n in sizes.items()
                  if n >= _ID_GROUP_AT_LEAST and md in other_ids]
    wanted = id_stats | marker_stats
    per_event = stats_per_event([raw_events[rest[rest_md.index(md)]] for md in candidates])
    chosen = [md for md, stats in zip(candidates, per_event) if stats is not None
              and id_stats.intersection(stats) and not marker_stats.intersection(stats)]
    if len(chosen) == 1:
        groups = {chosen[0]: list(compress(rest, map(chosen[0].__eq__, rest_md)))}
    else:
        groups = {md: [] for md in chosen}
        for i, md in zip(rest, rest_md):
            if md in groups:
                groups[md].append(i)
    out = {}
    for md, indices in groups.items():
        found = id_columns(raw_events, indices, id_stats, wanted)
        if found is not None:
            out[md] = found
    return out


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
            kinds[md_id], payloads[md_id] = _classify(md.name)
        frame_ids, py_ids = _python_ids((k, v.name) for k, v in plane.event_metadata.items())
        # Only these stats matter on other events (executor ids, step markers).
        wanted = _wanted_stats(stats.names)
        step_stats = {k: v for k, v in wanted.items() if v == "step_num"}
        id_stats = [k for k, v in wanted.items() if v == "id"]
        eager_stats = {k: v for k, v in stats.names.items() if v in ("eager_op", "is_func")}
        special_ids = {k for k, kind in kinds.items() if kind not in (_OP, _PY, _OTHER)}
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
        picked = _pick_ids(planes, where)
        changed = LoadError("--profile_path %s: the file changed since it was loaded"
                            % self.path)
        for plane in planes:
            kinds = {k: _classify(name)[0] for k, name in plane.names}
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

    def _host_planes_again(self, wanted: set[int]) -> list[_HostPlane]:
        """The host planes at indices ``wanted``, split from the file again (or
        from the kept XSpace)."""
        if self.path:
            planes = _host_planes(read_unzipped(self.path, "profile_path"))
            return [plane for plane in planes if plane.index in wanted]
        out = []
        for p, plane in enumerate(self._kept.planes if self._kept is not None else ()):
            if p in wanted:
                lines = [line.raw if isinstance(line, LazyLine) else line.SerializeToString()
                         for line in plane.lines]
                out.append(_HostPlane(p, [(k, md.name) for k, md in plane.event_metadata.items()],
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
            elif kind == _MEMORY:
                self.memory.append((start, payloads[md_id], stats.of(ev)))
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
        for kind in (_EAGER_KERNEL, _EAGER):
            mask = list(map(kind.__eq__, of_kind))
            these = list(compress(parts, mask))
            if not these:
                continue
            times = event_times(these)
            found = None
            if times is not None and kind == _EAGER:
                found = eager_values(these, list(compress(md_ids, mask)), eager_stats,
                                     partial(stats.of_metadata, ids=eager_stats), stats.names)
            if times is None or (kind == _EAGER and found is None):
                left += compress(special, mask)
                continue
            starts = list(map(base.__add__, times[0]))
            ends = list(map(add, starts, times[1]))
            if kind == _EAGER_KERNEL:
                line.kernels.extend(zip(starts, ends))
                continue
            assert found is not None
            line.eagers.extend((start, end, op if type(op) is str else str(op))
                               for start, end, op, is_func in zip(starts, ends, *found)
                               if op and not is_func)
        for kind in set(of_kind).difference((_EAGER_KERNEL, _EAGER)):
            left += compress(special, map(kind.__eq__, of_kind))
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
        firsts = [(md_id, i) for md_id, i in first.items() if kind_of(md_id, _OTHER) == _OTHER]
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
                      if md_id not in likely and kind_of(md_id, _OTHER) == _OTHER]
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
