from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EventNameEntry(_message.Message):
    __slots__ = ("key", "value")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    key: int
    value: EventName
    def __init__(self, key: _Optional[int] = ..., value: _Optional[_Union[EventName, _Mapping]] = ...) -> None: ...

class EventName(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class LineEvents(_message.Message):
    __slots__ = ("timestamp_ns", "events")
    TIMESTAMP_NS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    timestamp_ns: int
    events: _containers.RepeatedCompositeFieldContainer[EventTimes]
    def __init__(self, timestamp_ns: _Optional[int] = ..., events: _Optional[_Iterable[_Union[EventTimes, _Mapping]]] = ...) -> None: ...

class EventTimes(_message.Message):
    __slots__ = ("metadata_id", "offset_ps", "duration_ps")
    METADATA_ID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_PS_FIELD_NUMBER: _ClassVar[int]
    DURATION_PS_FIELD_NUMBER: _ClassVar[int]
    metadata_id: int
    offset_ps: int
    duration_ps: int
    def __init__(self, metadata_id: _Optional[int] = ..., offset_ps: _Optional[int] = ..., duration_ps: _Optional[int] = ...) -> None: ...

class LineRaw(_message.Message):
    __slots__ = ("timestamp_ns", "events")
    TIMESTAMP_NS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    timestamp_ns: int
    events: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, timestamp_ns: _Optional[int] = ..., events: _Optional[_Iterable[bytes]] = ...) -> None: ...

class LineSplit(_message.Message):
    __slots__ = ("id", "name", "timestamp_ns", "events", "duration_ps", "display_id", "display_name")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_NS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    DURATION_PS_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_ID_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    id: int
    name: str
    timestamp_ns: int
    events: _containers.RepeatedScalarFieldContainer[bytes]
    duration_ps: int
    display_id: int
    display_name: str
    def __init__(self, id: _Optional[int] = ..., name: _Optional[str] = ..., timestamp_ns: _Optional[int] = ..., events: _Optional[_Iterable[bytes]] = ..., duration_ps: _Optional[int] = ..., display_id: _Optional[int] = ..., display_name: _Optional[str] = ...) -> None: ...

class LineHead(_message.Message):
    __slots__ = ("id", "name", "timestamp_ns", "duration_ps", "display_id", "display_name")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_NS_FIELD_NUMBER: _ClassVar[int]
    DURATION_PS_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_ID_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    id: int
    name: str
    timestamp_ns: int
    duration_ps: int
    display_id: int
    display_name: str
    def __init__(self, id: _Optional[int] = ..., name: _Optional[str] = ..., timestamp_ns: _Optional[int] = ..., duration_ps: _Optional[int] = ..., display_id: _Optional[int] = ..., display_name: _Optional[str] = ...) -> None: ...
