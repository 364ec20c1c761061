"""Chrome-trace files (PyTorch profiler traces, TF1 timelines) -> TraceLanes.

Every complete event ("X") is a slice of the lane (pid, tid) it names. A lane
is named as the trace names it: its ``thread_name`` metadata (``thread 415
(python3)``), and a device's stream ``gpu:0 stream 7``; lanes are grouped by
process (``python3 (pid 415)``), device processes (``process_labels`` ``GPU
0``, or device events' ``args.device``) as ``gpu:0``. A runtime call and the
device event with the same ``args.correlation`` are joined by a flow (the
launch arrow). A kernel keeps its launch configuration (grid, block,
registers, shared memory, occupancy), a copy its bytes.
"""

from __future__ import annotations

import re
from typing import Any, Optional, Sequence, Union

import msgspec

from ..errors import LoadError
from ..model.lanes import DEVICE, HOST, LanesBuilder, TraceLanes
from .files import read_unzipped
from .torch_devices import DEVICE_CATS, LAUNCH_CATS

#: Device event categories beyond the step breakdown's (annotations on a stream).
_DEVICE_EXTRA = ("gpu_user_annotation", "mtia_ccp_events", "cuda_sync")
_LABEL = re.compile(r"([A-Za-z]+)\s*(\d+)\Z")
_STREAM_NAME = re.compile(r"stream\s*(\d+)", re.I)
#: Kernel and copy arguments shown in the details (the trace's names, ours).
SHOWN_ARGS = (("grid", "grid"), ("block", "block"), ("registers per thread", "registers"),
              ("shared memory", "shared_memory"), ("blocks per SM", "blocks_per_sm"),
              ("warps per SM", "warps_per_sm"),
              ("est. achieved occupancy %", "occupancy_pct"), ("bytes", "bytes"),
              ("memory bandwidth (GB/s)", "gbps"), ("stream", "stream"), ("device", "device"),
              ("correlation", "correlation"), ("External id", "external_id"))


class _Args(msgspec.Struct, gc=False):
    name: Any = None
    labels: Any = None
    correlation: Any = None
    external_id: Any = msgspec.field(name="External id", default=None)
    device: Any = None
    stream: Any = None
    bytes: Any = None
    grid: Any = None
    block: Any = None
    registers: Any = msgspec.field(name="registers per thread", default=None)
    shared_memory: Any = msgspec.field(name="shared memory", default=None)
    blocks_per_sm: Any = msgspec.field(name="blocks per SM", default=None)
    warps_per_sm: Any = msgspec.field(name="warps per SM", default=None)
    occupancy_pct: Any = msgspec.field(name="est. achieved occupancy %", default=None)
    gbps: Any = msgspec.field(name="memory bandwidth (GB/s)", default=None)
    op: Any = None


class _Event(msgspec.Struct, gc=False):
    ph: Any = None
    cat: Any = None
    name: Any = ""
    pid: Any = None
    tid: Any = None
    ts: Any = 0
    dur: Any = 0
    args: Optional[_Args] = None


class _Document(msgspec.Struct, gc=False):
    traceEvents: Optional[list[_Event]] = None  # noqa: N815 - the JSON key


_decode = msgspec.json.Decoder(Union[_Document, list[_Event]]).decode
_ARG_FIELDS = [(ours, ours) for _, ours in SHOWN_ARGS]


def _events(path: str) -> list[_Event]:
    data = read_unzipped(path, "profile_path")
    try:
        doc = _decode(data)
    except (msgspec.DecodeError, ValueError, RecursionError):
        return _generic_events(data, path)
    events = doc.traceEvents if isinstance(doc, _Document) else doc
    if events is None:
        raise LoadError("--profile_path %s: not a Chrome trace (no traceEvents list)" % path)
    return events


def _generic_events(data: bytes, path: str) -> list[_Event]:
    """Events of a document the typed decoder refuses, one by one (odd fields skipped)."""
    from .json_doc import parse_json
    try:
        doc = parse_json(data)
    except (ValueError, RecursionError):
        raise LoadError("--profile_path %s: not valid JSON" % path) from None
    raw = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(raw, list):
        raise LoadError("--profile_path %s: not a Chrome trace (no traceEvents list)" % path)
    out = []
    for ev in raw:
        if not isinstance(ev, dict):
            continue
        try:
            out.append(msgspec.convert(ev, _Event, strict=False))
        except (msgspec.ValidationError, TypeError):
            continue
    return out


def _ns(value: Any) -> Optional[int]:
    try:
        return int(round(float(value) * 1000))
    except (TypeError, ValueError, OverflowError):
        return None


def _shown(args: _Args) -> dict[str, Any]:
    out = {}
    for ours, attr in _ARG_FIELDS:
        v = getattr(args, attr)
        if v is not None and isinstance(v, (int, float, str, list)):
            out[ours] = v
    return out


class _Names:
    """Process and thread names from the metadata events of one file."""

    def __init__(self, events: Sequence[_Event]) -> None:
        self.process: dict[Any, str] = {}
        self.labels: dict[Any, str] = {}
        self.thread: dict[tuple[Any, Any], str] = {}
        for ev in events:
            if ev.ph != "M" or ev.args is None:
                continue
            if ev.name == "process_name" and isinstance(ev.args.name, str):
                self.process.setdefault(ev.pid, ev.args.name)
            elif ev.name == "process_labels" and isinstance(ev.args.labels, str):
                self.labels.setdefault(ev.pid, ev.args.labels)
            elif ev.name == "thread_name" and isinstance(ev.args.name, str):
                self.thread.setdefault((ev.pid, ev.tid), ev.args.name.strip())

    def device_of(self, pid: Any) -> Optional[str]:
        """``gpu:0`` for a process labelled ``GPU 0`` (any ``KIND N`` label)."""
        m = _LABEL.match(self.labels.get(pid, "").strip())
        if m and m.group(1).upper() != "CPU":
            return "%s:%s" % (m.group(1).lower(), m.group(2))
        return None


def _sort_key(value: Any) -> tuple:
    return (0, value, "") if isinstance(value, (int, float)) else (1, 0, str(value))


def add_chrome_file(b: LanesBuilder, path: str, file_index: int, files: int) -> None:
    """Add the slices of one Chrome-trace file to ``b``."""
    events = _events(path)
    names = _Names(events)
    suffix = " (file %d)" % (file_index + 1) if files > 1 else ""
    lanes: dict[tuple[Any, Any, bool], int] = {}
    launches: dict[Any, int] = {}
    device_work: dict[Any, int] = {}
    device_cats = DEVICE_CATS | frozenset(_DEVICE_EXTRA)
    runtime_cats = frozenset(LAUNCH_CATS)
    # the builder's columns, appended to directly: this loop sees every event
    starts, durs, name_ids, cat_ids, lanes_of = b.starts, b.durs, b.names, b.cats, b.lanes_of
    ids, intern = b.string_ids, b.intern
    shown_args = b.out.args
    for ev in events:
        if ev.ph != "X":
            continue
        try:
            start = int(ev.ts * 1000 + 0.5)
            dur = int(ev.dur * 1000 + 0.5)
        except TypeError:  # a time given as a string (or missing): convert it carefully
            start, dur = _ns(ev.ts), _ns(ev.dur) or 0
            if start is None:
                continue
        cat = ev.cat
        if cat.__class__ is not str:
            cat = ""
        key = (ev.pid, ev.tid, cat == "gpu_user_annotation")
        lane = lanes.get(key)
        if lane is None:
            lane = lanes[key] = _lane_of(b, names, ev, cat in device_cats, file_index, suffix,
                                         key[2])
        name = ev.name
        if name.__class__ is not str:
            name = str(name)
        name_id = ids.get(name)
        if name_id is None:
            name_id = intern(name)
        cat_id = ids.get(cat)
        if cat_id is None:
            cat_id = intern(cat)
        event = len(starts)
        starts.append(start)
        durs.append(dur if dur > 0 else 0)
        name_ids.append(name_id)
        cat_ids.append(cat_id)
        lanes_of.append(lane)
        args = ev.args
        if args is None:
            continue
        if cat in device_cats:
            shown = _shown(args)
            if shown:
                shown_args[event] = shown
            if args.correlation is not None and cat != "gpu_user_annotation":
                device_work[args.correlation] = event
        elif cat in runtime_cats and args.correlation is not None:
            launches[args.correlation] = event
    for corr, device in device_work.items():
        launch = launches.get(corr)
        if launch is not None:
            b.flow(launch, device)


def _lane_of(b: LanesBuilder, names: _Names, ev: _Event, device_event: bool,
             file_index: int, suffix: str, annotations: bool) -> int:
    """The lane of an event's (pid, tid); a stream's annotations get a lane of their own
    beside it, so its kernels stay on one row."""
    pid, tid = ev.pid, ev.tid
    device = names.device_of(pid)
    if device is None and device_event and ev.args is not None \
            and isinstance(ev.args.device, int):
        device = "gpu:%d" % ev.args.device
    thread = names.thread.get((pid, tid), "")
    key = (file_index, pid, tid, annotations)
    if device is not None:
        m = _STREAM_NAME.search(thread)
        stream = m.group(1) if m else str(tid)
        return b.lane(key, "%s stream %s%s" % (device, stream, " annotations" if annotations
                                                else ""), device + suffix, DEVICE,
                      (0, file_index, device, _sort_key(tid), annotations))
    process = names.process.get(pid)
    group = ("%s (pid %s)" % (process, pid) if process else "pid %s" % pid) + suffix
    return b.lane(key, thread or "thread %s" % tid, group, HOST,
                  (1, file_index, _sort_key(pid), _sort_key(tid)))


def chrome_lanes(paths: Sequence[str], origin: str) -> TraceLanes:
    """The lanes of Chrome-trace files (TF1 timelines, PyTorch traces)."""
    b = LanesBuilder(origin)
    for i, path in enumerate(paths):
        add_chrome_file(b, path, i, len(paths))
    return b.finish()
