from . import framework_pb2 as _framework_pb2
from . import tfprof_log_pb2 as _tfprof_log_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ProfileSummary(_message.Message):
    __slots__ = ("nodes", "has_trace", "steps", "id_to_string", "miss_accelerator_stream")
    NODES_FIELD_NUMBER: _ClassVar[int]
    HAS_TRACE_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    ID_TO_STRING_FIELD_NUMBER: _ClassVar[int]
    MISS_ACCELERATOR_STREAM_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[NodeEntry]
    has_trace: bool
    steps: _containers.RepeatedScalarFieldContainer[int]
    id_to_string: _containers.RepeatedCompositeFieldContainer[IdString]
    miss_accelerator_stream: bool
    def __init__(self, nodes: _Optional[_Iterable[_Union[NodeEntry, _Mapping]]] = ..., has_trace: bool = ..., steps: _Optional[_Iterable[int]] = ..., id_to_string: _Optional[_Iterable[_Union[IdString, _Mapping]]] = ..., miss_accelerator_stream: bool = ...) -> None: ...

class NodeEntry(_message.Message):
    __slots__ = ("key", "value")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    key: int
    value: NodeSummary
    def __init__(self, key: _Optional[int] = ..., value: _Optional[_Union[NodeSummary, _Mapping]] = ...) -> None: ...

class IdString(_message.Message):
    __slots__ = ("key", "value")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    key: int
    value: str
    def __init__(self, key: _Optional[int] = ..., value: _Optional[str] = ...) -> None: ...

class NodeSummary(_message.Message):
    __slots__ = ("name", "inputs", "outputs", "shape", "op_types", "canonical_device", "host_device", "float_ops", "op", "trace", "attrs", "execs", "id", "src_output_index", "output_shapes", "input_shapes")
    class Int32Int64(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: int
        def __init__(self, key: _Optional[int] = ..., value: _Optional[int] = ...) -> None: ...
    class Int32Int64Columns(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: _containers.RepeatedScalarFieldContainer[int]
        value: _containers.RepeatedScalarFieldContainer[int]
        def __init__(self, key: _Optional[_Iterable[int]] = ..., value: _Optional[_Iterable[int]] = ...) -> None: ...
    class Int64Int32Columns(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: _containers.RepeatedScalarFieldContainer[int]
        value: _containers.RepeatedScalarFieldContainer[int]
        def __init__(self, key: _Optional[_Iterable[int]] = ..., value: _Optional[_Iterable[int]] = ...) -> None: ...
    class Attr(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _framework_pb2.AttrValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_framework_pb2.AttrValue, _Mapping]] = ...) -> None: ...
    class ShapeEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: _tfprof_log_pb2.Tuple
        def __init__(self, key: _Optional[int] = ..., value: _Optional[_Union[_tfprof_log_pb2.Tuple, _Mapping]] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    INPUTS_FIELD_NUMBER: _ClassVar[int]
    OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    OP_TYPES_FIELD_NUMBER: _ClassVar[int]
    CANONICAL_DEVICE_FIELD_NUMBER: _ClassVar[int]
    HOST_DEVICE_FIELD_NUMBER: _ClassVar[int]
    FLOAT_OPS_FIELD_NUMBER: _ClassVar[int]
    OP_FIELD_NUMBER: _ClassVar[int]
    TRACE_FIELD_NUMBER: _ClassVar[int]
    ATTRS_FIELD_NUMBER: _ClassVar[int]
    EXECS_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    SRC_OUTPUT_INDEX_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_SHAPES_FIELD_NUMBER: _ClassVar[int]
    INPUT_SHAPES_FIELD_NUMBER: _ClassVar[int]
    name: str
    inputs: NodeSummary.Int32Int64Columns
    outputs: _containers.RepeatedCompositeFieldContainer[NodeSummary.Int32Int64]
    shape: _containers.RepeatedScalarFieldContainer[int]
    op_types: _containers.RepeatedScalarFieldContainer[str]
    canonical_device: str
    host_device: str
    float_ops: int
    op: str
    trace: bytes
    attrs: _containers.RepeatedCompositeFieldContainer[NodeSummary.Attr]
    execs: ExecsTotals
    id: int
    src_output_index: NodeSummary.Int64Int32Columns
    output_shapes: _containers.RepeatedCompositeFieldContainer[NodeSummary.ShapeEntry]
    input_shapes: _containers.RepeatedCompositeFieldContainer[NodeSummary.ShapeEntry]
    def __init__(self, name: _Optional[str] = ..., inputs: _Optional[_Union[NodeSummary.Int32Int64Columns, _Mapping]] = ..., outputs: _Optional[_Iterable[_Union[NodeSummary.Int32Int64, _Mapping]]] = ..., shape: _Optional[_Iterable[int]] = ..., op_types: _Optional[_Iterable[str]] = ..., canonical_device: _Optional[str] = ..., host_device: _Optional[str] = ..., float_ops: _Optional[int] = ..., op: _Optional[str] = ..., trace: _Optional[bytes] = ..., attrs: _Optional[_Iterable[_Union[NodeSummary.Attr, _Mapping]]] = ..., execs: _Optional[_Union[ExecsTotals, _Mapping]] = ..., id: _Optional[int] = ..., src_output_index: _Optional[_Union[NodeSummary.Int64Int32Columns, _Mapping]] = ..., output_shapes: _Optional[_Iterable[_Union[NodeSummary.ShapeEntry, _Mapping]]] = ..., input_shapes: _Optional[_Iterable[_Union[NodeSummary.ShapeEntry, _Mapping]]] = ...) -> None: ...

class ExecsTotals(_message.Message):
    __slots__ = ("step", "profile")
    STEP_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    step: _containers.RepeatedScalarFieldContainer[int]
    profile: ExecTotals
    def __init__(self, step: _Optional[_Iterable[int]] = ..., profile: _Optional[_Union[ExecTotals, _Mapping]] = ...) -> None: ...

class ExecTotals(_message.Message):
    __slots__ = ("run_count", "all_start_micros", "latest_end_micros", "accelerator_execs", "cpu_execs", "devices", "memory_execs", "allocations")
    RUN_COUNT_FIELD_NUMBER: _ClassVar[int]
    ALL_START_MICROS_FIELD_NUMBER: _ClassVar[int]
    LATEST_END_MICROS_FIELD_NUMBER: _ClassVar[int]
    ACCELERATOR_EXECS_FIELD_NUMBER: _ClassVar[int]
    CPU_EXECS_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    MEMORY_EXECS_FIELD_NUMBER: _ClassVar[int]
    ALLOCATIONS_FIELD_NUMBER: _ClassVar[int]
    run_count: _containers.RepeatedScalarFieldContainer[int]
    all_start_micros: _containers.RepeatedScalarFieldContainer[int]
    latest_end_micros: _containers.RepeatedScalarFieldContainer[int]
    accelerator_execs: DeviceTimes
    cpu_execs: DeviceTimes
    devices: _containers.RepeatedScalarFieldContainer[str]
    memory_execs: MemoryTotals
    allocations: _containers.RepeatedCompositeFieldContainer[_framework_pb2.AllocationRecord]
    def __init__(self, run_count: _Optional[_Iterable[int]] = ..., all_start_micros: _Optional[_Iterable[int]] = ..., latest_end_micros: _Optional[_Iterable[int]] = ..., accelerator_execs: _Optional[_Union[DeviceTimes, _Mapping]] = ..., cpu_execs: _Optional[_Union[DeviceTimes, _Mapping]] = ..., devices: _Optional[_Iterable[str]] = ..., memory_execs: _Optional[_Union[MemoryTotals, _Mapping]] = ..., allocations: _Optional[_Iterable[_Union[_framework_pb2.AllocationRecord, _Mapping]]] = ...) -> None: ...

class DeviceTimes(_message.Message):
    __slots__ = ("device", "times")
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    TIMES_FIELD_NUMBER: _ClassVar[int]
    device: _containers.RepeatedScalarFieldContainer[str]
    times: TimePairs
    def __init__(self, device: _Optional[_Iterable[str]] = ..., times: _Optional[_Union[TimePairs, _Mapping]] = ...) -> None: ...

class TimePairs(_message.Message):
    __slots__ = ("pairs",)
    PAIRS_FIELD_NUMBER: _ClassVar[int]
    pairs: _tfprof_log_pb2.Tuple
    def __init__(self, pairs: _Optional[_Union[_tfprof_log_pb2.Tuple, _Mapping]] = ...) -> None: ...

class MemoryTotals(_message.Message):
    __slots__ = ("memory_micros", "host_temp_bytes", "host_persistent_bytes", "accelerator_temp_bytes", "accelerator_persistent_bytes", "requested_bytes", "peak_bytes", "residual_bytes", "output_bytes", "allocator_bytes_in_use", "output_memory")
    class OutputMemoryEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: _tfprof_log_pb2.Memory
        def __init__(self, key: _Optional[int] = ..., value: _Optional[_Union[_tfprof_log_pb2.Memory, _Mapping]] = ...) -> None: ...
    MEMORY_MICROS_FIELD_NUMBER: _ClassVar[int]
    HOST_TEMP_BYTES_FIELD_NUMBER: _ClassVar[int]
    HOST_PERSISTENT_BYTES_FIELD_NUMBER: _ClassVar[int]
    ACCELERATOR_TEMP_BYTES_FIELD_NUMBER: _ClassVar[int]
    ACCELERATOR_PERSISTENT_BYTES_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BYTES_FIELD_NUMBER: _ClassVar[int]
    PEAK_BYTES_FIELD_NUMBER: _ClassVar[int]
    RESIDUAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_BYTES_FIELD_NUMBER: _ClassVar[int]
    ALLOCATOR_BYTES_IN_USE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory_micros: _containers.RepeatedScalarFieldContainer[int]
    host_temp_bytes: _containers.RepeatedScalarFieldContainer[int]
    host_persistent_bytes: _containers.RepeatedScalarFieldContainer[int]
    accelerator_temp_bytes: _containers.RepeatedScalarFieldContainer[int]
    accelerator_persistent_bytes: _containers.RepeatedScalarFieldContainer[int]
    requested_bytes: _containers.RepeatedScalarFieldContainer[int]
    peak_bytes: _containers.RepeatedScalarFieldContainer[int]
    residual_bytes: _containers.RepeatedScalarFieldContainer[int]
    output_bytes: _containers.RepeatedScalarFieldContainer[int]
    allocator_bytes_in_use: _containers.RepeatedScalarFieldContainer[int]
    output_memory: _containers.RepeatedCompositeFieldContainer[MemoryTotals.OutputMemoryEntry]
    def __init__(self, memory_micros: _Optional[_Iterable[int]] = ..., host_temp_bytes: _Optional[_Iterable[int]] = ..., host_persistent_bytes: _Optional[_Iterable[int]] = ..., accelerator_temp_bytes: _Optional[_Iterable[int]] = ..., accelerator_persistent_bytes: _Optional[_Iterable[int]] = ..., requested_bytes: _Optional[_Iterable[int]] = ..., peak_bytes: _Optional[_Iterable[int]] = ..., residual_bytes: _Optional[_Iterable[int]] = ..., output_bytes: _Optional[_Iterable[int]] = ..., allocator_bytes_in_use: _Optional[_Iterable[int]] = ..., output_memory: _Optional[_Iterable[_Union[MemoryTotals.OutputMemoryEntry, _Mapping]]] = ...) -> None: ...

class CodeDefFrames(_message.Message):
    __slots__ = ("traces",)
    TRACES_FIELD_NUMBER: _ClassVar[int]
    traces: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, traces: _Optional[_Iterable[bytes]] = ...) -> None: ...
