"""The PyTorch profiler that records a few steps, and giving way to the program's own.

Two PyTorch profilers at once break a program (starting a second one silently
ends the first, and exporting the first may then crash), so every profiler
the program prepares is watched (``torch.autograd.profiler.profile``'s
``_prepare_trace`` and ``__exit__``, which ``torch.profiler.profile`` and the
legacy context both go through): while one of the program's runs, ours does
not start; when the program starts one while ours runs, ours is stopped and
saved first.

Ours is one ``torch.profiler.profile`` with CPU activity (and CUDA where
available), shapes, memory and Python stacks as the settings say. It is
exported as ``<job>-<host>-rank<R>.<ns>.pt.trace.json`` into a staging folder
beside the process folders, then renamed into the process folder.
"""

from __future__ import annotations

import functools
import os
import shutil
import time
from typing import Any

from . import layout
from .own_session import OwnSession
from .process import ProcessRecording


class TorchSession(OwnSession):
    """Our one ``torch.profiler.profile``: start, save, and giving way to the program's."""

    def __init__(self, recording: ProcessRecording) -> None:
        super().__init__(recording)
        #: ids of the program's own profilers that are prepared or running.
        self.others: set[int] = set()
        self._starting = False

    def start(self) -> bool:
        """Start profiling (once per process); False while the program's own profiler runs."""
        import torch

        if self.used or self.others or torch.autograd.profiler._is_profiler_enabled:
            return False
        from torch.profiler import ProfilerActivity, profile

        settings = self.recording.settings
        activities = [ProfilerActivity.CPU]
        if torch.cuda.is_available():
            activities.append(ProfilerActivity.CUDA)
        profiler = profile(activities=activities, record_shapes=settings.shapes,
                           profile_memory=settings.memory, with_stack=settings.python_tracer)
        self.used = True
        self._starting = True
        try:
            with self.recording.timed():
                profiler.start()
        finally:
            self._starting = False
        self._running(profiler)
        return True

    def save(self) -> None:
        """Stop profiling and write the trace into the process folder."""
        profiler = self._take()
        if profiler is None:
            return
        rec = self.recording
        with rec.timed():
            profiler.stop()
            name = layout.torch_trace_name(rec.job, rec.host, rec.rank, time.time_ns())
            staging = rec.staging()
            os.makedirs(staging, exist_ok=True)
            try:
                profiler.export_chrome_trace(os.path.join(staging, name))
                os.replace(os.path.join(staging, name), rec.path(name))
            finally:
                shutil.rmtree(staging, ignore_errors=True)

    def install(self) -> None:
        """Watch every profiler the program prepares and ends."""
        from torch.autograd import profiler as autograd_profiler

        cls = autograd_profiler.profile
        prepare, exit_ = cls._prepare_trace, cls.__exit__
        ours = self

        @functools.wraps(prepare)
        def _prepare_trace(profile: Any, *args: Any, **kwargs: Any) -> Any:
            if not ours._starting:
                ours.others.add(id(profile))
                ours.give_way_to("the program's profiler")
            return prepare(profile, *args, **kwargs)

        @functools.wraps(exit_)
        def __exit__(profile: Any, *args: Any) -> Any:
            try:
                return exit_(profile, *args)
            finally:
                ours.others.discard(id(profile))

        cls._prepare_trace = _prepare_trace
        cls.__exit__ = __exit__
