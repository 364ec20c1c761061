"""Which events of a TF2 file's host lines are worth reading: the picks.

Each host line's bytes are read as columns (``xplane_columns.proto``: the
line's event fields as arrays, no message per event) to classify its events
by their metadata (TF ops, eager ops, Python-tracer frames, memory events,
executor ids) and pick the events worth a message (:class:`Picked`), before
:mod:`.xspace` reads them. On a multi-core POSIX machine a large file's
largest lines are picked by a forked child process while the parent picks
the others (:class:`_PickingChild`); the child's result is the parent's own,
and anywhere else (or if the child fails) the parent picks every line itself.
"""

from __future__ import annotations

import os
import pickle
import re
import signal
import sys
from array import array
from collections import Counter
from dataclasses import dataclass
from itertools import compress, repeat
from operator import not_
from typing import Any, Callable, Iterable, Optional

from google.protobuf.message import DecodeError

from ..errors import LoadError
from ..proto import xplane_columns_pb2, xplane_pb2, xplane_stacks_pb2
from .event_columns import id_columns, stats_per_event
from .files import parse_binary, read_unzipped
from .pystack import parse_py_frame
from .xspace_bytes import PlaneFields, plane_bytes
from .xspace_lazy import HOST_PLANES, HostPlane, SplitSpace, split_space

_TF_OP = re.compile(r"([A-Za-z0-9.][A-Za-z0-9_./>-]*):([A-Z_][A-Za-z0-9_]*)")

_SLICE = 1 << 18
#: Executor ids are read as columns (see :func:`.event_columns.id_columns`) from a line with at
#: least this many of them, and at least one in this many of its events (the
#: line's events are split into their bytes first, which costs per event).
IDS_AS_COLUMNS_AT_LEAST = 1024
_IDS_AS_COLUMNS_DENSITY = 64
#: ... and only the events of metadata with at least this many events there.
_ID_GROUP_AT_LEAST = 64
# Event kinds on host lines, decided once per event metadata.
KIND_OP, KIND_PY, KIND_EAGER, KIND_EAGER_KERNEL, KIND_MEMORY, KIND_OTHER = range(6)


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
    planes = raw_host_planes(data) if pick else []

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


def _child_share(planes: list[RawHostPlane], size: int) -> set[tuple[int, int]]:
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
    def start(cls, planes: list[RawHostPlane], only: Callable[[tuple[int, int]], bool],
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
class RawHostPlane:
    """A host plane's bytes split without a parse: what picking its lines needs."""

    index: int
    #: (event metadata id, name)
    names: list[tuple[int, str]]
    stat_names: dict[int, str]
    #: each line's bytes
    lines: list[Any]


def raw_host_planes(data: bytes) -> list[RawHostPlane]:
    """The host planes of an XSpace's bytes ([] if the bytes do not split)."""
    out: list[RawHostPlane] = []
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
        out.append(RawHostPlane(p, list(events.items()), stats, plane.lines()))
    return out


def _pick(planes: list[RawHostPlane], only: Optional[Callable[[tuple[int, int]], bool]] = None,
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
        frame_ids, py_ids = python_ids(names)
        kinds = [(k, classify(name)[0]) for k, name in names]
        op_ids = {k for k, kind in kinds if kind == KIND_OP}
        other_ids = {k for k, kind in kinds if kind == KIND_OTHER}
        special_ids = {k for k, kind in kinds if kind not in (KIND_OP, KIND_PY, KIND_OTHER)}
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


def _pick_beside_child(planes: list[RawHostPlane], theirs: set[tuple[int, int]],
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


def pick_ids(planes: list[RawHostPlane], where: Iterable[tuple[int, int]]
              ) -> dict[tuple[int, int], Picked]:
    """:func:`_pick` ``with_ids`` of the lines at ``where``, the largest half of
    their bytes in a forked child where that pays (as when loading)."""
    wanted = set(where)
    sizes = [RawHostPlane(plane.index, [], {}, [raw if (plane.index, li) in wanted else b""
                                             for li, raw in enumerate(plane.lines)])
             for plane in planes]
    theirs = _child_share(sizes, sum(len(raw) for plane in sizes for raw in plane.lines))
    picked, _ = _pick_beside_child(planes, theirs & wanted, wanted.__contains__, with_ids=True)
    return picked



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


def python_ids(names: Iterable[tuple[int, str]]) -> tuple[set[int], set[int]]:
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


def classify(name: str) -> tuple[int, Any]:
    if name.startswith("$"):
        return KIND_PY, parse_py_frame(name)
    if name == "EagerExecute":
        return KIND_EAGER, None
    if name == "EagerKernelExecute":
        return KIND_EAGER_KERNEL, None
    if name in ("MemoryAllocation", "MemoryDeallocation"):
        return KIND_MEMORY, name
    op = parse_tf_op(name)
    return (KIND_OP, op) if op else (KIND_OTHER, None)


