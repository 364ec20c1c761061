"""An XSpace read a part at a time: host lines parsed one by one, when read.

Parsing a whole XSpace makes a message per event of every line and holds
them all at once: several times the file's size, most of it host-thread
events the loader reads a few of. :func:`split_space` instead splits the
bytes at the wire level (:func:`.wire.field_spans`): each host plane is parsed
without its lines (name, metadata, stats) and each of its lines is a
:class:`LazyLine` over its own bytes, whose header is parsed on first use and
whose events are parsed only when asked for, as a message each
(:attr:`LazyLine.events`) or as their bytes for random access
(:meth:`LazyLine.event_bytes`). Other planes (devices, metadata) are parsed
whole, as the loader reads all of them.

The result stands in for an ``XSpace`` message where the loader reads one:
``planes`` (messages, or :class:`HostPlane`), ``hostnames``, ``errors``,
``warnings``.
"""

from __future__ import annotations

from itertools import chain
from typing import Any, Iterable, Optional

from google.protobuf.message import DecodeError

from ..proto import xplane_pb2, xplane_stacks_pb2
from .wire import LEN, field_spans, length_prefix

#: The host planes (their lines are host threads), read one line at a time.
HOST_PLANES = ("/host:CPU", "Host Threads")
_PLANES, _NAME, _LINES = 1, 2, 3
_EVENTS = 4  # XLine.events


class LazyLine:
    """One line of a host plane, over its bytes: the header fields of an
    ``XLine`` (parsed once, on first use), its events parsed when asked for."""

    __slots__ = ("raw", "_head")

    def __init__(self, raw: memoryview) -> None:
        self.raw = raw
        self._head: Optional[tuple[int, str, str, int, int]] = None

    def _header(self) -> tuple[int, str, str, int, int]:
        if self._head is None:
            # the fields alone: the message keeps the events' bytes (unknown to it)
            head = xplane_stacks_pb2.LineHead.FromString(self.raw)
            self._head = (head.id, head.name, head.display_name, head.timestamp_ns,
                          head.duration_ps)
        return self._head

    @property
    def id(self) -> int:
        return self._header()[0]

    @property
    def name(self) -> str:
        return self._header()[1]

    @property
    def display_name(self) -> str:
        return self._header()[2]

    @property
    def timestamp_ns(self) -> int:
        return self._header()[3]

    @property
    def duration_ps(self) -> int:
        return self._header()[4]

    @property
    def events(self) -> Any:
        """The line's events, a message each (parsed on every access: keep the result
        only as long as it is used)."""
        return xplane_pb2.XLine.FromString(self.raw).events

    def event_bytes(self) -> "EventsByIndex":
        """The line's events for random access, each parsed when indexed."""
        return EventsByIndex(xplane_stacks_pb2.LineSplit.FromString(self.raw).events)


class EventsByIndex:
    """A line's events as their bytes: ``len`` is the event count, indexing parses
    that event alone as an ``XEvent``."""

    __slots__ = ("_raw",)

    def __init__(self, raw: Any) -> None:
        self._raw = raw

    def __len__(self) -> int:
        return len(self._raw)

    def __getitem__(self, i: int) -> Any:
        return xplane_pb2.XEvent.FromString(self._raw[i])

    def raw(self) -> Any:
        """Each event's bytes (a repeated bytes field)."""
        return self._raw

    def many(self, indices: list[int]) -> Any:
        """The events at ``indices`` (in that order), parsed at once: their bytes
        joined, each framed as an event of an ``XLine``."""
        raw = self._raw
        parts = list(map(raw.__getitem__, indices))
        framed = b"".join(chain.from_iterable(zip(map(_EVENT_HEAD.__getitem__, map(len, parts)),
                                                  parts)))
        return xplane_pb2.XLine.FromString(framed).events


def events_at(events: Any, indices: list[int]) -> Iterable[Any]:
    """The events at ``indices`` of a line's events (a repeated message field or
    :class:`EventsByIndex`), as messages."""
    if isinstance(events, EventsByIndex):
        return events.many(indices)
    return map(events.__getitem__, indices)


class _EventHeads(dict):
    """Byte length -> the tag and length that open an XLine event of that length."""

    def __missing__(self, length: int) -> bytes:
        head = self[length] = length_prefix(_EVENTS, length)
        return head


_EVENT_HEAD = _EventHeads()


class HostPlane:
    """A host plane parsed without its lines (``head``, an ``XPlane``) and its
    lines as :class:`LazyLine`."""

    def __init__(self, head: Any, lines: list[LazyLine]) -> None:
        self.head = head
        self.lines = lines
        self.id, self.name = head.id, head.name
        self.event_metadata = head.event_metadata
        self.stat_metadata = head.stat_metadata
        self.stats = head.stats


class SplitSpace:
    """An XSpace's planes (messages, or :class:`HostPlane`) and its other fields."""

    def __init__(self, head: Any, planes: list[Any]) -> None:
        self.planes = planes
        self.hostnames = head.hostnames
        self.errors = head.errors
        self.warnings = head.warnings


def split_space(data: bytes) -> Optional[SplitSpace]:
    """``data`` (an XSpace's bytes) split as above; None if it does not split or
    a part does not parse (a full parse then says what is wrong)."""
    top = field_spans(data, 1 << 20)
    if top is None:
        return None
    try:
        head = xplane_pb2.XSpace.FromString(
            b"".join(whole for number, wire, _, whole in top if number != _PLANES))
        planes = []
        for number, wire, value, _ in top:
            if number != _PLANES:
                continue
            if wire != LEN:
                return None
            plane = _plane(value)
            if plane is None:
                return None
            planes.append(plane)
    except (DecodeError, RuntimeError):  # protobuf raises either by backend
        return None
    return SplitSpace(head, planes)


def _plane(raw: memoryview) -> Any:
    """A plane: a HostPlane for a host plane, else the parsed XPlane (None if its
    bytes do not split or its name is not UTF-8)."""
    fields = field_spans(raw, 1 << 30)
    if fields is None:
        return None
    named = [value for number, wire, value, _ in fields if number == _NAME and wire == LEN]
    try:
        name = bytes(named[-1]).decode("utf-8") if named else ""
    except UnicodeDecodeError:
        return None
    if name not in HOST_PLANES:
        return xplane_pb2.XPlane.FromString(raw)
    head = xplane_pb2.XPlane.FromString(
        b"".join(whole for number, _, _, whole in fields if number != _LINES))
    lines = []
    for number, wire, value, _ in fields:
        if number == _LINES:
            if wire != LEN:
                return None
            lines.append(LazyLine(value))
    return HostPlane(head, lines)
