"""JAX: find the training step among ``jax.jit`` functions and profile a few steps.

``jax.jit`` is wrapped so each jitted function it returns is a thin proxy
(:class:`JitProxy`) that passes everything through and counts its top-level
calls (made from the main thread, outside any JAX transformation). The most
called function is the step. JAX returns before the work runs, so a step's
marker (``StepTraceAnnotation("train", step_num=N)``, which the loader reads
as step N) spans from its call to the next call of the step, closed only
once that call's inputs, the step's results, are ready; it opens only once
its own inputs are ready, so earlier steps still running stay out of it.

One ``jax.profiler.start_trace``/``stop_trace`` session covers the traced
steps; it writes ``plugins/profile/<run>/<host>.xplane.pb`` into a staging
folder whose run is then moved into the process folder. The Python tracer is
on only with ``--python_tracer``. ``jax.profiler.start_trace`` is wrapped: if
the program starts its own trace, ours is saved and stops first; while the
program's runs, ours does not start.
"""

from __future__ import annotations

import functools
import threading
import types
from typing import Any, Callable, Optional

from . import layout
from .process import ProcessRecording
from .sigterm import SigtermSave
from .steps import Dominant, StepPlan

ROUTE = "jax.jit"


class JitProxy:
    """A jitted function, counted when called at top level; transparent otherwise."""

    __slots__ = ("_jitted", "_recorder", "__weakref__")

    def __init__(self, jitted: Any, recorder: "JaxRecorder") -> None:
        object.__setattr__(self, "_jitted", jitted)
        object.__setattr__(self, "_recorder", recorder)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        rec = self._recorder
        if not rec.watching():
            return self._jitted(*args, **kwargs)
        opened = rec.guard(rec.called, self, args, kwargs)
        out = self._jitted(*args, **kwargs)
        if opened:
            rec.last_out = out
        return out

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else types.MethodType(self, obj)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._jitted, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._jitted, name, value)

    def __repr__(self) -> str:
        return repr(self._jitted)

    @property
    def __doc__(self) -> Optional[str]:  # type: ignore[override]
        return getattr(self._jitted, "__doc__", None)

    @property
    def __wrapped__(self) -> Any:
        return self._jitted


class JaxRecorder:
    """Counts jitted calls, marks the traced steps, runs the profiler session."""

    def __init__(self, recording: ProcessRecording) -> None:
        self.recording = recording
        self.plan = StepPlan(recording.settings)
        self.functions = Dominant()
        self.marker: Any = None
        self.marker_step = -1
        self.last_out: Any = None
        self.active = False
        self.used = False
        self.done = False
        self.main_thread = threading.main_thread().ident
        self.sigterm = SigtermSave(recording)
        self.top_level: Callable[[], bool] = lambda: True
        self._start: Any = None
        self._stop: Any = None
        self._other_running: Callable[[], bool] = lambda: False
        recording.finishers.append(self.stop)
        recording.counters.append(lambda: max([0] + list(self.functions.counts.values())))

    def watching(self) -> bool:
        """Whether a call now is a top-level call to count."""
        return (not self.done and threading.get_ident() == self.main_thread
                and self.top_level())

    def guard(self, fn: Callable, *args: Any) -> Any:
        """Run one of our steps; an internal error stops recording and returns None."""
        try:
            return fn(*args)
        except Exception as exc:
            self.done = True
            self.recording.fail("JAX step detection", exc)
            return None

    # -- the state machine ---------------------------------------------------
    def called(self, proxy: JitProxy, args: tuple, kwargs: dict) -> bool:
        """A top-level call of ``proxy`` is about to run: whether it opens a traced step."""
        step = self.functions.step_of(id(proxy))
        if step is None:
            return False
        if self.marker is not None:
            self._block(args, kwargs)  # the previous step's results are this call's inputs
            last = self.marker_step >= self.plan.last()
            self.close_marker()
            if last:
                self.stop("complete")
                return False
        if not self.begin(step, args, kwargs):
            return False
        self.functions.lock(id(proxy))
        return True

    def begin(self, step: int, args: tuple, kwargs: dict) -> bool:
        if self.done or not self.plan.wants(step):
            return False
        self._block(args, kwargs)  # earlier steps still running would count in this one
        if not self.recording.claim(layout.KIND_JAX, ROUTE):
            return False
        if not self.active and not self.start():
            if self.used:
                self.done = True
            else:
                self.recording.note("waited for the program's own profiler to stop")
                self.plan.warmup = step + 1
            return False
        import jax

        marker = jax.profiler.StepTraceAnnotation("train", step_num=step)
        marker.__enter__()
        self.marker, self.marker_step = marker, step
        return True

    def close_marker(self) -> bool:
        marker, self.marker = self.marker, None
        if marker is None:
            return False
        marker.__exit__(None, None, None)
        self.last_out = None
        self.recording.steps.append(self.marker_step)
        return True

    def stop(self, status: str) -> None:
        """Close the open marker (its results waited for) and save the session."""
        with self.recording.lock:
            self.done = True
            if self.marker is not None:
                self._block(self.last_out, None)
                self.close_marker()
            if self.active:
                self.save()
                if self.recording.status == "recording":
                    self.recording.status = status
                self.recording.save()

    @staticmethod
    def _block(args: Any, kwargs: Any) -> None:
        import jax

        try:
            jax.block_until_ready((args, kwargs))
        except Exception:  # donated or deleted buffers: nothing more to wait for
            pass

    # -- the profiler session ---------------------------------------------------
    def start(self) -> bool:
        """Start the trace (once per process); False while the program's own runs."""
        if self.used or self._other_running():
            return False
        import jax

        options = jax.profiler.ProfileOptions()
        options.python_tracer_level = 1 if self.recording.settings.python_tracer else 0
        self.used = True
        with self.recording.timed():
            self._start(self.recording.staging(), profiler_options=options)
        self.active = True
        self.sigterm.catch()
        return True

    def save(self) -> None:
        """Stop the trace and move its run into the process folder."""
        if not self.active:
            return
        self.active = False
        self.sigterm.release()
        with self.recording.timed():
            self._stop()
        self.recording.adopt_runs(self.recording.staging())

    def give_way(self) -> None:
        """The program starts its own trace: save ours (what it traced so far) and stop."""
        self.recording.note("gave way to the program's own profiler")
        if self.recording.status == "recording":
            self.recording.status = "gave way"
        self.done = True
        if self.marker is not None:
            self._block(self.last_out, None)
            self.close_marker()
        self.save()

    # -- patches -----------------------------------------------------------------
    def install(self) -> None:
        """Wrap ``jax.jit`` and ``jax.profiler.start_trace``."""
        import jax
        from jax._src import core
        from jax._src import profiler as jax_profiler

        _hide_from_jax(__file__)
        self.top_level = core.trace_ctx.is_top_level
        self._start, self._stop = jax_profiler.start_trace, jax_profiler.stop_trace
        self._other_running = lambda: jax_profiler._profile_state.profile_session is not None
        rec = self
        jit = jax.jit

        @functools.wraps(jit)
        def tfprof_record_jit(*args: Any, **kwargs: Any) -> Any:
            return _proxied(jit(*args, **kwargs), rec)

        start = self._start

        @functools.wraps(start)
        def start_trace(*args: Any, **kwargs: Any) -> Any:
            if rec.active:
                try:
                    rec.give_way()
                except Exception as exc:
                    rec.recording.fail("giving way to jax.profiler.start_trace", exc)
            return start(*args, **kwargs)

        jax.jit = tfprof_record_jit
        jax_profiler.start_trace = start_trace
        jax.profiler.start_trace = start_trace


def _hide_from_jax(path: str) -> None:
    """Keep the proxy's frame out of the stacks JAX stores (the code view) and its tracebacks."""
    try:
        from jax._src import source_info_util, traceback_util

        source_info_util.register_exclusion(path)
        traceback_util.register_exclusion(path)
    except (ImportError, AttributeError):  # another JAX: the frame shows, nothing breaks
        pass


def _proxied(made: Any, rec: JaxRecorder) -> Any:
    """What ``jax.jit`` returned, its jitted functions behind a proxy (a decorator factory's
    too)."""
    if hasattr(made, "lower"):
        return JitProxy(made, rec)
    if callable(made):  # jax.jit(static_argnames=...) returns a decorator

        @functools.wraps(made)
        def decorate(*args: Any, **kwargs: Any) -> Any:
            return _proxied(made(*args, **kwargs), rec)

        return decorate
    return made
