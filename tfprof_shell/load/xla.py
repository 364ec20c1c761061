"""GPU kernels of XLA programs -> the nodes they are accounted to.

A kernel event with ``hlo_op`` and ``program_id`` stats ran for one HLO
instruction of one program (see :mod:`.hlo`). It is accounted to:

* the framework op its instruction's metadata names (node
  ``jit(step)/jvp(mlp)/dot_general``, type ``dot_general``);
* for an instruction with no framework op: node ``<module>/<hlo op>``,
  typed by the HLO opcode (``fusion``, ``copy``, ...);
* inside a command buffer (CUDA graph; ``hlo_op`` is ``command_buffer_N``),
  or for an HLO op the profile's programs do not describe: node
  ``<module>/<hlo op>/<kernel>``, typed by the kernel name.

Each node also gets its HLO op and kernel names as extra op types
(``hlo_op:custom-call.12``, ``kernel:sm90_xmma_gemm_...``), a run count per
step (the most executions of any one of its HLO ops; consecutive kernels of
one HLO op on a stream are one execution, as in XProf), its GPU device, and
the Python stack JAX recorded for the instruction (code view).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple, Optional, Protocol, Sequence

from ..model import Frame, Model
from .hlo import (Instruction, Program, Programs, framework_op, is_command_buffer, last_hlo_op,
                  read_programs)
from .records import CPU_DEVICE, GPU_DEVICE

FRAMEWORK, HLO_ONLY, COMMAND_BUFFER, UNRESOLVED = range(4)
HLO_OP_TYPE = "hlo_op:"
KERNEL_TYPE = "kernel:"
#: The XLA flag that turns command buffers off, so kernels keep their HLO ops.
COMMAND_BUFFER_FLAG = "XLA_FLAGS=--xla_gpu_enable_command_buffer="


class Timed(Protocol):
    """One kernel execution as the XSpace reader keeps it (its node and, later, step)."""

    name: str
    step: Optional[int]


class KernelOp(NamedTuple):
    """Where one kernel is accounted: node name (no host prefix), op type, and why."""

    name: str
    op: str
    hlo_op: str
    kind: int
    program: Optional[Program] = None
    instruction: Optional[Instruction] = None

    @property
    def resolved(self) -> bool:
        """False for an HLO op the profile's programs do not describe."""
        return self.kind != UNRESOLVED


def map_kernel(programs: Programs, module: str, program_id: int, hlo_op: str,
               kernel: str) -> KernelOp:
    """The node a kernel of HLO op ``hlo_op`` in program ``program_id`` belongs to."""
    hlo_op = last_hlo_op(hlo_op)
    program = programs.program(program_id)
    module = module or (program.name if program is not None else "") or "XlaModule"
    ins = program.instruction(hlo_op) if program is not None else None
    if ins is not None:
        named = framework_op(ins.op_name, ins.op_type)
        if named is not None:
            return KernelOp(named[0], named[1], hlo_op, FRAMEWORK, program, ins)
        return KernelOp("%s/%s" % (module, hlo_op), ins.opcode or hlo_op, hlo_op, HLO_ONLY,
                        program, ins)
    kind = COMMAND_BUFFER if is_command_buffer(hlo_op) else UNRESOLVED
    return KernelOp("%s/%s/%s" % (module, hlo_op, kernel), kernel, hlo_op, kind)


def xla_stats(stats: dict[str, Any]) -> Optional[tuple[str, int, str]]:
    """(module, program id, hlo op) of a device event that ran for an XLA program, else None."""
    hlo_op = stats.get("hlo_op")
    program_id = stats.get("program_id")
    if not hlo_op or program_id is None:
        return None
    try:
        pid = int(program_id)
    except (TypeError, ValueError):
        return None
    return str(stats.get("hlo_module") or ""), pid, str(hlo_op)


class _NodeFacts:
    __slots__ = ("types", "gpu", "trace")

    def __init__(self, gpu: Optional[int]) -> None:
        self.types: set[str] = set()
        self.gpu = gpu
        self.trace: tuple[Frame, ...] = ()


class XlaKernels:
    """One host's XLA kernels: what each adds to its node beyond the time itself."""

    def __init__(self, programs: Programs) -> None:
        self.programs = programs
        self.nodes: dict[str, _NodeFacts] = {}
        #: (execution, its HLO op) for each kernel that starts an HLO op execution.
        self.runs: list[tuple[Timed, str]] = []
        self.kinds: Counter[int] = Counter()
        #: the same for XLA thunks on host threads (:mod:`.xla_cpu`)
        self.thunk_kinds: Counter[int] = Counter()
        self._last_on_line: dict[Any, str] = {}
        self._mapped: dict[tuple[tuple[str, int, str], str], KernelOp] = {}

    @classmethod
    def of_space(cls, space: Any) -> "XlaKernels":
        """A collector for one XSpace's kernels, knowing the programs it stores."""
        return cls(read_programs(space))

    def map(self, stats: dict[str, Any], kernel: str) -> Optional[KernelOp]:
        """Where the kernel named ``kernel`` with these stats is accounted; None if the
        stats name no XLA program (see :func:`xla_stats`)."""
        xla = xla_stats(stats)
        if xla is None:
            return None
        key = (xla, kernel)
        op = self._mapped.get(key)
        if op is None:
            op = self._mapped[key] = map_kernel(self.programs, *xla, kernel)
        return op

    def record(self, ex: Timed, op: KernelOp, kernel: str, gpu: int, line: Any) -> None:
        """Note the facts of one accounted kernel execution ``ex`` (on stream ``line``)."""
        self.kinds[op.kind] += 1
        facts = self.nodes.get(ex.name)
        if facts is None:
            facts = self.nodes[ex.name] = _NodeFacts(gpu)
        if not facts.trace and op.program is not None and op.instruction is not None:
            facts.trace = op.program.trace(op.instruction)
        facts.types.add(HLO_OP_TYPE + op.hlo_op)
        facts.types.add(KERNEL_TYPE + kernel)
        run_key = op.hlo_op if op.kind in (FRAMEWORK, HLO_ONLY) else op.name
        if op.kind not in (FRAMEWORK, HLO_ONLY) or self._last_on_line.get(line) != run_key:
            self.runs.append((ex, run_key))
        self._last_on_line[line] = run_key

    def record_thunks(self, name: str, op: KernelOp, kernel: str, count: int) -> None:
        """:meth:`record` of ``count`` thunks (:mod:`.xla_cpu`) of node ``name`` at once
        (each thunk is one run, as any host execution: no run counting here)."""
        self.thunk_kinds[op.kind] += count
        facts = self.nodes.get(name)
        if facts is None:
            facts = self.nodes[name] = _NodeFacts(None)
        if not facts.trace and op.program is not None and op.instruction is not None:
            facts.trace = op.program.trace(op.instruction)
        facts.types.add(HLO_OP_TYPE + op.hlo_op)
        facts.types.add(KERNEL_TYPE + kernel)

    def apply(self, model: Model, host_index: int) -> None:
        """Give the model's XLA nodes their types, device, run counts and traces.

        Runs after every execution has its step and has been added to ``model``.
        """
        for name, facts in self.nodes.items():
            node = model.nodes.get(name)
            if node is None:  # all its executions fell outside the steps
                continue
            node.op_types.update(facts.types)
            if not node.canonical_device and facts.gpu is not None:
                node.canonical_device = GPU_DEVICE % (host_index, facts.gpu)
                node.host_device = CPU_DEVICE % host_index
                node.op_types.add(node.canonical_device)
            if facts.trace and node.trace is None:
                node.trace = list(facts.trace)
                model.has_trace = True
        counts: Counter[tuple[str, int, str]] = Counter()
        for ex, key in self.runs:
            if ex.step is not None:
                counts[(ex.name, ex.step, key)] += 1
        runs: dict[tuple[str, int], int] = {}
        for (name, step, _), n in counts.items():
            runs[(name, step)] = max(runs.get((name, step), 0), n)
        for (name, step), n in runs.items():
            rec = model.nodes[name].execs.get(step)
            if rec is not None and rec.run_count < n:
                rec.run_count = n


def xla_notes(collectors: Sequence[XlaKernels]) -> list[str]:
    """One line per way XLA kernels could not be tied to framework ops (none if all were)."""
    kinds: Counter[int] = Counter()
    programs = broken = 0
    for c in collectors:
        kinds.update(c.kinds)
        programs += len(c.programs)
        broken += len(c.programs.broken)
    notes = []
    if kinds[COMMAND_BUFFER]:
        notes.append(
            "%d kernels ran inside XLA command buffers (CUDA graphs), where only kernel "
            "names identify the work: they are accounted by kernel name (scope "
            "<module>/command_buffer_N/<kernel>) and framework ops are unavailable; "
            "profile with %s to get framework ops" % (kinds[COMMAND_BUFFER], COMMAND_BUFFER_FLAG))
    if kinds[UNRESOLVED]:
        notes.append("%d kernels ran HLO ops that the profile's HLO metadata does not "
                     "describe (%s): they are accounted by kernel name (scope "
                     "<module>/<hlo op>/<kernel>)"
                     % (kinds[UNRESOLVED], _stored_programs(programs, broken)))
    if kinds[HLO_ONLY]:
        notes.append("%d kernels ran HLO ops that name no framework op: they are accounted "
                     "as <module>/<hlo op>, typed by the HLO opcode" % kinds[HLO_ONLY])
    return notes + _thunk_notes(collectors, programs, broken)


def _stored_programs(programs: int, broken: int) -> str:
    """How many HLO programs the profile stores, and how many of them could not be read."""
    stored = "the profile stores %d HLO programs" % programs
    return stored + (", %d of them unreadable" % broken if broken else "")


def _thunk_notes(collectors: Sequence[XlaKernels], programs: int, broken: int) -> list[str]:
    """The lines of :func:`xla_notes` for XLA thunks run on host threads."""
    kinds: Counter[int] = Counter()
    for c in collectors:
        kinds.update(c.thunk_kinds)
    notes = []
    if kinds[UNRESOLVED]:
        notes.append("%d XLA thunks ran HLO ops that the profile's HLO metadata does not "
                     "describe (%s): they are accounted as <module>/<hlo op>"
                     % (kinds[UNRESOLVED], _stored_programs(programs, broken)))
    if kinds[HLO_ONLY]:
        notes.append("%d XLA thunks ran HLO ops that name no framework op: they are "
                     "accounted as <module>/<hlo op>, typed by the HLO opcode"
                     % kinds[HLO_ONLY])
    return notes
