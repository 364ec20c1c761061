"""``Profiler``: TensorFlow 1's multi-step profiler (``tf.compat.v1.profiler.Profiler``) in Python.

    profiler = Profiler(sess.graph)            # or a GraphDef, its bytes or a path
    profiler.add_step(step, run_metadata)      # after each traced Session.run
    profiler.profile_operations(options=opts)  # prints, returns a MultiGraphNodeProto
    open("profile", "wb").write(profiler.serialize_to_string())

It grows a model step by step as TensorFlow's engine does (graph, op log,
then per step the graph again, the RunMetadata and the op log again) and
answers every view with this package's one engine, so any number of
profilers may live in one process. Results are the engine's messages,
wire-compatible with TensorFlow's; stdout output is printed in the Python
API's Options / Model Analysis Report frame.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Mapping, Optional

from .api import Profile, _from_tf_graph, _message
from .load.stepwise import StepwiseLog
from .model import Source
from .option_dicts import options_from_dict
from .options import Options, format_dump
from .proto import framework_pb2, tfprof_log_pb2, tfprof_output_pb2
from .render.profile_out import to_profile_proto

#: TensorFlow's ALL_ADVICE (JobChecker has no open-source implementation and is skipped).
ALL_ADVICE: dict[str, dict[str, Any]] = {
    "ExpensiveOperationChecker": {},
    "AcceleratorUtilizationChecker": {},
    "JobChecker": {},
    "OperationChecker": {},
}


def report_banner(opts: Options, text: str) -> str:
    """The frame TensorFlow's Python API prints around stdout output."""
    return ("\n=========================Options=============================\n%s"
            "\n==================Model Analysis Report======================\n%s"
            "\n======================End of Report==========================\n"
            % (format_dump(opts), text))


def show_view(prof: Profile, cmd: str, options: Mapping[str, Any]) -> Any:
    """View ``cmd`` with a TensorFlow options dict, printed as TensorFlow does; the result message."""
    opts, notes = options_from_dict(options)
    for note in notes:
        sys.stderr.write(note + "\n")
    result = prof.profile(cmd, opts, text=opts.output.kind == "stdout")
    if opts.output.kind == "stdout":
        sys.stdout.write(report_banner(opts, result.text))
    else:
        sys.stdout.write(result.text)
    for note in result.notes:
        sys.stderr.write(note + "\n")
    sys.stdout.flush()
    return result.proto()


def show_advice(prof: Profile, options: Optional[Mapping[str, Any]]) -> Any:
    """Run the checkers named in ``options`` (None: all) and print their advice; the AdviceProto."""
    checkers = [name for name in (options if options is not None else ALL_ADVICE)
                if name != "JobChecker"]
    if not checkers:  # the engine runs no checker and prints nothing
        return tfprof_output_pb2.AdviceProto()
    result = prof.advise(checkers)
    sys.stdout.write(result.text)
    sys.stdout.flush()
    for note in result.notes:
        sys.stderr.write(note + "\n")
    return result.proto()


def _default_graph() -> Any:
    """TensorFlow's default graph when TensorFlow is loaded and not executing eagerly."""
    if "tensorflow" not in sys.modules:
        return None
    from tensorflow.python.eager import context  # type: ignore
    from tensorflow.python.framework import ops  # type: ignore
    return None if context.executing_eagerly() else ops.get_default_graph()


def _parsed(data: bytes, cls: Any) -> Any:
    msg = cls()
    msg.ParseFromString(data)
    return msg


class Profiler:
    """TensorFlow's multi-step ``Profiler``: add steps, then profile, advise or serialize.

    ``graph`` may be a ``tf.Graph`` (default: TensorFlow's default graph when
    TensorFlow is loaded in graph mode), a GraphDef message, its binary or
    text bytes, or a path; ``op_log`` an OpLogProto, its bytes or a path.
    With a ``tf.Graph``, flops, trainable variables and code traces are
    logged by TensorFlow's own logger, at construction and at every step.
    """

    def __init__(self, graph: Any = None, op_log: Any = None) -> None:
        if graph is None:
            graph = _default_graph()
        self._graph = graph
        self._coverage = 0.0
        self._log = StepwiseLog()
        self._profile: Optional[Profile] = None
        self._op_log: Any = None
        if self._is_tf_graph():
            graph_bytes, log_bytes = _from_tf_graph(graph, [], op_log, True)
            self._log.add_graph(_parsed(graph_bytes, framework_pb2.GraphDef))
            self._log.add_op_log(_parsed(log_bytes, tfprof_log_pb2.OpLogProto))
            return
        graph_msg = _message(graph, framework_pb2.GraphDef, "graph", text_too=True)
        self._log.add_graph(graph_msg if graph_msg is not None else framework_pb2.GraphDef())
        self._op_log = _message(op_log, tfprof_log_pb2.OpLogProto, "op_log")
        self._log.add_op_log(self._op_log if self._op_log is not None
                             else tfprof_log_pb2.OpLogProto())

    def _is_tf_graph(self) -> bool:
        return self._graph is not None and hasattr(self._graph, "as_graph_def")

    def add_step(self, step: int, run_meta: Any) -> None:
        """Add one traced run's statistics as step ``step`` (ids may repeat, need not be consecutive).

        ``run_meta`` is a RunMetadata (ours or TensorFlow's), its bytes or a path.
        """
        if self._is_tf_graph():
            graph_bytes, log_bytes = _from_tf_graph(self._graph, [run_meta], None, True)
            self._log.add_graph(_parsed(graph_bytes, framework_pb2.GraphDef))
            op_log = _parsed(log_bytes, tfprof_log_pb2.OpLogProto)
        else:
            op_log = self._op_log
        meta = _message(run_meta, framework_pb2.RunMetadata, "run_meta", text_too=True)
        coverage = self._log.add_step(int(step), meta)
        if coverage is None:
            sys.stderr.write("Invalid RunMetadata for step %d\n" % int(step))
        else:
            self._coverage = coverage
        if op_log is not None:
            self._log.add_op_log(op_log)

    @property
    def steps(self) -> list[int]:
        """The step ids added so far, ascending."""
        return self._log.steps

    def to_profile(self) -> Profile:
        """A :class:`~tfprof_shell.api.Profile` of all steps so far (it runs shell lines too)."""
        model, _ = self._log.build(Source("python"))
        if self._profile is None or self._profile.model is not model:
            self._profile = Profile(model)
        return self._profile

    def profile_python(self, options: Mapping[str, Any]) -> Any:
        """The code view (Python call stacks); returns a MultiGraphNodeProto."""
        return show_view(self.to_profile(), "code", options)

    def profile_operations(self, options: Mapping[str, Any]) -> Any:
        """The op view (operation types); returns a MultiGraphNodeProto."""
        return show_view(self.to_profile(), "op", options)

    def profile_name_scope(self, options: Mapping[str, Any]) -> Any:
        """The scope view (name scopes); returns a GraphNodeProto."""
        return show_view(self.to_profile(), "scope", options)

    def profile_graph(self, options: Mapping[str, Any]) -> Any:
        """The graph view (data flow); returns a GraphNodeProto."""
        return show_view(self.to_profile(), "graph", options)

    def advise(self, options: Optional[Mapping[str, Any]] = None) -> Any:
        """Run the checkers named in ``options`` (default: ALL_ADVICE); returns an AdviceProto."""
        return show_advice(self.to_profile(), options)

    def serialize_to_string(self) -> bytes:
        """The profile as a binary ProfileProto (``tfprof --profile_path`` opens it)."""
        model, extras = self._log.build(Source("python"))
        return to_profile_proto(model, extras).SerializeToString()

    def _write_profile(self, filename: Any) -> None:
        """Write :meth:`serialize_to_string` to ``filename`` (str, bytes or a path)."""
        with open(os.fsdecode(filename), "wb") as fh:
            fh.write(self.serialize_to_string())
