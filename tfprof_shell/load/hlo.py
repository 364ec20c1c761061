"""XLA programs stored in an XSpace, and the framework op behind each HLO instruction.

XLA-compiled programs (JAX, ``tf.function(jit_compile=True)``) leave their
device kernels named only by ``hlo_module`` / ``program_id`` / ``hlo_op``
stats. The profiler stores each compiled program (an ``HloProto``) in the
``/host:metadata`` plane, as the bytes of an event metadata's ``Hlo Proto``
stat, keyed by its ``program_id`` stat. Each instruction's ``OpMetadata``
names the framework op that produced it (``jit(step)/jvp(mlp)/dot_general``)
and where in the user's code that op was traced.

Programs are parsed on first use, with our own wire-compatible schema.
Framework op names and types follow XProf's rules (see :func:`framework_op`).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple, Optional

from ..model import Frame
from ..proto import hlo_pb2

METADATA_PLANE = "/host:metadata"
#: Stat names of the program bytes and id (XProf's spelling first).
HLO_PROTO_STATS = ("Hlo Proto", "hlo_proto")
PROGRAM_ID_STAT = "program_id"

_TF_OP_NAME = re.compile(r"[A-Za-z0-9.][A-Za-z0-9_./>-]*")
_TF_OP_TYPE = re.compile(r"[A-Z_][a-zA-Z0-9_]*")
_JAX_OP_TYPE = re.compile(r"[a-z_][a-z0-9_]*(\[.*\])?", re.DOTALL)
_COMMAND_BUFFER = re.compile(r"command_buffer(_\d+)?")
#: The type XProf gives a framework op whose name fits no known pattern.
UNKNOWN_TYPE = "Unknown"


def derive_op_type(op_name: str) -> str:
    """The type of a framework op from its name: the last path component,
    less a numeric ``_N`` suffix (``model/layer/MatMul_1`` -> ``MatMul``)."""
    last = op_name.rsplit("/", 1)[-1]
    head, sep, suffix = last.rpartition("_")
    if sep and _is_integer(suffix):
        return head
    return last


def _is_integer(text: str) -> bool:
    digits = text[1:] if text[:1] in ("+", "-") else text
    return digits.isdigit() and digits.isascii()


def framework_op(op_name: str, op_type: str) -> Optional[tuple[str, str]]:
    """(name, type) of the framework op an HLO instruction's metadata names.

    None if the metadata names none. As XProf does, the two fields are joined
    to ``op_name:op_type`` and split again at the first ``:``; a TensorFlow op
    keeps its given type; otherwise the type is the given one or, if empty,
    derived from the name, with a JAX ``[params]`` suffix dropped
    (``transpose[permutation=(1, 0)]`` -> ``transpose``); names that fit no
    pattern get type ``Unknown``.
    """
    if not op_name and not op_type:
        return None
    full = "%s:%s" % (op_name, op_type)
    name, _, given = full.partition(":")
    if name == "Iterator":
        return name, "Dataset"
    if _TF_OP_NAME.fullmatch(name) and _TF_OP_TYPE.fullmatch(given):
        return name, given
    derived = given or derive_op_type(name)
    if _JAX_OP_TYPE.fullmatch(derived):
        return name, derived.split("[", 1)[0]
    if not given:
        return name, derived or UNKNOWN_TYPE
    return full, UNKNOWN_TYPE


def is_command_buffer(hlo_op: str) -> bool:
    """True for the pseudo-op XLA names a command buffer (CUDA graph) by."""
    return _COMMAND_BUFFER.fullmatch(hlo_op) is not None


def last_hlo_op(text: str) -> str:
    """The innermost HLO op of an ``hlo_op`` stat (``outer::inner`` -> ``inner``)."""
    return text.rsplit("::", 1)[-1]


class Instruction(NamedTuple):
    """What the profile views need of one HLO instruction."""

    name: str
    opcode: str
    op_name: str
    op_type: str
    stack_frame_id: int
    source_file: str
    source_line: int


class Program:
    """One compiled module: its instructions by name and its stack-frame index."""

    def __init__(self, proto: Any) -> None:
        module = proto.hlo_module
        self.name: str = module.name
        self._index = module.stack_frame_index
        self._instructions: dict[str, Instruction] = {}
        for comp in module.computations:
            for ins in comp.instructions:
                if ins.name not in self._instructions:
                    md = ins.metadata
                    self._instructions[ins.name] = Instruction(
                        ins.name, ins.opcode, md.op_name, md.op_type, md.stack_frame_id,
                        md.source_file, md.source_line)
        self._frames: dict[int, tuple[Frame, ...]] = {}

    def instruction(self, name: str) -> Optional[Instruction]:
        """The instruction called ``name``, or None."""
        return self._instructions.get(name)

    def instruction_names(self) -> list[str]:
        """The names of all its instructions (every computation's)."""
        return list(self._instructions)

    def trace(self, ins: Instruction) -> tuple[Frame, ...]:
        """The Python stack that produced ``ins``, outermost first (empty if unknown).

        From the module's stack-frame index when the instruction points into it,
        else the single source file and line of its metadata.
        """
        if ins.stack_frame_id > 0:
            frames = self._stack(ins.stack_frame_id)
            if frames:
                return frames
        if ins.source_file:
            return (Frame(ins.source_file, ins.source_line, "", ins.source_line),)
        return ()

    def _stack(self, frame_id: int) -> tuple[Frame, ...]:
        cached = self._frames.get(frame_id)
        if cached is not None:
            return cached
        index = self._index
        out: list[Frame] = []
        seen: set[int] = set()
        fid = frame_id
        while 0 < fid <= len(index.stack_frames) and fid not in seen:
            seen.add(fid)
            frame = index.stack_frames[fid - 1]
            loc_id = frame.file_location_id
            if 0 < loc_id <= len(index.file_locations):
                loc = index.file_locations[loc_id - 1]
                out.append(Frame(_entry(index.file_names, loc.file_name_id), loc.line,
                                 _entry(index.function_names, loc.function_name_id),
                                 loc.line))
            fid = frame.parent_frame_id
        out.reverse()
        frames = self._frames[frame_id] = tuple(out)
        return frames


def _entry(table: Any, one_based: int) -> str:
    return table[one_based - 1] if 0 < one_based <= len(table) else ""


class Programs:
    """The HLO programs of one XSpace by program id; each parsed on first use."""

    def __init__(self, raw: dict[int, bytes]) -> None:
        self._raw = raw
        self._parsed: dict[int, Optional[Program]] = {}
        #: Program ids whose bytes did not parse as an HloProto.
        self.broken: list[int] = []

    def __len__(self) -> int:
        return len(self._raw)

    def ids(self) -> list[int]:
        """The program ids stored, in the order read."""
        return list(self._raw)

    def program(self, program_id: int) -> Optional[Program]:
        """The program with this id, or None if the profile has none (or a broken one)."""
        if program_id in self._parsed:
            return self._parsed[program_id]
        data = self._raw.get(program_id)
        program = None
        if data is not None:
            proto = hlo_pb2.HloProto()
            try:
                proto.ParseFromString(data)
                program = Program(proto)
            except Exception:  # protobuf raises DecodeError or RuntimeError by backend
                self.broken.append(program_id)
        self._parsed[program_id] = program
        return program


def read_programs(space: Any) -> Programs:
    """The program bytes stored in ``space``'s metadata plane (not parsed yet).

    A program is keyed by its ``program_id`` stat, else by its event metadata
    id (as XProf does); the first program of an id wins.
    """
    raw: dict[int, bytes] = {}
    for plane in space.planes:
        if plane.name != METADATA_PLANE:
            continue
        names = {k: v.name for k, v in plane.stat_metadata.items()}
        for md_id, md in plane.event_metadata.items():
            data = None
            program_id = md_id
            for st in md.stats:
                name = names.get(st.metadata_id)
                if name in HLO_PROTO_STATS and st.WhichOneof("value") == "bytes_value":
                    data = st.bytes_value
                elif name == PROGRAM_ID_STAT:
                    which = st.WhichOneof("value")
                    if which in ("uint64_value", "int64_value"):
                        program_id = getattr(st, which)
            if data is not None:
                raw.setdefault(program_id, data)
    return Programs(raw)
