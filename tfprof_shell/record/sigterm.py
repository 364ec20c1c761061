"""Saving what is being traced when a default SIGTERM arrives, then dying of it as before.

Used by the recorders whose traces live in memory until saved (TF2, PyTorch,
JAX): only while they trace, only from the main thread, and only where the
program left SIGTERM at its default (a program's own handler runs instead,
and the recording is saved at exit).
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any, Callable, Optional

from .process import ProcessRecording


class SigtermSave:
    """Catch a default SIGTERM while a trace is open: finish the recording, then die of it."""

    def __init__(self, recording: ProcessRecording) -> None:
        self.recording = recording
        self._handler: Optional[Callable[[int, Any], None]] = None

    def catch(self) -> None:
        """From now on a default SIGTERM first saves the recording."""
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
            return
        recording = self.recording

        def on_sigterm(signum: int, frame: Any) -> None:
            try:
                recording.finish("SIGTERM")
            finally:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                os.kill(os.getpid(), signal.SIGTERM)

        self._handler = on_sigterm
        signal.signal(signal.SIGTERM, on_sigterm)

    def release(self) -> None:
        """Put SIGTERM back to its default, unless the program has set its own since."""
        handler, self._handler = self._handler, None
        if handler is None or threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) is handler:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
