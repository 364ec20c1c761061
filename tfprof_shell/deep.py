"""Run deeply recursive view code without hitting Python's recursion limit.

Graphs can be tens of thousands of nodes deep (long chains, unrolled
loops). View code recurses like the engine does; it runs in a worker thread
with a large stack and a high recursion limit instead of being rewritten
iteratively everywhere.
"""

from __future__ import annotations

import contextvars
import sys
import threading
from typing import Any, Callable, TypeVar

T = TypeVar("T")

_STACK_BYTES = 512 << 20
_RECURSION = 1_000_000


def call_deep(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` with room for deep recursion; exceptions propagate."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    old_limit = sys.getrecursionlimit()
    old_size = threading.stack_size()
    sys.setrecursionlimit(max(old_limit, _RECURSION))
    try:
        threading.stack_size(_STACK_BYTES)
        # The caller's context goes along (e.g. where a load the view starts reports).
        worker = threading.Thread(target=contextvars.copy_context().run, args=(target,),
                                  name="tfprof-view", daemon=True)
        worker.start()
    finally:
        threading.stack_size(old_size)
    try:
        while worker.is_alive():
            worker.join(0.05)
    finally:
        sys.setrecursionlimit(old_limit)
    if "error" in box:
        raise box["error"]
    return box["value"]
