"""A loaded profile's trace, read again as lanes of slices for the timeline.

Formats that record every event (Chrome traces: PyTorch profiler traces and
TF1 timelines; XSpace files) give a :class:`TraceLanes` of their own events;
the others (ProfileProto, GraphDef with run metadata) give None, and the
timeline falls back to the graph view's schedule. The files are the ones the
profile was loaded from (``Model.source``).
"""

from __future__ import annotations

from typing import Optional

from ..model.lanes import TraceLanes
from ..model.model import Source

#: Source kinds whose files are traces of events, and how their lanes are read.
_TRACE_KINDS = {"chrome_trace": "trace events", "xplane": "XSpace events"}


def has_lanes(source: Source) -> bool:
    """Whether the profile's files are a trace of events the timeline can show."""
    return source.kind in _TRACE_KINDS and bool(source.paths)


def read_lanes(source: Source) -> Optional[TraceLanes]:
    """The lanes of the profile's trace files (None for formats without events).

    Raises LoadError if the files no longer read.
    """
    if not has_lanes(source):
        return None
    if source.kind == "xplane":
        from .lanes_xspace import xspace_lanes
        return xspace_lanes(source.paths, _TRACE_KINDS[source.kind])
    from .lanes_chrome import chrome_lanes
    paths = [p for p in source.paths if not p.endswith((".pbtxt", ".pb"))]
    return chrome_lanes(paths, _TRACE_KINDS[source.kind])
