"""parse_trace_events: typed events straight from the JSON, equal to the generic parse's."""

from __future__ import annotations

import gzip
import json
import math
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import sample
from tfprof_shell.load import json_doc, trace_events
from tfprof_shell.load.trace_events import (ARG_GROUPS, COLLECTIVES, FIRST_KINETO, MEMORY,
                                            NO_ARGS, SYNC_WAITS, TENSORS, UNSET, EventArgs,
                                            TraceEvent, add_arg_groups, event_types,
                                            groups_called, parse_trace_document,
                                            parse_trace_events)


ARGS = (("External id", "external_id"), ("correlation", "correlation"), ("device", "device"),
        ("stream", "stream"), ("bytes", "bytes"), ("name", "name"), ("op", "op"))
EVENT = ("ph", "cat", "name", "pid", "tid", "ts", "dur")


def generic(doc, groups=()):
    """What the events of ``doc`` are by definition: each object event, field by field,
    with the fields of ``groups`` and of the groups its header's keys call for."""
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        return None
    groups = set(groups)
    if isinstance(doc, dict):
        groups |= {name for name, g in ARG_GROUPS.items() if g.header in doc}
    args_type, event_type, _ = event_types(frozenset(groups))
    keys = ARGS + tuple(k for g in groups for k in ARG_GROUPS[g].keys)
    event_keys = EVENT + tuple(a for g in groups for _, a in ARG_GROUPS[g].event_keys)
    out = []
    for ev in events:
        if not isinstance(ev, dict):
            continue
        fields = {k: ev[k] for k in event_keys if k in ev}
        args = ev.get("args")
        if isinstance(args, dict):
            fields["args"] = args_type(**{attr: args[key] for key, attr in keys if key in args})
        out.append(event_type(**fields))
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
                            "Device Type", "Device Id", "snapshot", "external id",
                            "wait_on_stream", "wait_on_cuda_event_record_corr_id"])
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


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(doc=documents, groups=st.sets(st.sampled_from(sorted(ARG_GROUPS))))
def test_typed_events_with_argument_groups_equal_the_generic_parse(doc, groups):
    data = json.dumps(doc).encode()
    events, header = parse_trace_document(data, groups)
    assert events == generic(json.loads(data), groups)
    assert header.groups >= groups


#: Kineto writes the header before the events.
distributed = st.tuples(values, values, values, st.lists(events, max_size=6)).map(
    lambda t: {"distributedInfo": t[0], "baseTimeNanoseconds": t[1], "host_name": t[2],
               "traceEvents": t[3]})


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(doc=distributed)
def test_a_distributed_jobs_events_keep_their_collective_args_and_its_header(doc):
    data = json.dumps(doc).encode()
    events, header = parse_trace_document(data)
    assert events == generic(json.loads(data), {COLLECTIVES})
    assert (header.distributed, header.base_ns, header.host) == (
        doc["distributedInfo"], doc["baseTimeNanoseconds"], doc["host_name"])
    assert header.groups == {COLLECTIVES}


def test_a_header_after_the_events_still_calls_for_its_groups():
    doc = {"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "record_param_comms",
                            "args": {"Collective name": "allreduce", "Seq": 3}}],
           "distributedInfo": {"rank": 0}, "profile_memory": 1}
    events, header = parse_trace_document(json.dumps(doc).encode())
    assert (events[0].args.collective, events[0].args.seq) == ("allreduce", 3)
    assert header.groups == {COLLECTIVES, MEMORY} and header.distributed == {"rank": 0}


def test_a_trace_without_distributed_info_builds_no_collective_args():
    doc = {"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2,
                            "args": {"Input Dims": [[2, 3], [3, 4]], "Seq": 4}}]}
    events, header = parse_trace_document(json.dumps(doc).encode())
    assert type(events[0]) is TraceEvent and type(events[0].args) is EventArgs
    assert (events[0].args.input_dims, events[0].args.seq) == (None, None)
    assert header.distributed is None and header.groups == frozenset()


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


def test_the_fields_only_some_traces_have_are_read_when_called_for():
    """Each group's fields are read where asked for (the loader asks where its first pass
    found an event calling for them); otherwise every event's args answer None for them,
    as for an event that lacks them."""
    data = (b'[{"ph": "X", "cat": "Kernel", "args": {"external id": 4, "correlation": 7}},'
            b' {"ph": "X", "cat": "cuda_sync", "args": {"wait_on_stream": 20, '
            b'"wait_on_cuda_event_record_corr_id": 9}},'
            b' {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "args": '
            b'{"Addr": 5, "Bytes": 512, "Total Allocated": 512, "Total Reserved": 2048, '
            b'"Device Type": 1, "Device Id": 0}},'
            b' {"ph": "O", "cat": "Tensor", "name": "t", "id": 3, "args": {"snapshot": {}}}]')
    lean = parse_trace_events(data)
    assert groups_called(lean) == {FIRST_KINETO, SYNC_WAITS, MEMORY, TENSORS}
    full = parse_trace_events(data, groups_called(lean))
    assert (full[0].args.external_id_lower, full[0].args.correlation) == (4, 7)
    assert (full[1].args.wait_on_stream, full[1].args.wait_on_cuda_event_record_corr_id) == (20, 9)
    mem = full[2].args
    assert (mem.addr, mem.nbytes, mem.total_allocated, mem.total_reserved, mem.device_type,
            mem.device_id) == (5, 512, 512, 2048, 1, 0)
    assert (full[3].id, full[3].args.snapshot) == (3, {})
    assert (lean[0].args.external_id_lower, lean[0].args.correlation) == (None, 7)
    assert (lean[1].args.wait_on_stream, lean[2].args.nbytes, lean[3].id) == (None, None, None)
    assert NO_ARGS.nbytes is None and NO_ARGS.wait_on_stream is None
    # the generic parse (a document the typed decoder refuses) reads the same
    broken = data.replace(b'"correlation": 7', b'"correlation": NaN')
    assert parse_trace_events(broken, groups_called(lean))[1:] == full[1:]
    assert parse_trace_events(broken)[1:] == lean[1:]


#: Every field a loader may read of an event and of its args, whichever groups were read.
ALL_EVENT = EVENT + tuple(a for g in ARG_GROUPS.values() for _, a in g.event_keys)
ALL_ARGS = tuple(a for _, a in ARGS) + tuple(a for g in ARG_GROUPS.values() for _, a in g.keys)


def every_field(events):
    return [(tuple(getattr(ev, a) for a in ALL_EVENT),
             None if ev.args is None else tuple(getattr(ev.args, a) for a in ALL_ARGS))
            for ev in events]


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(doc=documents, read=st.sets(st.sampled_from(sorted(ARG_GROUPS))),
       more=st.sets(st.sampled_from(sorted(ARG_GROUPS)), min_size=1))
def test_groups_given_after_the_decode_are_what_one_decode_reads(doc, read, more):
    """add_arg_groups gives the events of a typed decode the fields a decode with the other
    groups too would have given them, each by its position."""
    data = json.dumps(doc).encode()
    events, header = parse_trace_document(data, read)
    more = frozenset(more) - header.groups
    if events is None or not header.typed or not more:
        return
    before = [type(ev) for ev in events]
    replaced = add_arg_groups(data, events, header.groups, more)
    assert replaced == sum(type(ev) is not was for ev, was in zip(events, before))
    assert every_field(events) == every_field(parse_trace_events(data, header.groups | more))


def test_groups_given_after_the_decode_go_to_the_events_carrying_them():
    data = (b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "args": {"External id": 1}},'
            b' {"ph": "X", "cat": "cuda_sync", "args": {"wait_on_stream": 20, "stream": 7}},'
            b' {"ph": "O", "cat": "Tensor", "name": "t", "id": 3, "args": {"snapshot": {}}},'
            b' {"ph": "i", "name": "[memory]", "args": {"Bytes": 8}}], "profile_memory": 1}')
    events, header = parse_trace_document(data)
    held = list(events)
    assert add_arg_groups(data, events, header.groups, frozenset({SYNC_WAITS, TENSORS})) == 1
    assert events[0] is held[0] and type(events[0].args) is type(held[3].args)  # untouched
    assert events[1] is held[1] and (events[1].args.wait_on_stream, events[1].args.stream,
                                     events[1].args.nbytes) == (20, 7, None)
    assert events[2] is not held[2] and (events[2].id, events[2].args.snapshot) == (3, {})
    assert events[3].args.nbytes == 8 and events[3].args.wait_on_stream is None
    assert pickle.loads(pickle.dumps(events)) == events
    # a document the typed decoder refuses has no events by position
    assert add_arg_groups(data.replace(b'"Bytes": 8', b'"Bytes": NaN'), events,
                          header.groups, frozenset({SYNC_WAITS})) is None


def test_what_calls_for_each_group():
    def event(ph, cat="", name=""):
        return TraceEvent(ph=ph, cat=cat, name=name)
    assert groups_called([event("X", "cpu_op", "aten::mm"), event("X", "kernel"),
                          event("X", "cuda_runtime"), event("i", "", "mark"),
                          event("X", ["a list"], {"an": "object"})]) == frozenset()
    assert groups_called([event("i", "cpu_instant_event", "[memory]")]) == {MEMORY}
    assert groups_called([event("X", "cuda_sync", "Event Sync")]) == {SYNC_WAITS}
    assert groups_called([event("X", "Runtime", "cudaLaunchKernel")]) == {FIRST_KINETO}
    assert groups_called([event("N", "Tensor", "t")]) == {TENSORS}
    assert groups_called([event("X", "Tensor", "t")]) == frozenset()


def test_events_of_argument_groups_pickle_by_their_types_names():
    """Models travel between processes: pickle finds the types of any set of groups by
    name in the module."""
    (ev,) = parse_trace_events(b'[{"ph": "X", "args": {"Bytes": 5, "wait_on_stream": 7}}]',
                               {MEMORY, SYNC_WAITS})
    assert type(ev).__name__ == "TraceEvent__memory__sync_waits"
    assert getattr(trace_events, type(ev.args).__name__) is type(ev.args)
    assert pickle.loads(pickle.dumps(ev)) == ev
    with pytest.raises(AttributeError):
        getattr(trace_events, "EventArgs__no_such_group")
