"""An XSpace's Python-frame lines read again after loading, and the stacks
looked up on them.

Loading keeps no Python frames (:mod:`.xspace`); the first code trace asked
for reads the file again, splits only the lines that hold frames into their
events' bytes (``xplane_stacks.proto``) and answers each look-up by random
access (:func:`.pystack.nested_stacks`, which steps over runs of short calls
a block of events per parse), or walks a line whole when it is small or was
not written in start order.
"""

from __future__ import annotations

from array import array
from itertools import chain, islice, repeat
from operator import add, and_, attrgetter, le
from typing import Any, Callable, Iterable, Optional

from ..errors import LoadError
from ..model import Frame
from ..proto import xplane_columns_pb2, xplane_stacks_pb2
from .files import read_unzipped
from .pystack import Leaves, Line, nested_stacks, parse_py_frame, stacks
from .wire import length_prefix
from .xspace_bytes import PlaneFields, plane_bytes
from .xspace_lazy import LazyLine

_AFTER_ALL = 1 << 62  # later than any time in picoseconds
#: Lines with at most this many events are walked whole when stacks are looked
#: up (right in any order); larger ones, which the profiler writes in start
#: order and nested (TensorFlow sorts every line before saving), are read by
#: random access (see .pystack.nested_stacks).
WALK_AT_MOST = 1 << 18
#: Events parsed at once by FrameLines.leaves: the first block, doubled up to the last.
_FIRST_BLOCK = 64
_LAST_BLOCK = 4096
_offset = attrgetter("offset_ps")
_duration = attrgetter("duration_ps")
_NOT_NEGATIVE = (0).__le__


class _EventTags(dict):
    """Byte length -> the tag and length that open an event of that length in an
    XLine: events so framed and joined parse as one line."""

    number = xplane_stacks_pb2.LineEvents.DESCRIPTOR.fields_by_name["events"].number

    def __missing__(self, length: int) -> bytes:
        head = self[length] = length_prefix(self.number, length)
        return head


_EVENT_TAG = _EventTags()


def _times(block: list[bytes]) -> tuple[list[int], list[int]]:
    """The offsets and durations of events given as their bytes, in one parse."""
    columns = xplane_columns_pb2.EventValues.FromString(b"".join(block))
    offsets, durations = columns.offset_ps, columns.duration_ps
    if len(offsets) == len(block) == len(durations):
        return list(offsets), list(durations)
    # A zero duration (or offset) is left out of its column: a message per event.
    framed = chain.from_iterable(zip(map(_EVENT_TAG.__getitem__, map(len, block)), block))
    events = xplane_stacks_pb2.LineEvents.FromString(b"".join(framed)).events
    return list(map(_offset, events)), list(map(_duration, events))


class FrameLines:
    """A host's lines read again for their Python frames: from the file, parsing
    only the lines asked for (see ``xplane_stacks.proto``), or from a kept XSpace."""

    def __init__(self, space: Any, path: str, where: list[tuple[int, int]]) -> None:
        """``where``: (plane index, line index) of the lines that will be asked for."""
        self._frames: dict[int, dict[int, Frame]] = {}
        self._lines: dict[tuple[int, int], Any] = {}
        if space is None:
            self._frames, self._lines = read_frame_lines(path, where)
        else:
            for p, li in where:
                plane = space.planes[p]
                if p not in self._frames:
                    self._frames[p] = frames_of(plane)
                line = plane.lines[li]
                # a line split from the file: its bytes, read as those of the file are
                self._lines[(p, li)] = line.raw if isinstance(line, LazyLine) else line
        self._raw: dict[tuple[int, int], Any] = {}
        self._events: dict[tuple[int, int], Any] = {}

    def frames(self, p: int) -> dict[int, Frame]:
        """Plane p's Python frames by event metadata id."""
        return self._frames[p]

    def events_at(self, p: int, li: int) -> tuple[int, int, Callable[[int], Any]]:
        """Line li of plane p for random access: (event count, ``timestamp_ns``, a
        function from an index to the event's id, offset and duration)."""
        raw = self._raw_line(p, li)
        if raw is None:
            xline = self._lines[(p, li)]
            return len(xline.events), xline.timestamp_ns, xline.events.__getitem__
        parse, events = xplane_stacks_pb2.EventTimes.FromString, raw.events
        last: list[Any] = [-1, None]  # the event read last: start, end and frame ask in turn

        def event(k: int) -> Any:
            if last[0] != k:
                last[0], last[1] = k, parse(events[k])
            return last[1]
        return len(events), raw.timestamp_ns, event

    def _raw_line(self, p: int, li: int) -> Any:
        """Line li of plane p split into its events' bytes (a ``LineRaw``), or None
        for a line of a kept XSpace (a message per event already)."""
        raw = self._raw.get((p, li))
        if raw is None:
            xline = self._lines[(p, li)]
            if not isinstance(xline, memoryview):
                return None
            # each event's bytes, parsed when read: cheaper than a message per event
            raw = self._raw[(p, li)] = xplane_stacks_pb2.LineRaw.FromString(xline)
        return raw

    def leaves(self, p: int, li: int) -> Optional[Leaves]:
        """For line li of plane p read from the file (else None): ``leaves(k, t)``,
        the first index from k whose event is not a leaf that ended by offset t
        (its duration is negative, or it ends after t or after the next event's
        start), and the offset of the event before it (None if that index is k).

        Events are parsed a block at a time, in one parse per block: runs of
        short calls with nothing inside are most of a Python line's events.
        """
        raw = self._raw_line(p, li)
        if raw is None:
            return None
        events, count = raw.events, len(raw.events)

        def leaves(k: int, t: int) -> tuple[int, Optional[int]]:
            before = None
            size = _FIRST_BLOCK
            while k + 1 < count:
                hi = min(k + size + 1, count)  # one more: the last one's next start
                offsets, durations = _times(events[k:hi])
                ends = map(add, offsets, durations)
                bounds = map(min, islice(offsets, 1, None), repeat(t))
                flags = list(map(and_, map(le, ends, bounds), map(_NOT_NEGATIVE, durations)))
                if False in flags:
                    n = flags.index(False)
                    return k + n, (offsets[n - 1] if n else before)
                k += len(flags)
                before = offsets[-2]
                size = min(size * 2, _LAST_BLOCK)
            return k, before
        return leaves

    def events(self, p: int, li: int) -> Any:
        """Line li of plane p with a message per event (``timestamp_ns`` and ``events``
        with ids, offsets and durations), for walking it whole."""
        xline = self._lines[(p, li)]
        if not isinstance(xline, memoryview):
            return xline
        found = self._events.get((p, li))
        if found is None:
            self._raw.pop((p, li), None)
            found = self._events[(p, li)] = xplane_stacks_pb2.LineEvents.FromString(xline)
        return found


def read_frame_lines(path: str, where: list[tuple[int, int]]
                      ) -> tuple[dict[int, dict[int, Frame]], dict[tuple[int, int], memoryview]]:
    """An XSpace file's Python frames by plane index and event metadata id, and the
    bytes of the lines at ``where`` (plane index, line index), found without a parse."""
    data = read_unzipped(path, "profile_path")
    bad = LoadError("--profile_path %s: not an XSpace (.xplane.pb) file" % path)
    planes = plane_bytes(data)
    if planes is None:
        raise bad
    frames: dict[int, dict[int, Frame]] = {}
    lines: dict[tuple[int, int], memoryview] = {}
    for p in sorted({p for p, _ in where}):
        plane = PlaneFields.split(planes[p]) if p < len(planes) else None
        if plane is None:
            raise bad
        frames[p] = frames_named(plane.event_names().items())
        plane_lines = plane.lines()
        for q, li in where:
            if q == p:
                if li >= len(plane_lines):
                    raise bad
                lines[(p, li)] = plane_lines[li]
    return frames, lines


def frames_of(plane: Any) -> dict[int, Frame]:
    """The plane's Python frames by event metadata id."""
    return frames_named((md_id, md.name) for md_id, md in plane.event_metadata.items())


def frames_named(names: Iterable[tuple[int, str]]) -> dict[int, Frame]:
    """The Python frames among (event metadata id, name) pairs, by id."""
    frames: dict[int, Frame] = {}
    for md_id, name in names:
        if name.startswith("$"):
            frame = parse_py_frame(name)
            if frame is not None:
                frames[md_id] = frame
    return frames


def stacks_on(line: Line, source: "FrameLines", shift_ns: int,
              times: set[int]) -> dict[int, list[Frame]]:
    """The Python frames open on a host line at each of ``times`` (absolute ps;
    ``shift_ns`` is the host's shift onto the common time axis)."""
    p, li = line.where
    frames = source.frames(p)
    found = None
    count, timestamp_ns, event = source.events_at(p, li)
    base = (shift_ns + timestamp_ns) * 1000
    if count > WALK_AT_MOST:
        frame_of = frames.get

        def start(k: int) -> int:
            return base + event(k).offset_ps

        def end(k: int) -> int:
            ev = event(k)
            return base + ev.offset_ps + ev.duration_ps

        found = nested_stacks(count, start, end,
                              lambda k: frame_of(event(k).metadata_id), times,
                              _absolute(source.leaves(p, li), base))
    if found is None:
        xline = source.events(p, li)
        found = _stream_stacks(xline, frames, base, times)
        if found is None:  # frames not written in start order
            _read_frames(xline, frames, base, line)
            found = stacks(line, times)
            line.f_start, line.f_end, line.f_frame = array("q"), array("q"), []
    return found


def _absolute(leaves: Optional[Leaves], base: int) -> Optional[Leaves]:
    """FrameLines.leaves (times are offsets in the line) in absolute picoseconds."""
    if leaves is None:
        return None

    def absolute(k: int, t: int) -> tuple[int, Optional[int]]:
        after, before = leaves(k, t - base)
        return after, (None if before is None else base + before)
    return absolute


def _stream_stacks(xline: Any, frames: dict[int, Frame], base: int,
                   times: set[int]) -> Optional[dict[int, list[Frame]]]:
    """:func:`.pystack.stacks` in one pass over a line's events, keeping only
    the open frames; None if its frames are not in start order."""
    frame_of = frames.get
    wanted = sorted(times)
    wanted.append(_AFTER_ALL)
    k = 0
    t = wanted[0]
    # the open frames and their ends, above a bottom entry that never ends
    ends: list[int] = [_AFTER_ALL]
    open_: list[Any] = [None]
    snap: Optional[list[Frame]] = None
    out: dict[int, list[Frame]] = {}
    last = -_AFTER_ALL
    for ev in xline.events:
        frame = frame_of(ev.metadata_id)
        if frame is None:
            continue
        start = base + ev.offset_ps
        if start < last:
            return None
        last = start
        while t < start:  # every frame starting by t is open: t's stack is known
            while ends[-1] <= t:
                ends.pop()
                open_.pop()
                snap = None
            if snap is None:
                snap = open_[1:]
            out[t] = list(snap)
            k += 1
            t = wanted[k]
        while ends[-1] <= start:
            ends.pop()
            open_.pop()
        ends.append(start + ev.duration_ps)
        open_.append(frame)
        snap = None
    for t in wanted[k:-1]:
        while ends[-1] <= t:
            ends.pop()
            open_.pop()
        out[t] = open_[1:]
    return out


def _read_frames(xline: Any, frames: dict[int, Frame], base: int, line: Line) -> None:
    """Keep a line's Python frames as arrays (for :func:`.pystack.stacks`)."""
    f_start, f_end, f_frame = line.f_start.append, line.f_end.append, line.f_frame.append
    frame_of = frames.get
    last = -1 << 62
    for ev in xline.events:
        frame = frame_of(ev.metadata_id)
        if frame is not None:
            start = base + ev.offset_ps
            if start < last:
                line.f_sorted = False
            last = start
            f_start(start)
            f_end(start + ev.duration_ps)
            f_frame(frame)
