"""A progress bar for long loads, one line on a terminal's stderr (a load.progress.Progress).

It is drawn only where a person watches: :func:`terminal_progress` gives
one only when the stream is a terminal and ``TFPROF_PROGRESS`` is not
``0``, so pipes, files, JSON output and tests never see it. It appears once
a load has run for :data:`DELAY` seconds (or sooner when its rate says it
will take several), is redrawn in place a few times a second by a thread
while the load runs, and is erased when the load ends, so the notes that
follow start on a clean line::

    tfprof: loading trace.pt.trace.json [#######.............]  36%  77/212 MB  51 MB/s  3s left
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from typing import Callable, Mapping, Optional, TextIO

from .load.progress import BYTES

#: Seconds a load runs before its bar appears.
DELAY = 1.0
#: Seconds between redraws.
INTERVAL = 0.2
#: ``TFPROF_PROGRESS`` values that turn the bar off.
OFF = ("0", "off", "no", "false", "never")
_BAR = 20
_ERASE = "\r\x1b[K"


def terminal_progress(stream: TextIO,
                      environ: Optional[Mapping[str, str]] = None) -> Optional["TerminalProgress"]:
    """A bar on ``stream`` if it is a terminal and the environment allows one, else None."""
    env = os.environ if environ is None else environ
    if env.get("TFPROF_PROGRESS", "").strip().lower() in OFF:
        return None
    try:
        if not stream.isatty():
            return None
    except (AttributeError, ValueError, OSError):
        return None
    return TerminalProgress(stream)


class TerminalProgress:
    """One load's progress on one terminal line: fraction, amount, rate, time left.

    ``clock`` and ``ticking`` are for tests: a fake clock, and no redraw thread.
    """

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic,
                 ticking: bool = True, columns: Optional[int] = None) -> None:
        self.stream = stream
        self.clock = clock
        self.ticking = ticking
        self.columns = columns
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._reset()

    def _reset(self) -> None:
        self.active = self.shown = False
        self.what, self.unit = "", BYTES
        self.total = self.done = 0.0
        #: When the first load since the last end began (the delay counts from it),
        #: and when the current one did (its rate and time left count from it).
        self.opened = self.started = self.last_update = self.clock()
        self._drawn = ""

    # -- the Progress protocol ---------------------------------------------------

    def begin(self, what: str, total: float, unit: str) -> None:
        with self._lock:
            if not self.active:  # after an end: a new line (a load of several files keeps it)
                self._reset()
                self.active = True
            self.what, self.total, self.unit, self.done = what, float(total), unit, 0.0
            self.started = self.last_update = self.clock()
        if self.ticking and self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._tick, name="tfprof-progress",
                                            daemon=True)
            self._thread.start()

    def update(self, done: float) -> None:
        with self._lock:
            self.done = max(self.done, float(done))
            self.last_update = self.clock()
            self._draw_if_due()

    def end(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            thread.join()
        with self._lock:
            if self.shown:
                self._write(_ERASE)
            self._reset()

    # -- drawing -----------------------------------------------------------------

    def _tick(self) -> None:
        while not self._stop.wait(INTERVAL):
            with self._lock:
                self._draw_if_due()

    def _due(self, now: float) -> bool:
        if now - self.opened >= DELAY:
            return True
        # Sooner when the rate so far says the load will take several seconds.
        predicted = self._predicted_total()
        return (now - self.started >= DELAY / 4 and predicted is not None
                and predicted >= 3 * DELAY)

    def _predicted_total(self) -> Optional[float]:
        """Seconds the whole load will take at the rate seen until the last update."""
        if self.done <= 0 or self.total <= 0:
            return None
        return (self.last_update - self.started) * self.total / self.done

    def _draw_if_due(self) -> None:
        if not self.total:
            return
        now = self.clock()
        if self.shown or self._due(now):
            self.shown = True
            text = self.line(now)
            if text != self._drawn:  # an unchanged line is not sent again
                self._drawn = text
                self._write("\r" + text + "\x1b[K")

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: nothing to show it on
            pass

    def line(self, now: float) -> str:
        """The bar's text at time ``now``, fitted to the terminal's width."""
        fraction = min(self.done / self.total, 1.0) if self.total > 0 else 0.0
        filled = int(round(fraction * _BAR))
        parts = ["[%s%s] %d%%" % ("#" * filled, "." * (_BAR - filled), fraction * 100)]
        elapsed = max(now - self.started, 1e-9)
        rate = self.done / max(self.last_update - self.started, 1e-9)
        if self.unit == BYTES:
            parts.append("%s/%s MB" % (_mb(self.done), _mb(self.total)))
            if self.done > 0:
                parts.append("%s MB/s" % _mb(rate))
        else:
            parts.append("%d/%d %s" % (int(self.done), int(self.total), self.unit))
            if self.done >= 1:
                parts.append("%.1f/s" % rate)
        predicted = self._predicted_total()
        if predicted is not None and fraction < 1.0:
            parts.append("%s left" % _seconds(max(predicted - elapsed, 0.0)))
        else:
            parts.append(_seconds(elapsed))
        text = "tfprof: loading %s %s" % (self.what, "  ".join(parts))
        width = (self.columns or shutil.get_terminal_size((80, 24)).columns) - 1
        if len(text) > width:  # the name gives way first: a wrapped line cannot be redrawn
            keep = max(width - len(text) + len(self.what), 4)
            text = "tfprof: loading %s %s" % (_shortened(self.what, keep), "  ".join(parts))
        return text[:max(width, 1)]


def _mb(nbytes: float) -> str:
    mb = nbytes / 1e6
    return "%.0f" % mb if mb >= 10 else "%.1f" % mb


def _seconds(seconds: float) -> str:
    seconds = int(round(seconds))
    return "%dm%02ds" % divmod(seconds, 60) if seconds >= 60 else "%ds" % seconds


def _shortened(name: str, keep: int) -> str:
    return name if len(name) <= keep else "..." + name[-(keep - 3):]
