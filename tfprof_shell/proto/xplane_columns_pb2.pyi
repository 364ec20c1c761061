from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class XLineColumns(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: EventColumns
    def __init__(self, events: _Optional[_Union[EventColumns, _Mapping]] = ...) -> None: ...

class EventColumns(_message.Message):
    __slots__ = ("metadata_id", "offset_ps", "duration_ps", "stats")
    METADATA_ID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_PS_FIELD_NUMBER: _ClassVar[int]
    DURATION_PS_FIELD_NUMBER: _ClassVar[int]
    STATS_FIELD_NUMBER: _ClassVar[int]
    metadata_id: _containers.RepeatedScalarFieldContainer[int]
    offset_ps: _containers.RepeatedScalarFieldContainer[int]
    duration_ps: _containers.RepeatedScalarFieldContainer[int]
    stats: StatColumns
    def __init__(self, metadata_id: _Optional[_Iterable[int]] = ..., offset_ps: _Optional[_Iterable[int]] = ..., duration_ps: _Optional[_Iterable[int]] = ..., stats: _Optional[_Union[StatColumns, _Mapping]] = ...) -> None: ...

class StatColumns(_message.Message):
    __slots__ = ("metadata_id",)
    METADATA_ID_FIELD_NUMBER: _ClassVar[int]
    metadata_id: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, metadata_id: _Optional[_Iterable[int]] = ...) -> None: ...

class EventValues(_message.Message):
    __slots__ = ("metadata_id", "offset_ps", "duration_ps", "stats", "num_occurrences")
    METADATA_ID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_PS_FIELD_NUMBER: _ClassVar[int]
    DURATION_PS_FIELD_NUMBER: _ClassVar[int]
    STATS_FIELD_NUMBER: _ClassVar[int]
    NUM_OCCURRENCES_FIELD_NUMBER: _ClassVar[int]
    metadata_id: _containers.RepeatedScalarFieldContainer[int]
    offset_ps: _containers.RepeatedScalarFieldContainer[int]
    duration_ps: _containers.RepeatedScalarFieldContainer[int]
    stats: StatValues
    num_occurrences: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, metadata_id: _Optional[_Iterable[int]] = ..., offset_ps: _Optional[_Iterable[int]] = ..., duration_ps: _Optional[_Iterable[int]] = ..., stats: _Optional[_Union[StatValues, _Mapping]] = ..., num_occurrences: _Optional[_Iterable[int]] = ...) -> None: ...

class StatValues(_message.Message):
    __slots__ = ("metadata_id", "double_value", "uint64_value", "int64_value", "str_value", "bytes_value", "ref_value")
    METADATA_ID_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_VALUE_FIELD_NUMBER: _ClassVar[int]
    UINT64_VALUE_FIELD_NUMBER: _ClassVar[int]
    INT64_VALUE_FIELD_NUMBER: _ClassVar[int]
    STR_VALUE_FIELD_NUMBER: _ClassVar[int]
    BYTES_VALUE_FIELD_NUMBER: _ClassVar[int]
    REF_VALUE_FIELD_NUMBER: _ClassVar[int]
    metadata_id: _containers.RepeatedScalarFieldContainer[int]
    double_value: _containers.RepeatedScalarFieldContainer[float]
    uint64_value: _containers.RepeatedScalarFieldContainer[int]
    int64_value: _containers.RepeatedScalarFieldContainer[int]
    str_value: _containers.RepeatedScalarFieldContainer[bytes]
    bytes_value: _containers.RepeatedScalarFieldContainer[bytes]
    ref_value: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, metadata_id: _Optional[_Iterable[int]] = ..., double_value: _Optional[_Iterable[float]] = ..., uint64_value: _Optional[_Iterable[int]] = ..., int64_value: _Optional[_Iterable[int]] = ..., str_value: _Optional[_Iterable[bytes]] = ..., bytes_value: _Optional[_Iterable[bytes]] = ..., ref_value: _Optional[_Iterable[int]] = ...) -> None: ...

class EventStatsRaw(_message.Message):
    __slots__ = ("stats",)
    STATS_FIELD_NUMBER: _ClassVar[int]
    stats: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, stats: _Optional[_Iterable[bytes]] = ...) -> None: ...
