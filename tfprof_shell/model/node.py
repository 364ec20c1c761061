"""Graph nodes and their per-step execution records.

A :class:`GraphNode` is one TensorFlow op (or a run-time-only node that
appeared only in run metadata) with its static facts (op type, shape,
inputs, code trace) and one :class:`ExecStep` per step it ran in. Every
view reads a node's statistics through :meth:`GraphNode.stats`, which
derives them once per step and caches them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, NamedTuple, Optional, Protocol, Sequence

from .stats import ZERO_SELF


class Frame(NamedTuple):
    """One Python call-stack frame that created a node (outermost first)."""

    file: str
    lineno: int
    function: str
    func_start_line: int


@dataclass
class ExecMemory:
    """Memory facts of one execution of a node on its canonical device."""

    memory_micros: int = 0
    host_temp_bytes: int = 0
    host_persistent_bytes: int = 0
    accelerator_temp_bytes: int = 0
    accelerator_persistent_bytes: int = 0
    requested_bytes: int = 0
    peak_bytes: int = 0
    residual_bytes: int = 0
    output_bytes: int = 0
    allocator_bytes_in_use: int = 0
    #: output slot -> (bytes, ptr)
    output_memory: dict[int, tuple[int, int]] = field(default_factory=dict)


@dataclass
class ExecStep:
    """What one node did in one step (possibly several executions)."""

    run_count: int = 0
    all_start_micros: int = 0
    latest_end_micros: int = 0
    #: device -> [(start_micros, exec_micros)] on accelerator streams (stream:all)
    accelerator_execs: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    #: device -> [(start_micros, exec_micros)] on canonical (cpu/gpu) devices
    cpu_execs: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    devices: set[str] = field(default_factory=set)
    memory_execs: list[ExecMemory] = field(default_factory=list)
    #: accelerator allocation records: (alloc_micros, alloc_bytes)
    allocations: list[tuple[int, int]] = field(default_factory=list)

    def accelerator_micros(self) -> int:
        return sum(d for execs in self.accelerator_execs.values() for _, d in execs)

    def cpu_micros(self) -> int:
        return sum(d for execs in self.cpu_execs.values() for _, d in execs)

    def op_execs(self) -> dict[str, list[tuple[int, int]]]:
        """Accelerator and cpu executions together, by device."""
        merged = {dev: list(v) for dev, v in self.accelerator_execs.items()}
        for dev, v in self.cpu_execs.items():
            merged.setdefault(dev, []).extend(v)
        return merged

    def values(self) -> tuple[int, int, int, int, int, int, int, int]:
        """(run_count, exec, accelerator, cpu, requested, peak, residual, output)."""
        # Plain loops: this runs once per record when a model is summarized.
        acc = 0
        for execs in self.accelerator_execs.values():
            for _, d in execs:
                acc += d
        cpu = 0
        for execs in self.cpu_execs.values():
            for _, d in execs:
                cpu += d
        requested = peak = residual = output = 0
        for m in self.memory_execs:
            requested += m.requested_bytes
            peak += m.peak_bytes
            residual += m.residual_bytes
            output += m.output_bytes
        return (self.run_count, acc + cpu, acc, cpu, requested, peak, residual, output)


ZERO_VALUES: tuple[int, ...] = (0,) * 8


class ExecSource(Protocol):
    """Where a loader keeps per-step records it has not turned into objects yet."""

    def step_values(self, key: int, step: int) -> tuple[int, ...]:
        """The :meth:`ExecStep.values` of node ``key`` in ``step`` (it ran then)."""

    def step_record(self, key: int, step: int) -> ExecStep:
        """The ExecStep of node ``key`` in ``step`` (it ran then)."""

    def steps_values(self, key: int, steps: Sequence[int]) -> Optional[list[Sequence[int]]]:
        """:meth:`step_values` of each of ``steps`` (steps node ``key`` ran in), at once;
        None when the source would first have to read what it deferred (a summary
        then leaves the values to a reload of the profile)."""


class LazyExecs(NamedTuple):
    """A node's records, still in its loader's ExecSource.

    ``steps`` are the steps the node ran in; ``totals`` sums each of the
    :meth:`ExecStep.values` over those steps, which is all the default
    (averaged) statistics need.
    """

    source: ExecSource
    key: int
    steps: tuple[int, ...]
    totals: tuple[int, ...]
    #: False only if no step has accelerator persistent memory (spares reading records).
    accelerator_persistent: bool = True


def _average(sums: tuple[int, ...], n: int) -> tuple[int, ...]:
    """``sums`` divided by a step count ``n`` > 0 as C++ divides (truncating toward zero)."""
    if n == 1:
        return sums
    return tuple([v // n if v >= 0 else -(-v // n) for v in sums])


class GraphNode:
    """One node of the profiled graph. Built by a loader, then read-only."""

    __slots__ = ("name", "id", "op", "_op_types", "shape", "_output_shapes", "_inputs",
                 "_src_output", "canonical_device", "host_device", "float_ops", "_trace",
                 "_trace_source", "_attrs", "_deferred", "_execs", "_lazy", "_step1",
                 "_stats1", "_stats", "_input_shapes", "_params")

    def __init__(self, name: str, op: str, node_id: int = -1) -> None:
        self.name = name
        self.id = node_id
        self.op = op
        # Behind properties (op_types, inputs, output_shapes, src_output, attrs)
        # so that a loader can defer them; see defer_details.
        self._op_types: set[str] = {op} if op else set()
        #: Static shape (variables, placeholders): [] when unknown or absent.
        self.shape: list[int] = []
        self._inputs: dict[int, str] = {}
        self._output_shapes: dict[int, list[int]] = {}
        self._src_output: dict[str, int] = {}
        self._attrs: dict[str, str] = {}
        #: What a loader deferred of these: field group -> filler.
        self._deferred: Optional[dict[str, Callable[["GraphNode"], None]]] = None
        self.canonical_device = ""
        self.host_device = ""
        self.float_ops = 0
        self._trace: Optional[list[Frame]] = None
        #: A loader may defer resolving the trace: a function returning it.
        self._trace_source: Optional[Callable[[], list[Frame]]] = None
        #: step -> execution record (see :attr:`execs`)
        self._execs: dict[int, ExecStep] = {}
        self._lazy: Optional[LazyExecs] = None
        # stats() cache: the first step asked (most sessions ask one), then a dict
        # for the others, made on first need (a large model has 50k nodes).
        self._step1: Optional[int] = None
        self._stats1: tuple[int, ...] = ()
        self._stats: Optional[dict[int, tuple[int, ...]]] = None
        self._input_shapes: Optional[dict[int, list[int]]] = None
        self._params: Optional[int] = None

    def __repr__(self) -> str:
        return "GraphNode(%r, op=%r)" % (self.name, self.op)

    # -- static facts --------------------------------------------------------

    @property
    def trace(self) -> Optional[list[Frame]]:
        """The Python call stack that created the node (outermost first), or None."""
        if self._trace is None and self._trace_source is not None:
            self._trace = self._trace_source()
            self._trace_source = None
        return self._trace

    @trace.setter
    def trace(self, frames: Optional[list[Frame]]) -> None:
        self._trace = frames
        self._trace_source = None

    def defer_trace(self, source: Callable[[], list[Frame]]) -> None:
        """Resolve the trace only when a view asks for it (loading stays fast)."""
        self._trace = None
        self._trace_source = source

    @property
    def trace_deferred(self) -> bool:
        """Whether the trace is still to be resolved (reading ``trace`` would do it)."""
        return self._trace_source is not None

    def defer_details(self, shapes: Optional[Callable[["GraphNode"], None]],
                      attrs: Optional[Callable[["GraphNode"], None]],
                      inputs: Optional[Callable[["GraphNode"], None]] = None,
                      types: Optional[Callable[["GraphNode"], None]] = None) -> None:
        """Fill node facts only when something reads them; each filler runs once.

        ``shapes(node)`` sets :attr:`output_shapes` and :attr:`src_output`
        (only ``-select input_shapes`` reads them); ``attrs(node)`` sets
        :attr:`attrs` (only the advisor reads them); ``inputs(node)`` sets
        :attr:`inputs` (the graph view, input shapes); ``types(node)`` sets
        :attr:`op_types` (the op view, account regexes other than ``.*``).
        None: that group is as set.
        """
        deferred = {}
        if shapes is not None:
            deferred["shapes"] = shapes
        if attrs is not None:
            deferred["attrs"] = attrs
        if inputs is not None:
            deferred["inputs"] = inputs
        if types is not None:
            deferred["types"] = types
        self._deferred = deferred or None

    def details_deferred(self, group: str) -> bool:
        """Whether the ``group`` of :meth:`defer_details` is still to be filled."""
        return self._deferred is not None and group in self._deferred

    def _fill(self, group: str) -> None:
        deferred = self._deferred
        if deferred is not None:
            filler = deferred.pop(group, None)
            if not deferred:
                self._deferred = None
            if filler is not None:
                filler(self)

    def _drop(self, group: str) -> None:
        """Forget the filler of ``group`` (its field is being set)."""
        deferred = self._deferred
        if deferred is not None:
            deferred.pop(group, None)
            if not deferred:
                self._deferred = None

    @property
    def op_types(self) -> set[str]:
        """The node's types: its op, its canonical device, user-given types."""
        if self._deferred is not None:
            self._fill("types")
        return self._op_types

    @op_types.setter
    def op_types(self, value: set[str]) -> None:
        self._drop("types")
        self._op_types = value

    @property
    def inputs(self) -> dict[int, str]:
        """input index -> source node name (data and control inputs)."""
        if self._deferred is not None:
            self._fill("inputs")
        return self._inputs

    @inputs.setter
    def inputs(self, value: dict[int, str]) -> None:
        self._drop("inputs")
        self._inputs = value

    @property
    def src_output(self) -> dict[str, int]:
        """source node name -> output slot of that source."""
        if self._deferred is not None:
            self._fill("shapes")
        return self._src_output

    @src_output.setter
    def src_output(self, value: dict[str, int]) -> None:
        self._fill("shapes")
        self._src_output = value

    @property
    def output_shapes(self) -> dict[int, list[int]]:
        """output slot -> dims ([] = unknown rank)."""
        if self._deferred is not None:
            self._fill("shapes")
        return self._output_shapes

    @output_shapes.setter
    def output_shapes(self, value: dict[int, list[int]]) -> None:
        self._fill("shapes")
        self._output_shapes = value

    @property
    def attrs(self) -> dict[str, str]:
        """Node attributes; only string-valued ones are kept (views read data_format)."""
        if self._deferred is not None:
            self._fill("attrs")
        return self._attrs

    @attrs.setter
    def attrs(self, value: dict[str, str]) -> None:
        self._fill("attrs")
        self._attrs = value

    @property
    def parameters(self) -> int:
        """Product of the static shape, 0 if it is absent or has unknown dims."""
        if self._params is None:
            params = 0
            if self.shape and all(d >= 0 for d in self.shape):
                params = 1
                for d in self.shape:
                    params *= d
            self._params = params
        return self._params

    def input_shapes(self, nodes: dict[str, "GraphNode"]) -> dict[int, list[int]]:
        """input index -> shape of that input ([] when unknown), by input index."""
        if self._input_shapes is None:
            shapes: dict[int, list[int]] = {}
            for idx in sorted(self.inputs):
                src_name = self.inputs[idx]
                src = nodes.get(src_name)
                slot = self.src_output.get(src_name)
                shape: list[int] = []
                if src is not None and slot is not None:
                    shape = src.output_shapes.get(slot, [])
                shapes[idx] = shape
            self._input_shapes = shapes
        return self._input_shapes

    # -- per-step records ----------------------------------------------------

    @property
    def execs(self) -> dict[int, ExecStep]:
        """step -> execution record, for every step the node ran in.

        Records a loader deferred are made here, all at once; prefer
        :meth:`exec_step` and :attr:`steps_run` where one step will do.
        """
        lazy = self._lazy
        if lazy is not None:
            for step in lazy.steps:
                if step not in self._execs:
                    self._execs[step] = lazy.source.step_record(lazy.key, step)
            self._lazy = None
        return self._execs

    @execs.setter
    def execs(self, records: dict[int, ExecStep]) -> None:
        self._execs = records
        self._lazy = None
        self._step1 = self._stats = None

    def defer_execs(self, lazy: LazyExecs) -> None:
        """Leave the records in ``lazy.source`` until a view needs them."""
        self._execs = {}
        self._lazy = lazy
        self._step1 = self._stats = None

    @property
    def steps_run(self) -> tuple[int, ...]:
        """The steps the node ran in (record order)."""
        lazy = self._lazy
        return lazy.steps if lazy is not None else tuple(self._execs)

    def has_run(self) -> bool:
        """True if the node has an execution record for any step."""
        lazy = self._lazy
        return bool(lazy.steps) if lazy is not None else bool(self._execs)

    def exec_step(self, step: int) -> Optional[ExecStep]:
        """The record of ``step``, or None if the node did not run in it."""
        rec = self._execs.get(step)
        if rec is None:
            lazy = self._lazy
            if lazy is not None and step in lazy.steps:
                rec = self._execs[step] = lazy.source.step_record(lazy.key, step)
        return rec

    def accelerator_persistent_bytes(self) -> int:
        """The largest per-step sum of accelerator persistent bytes (timeline memory)."""
        lazy = self._lazy
        if lazy is not None and not lazy.accelerator_persistent:
            return 0
        return max((sum(m.accelerator_persistent_bytes for m in rec.memory_execs)
                    for rec in (self.exec_step(s) for s in self.steps_run) if rec is not None),
                   default=0)

    # -- per-step statistics -------------------------------------------------

    def stats(self, step: int) -> tuple[int, ...]:
        """Self statistics for ``step`` (indexed by model.stats), cached.

        ``step < 0`` averages over the steps this node ran in, truncating,
        as the engine does; a step the node did not run in gives zeros.
        """
        if step == self._step1:
            return self._stats1
        more = self._stats
        if more is not None:
            cached = more.get(step)
            if cached is not None:
                return cached
        lazy = self._lazy
        if lazy is not None:
            ran = bool(lazy.steps)
            if not ran:
                values = ZERO_VALUES
            elif step >= 0:
                values = (lazy.source.step_values(lazy.key, step) if step in lazy.steps
                          else ZERO_VALUES)
            else:
                values = _average(lazy.totals, len(lazy.steps))
        else:
            execs = self._execs
            ran = bool(execs)
            if not ran:
                values = ZERO_VALUES
            elif step >= 0:
                rec = execs.get(step)
                values = rec.values() if rec is not None else ZERO_VALUES
            else:
                sums = tuple(map(sum, zip(*(rec.values() for rec in execs.values()))))
                values = _average(sums, len(execs))
        float_ops = self.float_ops * values[0] if ran else self.float_ops
        params = self.parameters
        if values is ZERO_VALUES and not params and not float_ops:
            result = ZERO_SELF  # most nodes of a large model: one tuple for all
        else:
            result = values + (params, float_ops)
        if self._step1 is None:
            self._step1, self._stats1 = step, result
        elif more is None:
            self._stats = {step: result}
        else:
            more[step] = result
        return result

    def trackable(self, step: int) -> bool:
        """True if the node has timing for ``step`` on a known device (timeline)."""
        rec = self.exec_step(step)
        return (rec is not None and rec.all_start_micros != 0
                and bool(self.canonical_device) and bool(self.host_device))


#: The containers every ScopeNode shares; nothing writes them (see ScopeNode).
_NO_ITEMS: dict = {}
_NO_DIMS: list[int] = []
_TYPES: dict[str, set[str]] = {}


class ScopeNode(GraphNode):
    """The graph node of a name scope that is no node of the profile: no facts, never ran.

    The scope view makes one per such scope, tens of thousands in a large
    model, so its containers are shared empty ones instead of its own.
    Nothing writes them: loaders fill only the nodes they made.
    """

    __slots__ = ()

    def __init__(self, name: str, op: str) -> None:
        # Every field of GraphNode.__init__, set here instead (tests check it).
        self.name = name
        self.id = -1
        self.op = op
        types = _TYPES.get(op)
        if types is None:
            types = _TYPES[op] = {op}
        self._op_types = types
        self.shape = _NO_DIMS
        self._inputs = _NO_ITEMS
        self._output_shapes = _NO_ITEMS
        self._src_output = _NO_ITEMS
        self._attrs = _NO_ITEMS
        self._deferred = None
        self.canonical_device = ""
        self.host_device = ""
        self.float_ops = 0
        self._trace = None
        self._trace_source = None
        self._execs = _NO_ITEMS
        self._lazy = None
        self._step1 = None
        self._stats1 = ()
        self._stats = None
        self._input_shapes = None
        self._params = None

    def stats(self, step: int) -> tuple[int, ...]:
        return ZERO_SELF
