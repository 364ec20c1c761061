from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class XSpaceColumns(_message.Message):
    __slots__ = ("planes",)
    PLANES_FIELD_NUMBER: _ClassVar[int]
    planes: _containers.RepeatedCompositeFieldContainer[XPlaneColumns]
    def __init__(self, planes: _Optional[_Iterable[_Union[XPlaneColumns, _Mapping]]] = ...) -> None: ...

class XPlaneColumns(_message.Message):
    __slots__ = ("lines",)
    LINES_FIELD_NUMBER: _ClassVar[int]
    lines: _containers.RepeatedCompositeFieldContainer[XLineColumns]
    def __init__(self, lines: _Optional[_Iterable[_Union[XLineColumns, _Mapping]]] = ...) -> None: ...

class XLineColumns(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: EventColumns
    def __init__(self, events: _Optional[_Union[EventColumns, _Mapping]] = ...) -> None: ...

class EventColumns(_message.Message):
    __slots__ = ("metadata_id", "offset_ps", "duration_ps")
    METADATA_ID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_PS_FIELD_NUMBER: _ClassVar[int]
    DURATION_PS_FIELD_NUMBER: _ClassVar[int]
    metadata_id: _containers.RepeatedScalarFieldContainer[int]
    offset_ps: _containers.RepeatedScalarFieldContainer[int]
    duration_ps: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, metadata_id: _Optional[_Iterable[int]] = ..., offset_ps: _Optional[_Iterable[int]] = ..., duration_ps: _Optional[_Iterable[int]] = ...) -> None: ...
