"""A bounded walk over protobuf wire format, guided by a message descriptor.

The protobuf parser says only *that* bytes do not parse. To tell a user
*why* (the file is cut short, a name is not UTF-8, it is another message
type), :func:`scan` walks the raw fields against a descriptor and counts
what fits. It never allocates more than the input, stops after a fixed
number of fields, and nests at most :data:`MAX_DEPTH` messages deep.
:func:`length_prefix` writes the head of a length-delimited field, for
readers that join parts of a message's bytes to parse them at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

VARINT, I64, LEN, SGROUP, EGROUP, I32 = 0, 1, 2, 3, 4, 5

#: Nesting limit, as protobuf's own parser (100) but lower: a walk is a diagnosis.
MAX_DEPTH = 64
#: Fields visited before a scan gives up and calls the rest unseen.
DEFAULT_BUDGET = 200_000

# FieldDescriptor.type -> the wire type it is written with.
_WIRE_OF_TYPE = {1: I64, 2: I32, 3: VARINT, 4: VARINT, 5: VARINT, 6: I64, 7: I32,
                 8: VARINT, 9: LEN, 10: SGROUP, 11: LEN, 12: LEN, 13: VARINT,
                 14: VARINT, 15: I32, 16: I64, 17: VARINT, 18: VARINT}
_STRING, _MESSAGE = 9, 11


@dataclass
class Scan:
    """What a walk found: fields that fit the schema, and what did not."""

    known: int = 0
    unknown: int = 0
    #: A tag or length that no protobuf writer produces.
    corrupt: bool = False
    #: Offset of the field where the damage was found (when corrupt).
    corrupt_at: int = -1
    #: Offset of the first field that does not fit the schema.
    unknown_at: int = -1
    #: The data ends inside a field (a prefix of a longer message).
    truncated: bool = False
    #: The first string field that is not UTF-8: (message.field, raw bytes).
    bad_utf8: Optional[tuple[str, bytes]] = None
    #: Walk stopped early (budget spent); the rest was not looked at.
    partial: bool = False
    budget: int = DEFAULT_BUDGET

    @property
    def clean(self) -> bool:
        """Every field seen fits the schema and the data is complete."""
        return (self.known > 0 and not self.unknown and not self.corrupt
                and not self.truncated)


def scan(data: bytes, descriptor: Any, budget: int = DEFAULT_BUDGET) -> Scan:
    """Walk ``data`` as a message of ``descriptor``; never raises on bad data."""
    result = Scan(budget=budget)
    _walk(memoryview(data), 0, len(data), len(data), descriptor, 0, result)
    return result


def length_prefix(number: int, length: int) -> bytes:
    """The bytes that open field ``number``, length-delimited, of ``length`` bytes:
    its tag, then the length, each a varint."""
    head = bytearray()
    for value in (number << 3 | LEN, length):
        while value >= 0x80:
            head.append(value & 0x7F | 0x80)
            value >>= 7
        head.append(value)
    return bytes(head)


def _varint(buf: memoryview, pos: int, end: int) -> tuple[Optional[int], int]:
    value = shift = 0
    while pos < end:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            return -1, pos  # more than 10 bytes: no writer does this
    return None, pos


def _walk(buf: memoryview, pos: int, end: int, total: int, desc: Any, depth: int,
          out: Scan) -> None:
    """Walk fields in buf[pos:end]; ``end == total`` means the data may stop early."""
    at_end = end == total
    fields = desc.fields_by_number if desc is not None else {}
    while pos < end:
        if out.budget <= 0:
            out.partial = True
            return
        out.budget -= 1
        start = pos
        tag, pos = _varint(buf, pos, end)
        if tag is None:
            _cut(out, at_end, start)
            return
        number, wire = tag >> 3, tag & 7
        if tag < 0 or number == 0 or wire not in (VARINT, I64, LEN, I32):
            _damaged(out, start)  # groups are not used by any schema read here
            return
        field: Any = fields.get(number)
        expect = _WIRE_OF_TYPE.get(field.type) if field is not None else None
        fits = expect == wire or (wire == LEN and field is not None and field.is_repeated
                                  and expect in (VARINT, I64, I32))
        if wire == VARINT:
            value, pos = _varint(buf, pos, end)
            if value is None:
                _cut(out, at_end, start)
                return
            if value < 0:
                _damaged(out, start)
                return
        elif wire in (I64, I32):
            pos += 8 if wire == I64 else 4
            if pos > end:
                _cut(out, at_end, start)
                return
        else:
            length, pos = _varint(buf, pos, end)
            if length is None:
                _cut(out, at_end, start)
                return
            if length < 0:
                _damaged(out, start)
                return
            stop = pos + length
            if stop > end:
                if not at_end:
                    _damaged(out, start)
                    return
                if fits:
                    out.known += 1
                    if field.type == _MESSAGE and depth < MAX_DEPTH:
                        _walk(buf, pos, total, total, field.message_type, depth + 1, out)
                else:
                    _unknown(out, start)
                out.truncated = True
                return
            if fits and field.type == _MESSAGE:
                if depth >= MAX_DEPTH:
                    _damaged(out, start)
                    return
                # A complete nested message cannot be cut short: total=-1.
                _walk(buf, pos, stop, -1, field.message_type, depth + 1, out)
                if out.corrupt:
                    return
            elif fits and field.type == _STRING and out.bad_utf8 is None:
                raw = bytes(buf[pos:stop])
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError:
                    out.bad_utf8 = (field.full_name, raw)
            pos = stop
        if fits:
            out.known += 1
        else:
            _unknown(out, start)


def _cut(out: Scan, at_end: bool, start: int) -> None:
    if at_end:
        out.truncated = True
    else:
        _damaged(out, start)


def _unknown(out: Scan, start: int) -> None:
    out.unknown += 1
    if out.unknown_at < 0:
        out.unknown_at = start


def _damaged(out: Scan, start: int) -> None:
    out.corrupt = True
    if out.corrupt_at < 0:
        out.corrupt_at = start


def top_fields(data: bytes, limit: int = 4096) -> Optional[list[tuple[int, int, Any]]]:
    """The top-level fields of a message as (number, wire type, value), no schema.

    A LEN value is a memoryview; None if the bytes are not well-formed or
    there are more than ``limit`` fields.
    """
    fields = field_spans(data, limit)
    return None if fields is None else [field[:3] for field in fields]


def field_spans(data: Any, limit: int = 4096
                ) -> Optional[list[tuple[int, int, Any, memoryview]]]:
    """:func:`top_fields`, each with the whole field's bytes (tag included) last:
    some of a message's fields joined again parse as those fields alone."""
    buf = memoryview(data)
    pos, end = 0, len(buf)
    fields: list[tuple[int, int, Any, memoryview]] = []
    while pos < end:
        if len(fields) >= limit:
            return None
        start = pos
        tag, pos = _varint(buf, pos, end)
        if tag is None or tag < 0 or tag >> 3 == 0:
            return None
        number, wire = tag >> 3, tag & 7
        value: Any
        if wire == VARINT:
            value, pos = _varint(buf, pos, end)
            if value is None or value < 0:
                return None
        elif wire in (I64, I32):
            size = 8 if wire == I64 else 4
            if pos + size > end:
                return None
            value, pos = bytes(buf[pos:pos + size]), pos + size
        elif wire == LEN:
            length, pos = _varint(buf, pos, end)
            if length is None or length < 0 or pos + length > end:
                return None
            value, pos = buf[pos:pos + length], pos + length
        else:
            return None
        fields.append((number, wire, value, buf[start:pos]))
    return fields
