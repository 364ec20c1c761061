"""An XSpace's bytes split into planes, and a plane into its fields, without a parse.

Readers that need only some of a file (the host lines to pick, the lines
holding Python frames) find them here and parse just those bytes.
Field numbers are xplane.proto's.
"""

from __future__ import annotations

from typing import Any, Optional

from ..proto import xplane_stacks_pb2
from .wire import LEN, top_fields

_PLANES, _NAME, _LINES, _EVENT_METADATA, _STAT_METADATA = 1, 2, 3, 4, 5


def plane_bytes(data: bytes) -> Optional[list[memoryview]]:
    """Each plane's bytes, in file order (None if the bytes do not split)."""
    top = top_fields(data, limit=1 << 20)
    if top is None:
        return None
    return [value for number, wire, value in top if number == _PLANES and wire == LEN]


class PlaneFields:
    """One plane's top-level fields; each part is decoded only when asked for."""

    def __init__(self, fields: list[tuple[int, int, Any]]) -> None:
        self._fields = fields

    @classmethod
    def split(cls, plane: memoryview) -> Optional["PlaneFields"]:
        """The plane's fields (None if its bytes do not split)."""
        fields = top_fields(plane, limit=1 << 30)
        return cls(fields) if fields is not None else None

    def name(self) -> Optional[str]:
        """The plane's name (None if it has none). UnicodeDecodeError if not UTF-8."""
        named = self._values(_NAME)
        return bytes(named[-1]).decode("utf-8") if named else None

    def lines(self) -> list[memoryview]:
        """Each line's bytes, in order."""
        return self._values(_LINES)

    def event_names(self) -> dict[int, str]:
        """Event metadata id -> name (a map: the last entry of an id wins).
        DecodeError if an entry does not parse."""
        return self._names(_EVENT_METADATA)

    def stat_names(self) -> dict[int, str]:
        """Stat metadata id -> name, as :meth:`event_names`."""
        return self._names(_STAT_METADATA)

    def _values(self, field: int) -> list[memoryview]:
        return [value for number, wire, value in self._fields if number == field and wire == LEN]

    def _names(self, field: int) -> dict[int, str]:
        entry = xplane_stacks_pb2.EventNameEntry.FromString
        names: dict[int, str] = {}
        for value in self._values(field):
            md = entry(value)
            names[md.key] = md.value.name
        return names
