"""How a load reports its progress: the protocol front doors implement, the loaders' meter.

Nothing in load/ prints. A front door that shows progress (a bar on a
terminal, the web UI's loading page) hands a :class:`Progress` to
``load_many``, which reports profiles done when it loads several, and
installs it (:func:`reporting`) for the loaders of one profile, which
report bytes of their input files through :func:`file_meter`: a file's
bytes count as done by stages (read, decoded, built into the model), each
loader saying which share of the file's work a stage ends. Loaders call the
meter whether or not anyone listens; without a listener it does nothing.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator, Optional, Protocol, Sequence

#: The units a load counts in.
BYTES, PROFILES = "bytes", "profiles"


class Progress(Protocol):
    """Where a load reports how far it got (a front door draws it)."""

    def begin(self, what: str, total: float, unit: str) -> None:
        """A load of ``total`` units (:data:`BYTES` or :data:`PROFILES`) starts;
        ``what`` names it (a file name, ``64 profiles``)."""

    def update(self, done: float) -> None:
        """``done`` of the ``total`` units are done; it never decreases."""

    def end(self) -> None:
        """The load is over, done or failed (called once per :meth:`begin`, or alone)."""


_listener: ContextVar[Optional[Progress]] = ContextVar("tfprof_load_progress", default=None)


@contextmanager
def reporting(progress: Optional[Progress]) -> Iterator[None]:
    """Within the block, the loaders of one profile report to ``progress``."""
    token = _listener.set(progress)
    try:
        yield
    finally:
        _listener.reset(token)


class FileMeter:
    """One profile's progress in bytes of its input files, by stages of each file."""

    def __init__(self, progress: Optional[Progress], paths: Sequence[str]) -> None:
        self._progress = progress
        self._starts: list[int] = []
        total = 0
        for path in paths:
            self._starts.append(total)
            total += _size(path)
        self._sizes = [b - a for a, b in zip(self._starts, self._starts[1:] + [total])]
        self._done = 0.0
        if progress is not None:
            names = [os.path.basename(p.rstrip("/" + os.sep)) or p for p in paths]
            progress.begin(names[0] if len(names) == 1 else "%d files" % len(names),
                           total, BYTES)

    def reached(self, index: int, share: float) -> None:
        """``share`` (0..1) of file ``index``'s work is done, and every file before it."""
        if self._progress is None or index >= len(self._sizes):
            return
        done = self._starts[index] + self._sizes[index] * min(max(share, 0.0), 1.0)
        if done > self._done:
            self._done = done
            self._progress.update(done)


def file_meter(paths: Sequence[str]) -> FileMeter:
    """The meter of a load reading ``paths``, reporting to the listener of :func:`reporting`."""
    return FileMeter(_listener.get(), paths)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class JobShare:
    """One profile of several loaded here: its bytes become a share of the profiles done."""

    def __init__(self, progress: Progress, before: int) -> None:
        self._progress = progress
        self._before = before
        self._total = 0.0

    def begin(self, what: str, total: float, unit: str) -> None:
        self._total = total

    def update(self, done: float) -> None:
        if self._total > 0:
            self._progress.update(self._before + min(done / self._total, 1.0))

    def end(self) -> None:
        pass


class Fanout:
    """Reports to several listeners at once (a terminal bar and the web UI's page)."""

    def __init__(self, *listeners: Optional[Progress]) -> None:
        self._listeners = [p for p in listeners if p is not None]

    def begin(self, what: str, total: float, unit: str) -> None:
        for p in self._listeners:
            p.begin(what, total, unit)

    def update(self, done: float) -> None:
        for p in self._listeners:
            p.update(done)

    def end(self) -> None:
        for p in self._listeners:
            p.end()
