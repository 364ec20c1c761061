"""Drop-in stand-ins for TensorFlow 1's profiler API.

``profile``, ``advise``, ``ProfileOptionBuilder`` and ``Profiler`` stand in for
``tf.compat.v1.profiler``'s; ``ProfileContext`` for ``tf.contrib.tfprof``'s.

A script written against TensorFlow's profiler ports by changing its import::

    from tfprof_shell import compat as profiler
    opts = profiler.ProfileOptionBuilder.time_and_memory()
    node = profiler.profile(graph="graph.pb", run_meta="run_meta", cmd="scope", options=opts)

Options dictionaries have the same keys and meaning as TensorFlow's; note
that a key *missing* from a dictionary means what it means to TensorFlow
(for example no ``show_name_regexes`` shows only the root), not our shell's
default. Results are the engine's GraphNodeProto / MultiGraphNodeProto /
AdviceProto (wire-compatible with TensorFlow's). Mistakes raise
:class:`~tfprof_shell.errors.UserError` instead of printing and returning
an empty message.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping, Optional, Sequence

from .api import Profile
from .errors import OptionError
from .option_dicts import options_from_dict
from .profiler import ALL_ADVICE, Profiler, report_banner, show_advice, show_view
from .record.context import ProfileContext

__all__ = ["ALL_ADVICE", "ProfileContext", "ProfileOptionBuilder", "Profiler", "advise",
           "options_from_dict", "profile", "report_banner"]

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


def profile(graph: Any = None, run_meta: Any = None, op_log: Any = None, cmd: str = "scope",
            options: Optional[Mapping[str, Any]] = None, *,
            profile_path: Optional[str] = None) -> Any:
    """Profile one model with one command, as ``tf.compat.v1.profiler.profile`` does.

    ``graph``, ``run_meta`` and ``op_log`` may be file paths, messages
    (ours or TensorFlow's) or serialized bytes; ``graph`` may also be a
    ``tf.Graph``. ``profile_path`` loads a ProfileProto instead. The default
    options are ``trainable_variables_parameter()``. Returns the engine's
    GraphNodeProto (scope, graph) or MultiGraphNodeProto (op, code); stdout
    output is printed in TensorFlow's Options / Model Analysis Report frame.
    """
    if cmd not in ("scope", "graph", "op", "code"):
        raise OptionError("unknown cmd: %s (use scope, graph, op or code)" % cmd)
    if options is None:
        options = ProfileOptionBuilder.trainable_variables_parameter()
    if profile_path is not None:
        prof = Profile.load(profile_path=profile_path)
    else:
        prof = Profile.from_messages(graph, [run_meta] if run_meta is not None else [],
                                     op_log, add_trace=cmd == "code")
    return show_view(prof, cmd, options)


def advise(graph: Any = None, run_meta: Any = None,
           options: Optional[Mapping[str, Any]] = None, *,
           profile_path: Optional[str] = None) -> Any:
    """Run the advisor's checkers, as ``tf.compat.v1.profiler.advise`` does.

    ``options`` maps checker names to (ignored) option dicts; default: all.
    Prints the advice and returns it as an AdviceProto.
    """
    if profile_path is not None:
        prof = Profile.load(profile_path=profile_path)
    else:
        prof = Profile.from_messages(graph, [run_meta] if run_meta is not None else [],
                                     None, add_trace=True)
    return show_advice(prof, options)
