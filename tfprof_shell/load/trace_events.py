"""A Chrome-trace JSON document -> its events, holding only the fields the loaders read.

:func:`parse_trace_events` decodes the document straight into small typed
records (:class:`TraceEvent`, :class:`EventArgs`) with msgspec: the fields
no loader reads (``Input Dims``, ``Call stack``, flow ids, ...) are skipped
while parsing, never built, which makes a large PyTorch trace parse about
twice as fast as into dicts, in a fraction of the memory. A document the
typed decoder refuses (a field of an unexpected kind, ``NaN`` literals, a
byte-order mark, ...) is parsed by :func:`.json_doc.parse_json` and its
events converted one by one, so every file reads as before; every value
keeps the type the JSON gave it (``ts`` may be an int, a float or a string).
"""

from __future__ import annotations

from typing import Any, Optional, Union

import msgspec

from .json_doc import parse_json

#: An args field the event does not have (EventArgs.name and .op only).
UNSET: Any = msgspec.UNSET


class EventArgs(msgspec.Struct, gc=False):
    """The ``args`` of an event: PyTorch's ids, device and bytes; TF's node name and op.

    Defaults are what the loaders take for a missing field; ``name`` and ``op``
    are :data:`UNSET` when missing (a TF timeline event is told by having both).
    Each field costs every unknown argument key of every event a comparison while
    parsing, so the fields only some traces have live in :class:`KinetoArgs`,
    read on request (``parse_trace_events(kineto=True)``); here they are None.
    """

    external_id: Any = msgspec.field(name="External id", default=None)
    correlation: Any = None
    device: Any = None
    stream: Any = ""
    bytes: Any = None
    name: Any = UNSET
    op: Any = UNSET

    @property
    def external_id_lower(self) -> Any:
        """The first Kineto traces' lower-case ``external id`` (see KinetoArgs)."""
        return None

    @property
    def wait_on_stream(self) -> Any:
        """A ``cuda_sync`` event's ``wait_on_stream`` (see KinetoArgs)."""
        return None

    @property
    def wait_on_event_record(self) -> Any:
        """A ``cuda_sync`` event's ``wait_on_cuda_event_record_corr_id`` (see KinetoArgs)."""
        return None


class KinetoArgs(EventArgs, gc=False):
    """EventArgs with what older and sync-recording PyTorch traces add: the first
    Kineto traces' lower-case ``external id`` (device and runtime events), and a
    ``cuda_sync`` event's wait (the stream that recorded the CUDA event waited on,
    the correlation id of the call that recorded it)."""

    external_id_lower: Any = msgspec.field(name="external id", default=None)
    wait_on_stream: Any = None
    wait_on_event_record: Any = msgspec.field(name="wait_on_cuda_event_record_corr_id",
                                              default=None)


class TraceEvent(msgspec.Struct, gc=False):
    """One event of ``traceEvents``; ``args`` is None when the event has none."""

    ph: Any = None
    cat: Any = None
    name: Any = ""
    pid: Any = None
    tid: Any = None
    ts: Any = 0
    dur: Any = 0
    args: Optional[EventArgs] = None


#: The args of an event without any (read-only by convention).
NO_ARGS = EventArgs()


class _KinetoEvent(TraceEvent, gc=False):
    args: Optional[KinetoArgs] = None


class _Document(msgspec.Struct, gc=False):
    traceEvents: Optional[list[TraceEvent]] = None  # noqa: N815 - the JSON key


class _KinetoDocument(msgspec.Struct, gc=False):
    traceEvents: Optional[list[_KinetoEvent]] = None  # noqa: N815 - the JSON key


_ARG_KEYS = (("External id", "external_id"), ("external id", "external_id_lower"),
             ("correlation", "correlation"), ("device", "device"), ("stream", "stream"),
             ("bytes", "bytes"), ("name", "name"), ("op", "op"),
             ("wait_on_stream", "wait_on_stream"),
             ("wait_on_cuda_event_record_corr_id", "wait_on_event_record"))
_KINETO_ONLY = ("external id", "wait_on_stream", "wait_on_cuda_event_record_corr_id")
_EVENT_KEYS = ("ph", "cat", "name", "pid", "tid", "ts", "dur")

_decode = msgspec.json.Decoder(Union[_Document, list[TraceEvent]]).decode
_decode_kineto = msgspec.json.Decoder(Union[_KinetoDocument, list[_KinetoEvent]]).decode
#: What the typed decoder raises for a document it does not read as typed events.
_REFUSED = (msgspec.DecodeError, ValueError, RecursionError)


def _event_of(ev: dict[str, Any], kineto: bool) -> TraceEvent:
    """The TraceEvent of one event dict (args that are not an object count as none)."""
    out = (_KinetoEvent if kineto else TraceEvent)(**{k: ev[k] for k in _EVENT_KEYS if k in ev})
    args = ev.get("args")
    if isinstance(args, dict):
        kind = KinetoArgs if kineto else EventArgs
        out.args = kind(**{attr: args[k] for k, attr in _ARG_KEYS
                           if k in args and (kineto or k not in _KINETO_ONLY)})
    return out


def parse_trace_events(data: bytes, kineto: bool = False) -> Optional[list[TraceEvent]]:
    """The events of the Chrome-trace document ``data`` (its ``traceEvents``, or the
    document itself when it is a list), skipping entries that are not objects;
    None when the document holds no event list. With ``kineto`` their args are
    :class:`KinetoArgs` (what older and sync-recording traces add is read too).

    Raises ValueError or RecursionError (as ``json.loads`` does) when ``data``
    is not JSON.
    """
    try:
        doc = (_decode_kineto if kineto else _decode)(data)
    except _REFUSED:
        pass
    else:
        return doc.traceEvents if isinstance(doc, (_Document, _KinetoDocument)) else doc
    generic = parse_json(data)
    events = generic.get("traceEvents") if isinstance(generic, dict) else generic
    if not isinstance(events, list):
        return None
    return [_event_of(e, kineto) for e in events if isinstance(e, dict)]
