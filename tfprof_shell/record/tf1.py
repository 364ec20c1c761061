"""TF1 graph mode: trace training steps of ``Session.run`` with FULL_TRACE.

``BaseSession.run`` and ``make_callable`` are patched (:mod:`.session_run`). Each call made from the
main thread is counted by its signature (graph, fetches, fed keys); calls of
the dominant signature are the training steps (MonitoredTrainingSession's
hooks add their fetches to the same real ``run``). After ``--warmup`` steps,
every ``--every``-th step runs with ``trace_level=FULL_TRACE`` (the program's
own RunOptions and RunMetadata are kept and filled), up to ``--max_steps``.
Each traced step writes ``run_meta_<step>``; the first one (and any after the
graph grew) also writes ``graph.pb`` and ``op_log``.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, NamedTuple, Optional

from . import layout
from .marked_steps import Guarded
from .oplog import build_op_log
from .process import ProcessRecording
from .session_run import SessionRunPatch, TracedCall, fetch_key, full_trace
from .steps import Dominant, StepPlan


class _Step(NamedTuple):
    step: int
    fed_shapes: dict


def feed_key(feed_dict: Any) -> tuple:
    """The names of the fed tensors, sorted."""
    if not feed_dict:
        return ()
    names = []
    for k in feed_dict:
        name = getattr(k, "name", k)
        names.append(name if isinstance(name, str) else repr(name))
    return tuple(sorted(names))


def fed_shapes(feed_dict: Any) -> dict[str, list]:
    """Fed tensor name -> the shape of the value fed (values without a shape left out)."""
    shapes = {}
    for k, value in feed_dict.items():
        name = getattr(k, "name", k)
        shape = getattr(value, "shape", None)
        if isinstance(name, str) and isinstance(shape, tuple):
            shapes[name] = list(shape)
    return shapes


class SessionRecorder(Guarded):
    """Counts ``Session.run`` calls and traces the chosen training steps."""

    failure_label = "Session.run"

    def __init__(self, recording: ProcessRecording, other_profiler_active: Callable[[], bool]):
        self.recording = recording
        self.plan = StepPlan(recording.settings)
        self.dominant = Dominant()
        self.other_profiler_active = other_profiler_active
        self.main_thread = threading.main_thread().ident
        self.graph_version: Optional[tuple[int, int]] = None
        self.done = False
        recording.counters.append(lambda: max(self.dominant.counts.values(), default=0))

    def install(self) -> None:
        """Patch ``BaseSession.run`` and ``BaseSession.make_callable``."""
        SessionRunPatch(self, callables=True).install()

    def wanted(self) -> bool:
        """Whether calls are still counted: recording goes on, and this is the main thread."""
        return not self.done and threading.get_ident() == self.main_thread

    def before_run(self, session: Any, fetches: Any, feed_dict: Any, options: Any,
                   run_metadata: Any) -> Optional[TracedCall]:
        """Count a ``run`` call; its tracing if it is a step to trace."""
        if not self.wanted():
            return None
        return self.guard(self._before_run, session, fetches, feed_dict, options, run_metadata)

    def before_callable(self, session: Any, fetches: Any, options: Any,
                        run_metadata: Any) -> Optional[TracedCall]:
        """Count a ``make_callable`` call; its tracing if it is a step to trace."""
        if not self.wanted():
            return None
        key = ("callable", id(session.graph), fetch_key(fetches))
        return self.guard(self.before, session, key, options, run_metadata)

    def after_run(self, session: Any, call: TracedCall) -> None:
        """Write what the traced step gave."""
        self.guard(self.after, session, call)

    def _before_run(self, session: Any, fetches: Any, feed_dict: Any, options: Any,
                    run_metadata: Any) -> Optional[TracedCall]:
        key = (id(session.graph), fetch_key(fetches), feed_key(feed_dict))
        traced = self.before(session, key, options, run_metadata)
        if traced is not None and feed_dict:
            traced.data.fed_shapes.update(fed_shapes(feed_dict))
        return traced

    def before(self, session: Any, key: Any, options: Any,
               run_metadata: Any) -> Optional[TracedCall]:
        """Count the call; the tracing options if it is a step to trace."""
        step = self.dominant.step_of(key)
        if step is None or not self.plan.wants(step):
            return None
        if self.other_profiler_active():  # tracing now would take its place: try later
            self.recording.note("waited for the program's own profiler to stop")
            if not self.recording.steps:
                self.plan.warmup = step + 1
            return None
        if not self.recording.claim(layout.KIND_TF1, "Session.run"):
            self.done = True
            return None
        self.dominant.lock(key)
        traced_options, run_metadata = full_trace(options, run_metadata)
        return TracedCall(traced_options, run_metadata, _Step(step, {}))

    def after(self, session: Any, call: TracedCall) -> None:
        """Write the step's RunMetadata (and the graph and op log when they are new)."""
        traced = call.data
        rec = self.recording
        with rec.lock, rec.timed():
            graph = session.graph
            version = (id(graph), graph.version)
            if version != self.graph_version:
                rec.write(layout.GRAPH, graph.as_graph_def(add_shapes=True).SerializeToString())
                rec.write(layout.OP_LOG, build_op_log(graph, call.run_metadata,
                                                      traced.fed_shapes))
                self.graph_version = version
            rec.write(layout.run_meta_name(traced.step), call.run_metadata.SerializeToString())
            if traced.step >= self.plan.last():
                rec.status = "complete"
                self.done = True
            rec.add_step(traced.step)
