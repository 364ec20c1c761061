"""THE attribute table: every `-select` attribute, `-order_by` key and `-min_*` filter.

Each row says what a name means once: which statistic it reads, how its
values print, its documentation line in the engine's ``Doc:`` block and a
help sentence for our shell. Parsing, completion, help, sorting, filtering
and every renderer read this table instead of keeping their own lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .model import stats as S

_TOTAL = "total execution time: Sum of accelerator execution time and cpu execution time."
_CPU = ("cpu execution time: The time from the start to the end of the operation. "
        "It's the sum of actual cpu run time plus the time that it spends waiting "
        "if part of computation is launched asynchronously.")
_ACCEL = ("accelerator execution time: Time spent executing on the accelerator. "
          "This is normally measured by the actual hardware library.")


@dataclass(frozen=True)
class Attribute:
    """One `-select` attribute.

    ``stat`` is the statistic index for numeric attributes (None for the
    descriptive ones); ``unit`` is "memory", "time" or "count";
    ``doc`` is the engine's Doc-block text; ``label`` its column in the
    engine's legend of tree views (``list_label`` in op/code views, when it
    differs); ``value_label`` names the one number a diff or an aggregate
    shows for a numeric attribute; ``pprof_comment`` is set for the
    attributes a pprof file can carry. tests/test_tables.py checks that
    every row has what each renderer reads.
    """

    name: str
    label: str
    help: str
    doc: str
    stat: Optional[int] = None
    unit: str = ""
    pprof_comment: str = ""
    list_label: str = ""
    value_label: str = ""

    def legend(self, list_view: bool) -> str:
        """The attribute's column title in the engine's legend line."""
        return (self.list_label or self.label) if list_view else self.label

    def number_label(self) -> str:
        """The title of the attribute's number in a diff or an aggregate."""
        return self.value_label or self.label


ATTRIBUTES: dict[str, Attribute] = {a.name: a for a in (
    Attribute("bytes", "requested bytes",
              "Memory requested by the operation, accumulated over its allocations.",
              "requested bytes: The memory requested by the operation, accumulatively.",
              S.REQUESTED, "memory",
              "Sum of operation total memory requests, excluding deallocations."),
    Attribute("peak_bytes", "peak bytes",
              "Peak memory the operation held at some point.",
              "peak bytes: The peak amount of memory that the operation is holding at some point.",
              S.PEAK, "memory", "Sum of operation peak memory usage."),
    Attribute("residual_bytes", "residual bytes",
              "Memory still allocated after the operation finished.",
              "residual bytes: The memory not de-allocated after the operation finishes.",
              S.RESIDUAL, "memory", "Sum of operation allocated memory after finish."),
    Attribute("output_bytes", "output bytes",
              "Memory of the operation's outputs.",
              "output bytes: The memory that is output from the operation "
              "(not necessarily allocated by the operation)",
              S.OUTPUT, "memory", "Sum of operation output size."),
    Attribute("micros", "total execution time",
              "Execution time: accelerator plus cpu time.",
              "\n".join((_TOTAL, _CPU, _ACCEL)), S.EXEC, "time",
              "Sum of accelerator execution time and cpu execution time."),
    Attribute("accelerator_micros", "accelerator execution time",
              "Time spent in accelerator (GPU) kernels.",
              _ACCEL, S.ACCEL, "time", "Accelerator execution time."),
    Attribute("cpu_micros", "cpu execution time",
              "Time from start to end of the op on its host device.",
              _CPU, S.CPU, "time", "CPU execution time."),
    Attribute("params", "# parameters",
              "Number of parameters (elements of variables).",
              "param: Number of parameters (in the Variable).", S.PARAMS, "count",
              "Model parameters."),
    Attribute("float_ops", "# float_ops",
              "Floating point operations, where a formula is registered.",
              "flops: Number of float operations. Note: Please read the implementation "
              "for the math behind it.", S.FLOPS, "count",
              "Model float operations (Only available if defined)."),
    Attribute("occurrence", "op count (run|defined)",
              "How many times the node ran, and how many nodes are defined.",
              "occurrence: The number of times it occurs", S.RUN_COUNT, "count",
              list_label="op occurrence (run|defined)", value_label="run count"),
    Attribute("tensor_value", "tensor value",
              "Checkpoint value of the variable (needs --checkpoint_path).",
              "tensor_value: Not supported now."),
    Attribute("device", "assigned devices",
              "Device the node was placed on.",
              "device: which device is placed on."),
    Attribute("op_types", "op types",
              "Op types of the node, with its device and user-defined types.",
              "op_types: The attributes of the operation, includes the Kernel name "
              "device placed on and user-defined strings."),
    Attribute("input_shapes", "input shapes",
              "Shapes of the node's input tensors.",
              "input shape: The shape of input tensors"),
)}

#: `-order_by` keys, in the engine's order, with the statistic each sorts by
#: (descending). ``name`` sorts ascending; ``occurrence`` sorts op/code
#: entries by their number of graph nodes and falls back to name elsewhere.
ORDER_KEYS: dict[str, Optional[int]] = {
    "name": None,
    "bytes": S.REQUESTED,
    "peak_bytes": S.PEAK,
    "residual_bytes": S.RESIDUAL,
    "output_bytes": S.OUTPUT,
    "micros": S.EXEC,
    "accelerator_micros": S.ACCEL,
    "cpu_micros": S.CPU,
    "params": S.PARAMS,
    "float_ops": S.FLOPS,
    "occurrence": None,
}

ORDER_HELP: dict[str, str] = {
    "name": "Node name, ascending.",
    "occurrence": "Number of graph nodes (op and code views); name elsewhere.",
}

#: `-min_*` option name -> the statistic it bounds. Which of a node's values
#: (self or total) is compared depends on the view; see engine/filter.py.
MIN_FILTERS: dict[str, int] = {
    "min_bytes": S.REQUESTED,
    "min_peak_bytes": S.PEAK,
    "min_residual_bytes": S.RESIDUAL,
    "min_output_bytes": S.OUTPUT,
    "min_micros": S.EXEC,
    "min_accelerator_micros": S.ACCEL,
    "min_cpu_micros": S.CPU,
    "min_params": S.PARAMS,
    "min_float_ops": S.FLOPS,
    "min_occurrence": S.RUN_COUNT,
}

#: Attributes a pprof file can carry (exactly one must be selected).
PPROF_ATTRIBUTES = tuple(a.name for a in ATTRIBUTES.values() if a.pprof_comment)


def order_help(key: str) -> str:
    """One sentence describing an `-order_by` key."""
    if key in ORDER_HELP:
        return ORDER_HELP[key]
    return "Total %s, descending." % key.replace("_", " ")


def doc_lines(select: frozenset[str] | set[str]) -> list[str]:
    """The engine's Doc-block entries for a select set, in sorted name order."""
    return [ATTRIBUTES[name].doc for name in sorted(select) if name in ATTRIBUTES]
