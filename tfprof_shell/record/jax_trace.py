"""JAX: find the training step among ``jax.jit`` functions and profile a few steps.

``jax.jit`` is wrapped so each jitted function it returns is a thin proxy
(:class:`JitProxy`) that passes everything through and counts its top-level
calls (made from the main thread, outside any JAX transformation). The most
called function is the step. JAX returns before the work runs, so a step's
marker (``StepTraceAnnotation("train", step_num=N)``, which the loader reads
as step N) spans from its call to the next call of the step, closed only
once that call's inputs, the step's results, are ready; it opens only once
its own inputs are ready, so earlier steps still running stay out of it.

One ``jax.profiler.start_trace``/``stop_trace`` session (:mod:`.jax_session`)
covers the traced steps.
"""

from __future__ import annotations

import functools
import threading
import types
from typing import Any, Callable, Optional

from . import layout
from .jax_session import JaxSession
from .marked_steps import MarkedSteps
from .process import ProcessRecording
from .steps import Dominant

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


class JaxRecorder(MarkedSteps):
    """Counts jitted calls, marks the traced steps, runs the profiler session."""

    kind = layout.KIND_JAX
    failure_label = "JAX step detection"
    session: JaxSession

    def __init__(self, recording: ProcessRecording) -> None:
        super().__init__(recording, JaxSession(recording))
        self.session.on_give_way = self.finish_marker
        self.functions = Dominant()
        self.last_out: Any = None
        self.top_level: Callable[[], bool] = lambda: True
        recording.counters.append(lambda: max([0] + list(self.functions.counts.values())))

    def watching(self) -> bool:
        """Whether a call now is a top-level call to count."""
        return (not self.done and threading.get_ident() == self.main_thread
                and self.top_level())

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
        if self.done or not self.plan.wants(step):
            return False
        self._block(args, kwargs)  # earlier steps still running would count in this one
        if not self.begin(ROUTE, step):
            return False
        self.functions.lock(id(proxy))
        return True

    # -- the marked-step lifecycle's JAX parts -----------------------------------
    def open_marker(self, step: int) -> Any:
        import jax

        marker = jax.profiler.StepTraceAnnotation("train", step_num=step)
        marker.__enter__()
        return marker

    def close_marker(self) -> bool:
        if not super().close_marker():
            return False
        self.last_out = None
        return True

    def before_stop(self) -> bool:
        if self.marker is not None:
            self._block(self.last_out, None)  # the open step ends once its results are ready
        return True

    def finish_marker(self) -> None:
        """Giving way to the program's trace: close the open step (its results ready), stop."""
        self.done = True
        self.before_stop()
        self.close_marker()

    @staticmethod
    def _block(args: Any, kwargs: Any) -> None:
        import jax

        try:
            jax.block_until_ready((args, kwargs))
        except Exception:  # donated or deleted buffers: nothing more to wait for
            pass

    # -- patches -----------------------------------------------------------------
    def install(self) -> None:
        """Wrap ``jax.jit`` and ``jax.profiler.start_trace``."""
        import jax
        from jax._src import core

        _hide_from_jax(__file__)
        self.top_level = core.trace_ctx.is_top_level
        self.session.install()
        rec = self
        jit = jax.jit

        @functools.wraps(jit)
        def tfprof_record_jit(*args: Any, **kwargs: Any) -> Any:
            return _proxied(jit(*args, **kwargs), rec)

        jax.jit = tfprof_record_jit


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
