"""The TF2 profiler session that records a few steps, and giving way to the program's own.

TensorFlow allows one profiler session per process. Ours is a
``ProfilerSession`` of its own (``tf.profiler.experimental``'s module state is
left alone), started just before the first traced step and exported right
after the last one, into a staging folder whose run directory is then renamed
into the process folder (``plugins/profile/<run>/<host>.xplane.pb``), so the
recording appears whole or not at all.

While the session runs, a default SIGTERM first saves it (then the process
dies of SIGTERM as before); outside those few steps SIGTERM is left alone,
as TF1 steps are on disk as soon as they are traced.

``tf.profiler.experimental.start`` is wrapped: when the program starts its own
profiler, ours is stopped and saved first, and theirs starts as it would have.
While theirs runs, ours does not start.
"""

from __future__ import annotations

import functools
import shutil
import sys
from typing import Any

from .own_session import OwnSession


class Level:
    """A profiler level TensorFlow 2.21 does not drop.

    ``ProfilerSession.start`` takes the options as a variant whose bool
    alternative swallows plain ints (the level is then ignored, with a
    "expects an i value" warning); an object with ``__index__`` and no
    ``__bool__`` cannot become a bool and arrives as the int.
    """

    __slots__ = ("value",)

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


def options(python_tracer: bool) -> dict[str, Any]:
    """The session's options: host tracing at level 2, device tracing on, Python optional."""
    return {"host_tracer_level": Level(2), "device_tracer_level": Level(1),
            "python_tracer_level": Level(1 if python_tracer else 0)}


class Session(OwnSession):
    """Our one profiler session: start, save, and the wrapped ``start`` that gives way."""

    def other_active(self) -> bool:
        """Whether the program's own profiler (``tf.profiler.experimental.start``) is running."""
        from tensorflow.python.profiler import profiler_v2

        return profiler_v2._profiler is not None  # noqa: SLF001 -- its only record of a session

    def start(self) -> bool:
        """Start recording (once per process); False if another session is running."""
        if self.used or self.other_active():
            return False
        from tensorflow.python.profiler.internal import _pywrap_profiler

        session = _pywrap_profiler.ProfilerSession()
        try:
            with self.recording.timed():
                session.start(self.recording.staging(), options(self.recording.settings.python_tracer))
        except Exception:  # another session (e.g. a profiler server's) holds the profiler
            return False
        self.used = True
        self._running(session)
        return True

    def save(self) -> None:
        """Stop the session and move its .xplane.pb run directory into the process folder."""
        session = self._take()
        if session is None:
            return
        staging = self.recording.staging()
        try:
            with self.recording.timed():
                session.export_to_tb()
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        self.recording.adopt_runs(staging)

    def install(self) -> None:
        """Wrap ``tf.profiler.experimental.start`` wherever TensorFlow exports it."""
        from tensorflow.python.profiler import profiler_v2

        original = profiler_v2.start
        ours = self

        @functools.wraps(original)
        def start(logdir, options=None):
            ours.give_way_to("tf.profiler.experimental.start")
            return original(logdir, options)

        for name, module in list(sys.modules.items()):
            if name.startswith("tensorflow") and getattr(module, "start", None) is original:
                setattr(module, "start", start)
