"""What every framework's profiler session of ours shares: once per process, saved on
SIGTERM while it runs, and giving way when the program starts its own profiler.

Each framework's session (:mod:`.profiler_session`, :mod:`.pytorch_session`,
:mod:`.jax_session`) says how it starts and saves; this base keeps the running
handle, the SIGTERM save around it, and the give-way sequence.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from .process import ProcessRecording
from .sigterm import SigtermSave


class OwnSession:
    """Our one profiler session: the running handle, SIGTERM while it runs, giving way."""

    def __init__(self, recording: ProcessRecording) -> None:
        self.recording = recording
        #: The running session (the framework's object); None when not running.
        self.handle: Any = None
        #: Whether it has been started once (it never starts twice in a process).
        self.used = False
        #: Called when giving way, before saving (the recorder closes its open marker).
        self.on_give_way: Optional[Callable[[], None]] = None
        self.sigterm = SigtermSave(recording)

    @property
    def active(self) -> bool:
        return self.handle is not None

    def start(self) -> bool:  # pragma: no cover - every framework's session defines it
        """Start recording (once per process); False while another profiler runs."""
        raise NotImplementedError

    def save(self) -> None:  # pragma: no cover - every framework's session defines it
        """Stop recording and write what was recorded into the process folder."""
        raise NotImplementedError

    def _running(self, handle: Any) -> None:
        """The session has started: keep its handle; a default SIGTERM now saves it first."""
        self.handle = handle
        self.sigterm.catch()

    def _take(self) -> Any:
        """The running handle, now no longer running (SIGTERM left alone again); or None."""
        handle, self.handle = self.handle, None
        if handle is not None:
            self.sigterm.release()
        return handle

    def give_way(self) -> None:
        """The program starts its own profiler: save ours (what it traced so far) and stop."""
        self.recording.note("gave way to the program's own profiler")
        if self.recording.status == "recording":
            self.recording.status = "gave way"
        if self.on_give_way is not None:
            self.on_give_way()
        self.save()

    def give_way_to(self, what: str) -> None:
        """If ours runs, give way to ``what`` the program starts; a failure is recorded."""
        if self.active:
            try:
                self.give_way()
            except Exception as exc:
                self.recording.fail("giving way to " + what, exc)
