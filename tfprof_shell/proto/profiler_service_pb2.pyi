from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ProfileOptions(_message.Message):
    __slots__ = ("host_tracer_level", "device_tracer_level", "python_tracer_level", "version", "start_timestamp_ns", "duration_ms")
    HOST_TRACER_LEVEL_FIELD_NUMBER: _ClassVar[int]
    DEVICE_TRACER_LEVEL_FIELD_NUMBER: _ClassVar[int]
    PYTHON_TRACER_LEVEL_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    START_TIMESTAMP_NS_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    host_tracer_level: int
    device_tracer_level: int
    python_tracer_level: int
    version: int
    start_timestamp_ns: int
    duration_ms: int
    def __init__(self, host_tracer_level: _Optional[int] = ..., device_tracer_level: _Optional[int] = ..., python_tracer_level: _Optional[int] = ..., version: _Optional[int] = ..., start_timestamp_ns: _Optional[int] = ..., duration_ms: _Optional[int] = ...) -> None: ...

class ProfileRequest(_message.Message):
    __slots__ = ("duration_ms", "max_events", "tools", "opts", "repository_root", "session_id", "host_name", "emit_xspace")
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_EVENTS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    OPTS_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_ROOT_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    HOST_NAME_FIELD_NUMBER: _ClassVar[int]
    EMIT_XSPACE_FIELD_NUMBER: _ClassVar[int]
    duration_ms: int
    max_events: int
    tools: _containers.RepeatedScalarFieldContainer[str]
    opts: ProfileOptions
    repository_root: str
    session_id: str
    host_name: str
    emit_xspace: bool
    def __init__(self, duration_ms: _Optional[int] = ..., max_events: _Optional[int] = ..., tools: _Optional[_Iterable[str]] = ..., opts: _Optional[_Union[ProfileOptions, _Mapping]] = ..., repository_root: _Optional[str] = ..., session_id: _Optional[str] = ..., host_name: _Optional[str] = ..., emit_xspace: bool = ...) -> None: ...

class ProfileToolData(_message.Message):
    __slots__ = ("name", "data")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    name: str
    data: bytes
    def __init__(self, name: _Optional[str] = ..., data: _Optional[bytes] = ...) -> None: ...

class ProfileResponse(_message.Message):
    __slots__ = ("tool_data", "empty_trace", "xspace")
    TOOL_DATA_FIELD_NUMBER: _ClassVar[int]
    EMPTY_TRACE_FIELD_NUMBER: _ClassVar[int]
    XSPACE_FIELD_NUMBER: _ClassVar[int]
    tool_data: _containers.RepeatedCompositeFieldContainer[ProfileToolData]
    empty_trace: bool
    xspace: bytes
    def __init__(self, tool_data: _Optional[_Iterable[_Union[ProfileToolData, _Mapping]]] = ..., empty_trace: bool = ..., xspace: _Optional[bytes] = ...) -> None: ...

class TerminateRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class TerminateResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetSnapshotRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ContinuousProfilingResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StopContinuousProfilingRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StopContinuousProfilingResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
