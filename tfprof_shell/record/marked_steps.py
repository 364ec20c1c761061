"""The marked-step lifecycle the TF2, PyTorch and JAX recorders share.

A recorder finds the program's steps its own way (a route); once a step to
trace starts it claims the process for that route, starts our profiler
session (or, while the program's own profiler runs, tries again from the next
step), and opens a step marker the loader reads as the step's number. The
marker closes when the step ends; after the last traced step, at exit or on
SIGTERM the session is saved. Each framework says only how a marker is opened
and what it checks or waits for first.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from .own_session import OwnSession
from .process import ProcessRecording
from .steps import StepPlan


class Guarded:
    """A recorder whose steps run guarded: an internal error stops recording, not the program.

    Subclasses have ``recording`` and ``done`` and name what failed in ``failure_label``.
    """

    recording: ProcessRecording
    done: bool
    #: What failed, in the recording's failure message.
    failure_label = "step detection"

    def guard(self, fn: Callable, *args: Any) -> Any:
        """Run one of our steps; an internal error stops recording and returns None."""
        try:
            return fn(*args)
        except Exception as exc:
            self.done = True
            self.recording.fail(self.failure_label, exc)
            return None


class MarkedSteps(Guarded):
    """Step markers inside one profiler session: begin, end, stop; framework hooks aside."""

    #: The process kind claimed (``layout.KIND_*``).
    kind = ""

    def __init__(self, recording: ProcessRecording, session: OwnSession) -> None:
        self.recording = recording
        self.plan = StepPlan(recording.settings)
        self.session = session
        self.marker: Any = None
        self.marker_step = -1
        self.done = False
        #: Set while one of our wrappers runs on the main thread (nested calls pass through).
        self.inner = False
        self.main_thread = threading.main_thread().ident
        recording.finishers.append(self.stop)

    # -- what a framework specialises ------------------------------------------
    def may_begin(self, route: str, step: int) -> bool:
        """Whether step ``step`` of ``route`` may go on to claim the process (default: yes)."""
        return True

    def open_marker(self, step: int) -> Any:
        """Open and return the marker of step ``step``."""
        raise NotImplementedError

    def before_stop(self) -> bool:
        """What ``stop`` does first; False ends it there (default: nothing, go on)."""
        return True

    # -- the lifecycle ------------------------------------------------------------
    def begin(self, route: str, step: int) -> bool:
        """Step ``step`` of ``route`` starts: open its marker if it is one to trace."""
        if self.done or self.marker is not None or not self.plan.wants(step):
            return False
        if not self.may_begin(route, step):
            return False
        if not self.recording.claim(self.kind, route):
            return False
        if not self.session.active and not self.session.start():
            if self.session.used:
                self.done = True
            else:  # the program's own profiler runs: try again from the next step
                self.recording.note("waited for the program's own profiler to stop")
                self.plan.warmup = step + 1
            return False
        self.marker, self.marker_step = self.open_marker(step), step
        return True

    def end(self) -> None:
        """The marked step ends; after the last one, save the profile."""
        step = self.marker_step
        if not self.close_marker():
            return
        if step >= self.plan.last():
            self.stop("complete")

    def close_marker(self) -> bool:
        """Close the open marker and count its step; whether one was open."""
        marker, self.marker = self.marker, None
        if marker is None:
            return False
        marker.__exit__(None, None, None)
        self.recording.steps.append(self.marker_step)
        return True

    def stop(self, status: str) -> None:
        """Close the open marker and save the session (at the end, at exit, on SIGTERM)."""
        with self.recording.lock:
            self.done = True
            if not self.before_stop():
                return
            self.close_marker()
            if self.session.active:
                self.session.save()
                if self.recording.status == "recording":
                    self.recording.status = status
                self.recording.save()

    def busy(self) -> bool:
        """Whether this call should pass through uncounted (nested, another thread, finished)."""
        return self.done or self.inner or threading.get_ident() != self.main_thread
