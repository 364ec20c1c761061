"""The JAX trace that records a few steps, and giving way to the program's own.

One ``jax.profiler.start_trace``/``stop_trace`` session covers the traced
steps; it writes ``plugins/profile/<run>/<host>.xplane.pb`` into a staging
folder whose run is then moved into the process folder. The Python tracer is
on only with ``--python_tracer``. ``jax.profiler.start_trace`` is wrapped: if
the program starts its own trace, ours is saved and stops first; while the
program's runs, ours does not start.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from .own_session import OwnSession
from .process import ProcessRecording


class JaxSession(OwnSession):
    """Our one JAX trace: start, save, and the wrapped ``start_trace`` that gives way."""

    def __init__(self, recording: ProcessRecording) -> None:
        super().__init__(recording)
        self._start: Any = None
        self._stop: Any = None
        self._other_running: Callable[[], bool] = lambda: False

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
        self._running(True)
        return True

    def save(self) -> None:
        """Stop the trace and move its run into the process folder."""
        if self._take() is None:
            return
        with self.recording.timed():
            self._stop()
        self.recording.adopt_runs(self.recording.staging())

    def install(self) -> None:
        """Keep JAX's own start/stop, and wrap ``jax.profiler.start_trace`` to give way."""
        import jax
        from jax._src import profiler as jax_profiler

        self._start, self._stop = jax_profiler.start_trace, jax_profiler.stop_trace
        self._other_running = lambda: jax_profiler._profile_state.profile_session is not None
        start = self._start
        ours = self

        @functools.wraps(start)
        def start_trace(*args: Any, **kwargs: Any) -> Any:
            ours.give_way_to("jax.profiler.start_trace")
            return start(*args, **kwargs)

        jax_profiler.start_trace = start_trace
        jax.profiler.start_trace = start_trace
