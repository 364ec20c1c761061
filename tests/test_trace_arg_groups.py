"""The loader reads a trace's events a second time only where its first pass finds events
calling for argument fields the first decode did not read (trace_events.ARG_GROUPS), and
what it reads then is what a trace announcing them in its header gives in one decode."""

from __future__ import annotations

import glob
import gzip
import os

import pytest

from conftest import sample
from tfprof_shell.load import chrome_trace
from tfprof_shell.load.chrome_trace import load_chrome_traces
from tfprof_shell.load.trace_events import (COLLECTIVES, FIRST_KINETO, MEMORY, SYNC_WAITS,
                                            TENSORS)
from tfprof_shell.views.memory import memory_result
from tfprof_shell.views.steps import step_breakdowns

GENERATIONS = sample("torch_generations")


@pytest.fixture
def decodes(monkeypatch):
    """The argument groups of each decode of a trace file, in order."""
    seen: list[frozenset[str]] = []
    parse = chrome_trace.parse_trace_document

    def counted(data, groups=frozenset()):
        events, header = parse(data, groups)
        seen.append(header.groups)
        return events, header
    monkeypatch.setattr(chrome_trace, "parse_trace_document", counted)
    return seen


@pytest.mark.parametrize("path", [
    os.path.join(GENERATIONS, "recorded_torch2.13.0.pt.trace.json.gz"),
    os.path.join(GENERATIONS, "synthetic_kineto2023.pt.trace.json.gz"),
    os.path.join(GENERATIONS, "synthetic_mtia.pt.trace.json.gz")])
def test_a_trace_calling_for_no_group_is_decoded_once_with_none(decodes, path):
    load_chrome_traces([path])
    assert decodes == [frozenset()]


def test_a_header_naming_a_group_reads_it_in_the_first_decode(decodes):
    load_chrome_traces(glob.glob(sample("torch_cnn", "*.pt.trace.json.gz")))
    assert decodes == [{MEMORY}]
    decodes.clear()
    load_chrome_traces([sample("synthetic_nccl", "rank0.synthetic.pt.trace.json.gz")])
    assert decodes == [{COLLECTIVES}]


@pytest.mark.parametrize("name,group", [("synthetic_cuda_sync", SYNC_WAITS),
                                        ("synthetic_kineto2021", FIRST_KINETO)])
def test_events_calling_for_a_group_have_the_trace_decoded_again_with_it(decodes, name, group):
    load_chrome_traces([os.path.join(GENERATIONS, name + ".pt.trace.json.gz")])
    assert decodes == [frozenset(), {group}]


def test_tf_timeline_tensors_are_read_again_with_their_ids_and_snapshots(decodes):
    paths = sorted(glob.glob(sample("memory", "tf1_timeline", "*.json.gz")))
    model = load_chrome_traces(paths)
    assert decodes == [frozenset(), {TENSORS}] * len(paths)
    assert all(d.peak.nbytes > 0 for d in memory_result(model, "op").devices)


def test_memory_events_without_the_header_flag_read_the_same(decodes, tmp_path):
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
    assert decodes == [frozenset(), {MEMORY}]

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
