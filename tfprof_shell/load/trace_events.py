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

A distributed job's trace (its header has ``distributedInfo``) is decoded
with :class:`DistEventArgs`, which also keeps each op's ``Input Dims`` (the
sizes of gloo's ``c10d::*`` calls); other traces never build them.
:func:`parse_trace_document` also returns the header fields the collectives
read (:class:`TraceHeader`).
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
    """

    external_id: Any = msgspec.field(name="External id", default=None)
    correlation: Any = None
    device: Any = 0
    stream: Any = ""
    bytes: Any = None
    name: Any = UNSET
    op: Any = UNSET
    #: A cuda_sync event's stream waited on, and its cudaEventRecord's correlation.
    wait_on_stream: Any = None
    wait_on_cuda_event_record_corr_id: Any = None
    # A collective's args (record_param_comms and NCCL kernels; absent elsewhere).
    collective: Any = msgspec.field(name="Collective name", default=None)
    group_name: Any = msgspec.field(name="Process Group Name", default=None)
    group_desc: Any = msgspec.field(name="Process Group Description", default=None)
    group_ranks: Any = msgspec.field(name="Process Group Ranks", default=None)
    group_size: Any = msgspec.field(name="Group size", default=None)
    in_nelems: Any = msgspec.field(name="In msg nelems", default=None)
    out_nelems: Any = msgspec.field(name="Out msg nelems", default=None)
    dtype: Any = None
    seq: Any = msgspec.field(name="Seq", default=None)
    #: A PyTorch ``[memory]`` event's block, its size (+ allocated, - freed), the
    #: allocator's counters after it, and its device (type 0 CPU, 1 CUDA).
    addr: Any = msgspec.field(name="Addr", default=None)
    nbytes: Any = msgspec.field(name="Bytes", default=None)
    total_allocated: Any = msgspec.field(name="Total Allocated", default=None)
    total_reserved: Any = msgspec.field(name="Total Reserved", default=None)
    device_type: Any = msgspec.field(name="Device Type", default=None)
    device_id: Any = msgspec.field(name="Device Id", default=None)
    #: A TF timeline's tensor object snapshot (``show_memory``): its description.
    snapshot: Any = None


class DistEventArgs(EventArgs, gc=False):
    """EventArgs of a distributed job's trace: also each op's ``Input Dims``."""

    input_dims: Any = msgspec.field(name="Input Dims", default=None)


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
    #: An object event's id (a TF timeline's tensors).
    id: Any = None


#: The args of an event without any (read-only by convention).
NO_ARGS = EventArgs()


class DistTraceEvent(TraceEvent, gc=False):
    """A TraceEvent of a distributed job's trace (its args keep ``Input Dims``)."""

    args: Optional[DistEventArgs] = None


class TraceHeader(msgspec.Struct, gc=False):
    """The header fields of a PyTorch trace the collectives read (None: absent)."""

    distributed: Any = msgspec.field(name="distributedInfo", default=None)
    base_ns: Any = msgspec.field(name="baseTimeNanoseconds", default=None)
    host: Any = msgspec.field(name="host_name", default=None)


class _Document(TraceHeader, gc=False):
    traceEvents: Optional[list[TraceEvent]] = None  # noqa: N815 - the JSON key


class _DistDocument(TraceHeader, gc=False):
    traceEvents: Optional[list[DistTraceEvent]] = None  # noqa: N815 - the JSON key


_ARG_KEYS = (("External id", "external_id"), ("correlation", "correlation"),
             ("device", "device"), ("stream", "stream"), ("bytes", "bytes"),
             ("name", "name"), ("op", "op"), ("wait_on_stream", "wait_on_stream"),
             ("wait_on_cuda_event_record_corr_id", "wait_on_cuda_event_record_corr_id"),
             ("Collective name", "collective"),
             ("Process Group Name", "group_name"),
             ("Process Group Description", "group_desc"),
             ("Process Group Ranks", "group_ranks"), ("Group size", "group_size"),
             ("In msg nelems", "in_nelems"), ("Out msg nelems", "out_nelems"),
             ("dtype", "dtype"), ("Seq", "seq"),
             ("Addr", "addr"), ("Bytes", "nbytes"),
             ("Total Allocated", "total_allocated"), ("Total Reserved", "total_reserved"),
             ("Device Type", "device_type"), ("Device Id", "device_id"),
             ("snapshot", "snapshot"),
             # last: only DistEventArgs has it (see _event_of)
             ("Input Dims", "input_dims"))
_EVENT_KEYS = ("ph", "cat", "name", "pid", "tid", "ts", "dur", "id")
_HEADER_KEYS = (("distributedInfo", "distributed"), ("baseTimeNanoseconds", "base_ns"),
                ("host_name", "host"))

_decode = msgspec.json.Decoder(Union[_Document, list[TraceEvent]]).decode
_decode_dist = msgspec.json.Decoder(Union[_DistDocument, list[DistTraceEvent]]).decode
#: Kineto writes the header before the events: look this far for distributedInfo.
_HEADER_SCAN = 1 << 16
#: What the typed decoder raises for a document it does not read as typed events.
_REFUSED = (msgspec.DecodeError, ValueError, RecursionError)


def _event_of(ev: dict[str, Any], dist: bool) -> TraceEvent:
    """The TraceEvent (DistTraceEvent if ``dist``) of one event dict (args that are not
    an object count as none)."""
    out = (DistTraceEvent if dist else TraceEvent)(**{k: ev[k] for k in _EVENT_KEYS if k in ev})
    args = ev.get("args")
    if isinstance(args, dict):
        keys = _ARG_KEYS if dist else _ARG_KEYS[:-1]
        out.args = (DistEventArgs if dist else EventArgs)(
            **{attr: args[k] for k, attr in keys if k in args})
    return out


def _distributed(data: bytes) -> bool:
    """Whether the header before the events names a distributed job."""
    head = data.find(b'"traceEvents"', 0, _HEADER_SCAN)
    return data.find(b'"distributedInfo"', 0, head if head >= 0 else _HEADER_SCAN) >= 0


def parse_trace_events(data: bytes) -> Optional[list[TraceEvent]]:
    """The events of the Chrome-trace document ``data`` (its ``traceEvents``, or the
    document itself when it is a list), skipping entries that are not objects;
    None when the document holds no event list.

    Raises ValueError or RecursionError (as ``json.loads`` does) when ``data``
    is not JSON.
    """
    return parse_trace_document(data)[0]


def parse_trace_document(data: bytes) -> tuple[Optional[list[TraceEvent]], TraceHeader]:
    """:func:`parse_trace_events`, and the document's header (empty for a bare list)."""
    try:
        doc = (_decode_dist if _distributed(data) else _decode)(data)
    except _REFUSED:
        pass
    else:
        if isinstance(doc, (_Document, _DistDocument)):
            # a header of its own: the document would keep every event alive
            return doc.traceEvents, TraceHeader(doc.distributed, doc.base_ns, doc.host)
        return doc, TraceHeader()
    generic = parse_json(data)
    header = TraceHeader()
    if isinstance(generic, dict):
        header = TraceHeader(**{attr: generic[k] for k, attr in _HEADER_KEYS if k in generic})
    events = generic.get("traceEvents") if isinstance(generic, dict) else generic
    if not isinstance(events, list):
        return None, header
    dist = _distributed(data)
    return [_event_of(e, dist) for e in events if isinstance(e, dict)], header
