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
from tfprof_shell.load.trace_events import NO_ARGS, UNSET, EventArgs, TraceEvent, parse_trace_events


def generic(doc):
    """What the events of ``doc`` are by definition: each object event, field by field."""
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        return None
    out = []
    for ev in events:
        if not isinstance(ev, dict):
            continue
        fields = {k: ev[k] for k in ("ph", "cat", "name", "pid", "tid", "ts", "dur") if k in ev}
        args = ev.get("args")
        if isinstance(args, dict):
            fields["args"] = EventArgs(**{attr: args[key] for key, attr in (
                ("External id", "external_id"), ("correlation", "correlation"),
                ("device", "device"), ("stream", "stream"), ("bytes", "bytes"),
                ("name", "name"), ("op", "op")) if key in args})
        out.append(TraceEvent(**fields))
    return out


scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6)
arg_keys = st.sampled_from(["External id", "correlation", "device", "stream", "bytes", "name",
                            "op", "Input Dims", "Call stack"])
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
    assert (ev.args.device, ev.args.stream, ev.args.external_id) == (None, "", None)
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


def test_the_fields_only_some_traces_have_are_read_on_request():
    """The first Kineto traces' lower-case 'external id' and cuda_sync's waits are read
    with kineto=True (the loader asks where a trace has such events); otherwise every
    event's args answer None for them, as for an event that lacks them."""
    data = (b'[{"ph": "X", "cat": "Kernel", "args": {"external id": 4, "correlation": 7}},'
            b' {"ph": "X", "cat": "cuda_sync", "args": {"wait_on_stream": 20, '
            b'"wait_on_cuda_event_record_corr_id": 9}}]')
    old = parse_trace_events(data, kineto=True)
    assert (old[0].args.external_id_lower, old[0].args.correlation) == (4, 7)
    assert (old[1].args.wait_on_stream, old[1].args.wait_on_event_record) == (20, 9)
    lean = parse_trace_events(data)
    assert (lean[0].args.external_id_lower, lean[0].args.correlation) == (None, 7)
    assert (lean[1].args.wait_on_stream, lean[1].args.wait_on_event_record) == (None, None)
    # the generic parse (a document the typed decoder refuses) reads the same
    broken = data.replace(b'"correlation": 7', b'"correlation": NaN')
    assert parse_trace_events(broken, kineto=True)[1] == old[1]
    assert parse_trace_events(broken)[1] == lean[1]
