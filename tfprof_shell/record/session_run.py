"""The one way this package traces TF1 ``Session.run`` calls: a patch of ``BaseSession``.

``tfprof record`` (:mod:`.tf1`) and ``compat.ProfileContext`` (:mod:`tfprof_shell.profile_context`)
each give a :class:`RunTracer` that decides, call by call, whether to trace.
:class:`SessionRunPatch` replaces ``BaseSession.run`` (and, if asked, wraps the
callables of ``make_callable``); a call the tracer picks runs with the
``RunOptions`` and ``RunMetadata`` it returned (see :func:`full_trace`: the
program's own are kept and filled), and the tracer sees it again afterwards.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple, Optional, Protocol


class TracedCall(NamedTuple):
    """A call the tracer wants to see after it ran.

    ``options`` None runs the call with the program's own arguments (not
    traced); ``data`` is the tracer's own.
    """

    options: Any
    run_metadata: Any
    data: Any = None


class RunTracer(Protocol):
    """Decides which calls to trace and takes their results."""

    def before_run(self, session: Any, fetches: Any, feed_dict: Any, options: Any,
                   run_metadata: Any) -> Optional[TracedCall]:
        """A ``Session.run`` call is about to run: None lets it run untouched."""

    def before_callable(self, session: Any, fetches: Any, options: Any,
                        run_metadata: Any) -> Optional[TracedCall]:
        """A ``make_callable`` callable (made without a feed list) is about to run."""

    def after_run(self, session: Any, call: TracedCall) -> None:
        """A call :meth:`before_run` or :meth:`before_callable` picked has run."""


def full_trace(options: Any, run_metadata: Any) -> tuple[Any, Any]:
    """RunOptions asking for FULL_TRACE (a copy of ``options``) and a RunMetadata to fill.

    The program's ``run_metadata`` is used when it gave one, so it still
    receives the run's metadata.
    """
    from tensorflow.core.protobuf import config_pb2  # type: ignore

    traced = config_pb2.RunOptions()
    if options is not None:
        traced.CopyFrom(options)
    traced.trace_level = max(traced.trace_level, config_pb2.RunOptions.FULL_TRACE)
    if run_metadata is None:
        run_metadata = config_pb2.RunMetadata()
    return traced, run_metadata


#: Fetch structures larger than this are told apart by size only.
_MAX_LEAVES = 256


def fetch_key(fetches: Any) -> Any:
    """A hashable description of a fetch structure: tensor/op names in their nesting."""
    leaves = [0]

    def key(item: Any) -> Any:
        leaves[0] += 1
        if leaves[0] > _MAX_LEAVES:
            raise OverflowError
        if isinstance(item, (list, tuple)):
            return (type(item).__name__,) + tuple(key(i) for i in item)
        if isinstance(item, dict):
            return ("dict",) + tuple(sorted((str(k), key(v)) for k, v in item.items()))
        if isinstance(item, (str, bytes)):
            return item
        name = getattr(item, "name", None)
        return name if isinstance(name, str) else type(item).__name__

    try:
        return key(fetches)
    except OverflowError:
        return ("many", leaves[0])


class SessionRunPatch:
    """``BaseSession.run`` (and optionally ``make_callable``) routed through one tracer."""

    def __init__(self, tracer: RunTracer, callables: bool = False) -> None:
        self.tracer = tracer
        self.callables = callables
        self.active = False
        self._originals: dict[str, Callable] = {}
        self._patched: dict[str, Callable] = {}

    def install(self) -> None:
        """Patch ``BaseSession``; the patch passes calls straight through once uninstalled."""
        from tensorflow.python.client import session as tf_session  # type: ignore

        base = tf_session.BaseSession
        original_run = base.run
        original_make_callable = base.make_callable
        patch = self
        tracer = self.tracer

        @functools.wraps(original_run)
        def tfprof_session_run(self, fetches, feed_dict=None, options=None, run_metadata=None):
            call = None
            if patch.active:
                call = tracer.before_run(self, fetches, feed_dict, options, run_metadata)
            if call is None:
                return original_run(self, fetches, feed_dict, options, run_metadata)
            if call.options is None:
                result = original_run(self, fetches, feed_dict, options, run_metadata)
            else:
                result = original_run(self, fetches, feed_dict, call.options, call.run_metadata)
            tracer.after_run(self, call)
            return result

        @functools.wraps(original_make_callable)
        def tfprof_session_make_callable(self, fetches, feed_list=None, accept_options=False):
            made = original_make_callable(self, fetches, feed_list, accept_options)
            if feed_list is not None or not patch.active:  # TensorFlow runs these through run()
                return made
            return patch.wrap_callable(self, made, fetches, original_run)

        self._originals = {"run": original_run}
        self._patched = {"run": tfprof_session_run}
        if self.callables:
            self._originals["make_callable"] = original_make_callable
            self._patched["make_callable"] = tfprof_session_make_callable
        for name, fn in self._patched.items():
            setattr(base, name, fn)
        self.active = True

    def wrap_callable(self, session: Any, made: Callable, fetches: Any,
                      original_run: Callable) -> Callable:
        """A ``make_callable`` callable whose picked calls go through ``run`` with tracing."""
        patch = self
        tracer = self.tracer

        @functools.wraps(made)
        def tfprof_session_callable(*args, **kwargs):
            call = None
            if patch.active:
                call = tracer.before_callable(session, fetches, kwargs.get("options"),
                                              kwargs.get("run_metadata"))
            if call is None:
                return made(*args, **kwargs)
            if call.options is None:
                result = made(*args, **kwargs)
            else:
                result = original_run(session, fetches, None, call.options, call.run_metadata)
            tracer.after_run(session, call)
            return result

        return tfprof_session_callable

    def uninstall(self) -> None:
        """Restore ``BaseSession`` where nothing patched it after us; stop tracing either way."""
        from tensorflow.python.client import session as tf_session  # type: ignore

        self.active = False
        base = tf_session.BaseSession
        for name, fn in self._patched.items():
            if getattr(base, name, None) is fn:
                setattr(base, name, self._originals[name])
