"""TensorFlow's ProfileOptionBuilder: its presets and setters, as options dictionaries.

The dictionaries have TensorFlow's keys and meaning (see option_dicts.py);
compat.py re-exports the builder for ported scripts, and the web UI offers
its presets.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping, Optional, Sequence

TRAINABLE_VARIABLES = "_trainable_variables"


class ProfileOptionBuilder:
    """Builds the options dictionary, as TensorFlow's ProfileOptionBuilder does."""

    def __init__(self, options: Optional[Mapping[str, Any]] = None) -> None:
        if options is not None:
            self._options = copy.deepcopy(dict(options))
        else:
            self._options = _preset(100, "name", [".*"], False, ["micros"])

    @staticmethod
    def trainable_variables_parameter() -> dict[str, Any]:
        """Parameters of trainable variables, accounted by the displayed nodes only."""
        return _preset(10000, "name", [TRAINABLE_VARIABLES], True, ["params"])

    @staticmethod
    def float_operation() -> dict[str, Any]:
        """Float operations, largest first, nodes with at least one."""
        opts = _preset(10000, "float_ops", [".*"], True, ["float_ops"])
        opts["min_float_ops"] = 1
        return opts

    @staticmethod
    def time_and_memory(min_micros: int = 1, min_bytes: int = 1,
                        min_accelerator_micros: int = 0, min_cpu_micros: int = 0,
                        min_peak_bytes: int = 0, min_residual_bytes: int = 0,
                        min_output_bytes: int = 0) -> dict[str, Any]:
        """Time and memory, slowest first, with the given lower bounds."""
        opts = _preset(10000, "micros", [".*"], True, ["micros", "bytes"])
        opts.update(min_bytes=min_bytes, min_peak_bytes=min_peak_bytes,
                    min_residual_bytes=min_residual_bytes, min_output_bytes=min_output_bytes,
                    min_micros=min_micros, min_accelerator_micros=min_accelerator_micros,
                    min_cpu_micros=min_cpu_micros)
        return opts

    def build(self) -> dict[str, Any]:
        """A copy of the dictionary built so far."""
        return copy.deepcopy(self._options)

    def _set(self, **values: Any) -> "ProfileOptionBuilder":
        self._options.update(values)
        return self

    def with_max_depth(self, max_depth: int) -> "ProfileOptionBuilder":
        return self._set(max_depth=max_depth)

    def with_min_memory(self, min_bytes: int = 0, min_peak_bytes: int = 0,
                        min_residual_bytes: int = 0,
                        min_output_bytes: int = 0) -> "ProfileOptionBuilder":
        return self._set(min_bytes=min_bytes, min_peak_bytes=min_peak_bytes,
                         min_residual_bytes=min_residual_bytes,
                         min_output_bytes=min_output_bytes)

    def with_min_execution_time(self, min_micros: int = 0, min_accelerator_micros: int = 0,
                                min_cpu_micros: int = 0) -> "ProfileOptionBuilder":
        return self._set(min_micros=min_micros, min_accelerator_micros=min_accelerator_micros,
                         min_cpu_micros=min_cpu_micros)

    def with_min_parameters(self, min_params: int) -> "ProfileOptionBuilder":
        return self._set(min_params=min_params)

    def with_min_occurrence(self, min_occurrence: int) -> "ProfileOptionBuilder":
        return self._set(min_occurrence=min_occurrence)

    def with_min_float_operations(self, min_float_ops: int) -> "ProfileOptionBuilder":
        return self._set(min_float_ops=min_float_ops)

    def with_accounted_types(self, account_type_regexes: Sequence[str]) -> "ProfileOptionBuilder":
        return self._set(account_type_regexes=list(account_type_regexes))

    def with_node_names(self, start_name_regexes: Optional[Sequence[str]] = None,
                        show_name_regexes: Optional[Sequence[str]] = None,
                        hide_name_regexes: Optional[Sequence[str]] = None,
                        trim_name_regexes: Optional[Sequence[str]] = None
                        ) -> "ProfileOptionBuilder":
        given = {"start_name_regexes": start_name_regexes, "show_name_regexes": show_name_regexes,
                 "hide_name_regexes": hide_name_regexes, "trim_name_regexes": trim_name_regexes}
        return self._set(**{k: list(v) for k, v in given.items() if v is not None})

    def account_displayed_op_only(self, is_true: bool) -> "ProfileOptionBuilder":
        return self._set(account_displayed_op_only=is_true)

    def with_empty_output(self) -> "ProfileOptionBuilder":
        return self._set(output="none")

    def with_stdout_output(self) -> "ProfileOptionBuilder":
        return self._set(output="stdout")

    def with_file_output(self, outfile: str) -> "ProfileOptionBuilder":
        return self._set(output="file:outfile=%s" % outfile)

    def with_timeline_output(self, timeline_file: str) -> "ProfileOptionBuilder":
        return self._set(output="timeline:outfile=%s" % timeline_file)

    def with_pprof_output(self, pprof_file: str) -> "ProfileOptionBuilder":
        return self._set(output="pprof:outfile=%s" % pprof_file)

    def order_by(self, attribute: str) -> "ProfileOptionBuilder":
        return self._set(order_by=attribute)

    def select(self, attributes: Sequence[str]) -> "ProfileOptionBuilder":
        return self._set(select=list(attributes))

    def with_step(self, step: int) -> "ProfileOptionBuilder":
        return self._set(step=step)


def _preset(max_depth: int, order_by: str, account: list[str], displayed_only: bool,
            select: list[str]) -> dict[str, Any]:
    return {"max_depth": max_depth, "min_bytes": 0, "min_micros": 0, "min_params": 0,
            "min_float_ops": 0, "min_occurrence": 0, "order_by": order_by,
            "account_type_regexes": account, "start_name_regexes": [".*"],
            "trim_name_regexes": [], "show_name_regexes": [".*"], "hide_name_regexes": [],
            "account_displayed_op_only": displayed_only, "select": select, "step": -1,
            "output": "stdout"}
