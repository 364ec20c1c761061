"""A trace's slices by lane (model/lanes.py, load/lanes_chrome.py): rows that never
overlap, windows that hold exactly the slices overlapping them, the slices around a
slice, and lanes named as the trace names its threads and streams."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tfprof_shell.load.lanes_chrome import chrome_lanes
from tfprof_shell.model.lanes import DEVICE, HOST, LanesBuilder

SLICES = st.lists(st.tuples(st.integers(0, 200), st.integers(0, 60)), max_size=60)


def _built(slices):
    b = LanesBuilder("test")
    lane = b.lane("t", "thread 1", "process", HOST, (0,))
    ids = [b.add(lane, start, dur, "s%d" % k) for k, (start, dur) in enumerate(slices)]
    return b.finish(), ids


@settings(max_examples=200, deadline=None, database=None)
@given(SLICES)
def test_rows_never_overlap_and_every_slice_is_laid_out_once(slices):
    lanes, ids = _built(slices)
    lane = lanes.lanes[0] if lanes.lanes else None
    placed = sorted(e for row in (lane.rows if lane else []) for e in row)
    assert placed == ids
    for row in (lane.rows if lane else []):
        for a, b in zip(row, row[1:]):
            assert lanes.start[a] + lanes.dur[a] <= lanes.start[b]


@settings(max_examples=200, deadline=None, database=None)
@given(SLICES, st.integers(0, 260), st.integers(0, 120))
def test_a_window_holds_exactly_the_slices_overlapping_it(slices, lo, width):
    lanes, ids = _built(slices)
    hi = lo + width
    found = sorted(lanes.overlapping(0, lo, hi)) if lanes.lanes else []
    assert found == [e for e in ids if lanes.start[e] <= hi and lanes.start[e] + lanes.dur[e] >= lo]


@settings(max_examples=200, deadline=None, database=None)
@given(SLICES)
def test_the_slices_around_a_slice_are_open_when_it_starts(slices):
    lanes, ids = _built(slices)
    for e in ids:
        around = lanes.enclosing(e)
        depths = [lanes.depth[a] for a in around]
        assert depths == sorted(set(depths)) and all(d < lanes.depth[e] for d in depths)
        for a in around:
            assert lanes.start[a] <= lanes.start[e] < lanes.start[a] + lanes.dur[a]


def test_nested_slices_sit_one_row_below_their_parent():
    # a call tree: each slice inside the one before it, then siblings
    lanes, ids = _built([(0, 100), (10, 50), (20, 10), (35, 5), (70, 20), (75, 5)])
    assert [lanes.depth[e] for e in ids] == [0, 1, 2, 2, 1, 2]
    assert [[lanes.text(a) for a in lanes.enclosing(e)] for e in ids] == [
        [], ["s0"], ["s0", "s1"], ["s0", "s1"], ["s0"], ["s0", "s4"]]


def test_a_pytorch_traces_lanes_are_its_threads_and_streams(tmp_path):
    meta = [{"ph": "M", "name": "process_name", "pid": 9, "args": {"name": "python3"}},
            {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "python3"}},
            {"ph": "M", "name": "process_labels", "pid": 0, "args": {"labels": "GPU 0"}},
            {"ph": "M", "name": "thread_name", "pid": 9, "tid": 9,
             "args": {"name": "thread 9 (python3)"}},
            {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7 "}}]
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 9, "tid": 9, "ts": 10, "dur": 20},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9,
         "ts": 12, "dur": 3, "args": {"correlation": 5}},
        {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": "16.5", "dur": 4,
         "args": {"correlation": 5, "device": 0, "stream": 7, "grid": [2, 1, 1],
                  "block": [128, 1, 1], "registers per thread": 32}},
        {"ph": "X", "cat": "gpu_user_annotation", "name": "forward", "pid": 0, "tid": 7,
         "ts": 15, "dur": 10},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 9, "tid": 11, "ts": 40,
         "dur": 2}]
    path = tmp_path / "t.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": meta + events}))
    lanes = chrome_lanes([str(path)], "test")
    names = [(lane.group, lane.name, lane.kind) for lane in lanes.lanes]
    assert names == [("gpu:0", "gpu:0 stream 7", DEVICE),
                     ("gpu:0", "gpu:0 stream 7 annotations", DEVICE),
                     ("python3 (pid 9)", "thread 9 (python3)", HOST),
                     ("python3 (pid 9)", "thread 11", HOST)]
    kernel = next(e for e in range(len(lanes)) if lanes.text(e) == "gemm")
    launch = lanes.flows[kernel]
    assert lanes.text(launch) == "cudaLaunchKernel" and lanes.flows[launch] == kernel
    assert [lanes.text(e) for e in lanes.enclosing(launch)] == ["aten::mm"]
    assert lanes.start[kernel] == 16500 and lanes.dur[kernel] == 4000
    assert lanes.args[kernel]["grid"] == [2, 1, 1] and lanes.args[kernel]["registers"] == 32
