"""A Chrome-trace JSON document -> its events, holding only the fields the loaders read.

:func:`parse_trace_events` decodes the document straight into small typed
records (:class:`TraceEvent`, :class:`EventArgs`) with msgspec: the fields
no loader reads (``Call stack``, flow ids, ...) are skipped while parsing,
never built, which makes a large PyTorch trace parse about twice as fast as
into dicts, in a fraction of the memory. A document the typed decoder refuses
(a field of an unexpected kind, ``NaN`` literals, a byte-order mark, ...) is
parsed by :func:`.json_doc.parse_json` and its events converted one by one,
so every file reads as before; every value keeps the type the JSON gave it
(``ts`` may be an int, a float or a string).

Fields only some traces carry come in groups (:data:`ARG_GROUPS`), read only
for a trace that calls for them: each field costs every unknown key of every
event's args a comparison while decoding (about 5 % of a large trace's parse
per field), so a trace without them must not pay for them. A group is called
for by a header key (found before decoding: Kineto writes the header before
the events; one written after them has the document decoded again), or by an
event the loader finds in the first decode (:func:`groups_called`), in which
case the document is decoded again into just that group's fields and the
events carrying them get them by position (:func:`add_arg_groups`: what one
decode with the group gives, for about a third of a decode's time and nothing
sorted again). Where a group was not read its fields answer None on every
event, as for an event that lacks them.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import compress, count, repeat
from operator import ne
from typing import Any, Iterable, NamedTuple, Optional, Union

import msgspec
from msgspec.structs import asdict, astuple

from .json_doc import parse_json

#: An args field the event does not have (EventArgs.name and .op only).
UNSET: Any = msgspec.UNSET


class EventArgs(msgspec.Struct, gc=False):
    """The ``args`` of an event: PyTorch's ids, device and bytes; TF's node name and op.

    Defaults are what the loaders take for a missing field (``device`` None, so
    the loader can take the lane's pid); ``name`` and ``op`` are :data:`UNSET`
    when missing (a TF timeline event is told by having both). The fields of
    :data:`ARG_GROUPS` are None here and on the types of groups not read.
    """

    external_id: Any = msgspec.field(name="External id", default=None)
    correlation: Any = None
    device: Any = None
    stream: Any = ""
    bytes: Any = None
    name: Any = UNSET
    op: Any = UNSET


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


class ArgGroup(NamedTuple):
    """Fields only some traces carry, and what in a trace calls for them.

    ``keys`` are (JSON key, attribute) of args fields, ``event_keys`` of event
    fields. The group is read for a trace whose header has the key ``header``, or
    that has an event with a phase in ``phases`` and (where given) a category in
    ``cats`` or a name in ``names``.
    """

    keys: tuple[tuple[str, str], ...]
    event_keys: tuple[tuple[str, str], ...] = ()
    header: str = ""
    phases: frozenset[str] = frozenset()
    cats: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()


#: The group names (see ARG_GROUPS).
COLLECTIVES, MEMORY, SYNC_WAITS, FIRST_KINETO, TENSORS = (
    "collectives", "memory", "sync_waits", "first_kineto", "tensors")

#: The fields only some traces carry, by group (see :class:`ArgGroup`).
ARG_GROUPS: dict[str, ArgGroup] = {
    # A distributed job's collectives (record_param_comms and NCCL kernels), and each
    # op's Input Dims (the sizes of gloo's c10d::* calls): read by .collective_calls,
    # only for a trace whose header names the job.
    COLLECTIVES: ArgGroup(
        (("Collective name", "collective"), ("Process Group Name", "group_name"),
         ("Process Group Description", "group_desc"), ("Process Group Ranks", "group_ranks"),
         ("Group size", "group_size"), ("In msg nelems", "in_nelems"),
         ("Out msg nelems", "out_nelems"), ("dtype", "dtype"), ("Seq", "seq"),
         ("Input Dims", "input_dims")),
        header="distributedInfo"),
    # A [memory] event's block, its size (+ allocated, - freed), the allocator's counters
    # after it, and its device (type 0 CPU, 1 CUDA): .memory_torch. Newer PyTorch names
    # profile_memory in the header; older traces are told by the events.
    MEMORY: ArgGroup(
        (("Total Reserved", "total_reserved"), ("Total Allocated", "total_allocated"),
         ("Bytes", "nbytes"), ("Device Id", "device_id"), ("Device Type", "device_type"),
         ("Addr", "addr")),
        header="profile_memory", phases=frozenset(("i",)), names=frozenset(("[memory]",))),
    # A cuda_sync event's stream waited on, and its cudaEventRecord's correlation:
    # .torch_intervals (steps) and .torch_path (critpath).
    SYNC_WAITS: ArgGroup(
        (("wait_on_stream", "wait_on_stream"),
         ("wait_on_cuda_event_record_corr_id", "wait_on_cuda_event_record_corr_id")),
        phases=frozenset(("X",)), cats=frozenset(("cuda_sync",))),
    # The first Kineto traces' lower-case external id (device and runtime events, told
    # by that generation's capitalised categories): .torch_trace.
    FIRST_KINETO: ArgGroup(
        (("external id", "external_id_lower"),),
        phases=frozenset(("X",)), cats=frozenset(("Kernel", "Memcpy", "Memset", "Runtime",
                                                  "Driver"))),
    # A TF timeline's tensor objects (show_memory): their id and snapshot (.memory_tf1).
    TENSORS: ArgGroup(
        (("snapshot", "snapshot"),), event_keys=(("id", "id"),),
        phases=frozenset(("N", "O", "D")), cats=frozenset(("Tensor",))),
}


def _none_where_not_read() -> None:
    """Every group's fields answer None on the base types (so on every type a group was
    not read into): readers need not ask which groups a trace was read with."""
    for group in ARG_GROUPS.values():
        for _, attr in group.keys:
            setattr(EventArgs, attr, None)
        for _, attr in group.event_keys:
            setattr(TraceEvent, attr, None)


_none_where_not_read()


class _HeaderFields(msgspec.Struct, gc=False):
    """The header fields decoded with the events (UNSET: absent)."""

    distributed: Any = msgspec.field(name="distributedInfo", default=UNSET)
    base_ns: Any = msgspec.field(name="baseTimeNanoseconds", default=UNSET)
    host: Any = msgspec.field(name="host_name", default=UNSET)
    profile_memory: Any = msgspec.field(name="profile_memory", default=UNSET)


#: A header key -> its attribute of _HeaderFields.
_HEADER_ATTR = dict(zip(_HeaderFields.__struct_encode_fields__, _HeaderFields.__struct_fields__))
assert all(g.header in _HEADER_ATTR for g in ARG_GROUPS.values() if g.header)


class TraceHeader(msgspec.Struct, gc=False):
    """The header fields of a PyTorch trace the collectives read (None: absent), the
    argument groups its events were read with, and whether they were decoded as typed
    events (else through the standard library's parse)."""

    distributed: Any = None
    base_ns: Any = None
    host: Any = None
    groups: frozenset[str] = frozenset()
    typed: bool = True


class _Document(_HeaderFields, gc=False):
    traceEvents: Optional[list[TraceEvent]] = None  # noqa: N815 - the JSON key


_BASE_ARG_KEYS = tuple(zip(EventArgs.__struct_encode_fields__, EventArgs.__struct_fields__))
_BASE_EVENT_KEYS = tuple(k for k in TraceEvent.__struct_fields__ if k != "args")
#: Kineto writes the header before the events: look this far for its keys.
_HEADER_SCAN = 1 << 16
#: What the typed decoder raises for a document it does not read as typed events.
_REFUSED = (msgspec.DecodeError, ValueError, RecursionError)
#: The prefixes of the types of a set of groups, as pickle finds them (see __getattr__).
_TYPE_PREFIXES = ("EventArgs__", "TraceEvent__", "_Document__")


@lru_cache(maxsize=None)
def event_types(groups: frozenset[str]) -> tuple[type[EventArgs], type[TraceEvent], type]:
    """The args, event and document types that also read the fields of ``groups``
    (made once per set: subclasses of EventArgs and TraceEvent)."""
    if not groups:
        return EventArgs, TraceEvent, _Document
    names = sorted(groups)
    suffix = "__".join(names)
    found = [ARG_GROUPS[n] for n in names]

    def fields(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, Any, Any]]:
        return [(attr, Any, msgspec.field(name=key, default=None)) for key, attr in pairs]

    args = msgspec.defstruct(_TYPE_PREFIXES[0] + suffix,
                             fields(k for g in found for k in g.keys),
                             bases=(EventArgs,), module=__name__, gc=False)
    event = msgspec.defstruct(_TYPE_PREFIXES[1] + suffix,
                              [("args", Optional[args], None)]  # type: ignore[valid-type]
                              + fields(k for g in found for k in g.event_keys),
                              bases=(TraceEvent,), module=__name__, gc=False)
    doc = msgspec.defstruct(_TYPE_PREFIXES[2] + suffix,
                            [("traceEvents", Optional[list[event]], None)],  # type: ignore
                            bases=(_HeaderFields,), module=__name__, gc=False)
    return args, event, doc


@lru_cache(maxsize=None)
def _decoder(groups: frozenset[str]) -> Any:
    _, event, doc = event_types(groups)
    return msgspec.json.Decoder(Union[doc, list[event]]).decode  # type: ignore[valid-type]


def __getattr__(name: str) -> Any:
    """The types of a set of groups by name (``EventArgs__memory__sync_waits``): how
    pickle finds them in another process."""
    for i, prefix in enumerate(_TYPE_PREFIXES):
        if name.startswith(prefix):
            groups = frozenset(name[len(prefix):].split("__"))
            if groups <= ARG_GROUPS.keys():
                return event_types(groups)[i]
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def groups_called(events: Iterable[TraceEvent]) -> frozenset[str]:
    """The groups any of ``events`` calls for (a loader passes the first event of each
    kind it sorted out: a trace is of one generation, each kind is kept apart)."""
    out = set()
    for ev in events:
        ph, cat, name = ev.ph, ev.cat, ev.name
        for group_name, g in ARG_GROUPS.items():
            if ph.__class__ is str and ph in g.phases and (
                    not (g.cats or g.names)
                    or cat.__class__ is str and cat in g.cats
                    or name.__class__ is str and name in g.names):
                out.add(group_name)
    return frozenset(out)


def _header_groups(data: bytes) -> frozenset[str]:
    """The groups the keys of a document's header before its events call for."""
    start = data[:16].lstrip()
    if not start.startswith(b"{"):
        return frozenset()  # a bare list of events has no header
    head = data.find(b'"traceEvents"', 0, _HEADER_SCAN)
    end = head if head >= 0 else _HEADER_SCAN
    return frozenset(name for name, g in ARG_GROUPS.items()
                     if g.header and data.find(b'"%s"' % g.header.encode(), 0, end) >= 0)


def _present_groups(present: Iterable[str]) -> frozenset[str]:
    """The groups called for by the header keys ``present``."""
    keys = set(present)
    return frozenset(name for name, g in ARG_GROUPS.items() if g.header and g.header in keys)


def _events_of(events: list[Any], groups: frozenset[str]) -> list[TraceEvent]:
    """The TraceEvents (of the types of ``groups``) of the event dicts among ``events``
    (args that are not an object count as none)."""
    args_type, event_type, _ = event_types(groups)
    found = [ARG_GROUPS[n] for n in sorted(groups)]
    keys = _BASE_EVENT_KEYS + tuple(a for g in found for _, a in g.event_keys)
    arg_keys = _BASE_ARG_KEYS + tuple(k for g in found for k in g.keys)
    out = []
    for ev in events:
        if not isinstance(ev, dict):
            continue
        made = event_type(**{k: ev[k] for k in keys if k in ev})
        args = ev.get("args")
        if isinstance(args, dict):
            made.args = args_type(**{attr: args[k] for k, attr in arg_keys if k in args})
        out.append(made)
    return out


def parse_trace_events(data: bytes, groups: Iterable[str] = ()) -> Optional[list[TraceEvent]]:
    """The events of the Chrome-trace document ``data`` (its ``traceEvents``, or the
    document itself when it is a list), skipping entries that are not objects;
    None when the document holds no event list. Their args also read the fields of
    ``groups`` and of the groups the header calls for (see :data:`ARG_GROUPS`).

    Raises ValueError or RecursionError (as ``json.loads`` does) when ``data``
    is not JSON.
    """
    return parse_trace_document(data, groups)[0]


def parse_trace_document(data: bytes, groups: Iterable[str] = ()
                         ) -> tuple[Optional[list[TraceEvent]], TraceHeader]:
    """:func:`parse_trace_events`, and the document's header (empty for a bare list),
    which says what groups were read; ``data`` may be any buffer (a mapped file)."""
    wanted = frozenset(groups) | _header_groups(data)
    try:
        doc = _decoder(wanted)(data)
    except _REFUSED:
        pass
    else:
        if isinstance(doc, list):
            return doc, TraceHeader(groups=wanted)
        more = _present_groups(k for k, attr in _HEADER_ATTR.items()
                               if getattr(doc, attr) is not UNSET) - wanted
        if more:  # a header written after the events
            return parse_trace_document(data, wanted | more)
        # a header of its own: the document would keep every event alive
        return doc.traceEvents, TraceHeader(*(None if v is UNSET else v for v in (
            doc.distributed, doc.base_ns, doc.host)), groups=wanted)
    generic = parse_json(data if isinstance(data, (bytes, str)) else bytes(data))
    header = TraceHeader(groups=wanted, typed=False)
    if isinstance(generic, dict):
        wanted |= _present_groups(generic)
        header = TraceHeader(generic.get("distributedInfo"), generic.get("baseTimeNanoseconds"),
                             generic.get("host_name"), wanted, typed=False)
    events = generic.get("traceEvents") if isinstance(generic, dict) else generic
    if not isinstance(events, list):
        return None, header
    return _events_of(events, wanted), header


@lru_cache(maxsize=None)
def _group_types(groups: frozenset[str]) -> tuple[Any, Any, Any]:
    """A decoder of a document's events holding just the fields of ``groups`` (the args
    fields in args), the event it gives one holding none, and the names of the args and
    event fields, in the order of :func:`event_types`."""
    names = sorted(groups)
    found = [ARG_GROUPS[n] for n in names]
    suffix = "__".join(names)
    arg_keys = [k for g in found for k in g.keys]
    event_keys = [k for g in found for k in g.event_keys]

    def fields(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, Any, Any]]:
        return [(attr, Any, msgspec.field(name=key, default=None)) for key, attr in pairs]

    args = msgspec.defstruct("_GroupArgs__" + suffix, fields(arg_keys), gc=False)
    event = msgspec.defstruct(
        "_GroupEvent__" + suffix,
        [("args", Optional[args], msgspec.field(default_factory=args))]  # type: ignore
        + fields(event_keys), gc=False)
    doc = msgspec.defstruct("_GroupDocument__" + suffix,
                            [("traceEvents", Optional[list[event]], None)],  # type: ignore
                            gc=False)
    decode = msgspec.json.Decoder(Union[doc, list[event]]).decode  # type: ignore[valid-type]
    return decode, event(), ([a for _, a in arg_keys], [a for _, a in event_keys])


def add_arg_groups(data: bytes, events: list[TraceEvent], read: frozenset[str],
                   more: frozenset[str]) -> Optional[int]:
    """Give ``events``, the typed decode of ``data`` with the groups ``read``
    (:func:`parse_trace_document`), the fields of the groups ``more`` too, as one decode
    with both would: ``data`` is decoded again into just those fields and each event
    carrying any gets them by its position, in place (its args of the types of both
    groups; where a group has fields of the event, the event itself, replaced in the
    list). The number of events replaced; None where ``data`` does not decode so (the
    caller decodes it again with both)."""
    decode, empty, (arg_attrs, event_attrs) = _group_types(more)
    try:
        doc = decode(data)
    except _REFUSED:
        return None
    found = doc if isinstance(doc, list) else doc.traceEvents
    if found is None or len(found) != len(events):
        return None
    args_type, event_type, _ = event_types(read | more)
    # args of the base type take the group's fields after theirs, in order
    in_order = not read
    replaced = 0
    for i in compress(count(), map(ne, found, repeat(empty))):
        patch, ev = found[i], events[i]
        args, patch_args = ev.args, patch.args
        if patch_args is not None and args is not None:
            if in_order:
                args = args_type(*astuple(args), *astuple(patch_args))
            else:
                values = asdict(args)
                values.update(zip(arg_attrs, astuple(patch_args)))
                args = args_type(**values)
        extra = [getattr(patch, attr) for attr in event_attrs]
        if any(v is not None for v in extra):
            values = asdict(ev)
            values.update(zip(event_attrs, extra), args=args)
            events[i] = event_type(**values)
            replaced += 1
        elif args is not ev.args:
            ev.args = args
    return replaced
