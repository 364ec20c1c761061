"""The loader reads argument fields the first decode did not read (trace_events.ARG_GROUPS)
only where its first pass finds events calling for them, then decodes just those fields and
gives them to the events it holds (a document only the standard library reads is read again
whole), and what it has then is what a trace announcing them in its header gives in one
decode."""

from __future__ import annotations

import glob
import gzip
import json
import os

import pytest

from conftest import sample
from tfprof_shell.load import chrome_trace
from tfprof_shell.load.chrome_trace import load_chrome_traces
from tfprof_shell.load.trace_events import (COLLECTIVES, FIRST_KINETO, MEMORY, SYNC_WAITS,
                                            TENSORS, parse_trace_document)
from tfprof_shell.views.memory import memory_result
from tfprof_shell.views.steps import step_breakdowns

GENERATIONS = sample("torch_generations")


@pytest.fixture
def decodes(monkeypatch):
    """The argument groups of each whole decode of a trace file, in order."""
    seen: list[frozenset[str]] = []
    parse = chrome_trace.parse_trace_document

    def counted(data, groups=frozenset()):
        events, header = parse(data, groups)
        seen.append(header.groups)
        return events, header
    monkeypatch.setattr(chrome_trace, "parse_trace_document", counted)
    return seen


@pytest.fixture
def attached(monkeypatch):
    """The argument groups given to the events held after their decode, in order."""
    seen: list[frozenset[str]] = []
    attach = chrome_trace.add_arg_groups

    def counted(data, events, read, more):
        seen.append(more)
        return attach(data, events, read, more)
    monkeypatch.setattr(chrome_trace, "add_arg_groups", counted)
    return seen


@pytest.mark.parametrize("path", [
    os.path.join(GENERATIONS, "recorded_torch2.13.0.pt.trace.json.gz"),
    os.path.join(GENERATIONS, "synthetic_kineto2023.pt.trace.json.gz"),
    os.path.join(GENERATIONS, "synthetic_mtia.pt.trace.json.gz")])
def test_a_trace_calling_for_no_group_is_decoded_once_with_none(decodes, attached, path):
    load_chrome_traces([path])
    assert decodes == [frozenset()] and attached == []


def test_a_header_naming_a_group_reads_it_in_the_first_decode(decodes, attached):
    load_chrome_traces(glob.glob(sample("torch_cnn", "*.pt.trace.json.gz")))
    assert decodes == [{MEMORY}]
    decodes.clear()
    load_chrome_traces([sample("synthetic_nccl", "rank0.synthetic.pt.trace.json.gz")])
    assert decodes == [{COLLECTIVES}] and attached == []


@pytest.mark.parametrize("name,group", [("synthetic_cuda_sync", SYNC_WAITS),
                                        ("synthetic_kineto2021", FIRST_KINETO)])
def test_events_calling_for_a_group_are_given_its_fields(decodes, attached, name, group):
    path = os.path.join(GENERATIONS, name + ".pt.trace.json.gz")
    model = load_chrome_traces([path])
    assert decodes == [frozenset()] and attached == [{group}]
    with pytest.MonkeyPatch.context() as mp:  # the trace with its group in one decode
        mp.setattr(chrome_trace, "parse_trace_document",
                   lambda data, groups=frozenset(): parse_trace_document(data, groups | {group}))
        whole = load_chrome_traces([path])
    assert everything(model) == everything(whole)


def test_tf_timeline_tensors_are_given_their_ids_and_snapshots(decodes, attached):
    paths = sorted(glob.glob(sample("memory", "tf1_timeline", "*.json.gz")))
    model = load_chrome_traces(paths)
    assert decodes == [frozenset()] * len(paths) and attached == [{TENSORS}] * len(paths)
    assert all(d.peak.nbytes > 0 for d in memory_result(model, "op").devices)


def test_a_document_only_the_standard_library_reads_is_read_again_whole(decodes, attached,
                                                                         tmp_path):
    """A NaN literal sends the first decode to the standard library's parse, whose events
    are not by position the document's: a cuda_sync event has it read again."""
    with gzip.open(os.path.join(GENERATIONS, "synthetic_cuda_sync.pt.trace.json.gz")) as f:
        data = f.read()
    doc = json.loads(data)
    doc["traceEvents"].insert(0, {"ph": "M", "name": "thread_name", "pid": 0, "tid": 1,
                                  "ts": float("nan"), "args": {"name": "a"}})
    path = tmp_path / "nan.pt.trace.json"
    path.write_text(json.dumps(doc))
    model = load_chrome_traces([str(path)])
    assert decodes == [frozenset(), {SYNC_WAITS}] and attached == []
    assert any(y.record >= 0 for y in model.intervals().syncs)


def everything(model):
    """A model's nodes with every step's statistics, its steps breakdown and memory peaks."""
    columns = {name: (node.op, sorted(node.op_types), [node.stats(step) for step in
                                                      sorted(node.steps_run)])
               for name, node in model.nodes.items()}
    iv = model.intervals()
    return (columns, list(iv.syncs),
            [(d.name, d.peak.nbytes, d.peak.time) for d in memory_result(model, "op").devices])


def test_memory_events_without_the_header_flag_read_the_same(decodes, attached, tmp_path):
    """An older trace names no profile_memory in its header: its [memory] events call for
    the memory fields, and the model is the one the flagged trace gives."""
    (path,) = glob.glob(sample("torch_cnn", "*.pt.trace.json.gz"))
    with gzip.open(path) as f:
        data = f.read()
    assert data.count(b'"profile_memory": 1,') == 1
    unflagged = tmp_path / "unflagged.pt.trace.json"
    unflagged.write_bytes(data.replace(b'"profile_memory": 1,', b""))
    flagged = load_chrome_traces([path])
    decodes.clear()
    again = load_chrome_traces([str(unflagged)])
    assert decodes == [frozenset()] and attached == [{MEMORY}]

    def columns(model):
        return {name: [node.stats(step) for step in sorted(node.steps_run)]
                for name, node in model.nodes.items()}
    assert columns(again) == columns(flagged)
    mine, theirs = (memory_result(m, "op").devices for m in (again, flagged))
    assert [(d.name, d.peak.nbytes, d.peak.time) for d in mine] == \
        [(d.name, d.peak.nbytes, d.peak.time) for d in theirs]
    assert any(d.peak.nbytes > 0 for d in mine)


def test_the_sync_waits_read_again_link_each_sync(decodes):
    model = load_chrome_traces([os.path.join(GENERATIONS, "synthetic_cuda_sync.pt.trace.json.gz")])
    iv = model.intervals()
    assert iv.syncs and any(y.record >= 0 for y in iv.syncs)  # the recording call, by its id
    assert step_breakdowns(iv)
