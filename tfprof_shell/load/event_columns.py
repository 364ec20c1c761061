"""Fields of chosen events of a line read as columns, from their bytes joined.

A line's events, split into their bytes (``xplane_stacks.LineSplit``), can
be joined again and parsed at once with ``xplane_columns.EventValues``: every
field of the chosen events merges into one repeated field, with no message
per event. The stats of all of them merge into one column too; a boundary
stat put before each event's bytes shows where each event's stats begin, so
where every event has the same stats in the same order, each stat's values
are a slice of that column (:func:`id_columns`, :func:`eager_values`).
Columns are aligned with the events only if every event wrote the field
(proto3 leaves zeros out): each reader checks the lengths and returns None
when it cannot answer exactly, for the caller to read those events one
message each.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from ..proto import xplane_columns_pb2

#: A stat put before each event's bytes to find the events' boundaries in the
#: merged stat column: metadata id -1, which no writer uses (ids count from 0).
_BOUNDARY_ID = -1
_BOUNDARY = b"\x22\x0b\x08" + b"\xff" * 9 + b"\x01"


def stats_per_event(events: list[bytes]) -> list[Optional[list[int]]]:
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


def id_columns(raw_events: Any, indices: list[int], id_stats: set[int], wanted: set[int]
               ) -> Optional[tuple[list[int], list[int], list[int], list[int]]]:
    """(indices, offsets, durations, id values) of the events at ``indices``, read
    from their bytes joined (one parse, no message per event), or None unless
    every event wrote an offset and a duration and has the same number of stats,
    exactly one of them wanted (always at the same place) and an id, every stat
    valued int64 (or every one uint64). Then each event is what
    :meth:`.xspace.Host._read_marks_at` would read one message at a time: one wanted
    stat, an executor id of value ``int64_value or uint64_value``.

    The stats of the joined events merge into one column; a boundary stat put
    before each event shows where each event's stats begin.
    """
    n = len(indices)
    joined = _BOUNDARY + _BOUNDARY.join(map(raw_events.__getitem__, indices))
    parsed = xplane_columns_pb2.EventValues.FromString(joined)
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
        found = _slot_values(joined, n, slot, each)
        if found is None:
            return None
        values = found
    return indices, offsets, durations, values


def _slot_values(joined: bytes, n: int, slot: int, each: int
                 ) -> Optional[list[int]]:
    """The values of stat ``slot`` of each of ``n`` events (``joined``: their bytes,
    each after a boundary stat, as :func:`id_columns` joins them), when their
    other stats hold values of other kinds: every event's stats kept as bytes
    (one parse), that slot's picked out and parsed again as columns. None
    unless the slot's values are all int64 (or all uint64)."""
    raw = xplane_columns_pb2.EventStatsRaw.FromString(joined).stats
    if len(raw) != n * each:
        return None
    parsed = xplane_columns_pb2.StatValues.FromString(b"".join(raw[slot::each]))
    if len(parsed.metadata_id) != n:
        return None
    kinds = (parsed.int64_value, parsed.uint64_value, parsed.double_value, parsed.str_value,
             parsed.bytes_value, parsed.ref_value)
    sizes = [len(k) for k in kinds]
    if sizes[0] == n and not any(sizes[1:]):
        return parsed.int64_value[:]
    if sizes[1] == n and not any(sizes[2:]) and not sizes[0]:
        return parsed.uint64_value[:]
    return None


def event_times(parts: list[bytes]) -> Optional[tuple[list[int], list[int]]]:
    """(offsets, durations) of events given as their bytes, in one parse; None
    unless every one wrote both (proto3 leaves zeros out) and none is an
    aggregate (``num_occurrences``)."""
    parsed = xplane_columns_pb2.EventValues.FromString(b"".join(parts))
    n = len(parts)
    if parsed.num_occurrences or len(parsed.offset_ps) != n or len(parsed.duration_ps) != n:
        return None
    return parsed.offset_ps[:], parsed.duration_ps[:]


def eager_values(parts: list[bytes], md_ids: list[int], eager_stats: dict[int, str],
                 defaults: Callable[[int], dict[str, Any]], names: dict[int, str]
                 ) -> Optional[tuple[list[Any], list[Any]]]:
    """The ``eager_op`` and ``is_func`` values of EagerExecute events given as
    their bytes (of metadata ``md_ids``; ``eager_stats``: the ids of those two
    stats), as the loader's ``_Stats.pick`` gives them: the event's last stat
    of each name, else its metadata's (``defaults(md_id)``), stat values as
    ``_Stats.value`` (``names``: stat names, for references). None unless
    every event has the same stats in the same order and each of the two is
    of one value kind throughout. The stats of the joined events merge into
    one column; a boundary stat put before each event's shows where they begin.
    """
    n = len(parts)
    joined = _BOUNDARY + _BOUNDARY.join(parts)
    ids = xplane_columns_pb2.EventValues.FromString(joined).stats.metadata_id[:]
    each, rem = divmod(len(ids), n)
    if rem or ids.count(_BOUNDARY_ID) != n or ids[::each].count(_BOUNDARY_ID) != n:
        return None
    slots: dict[str, int] = {}
    for j in range(1, each):
        at_j = set(ids[j::each])
        if len(at_j) != 1:
            return None
        name = eager_stats.get(at_j.pop())
        if name is not None:
            slots[name] = j  # the last one wins
    raw = xplane_columns_pb2.EventStatsRaw.FromString(joined).stats if slots else []
    if slots and len(raw) != n * each:
        return None
    out = []
    for name in ("eager_op", "is_func"):
        j = slots.get(name)
        if j is None:  # from the metadata of each event
            out.append([defaults(md).get(name) for md in md_ids])
            continue
        column = _stat_values(raw[j::each], names)
        if column is None:
            return None
        out.append(column)
    return out[0], out[1]


def _stat_values(raw_stats: list[bytes], names: dict[int, str]) -> Optional[list[Any]]:
    """The values of stats given as their bytes, as the loader's ``_Stats.value``
    gives them (``names``: stat names, for references),
    if all are of one kind (not bytes, which may be compressed), else None."""
    n = len(raw_stats)
    parsed = xplane_columns_pb2.StatValues.FromString(b"".join(raw_stats))
    kinds = {"double": parsed.double_value, "uint64": parsed.uint64_value,
             "int64": parsed.int64_value, "str": parsed.str_value,
             "bytes": parsed.bytes_value, "ref": parsed.ref_value}
    sizes = {kind: len(column) for kind, column in kinds.items()}
    full = [kind for kind, size in sizes.items() if size == n]
    if len(full) != 1 or sum(sizes.values()) != n or full[0] == "bytes":
        return None
    column = kinds[full[0]][:]
    if full[0] == "str":
        try:
            return [value.decode("utf-8") for value in column]
        except UnicodeDecodeError:
            return None
    if full[0] == "ref":
        return [names.get(value, "") for value in column]
    return column
