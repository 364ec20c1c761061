"""Chrome-trace JSON (``.json`` / ``.json.gz``) -> Model.

Two producers are understood:

* TensorFlow 1 timelines (``timeline.Timeline(...).generate_chrome_trace_format()``,
  ``ProfilerHook``'s ``timeline-<step>.json``): each complete event (``"ph": "X"``)
  whose ``args`` carry ``name`` and ``op`` is one record of node ``name`` on the
  device of its process (``<device> Compute``), fed through the engine's
  RunMetadata rules. The i-th file is step i. Op types are the kernels that ran
  (``args.op``); with ``--graph_path`` the graph supplies nodes and types and
  timeline-only nodes are named by themselves, exactly as with run metadata.
* PyTorch profiler traces (``torch.profiler`` ``export_chrome_trace``), read
  by :mod:`.torch_trace`.
"""

from __future__ import annotations

import gzip
import mmap
import zlib
from typing import Any, Iterable, Optional, Sequence, Union

from ..errors import LoadError
from ..model import Model, Source
from .collective_calls import TorchCollectives
from .files import map_bytes
from .memory_tf1 import TimelineTensors
from .progress import FileMeter, file_meter
from .records import StatRecord
from .runmeta import add_run_metadata
from .torch_devices import DEVICE_CATS
from .torch_intervals import TorchIntervals
from .torch_path import TorchPathSource
from .torch_trace import TORCH_CPU, UNATTRIBUTED, TorchFiles
from .trace_events import (NO_ARGS, UNSET, TraceEvent, TraceHeader, add_arg_groups,
                           groups_called, parse_trace_document)

_COMPUTE_SUFFIX = " Compute"
#: The shares of a trace file's load done once it is read, decoded and added
#: (measured on a 212 MB PyTorch trace: 4 %, 40 % and 55 % of the time).
_READ, _DECODED, _ADDED = 0.04, 0.42, 0.98


def read_trace_events(path: str, entry: str = "", meter: Optional[FileMeter] = None,
                      index: int = 0) -> list[TraceEvent]:
    """The event list of one Chrome-trace file; LoadError if it is not one."""
    return read_trace_document(path, entry, meter, index)[0]


def read_trace_document(path: str, entry: str = "", meter: Optional[FileMeter] = None,
                        index: int = 0, groups: frozenset[str] = frozenset()
                        ) -> tuple[list[TraceEvent], TraceHeader]:
    """:func:`read_trace_events`, and the file's header; the args also read the fields
    of the argument groups ``groups`` (see :data:`.trace_events.ARG_GROUPS`).

    ``meter`` hears when file ``index`` is read and when it is decoded.
    """
    data = read_document(path, entry)
    if meter is not None:
        meter.reached(index, _READ)
    return _decoded(data, path, entry, meter, index, groups)


def _decoded(data: Union[bytes, mmap.mmap], path: str, entry: str, meter: Optional[FileMeter], index: int,
             groups: frozenset[str]) -> tuple[list[TraceEvent], TraceHeader]:
    """The events and header of file ``path``'s bytes ``data`` (see
    :func:`read_trace_document`)."""
    where = _where(path, entry)
    try:
        events, header = parse_trace_document(data, groups)
    except (ValueError, RecursionError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise LoadError("%s: not valid JSON: %s" % (where, first)) from None
    if events is None:
        raise LoadError("%s: not a Chrome trace (no traceEvents list)" % where)
    if meter is not None:
        meter.reached(index, _DECODED)
    return events, header


def _where(path: str, entry: str) -> str:
    return "--profile_path %s%s" % (path, " (%s)" % entry if entry else "")


def read_document(path: str, entry: str = "") -> Union[bytes, mmap.mmap]:
    """The bytes of one Chrome-trace file, gunzipped (a large plain file as a map of it:
    :func:`.files.map_bytes`); LoadError if they do not unzip."""
    data = map_bytes(path, "profile_path")
    if data[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            raise LoadError("%s: gzip data does not decompress" % _where(path, entry)) from None
    return data


def trace_flavor(events: Sequence[TraceEvent]) -> str:
    """"tensorflow", "pytorch" or "" for a trace neither wrote."""
    for ev in events:
        if ev.ph != "X":
            continue
        args = ev.args
        if args is not None and args.name is not UNSET and args.op is not UNSET:
            return "tensorflow"
        if ev.cat in TORCH_CPU or ev.cat in DEVICE_CATS:
            return "pytorch"
    return ""


class _DevStats:
    __slots__ = ("device", "node_stats")

    def __init__(self, device: str) -> None:
        self.device = device
        self.node_stats: list[Any] = []


class _StepStats:
    __slots__ = ("dev_stats",)

    def __init__(self) -> None:
        self.dev_stats: list[_DevStats] = []


def _micros(value: Any) -> int:
    try:
        return int(round(float(value)))
    except (TypeError, ValueError):
        return 0


def tf_step_stats(events: Sequence[TraceEvent]) -> tuple[Any, dict[str, str]]:
    """A StepStats look-alike of one TF timeline, and each node's kernel type."""
    devices = {}
    for ev in events:
        if ev.ph == "M" and ev.name == "process_name":
            name = (ev.args or NO_ARGS).name
            name = "" if name is UNSET else str(name)
            if name.endswith(_COMPUTE_SUFFIX):
                devices[ev.pid] = name[:-len(_COMPUTE_SUFFIX)]
    stats = _StepStats()
    by_device: dict[str, _DevStats] = {}
    types: dict[str, str] = {}
    for ev in events:
        args = ev.args
        if ev.ph != "X" or args is None or args.name is UNSET:
            continue
        device = devices.get(ev.pid, "/job:localhost/replica:0/task:0/device:CPU:0")
        dev = by_device.get(device)
        if dev is None:
            dev = by_device[device] = _DevStats(device)
            stats.dev_stats.append(dev)
        name = str(args.name)
        dev.node_stats.append(StatRecord(name, _micros(ev.ts), _micros(ev.dur)))
        types.setdefault(name.split(":", 1)[0], str(name if args.op is UNSET else args.op))
    return stats, types


def add_tf_timeline(model: Model, step: int, events: Sequence[TraceEvent],
                    types_from_graph: bool) -> None:
    """Add one TF timeline as ``step``. Nodes it adds are typed by their kernel,
    unless a graph gives the types (then they are named by themselves, as with
    run metadata)."""
    stats, types = tf_step_stats(events)
    before = set(model.nodes) if not types_from_graph else None
    add_run_metadata(model, step, stats)
    if before is None:
        return
    for name, node in model.nodes.items():
        if name not in before and name in types and node.op == name:
            node.op_types.discard(name)
            node.op = types[name]
            node.op_types.add(node.op)


class _Reread:
    """Gives a file's events the argument groups a loader finds events calling for that
    were not read (see :data:`.trace_events.ARG_GROUPS`): a decode of just their fields,
    attached to the events read (:func:`.trace_events.add_arg_groups`), or where that
    cannot be, the file read again with them. It holds the file's bytes until it is
    first called."""

    def __init__(self, path: str, entry: str, events: list[TraceEvent], header: TraceHeader,
                 data: Union[bytes, mmap.mmap, None] = None) -> None:
        self.path, self.entry, self.events, self.header = path, entry, events, header
        self.data = data

    def __call__(self, samples: Iterable[TraceEvent]) -> Optional[list[TraceEvent]]:
        """None where the events held have the fields ``samples`` call for (given now if
        they were not); else the events to take instead (read again, or some of them
        replaced in the list)."""
        data, self.data = self.data, None
        header = self.header
        more = groups_called(samples) - header.groups
        if not more:
            return None
        groups = header.groups | more
        if data is None:
            data = read_document(self.path, self.entry)
        if header.typed:
            replaced = add_arg_groups(data, self.events, header.groups, more)
            if replaced is not None:
                self.header = TraceHeader(header.distributed, header.base_ns, header.host,
                                          groups)
                return self.events if replaced else None
        self.events, self.header = _decoded(data, self.path, self.entry, None, 0, groups)
        return self.events


def load_chrome_traces(paths: Sequence[str], graph_path: Optional[str] = None,
                       op_log_path: Optional[str] = None, note: str = "") -> Model:
    """Read Chrome-trace files (file i = step i) into a Model, with an optional
    GraphDef and op log as on the run-metadata route."""
    model = Model(Source("chrome_trace", tuple(p for p in (*paths, graph_path, op_log_path)
                                              if p), note))
    if note:
        model.notes.append(note)
    op_log: Any = None
    id_to_string: dict[int, str] = {}
    if graph_path or op_log_path:
        from .graph import add_graph, add_op_log, read_graph, read_op_log
        if graph_path:
            add_graph(model, read_graph(graph_path))
        if op_log_path:
            op_log = read_op_log(op_log_path)
            add_op_log(model, op_log, id_to_string)
    count = len(paths)
    torch = TorchFiles(model)
    headers = []
    tensors = TimelineTensors()
    meter = file_meter(paths)
    for i, path in enumerate(paths):
        entry = "entry %d of %d" % (i + 1, count) if count > 1 else ""
        data = read_document(path, entry)
        meter.reached(i, _READ)
        events, header = _decoded(data, path, entry, meter, i, frozenset())
        # the bytes stay only with the reader of more groups (dropped when it is asked)
        reread = _Reread(path, entry, events, header, data)
        del data
        flavor = trace_flavor(events)
        if flavor == "tensorflow":
            add_tf_timeline(model, i, events, types_from_graph=bool(graph_path))
            tensors.add(i, events, reread)
        elif flavor == "pytorch":
            torch.add(i, events, reread)
            headers.append(reread.header)
        else:
            raise LoadError("--profile_path %s%s: a Chrome trace, but neither a TensorFlow "
                            "timeline (events with args.name and args.op) nor a PyTorch "
                            "profiler trace" % (path, " (%s)" % entry if entry else ""))
        meter.reached(i, _ADDED)
    if torch.kept:
        torch.finish(defer_traces=op_log is None)
    meter.reached(count - 1, 1.0)
    if op_log is not None:
        from .graph import add_op_log
        add_op_log(model, op_log, id_to_string)
    if torch.left_out:
        model.notes.append("%d op executions outside any ProfilerStep were left out"
                           % torch.left_out)
    if torch.disagree:
        model.notes.append("%d of %d device events carry an External id naming another op "
                           "than the one around their launch (older traces write other ids "
                           "there): each is charged to the op around its launch"
                           % (torch.disagree, torch.checked))
    if torch.unattributed:
        model.notes.append("%d device events ran for no op (launched outside every op, or "
                           "with no launch in the trace): see %s" % (torch.unattributed,
                                                                    UNATTRIBUTED))
    if torch.kept:
        model.set_interval_source(TorchIntervals(torch.kept))
        model.set_path_source(TorchPathSource(torch.kept))
        model.set_collective_source(TorchCollectives(torch.kept, headers))
    elif tensors.events:
        model.set_memory_source(tensors.source())
    return model
