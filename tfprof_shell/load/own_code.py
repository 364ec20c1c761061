"""Which frames of a call stack are the program's own code, and how a frame is named."""

from __future__ import annotations

import os

from ..model.node import Frame
from .torch_intervals import user_frame


def own_code(frame: Frame) -> bool:
    """Whether a frame is the program's own code (not a library's or Python's)."""
    return user_frame("%s(%d): %s" % (frame.file, frame.lineno, frame.function))


def code_label(frame: Frame) -> str:
    """``file.py:LINE:function``, as the code view names a frame (base name only)."""
    return "%s:%d:%s" % (os.path.basename(frame.file), frame.lineno, frame.function)
