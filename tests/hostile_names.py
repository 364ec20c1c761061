"""Node names built to break a page that would put them in markup, and a trace holding them."""

from __future__ import annotations

import json
import os

HOSTILE = ["<img src=x onerror=alert(1)>/inner", "a\"b'c</script><script>alert(2)</script>",
           "scope/<svg onload=alert(3)>"]


def hostile_trace(folder) -> str:
    """Write a Chrome trace whose op names are :data:`HOSTILE` (its op type and event names
    are markup too) into ``folder``; returns its path."""
    events = [{"name": "process_name", "ph": "M", "pid": 1,
               "args": {"name": "/job:localhost/replica:0/task:0/device:CPU:0 Compute"}}]
    for k, name in enumerate(HOSTILE):
        events.append({"name": "<b>Op</b>", "ph": "X", "pid": 1, "tid": 0, "ts": k * 20,
                       "dur": 10, "cat": "Op",
                       "args": {"name": name, "op": "<i onmouseover=alert(4)>"}})
    path = os.path.join(str(folder), "hostile.json")
    with open(path, "w") as fh:
        json.dump({"traceEvents": events}, fh)
    return path
