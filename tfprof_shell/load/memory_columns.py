"""The stats of a line's ``MemoryAllocation``/``MemoryDeallocation`` events, read as columns.

A TF2 profile recorded at host tracer level 2 or 3 holds an event per
allocation and free of 256 KiB or more, each with a dozen stats: read one
message and one stat at a time they cost most of such a profile's load. Here
the chosen events' bytes are joined and parsed at once
(``xplane_columns.EventValues``, see :mod:`.event_columns`): their offsets as
one column, and their stats as one column of ids with a boundary stat before
each event's. Events with the same stats in the same order (the usual case: all
allocations alike, all frees alike) form a group; each stat of a group is a
slice of that column, its values parsed again as columns from the stats' own
bytes (``EventStatsRaw``). A stat written with values of several kinds (TF
writes ``fragmentation`` as an integer 0 when it is zero, else as a double) is
read element by element from the kind of each value's field. Values are what
the loader's ``_Stats.value`` gives: references as the names they point to,
strings decoded, compressed bytes inflated.
"""

from __future__ import annotations

import zlib
from typing import Any, Iterator, Optional

from ..proto import xplane_columns_pb2
from .event_columns import _BOUNDARY, _BOUNDARY_ID

#: Stats of memory events a reader keeps (the rest are skipped unparsed).
MEMORY_STATS = frozenset((
    "allocator_name", "bytes_reserved", "bytes_allocated", "bytes_available",
    "fragmentation", "peak_bytes_in_use", "requested_bytes", "allocation_bytes", "addr",
    "tf_op", "region_type", "data_type", "shape", "tensor_shape", "index_on_host",
    "device_ordinal"))

# The tag byte of each value field of an XStat (field number << 3 | wire type).
_DOUBLE, _UINT64, _INT64, _STR, _BYTES, _REF = 0x11, 0x18, 0x20, 0x2A, 0x32, 0x38
_GZIP = b"\x1f\x8b"

#: (offsets ps, stat name -> values) of a group of events, with their positions.
Group = tuple[list[int], list[int], dict[str, list[Any]]]


def memory_columns(parts: list[bytes], names: dict[int, str], defaults: dict[str, Any]
                   ) -> Optional[list[Group]]:
    """The events given as their bytes (all of one event metadata, whose stats are
    ``defaults``; ``names``: the plane's stat names), as groups of (positions in
    ``parts``, offsets, stat name -> values); None unless every event wrote its
    offset and none is an aggregate."""
    n = len(parts)
    if not n:
        return []
    joined = _BOUNDARY + _BOUNDARY.join(parts)
    parsed = xplane_columns_pb2.EventValues.FromString(joined)
    offsets = parsed.offset_ps[:]
    if parsed.num_occurrences or len(offsets) != n:
        return None
    ids = parsed.stats.metadata_id[:]
    if ids.count(_BOUNDARY_ID) != n:
        return None
    each, left = divmod(len(ids), n)
    if not left and ids[::each].count(_BOUNDARY_ID) == n and all(
            ids[j::each].count(ids[j]) == n for j in range(1, each)):
        groups = [(list(range(n)), ids[:each])]
    else:
        groups = _by_layout(ids, n)
    raw = xplane_columns_pb2.EventStatsRaw.FromString(joined).stats
    if len(raw) != len(ids):
        return None
    starts = [i for i, sid in enumerate(ids) if sid == _BOUNDARY_ID] if len(groups) > 1 else []
    out: list[Group] = []
    for positions, layout in groups:
        if len(groups) == 1:
            group_raw = raw
        else:
            group_raw = [stat for p in positions
                         for stat in raw[starts[p]:starts[p] + len(layout)]]
        columns: dict[str, list[Any]] = {}
        width = len(layout)
        for j in range(1, width):
            name = names.get(layout[j])
            if name is None or name not in MEMORY_STATS:
                continue
            values = _slot(group_raw[j::width], layout[j], names)
            if values is None:
                return None
            columns[name] = values  # a later stat of the same name wins, as in _Stats
        for name, value in defaults.items():
            if name in MEMORY_STATS and name not in columns:
                columns[name] = [value] * len(positions)
        out.append((positions, [offsets[p] for p in positions], columns))
    return out


def _by_layout(ids: list[int], n: int) -> list[tuple[list[int], list[int]]]:
    """The events grouped by their stat ids (each list starting with the boundary)."""
    bounds = [i for i, sid in enumerate(ids) if sid == _BOUNDARY_ID] + [len(ids)]
    groups: dict[tuple[int, ...], list[int]] = {}
    for p in range(n):
        groups.setdefault(tuple(ids[bounds[p]:bounds[p + 1]]), []).append(p)
    return [(positions, list(layout)) for layout, positions in groups.items()]


def _varint_len(value: int) -> int:
    size = 1
    while value >= 0x80:
        value >>= 7
        size += 1
    return size


def _slot(raw_stats: list[bytes], stat_id: int, names: dict[int, str]
          ) -> Optional[list[Any]]:
    """The values of one stat of each event (its bytes), as ``_Stats.value`` gives them."""
    n = len(raw_stats)
    parsed = xplane_columns_pb2.StatValues.FromString(b"".join(raw_stats))
    kinds = {_DOUBLE: parsed.double_value, _UINT64: parsed.uint64_value,
             _INT64: parsed.int64_value, _STR: parsed.str_value, _BYTES: parsed.bytes_value,
             _REF: parsed.ref_value}
    sizes = {tag: len(column) for tag, column in kinds.items()}
    full = [tag for tag, size in sizes.items() if size == n]
    if len(full) == 1 and sum(sizes.values()) == n:
        return _values(full[0], kinds[full[0]][:], names)
    # several kinds (or values left out): each value's kind from its field's tag
    at = 0 if stat_id == 0 else 1 + _varint_len(stat_id)
    tags = [r[at] if len(r) > at else 0 for r in raw_stats]
    iters: dict[int, Iterator[Any]] = {}
    for tag, column in kinds.items():
        if column:
            iters[tag] = iter(_values(tag, column[:], names))
    if sum(sizes.values()) != n - tags.count(0):
        return None
    try:
        return [next(iters[tag]) if tag else None for tag in tags]
    except (KeyError, StopIteration):
        return None


def _values(tag: int, column: list[Any], names: dict[int, str]) -> list[Any]:
    if tag == _REF:
        get = names.get
        return [get(v, "") for v in column]
    if tag == _STR:
        return [v.decode("utf-8", "replace") for v in column]
    if tag == _BYTES:
        return [_inflated(v) for v in column]
    return column


def _inflated(raw: bytes) -> Any:
    if raw[:2] == _GZIP:
        try:
            raw = zlib.decompress(raw, 31)
        except zlib.error:
            return raw
    return raw.decode("utf-8", "replace")

