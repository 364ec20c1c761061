"""Arm the recorder of each framework the program imports: called by armed/sitecustomize.py.

The first framework imported (TensorFlow, PyTorch or JAX) decodes the
settings and creates this process's recording; each framework then gets its
own recorder (:mod:`.tf1`/:mod:`.tf2`, :mod:`.pytorch`, :mod:`.jax_trace`),
which patches its training entry points and records its own steps. What was
traced is written at exit (and on a default SIGTERM while tracing), never in a
forked child. Nothing here raises into the program: a failure prints one line
and leaves the program unrecorded.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import Any, Callable, Optional

from .process import ProcessRecording
from .settings import ENV_VAR, decode, is_off

#: The modules armed/sitecustomize.py reports, and the framework each belongs to.
FRAMEWORK_OF = {"tensorflow": "tensorflow", "keras": "tensorflow", "torch": "torch",
                "torch._dynamo": "torch", "jax": "jax"}

_imported: set[str] = set()
_recording: Optional[ProcessRecording] = None
_off = False
_tf2: Any = None
_torch: Any = None
_keras_armed = False


def imported(name: str) -> None:
    """Module ``name`` (a key of FRAMEWORK_OF) has finished importing."""
    global _tf2, _torch, _keras_armed
    _imported.add(name)
    where = "arming"
    try:
        if name in ("keras", "torch._dynamo"):
            if _recording is None:
                return
        elif _open_recording() is None:
            return
        rec = _recording
        assert rec is not None
        if name == "tensorflow":
            rec.frameworks["tensorflow"] = _version("tensorflow")
            _tf2 = _arm_tensorflow(rec)
        elif name == "torch":
            where = "arming PyTorch"
            rec.frameworks["torch"] = _version("torch")
            from .pytorch import TorchRecorder

            _torch = TorchRecorder(rec)
            _torch.install()
            if "torch._dynamo" in sys.modules:
                _torch.dynamo_imported()
        elif name == "torch._dynamo" and _torch is not None:
            where = "keeping out of torch.compile"
            _torch.dynamo_imported()
        elif name == "jax":
            where = "arming JAX"
            rec.frameworks["jax"] = _version("jax")
            from .jax_trace import JaxRecorder

            JaxRecorder(rec).install()
        if _tf2 is not None and "keras" in _imported and not _keras_armed:
            where = "arming Keras"
            _keras_armed = True
            _tf2.install_keras()
    except Exception as exc:
        if _recording is not None:
            _recording.fail(where, exc)
        else:
            _say("not recording: %s: %s" % (type(exc).__name__, exc))


def _open_recording() -> Optional[ProcessRecording]:
    """This process's recording, created at the first framework import (None: not recording)."""
    global _recording, _off
    if _recording is not None or _off:
        return _recording
    value = os.environ.get(ENV_VAR)
    _off = True
    if is_off(value):
        return None
    try:
        settings = decode(value or "")
    except ValueError as exc:
        _say("not recording: %s" % exc)
        return None
    recording = ProcessRecording(settings)
    atexit.register(recording.finish, "exit")
    os.register_at_fork(after_in_child=_forked(recording))
    _recording = recording
    return recording


def _forked(recording: ProcessRecording) -> Callable[[], None]:
    def forked() -> None:  # a forked child is not the process that recorded
        recording.failed = True
        recording.silent = True

    return forked


def _version(module: str) -> str:
    return str(getattr(sys.modules.get(module), "__version__", ""))


def _arm_tensorflow(recording: ProcessRecording) -> Any:
    from .tf1 import SessionRecorder
    from .tf2 import Tf2Recorder

    tf2 = Tf2Recorder(recording)
    tf1 = SessionRecorder(recording, tf2.session.other_active)
    tf2.install()
    tf1.install()

    def forked() -> None:
        tf1.done = tf2.done = True

    os.register_at_fork(after_in_child=forked)
    return tf2


def _say(text: str) -> None:
    try:
        sys.stderr.write("tfprof record: %s\n" % text)
    except Exception:
        pass
