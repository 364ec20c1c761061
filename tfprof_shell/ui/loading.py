"""What the web UI's loading page shows while `tfprof ui` loads: a load.progress.Progress.

`tfprof ui` serves before its profiles are loaded; until they are, the page
is ``static/loading.html``, which asks ``GET /api/progress`` for
:meth:`LoadingState.snapshot` and opens the real page once ``ready``.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Optional


class LoadingState:
    """The progress of the load behind the page (thread-safe)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._started = clock()
        self._last = self._started
        self.what = ""
        self.unit = ""
        self.total = 0.0
        self.done = 0.0
        self.ready = False
        self.error: Optional[str] = None
        self._asked: Optional[float] = None
        self._ended: Optional[float] = None

    def begin(self, what: str, total: float, unit: str) -> None:
        with self._lock:
            self.what, self.total, self.unit, self.done = what, float(total), unit, 0.0
            self._last = self._clock()

    def update(self, done: float) -> None:
        with self._lock:
            self.done = max(self.done, float(done))
            self._last = self._clock()

    def end(self) -> None:
        pass  # the page waits for finish() or fail(): a folder of several loads several

    def finish(self) -> None:
        """The profiles are loaded: the page may open the real one."""
        with self._lock:
            self.ready = True
            self._ended = self._clock()

    def fail(self, message: str) -> None:
        """Loading failed with ``message`` (the one line the terminal shows too)."""
        with self._lock:
            self.error = message

    def watched(self, within: float = 2.0) -> bool:
        """Whether a page asked for the progress in the last ``within`` seconds."""
        with self._lock:
            return self._asked is not None and self._clock() - self._asked <= within

    def snapshot(self) -> dict[str, Any]:
        """The state as the page reads it: what, unit, done, total, elapsed and left
        (seconds, None when unknown), ready, error."""
        with self._lock:
            now = self._asked = self._clock()
            left = None
            if 0 < self.done < self.total:
                predicted = (self._last - self._started) * self.total / self.done
                left = max(predicted - (now - self._started), 0.0)
            elapsed = (self._ended if self._ended is not None else now) - self._started
            return {"what": self.what, "unit": self.unit, "done": self.done,
                    "total": self.total, "elapsed": elapsed, "left": left,
                    "ready": self.ready, "error": self.error}
