"""parse_trace_events: typed events straight from the JSON, equal to the generic parse's."""

from __future__ import annotations

import gzip
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import sample
from tfprof_shell.load import json_doc, trace_events
from tfprof_shell.load.trace_events import (NO_ARGS, UNSET, DistEventArgs, DistTraceEvent,
                                            EventArgs, TraceEvent, parse_trace_document,
                                            parse_trace_events)


ARGS = (("External id", "external_id"), ("correlation", "correlation"), ("device", "device"),
        ("stream", "stream"), ("bytes", "bytes"), ("name", "name"), ("op", "op"),
        ("Collective name", "collective"), ("Process Group Name", "group_name"),
        ("Process Group Description", "group_desc"), ("Process Group Ranks", "group_ranks"),
        ("Group size", "group_size"), ("In msg nelems", "in_nelems"),
        ("Out msg nelems", "out_nelems"), ("dtype", "dtype"), ("Seq", "seq"),
        ("Addr", "addr"), ("Bytes", "nbytes"), ("Total Allocated", "total_allocated"),
        ("Total Reserved", "total_reserved"), ("Device Type", "device_type"),
        ("Device Id", "device_id"), ("snapshot", "snapshot"))


def generic(doc, dist=False):
    """What the events of ``doc`` are by definition: each object event, field by field
    (a distributed job's with their Input Dims)."""
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        return None
    keys = ARGS + ((("Input Dims", "input_dims"),) if dist else ())
    out = []
    for ev in events:
        if not isinstance(ev, dict):
            continue
        fields = {k: ev[k] for k in ("ph", "cat", "name", "pid", "tid", "ts", "dur", "id")
                  if k in ev}
        args = ev.get("args")
        if isinstance(args, dict):
            fields["args"] = (DistEventArgs if dist else EventArgs)(
                **{attr: args[key] for key, attr in keys if key in args})
        out.append((DistTraceEvent if dist else TraceEvent)(**fields))
    return out


scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6)
arg_keys = st.sampled_from(["External id", "correlation", "device", "stream", "bytes", "name",
                            "op", "Input Dims", "Call stack", "Collective name", "Seq",
                            "Process Group Name", "Process Group Ranks", "In msg nelems",
                            "Addr", "Bytes", "Total Allocated", "Total Reserved",
                            "Device Type", "Device Id", "snapshot"])
args = st.one_of(st.dictionaries(arg_keys, values, max_size=5), values)
event_keys = st.sampled_from(["ph", "cat", "name", "pid", "tid", "ts", "dur", "id", "bp", "s"])
events = st.one_of(
    st.fixed_dictionaries({"ph": st.sampled_from(["X", "M", "i"]),
                           "cat": st.sampled_from(["cpu_op", "kernel", "python_function"]),
                           "name": st.text(max_size=8), "ts": st.floats(0, 1e12),
                           "dur": st.integers(0, 10**6)},
                          optional={"args": args, "pid": values, "tid": values}),
    st.dictionaries(event_keys, values, max_size=6).flatmap(
        lambda ev: st.just(ev) | args.map(lambda a: dict(ev, args=a))),
    values)
documents = st.one_of(st.lists(events, max_size=6),
                      st.fixed_dictionaries({"traceEvents": st.lists(events, max_size=6)},
                                            optional={"schemaVersion": values}),
                      st.dictionaries(st.text(max_size=5), values, max_size=3), scalars)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(doc=documents)
def test_typed_events_equal_the_generic_parse_of_any_document(doc):
    data = json.dumps(doc).encode()
    assert parse_trace_events(data) == generic(json.loads(data))


#: Kineto writes the header before the events.
distributed = st.tuples(values, values, values, st.lists(events, max_size=6)).map(
    lambda t: {"distributedInfo": t[0], "baseTimeNanoseconds": t[1], "host_name": t[2],
               "traceEvents": t[3]})


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(doc=distributed)
def test_a_distributed_jobs_events_keep_their_input_dims_and_its_header(doc):
    data = json.dumps(doc).encode()
    events, header = parse_trace_document(data)
    assert events == generic(json.loads(data), dist=True)
    assert (header.distributed, header.base_ns, header.host) == (
        doc["distributedInfo"], doc["baseTimeNanoseconds"], doc["host_name"])


def test_a_trace_without_distributed_info_builds_no_input_dims():
    doc = {"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2,
                            "args": {"Input Dims": [[2, 3], [3, 4]]}}]}
    events, header = parse_trace_document(json.dumps(doc).encode())
    assert type(events[0]) is TraceEvent and not hasattr(events[0].args, "input_dims")
    assert header.distributed is None


def test_a_document_the_typed_decoder_refuses_reads_the_same():
    data = (b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": NaN, '
            b'"dur": 3, "args": {"External id": 7, "Input Dims": [[1]]}}, 5, '
            b'{"ph": "X", "args": [1, 2]}]}')
    got = parse_trace_events(data)
    assert len(got) == 2
    assert got[0].cat == "cpu_op" and math.isnan(got[0].ts) and got[0].args.external_id == 7
    assert got[1].args is None  # args that are not an object count as none


def test_missing_fields_take_the_loaders_defaults():
    (ev,) = parse_trace_events(b'[{"ph": "X", "args": {}}]')
    assert (ev.name, ev.ts, ev.dur, ev.pid, ev.cat) == ("", 0, 0, None, None)
    assert (ev.args.device, ev.args.stream, ev.args.external_id) == (0, "", None)
    assert ev.args.name is UNSET and ev.args.op is UNSET
    assert NO_ARGS == EventArgs()


def test_not_json_raises_and_no_event_list_is_none():
    with pytest.raises(ValueError):
        parse_trace_events(b'{"traceEvents": [')
    assert parse_trace_events(b'{"traceEvents": {"a": 1}}') is None
    assert parse_trace_events(b'"text"') is None


def test_a_real_trace_takes_the_typed_path(monkeypatch):
    """The torch_cnn sample decodes typed, never through the generic parse."""
    def refuse(data):
        raise AssertionError("the generic parse was used")
    monkeypatch.setattr(trace_events, "parse_json", refuse)
    with gzip.open(sample("torch_cnn", "worker0.1795426547943862326.pt.trace.json.gz")) as f:
        data = f.read()
    got = parse_trace_events(data)
    assert got == generic(json_doc.parse_json(data))
    assert sum(1 for ev in got if ev.cat == "kernel") > 0
