"""Which op owns a PyTorch [memory] event: the cpu op innermost around it on its thread,
among its ops, scopes and Python frames (a frame opened inside the op takes it), the op's
own execution even where another op starts at the same time with the same type."""

from __future__ import annotations

import json

from tfprof_shell.load import Inputs, load_model
from tfprof_shell.model import stats as S


def op(name, ts, dur, tid=1):
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": tid, "ts": ts,
            "dur": dur, "args": {"External id": 1}}


def annotation(name, ts, dur, tid=1):
    return dict(op(name, ts, dur, tid), cat="user_annotation")


def frame(ts, dur, name="train.py(3): step"):
    return {"ph": "X", "cat": "python_function", "name": name, "pid": 1, "tid": 1, "ts": ts,
            "dur": dur}


def memory(ts, nbytes, addr, tid=1):
    return {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1,
            "tid": tid, "ts": ts, "args": {"Bytes": nbytes, "Addr": addr, "Device Type": 0,
                                           "Device Id": -1, "Total Allocated": 0,
                                           "Total Reserved": 0}}


def owned(tmp_path, events):
    """Each node's bytes (allocations less frees of its own events) in the trace's one step."""
    path = tmp_path / "t.pt.trace.json"
    path.write_text(json.dumps({"profile_memory": 1, "traceEvents": [
        annotation("ProfilerStep#1", 0, 1000)] + events}))
    model = load_model(Inputs(profile_path=str(path)))
    return {name: node.stats(1)[S.REQUESTED] for name, node in model.nodes.items()
            if node.stats(1)[S.REQUESTED]}


def test_an_event_belongs_to_the_innermost_op_ending_at_it_at_the_latest(tmp_path):
    assert owned(tmp_path, [op("aten::linear", 10, 10), op("aten::mm", 12, 4),
                            memory(13, 64, 1), memory(16, 8, 2), memory(18, 4, 3),
                            memory(20, 2, 4), memory(21, 1, 5)]) == {
        "aten::linear/aten::mm": 64 + 8, "aten::linear": 4 + 2}


def test_an_op_started_at_an_events_time_owns_it(tmp_path):
    assert owned(tmp_path, [op("aten::add", 10, 10), op("aten::mul", 20, 5),
                            memory(20, 16, 1)]) == {"aten::mul": 16}


def test_a_python_frame_opened_inside_an_op_keeps_its_events_from_it(tmp_path):
    """PyTorch counts an event of a Python function called inside an op as the function's."""
    assert owned(tmp_path, [op("aten::to", 10, 20), frame(12, 4), memory(14, 64, 1),
                            memory(17, 8, 2)]) == {"aten::to": 8}


def test_a_frame_and_an_op_opening_together_nest_by_their_ends(tmp_path):
    """Of a frame and an op starting together, the longer is outside; of equal ones, the op."""
    assert owned(tmp_path, [op("aten::to", 10, 10), frame(10, 5), memory(12, 64, 1),
                            memory(17, 8, 2)]) == {"aten::to": 8}
    assert owned(tmp_path, [op("aten::to", 10, 10), frame(10, 10), memory(12, 64, 1)]) == {}
    assert owned(tmp_path, [op("aten::to", 10, 10), frame(10, 15), memory(12, 64, 1)]) == {
        "aten::to": 64}


def test_a_frame_outliving_the_op_it_opened_in_keeps_its_later_events(tmp_path):
    """A record_function's frame opens before its range and closes after it: what it
    allocates after the range ended is the frame's, not the range's parent op's."""
    assert owned(tmp_path, [op("aten::outer", 0, 100), frame(10, 30),
                            annotation("region", 12, 20), op("aten::mm", 14, 4),
                            memory(15, 64, 1), memory(35, 8, 2), memory(50, 4, 3)]) == {
        "aten::outer/region/aten::mm": 64, "aten::outer": 4}


def test_each_event_is_its_own_executions_where_ops_of_a_type_start_together(tmp_path):
    """Traces at whole microseconds: an op and the op of the same type inside it start
    together, and so do ops of two threads; each event goes to the execution it is in."""
    assert owned(tmp_path, [op("aten::to", 10, 10), op("aten::to", 10, 4), memory(12, 64, 1),
                            memory(16, 8, 2)]) == {"aten::to/aten::to": 64, "aten::to": 8}
    assert owned(tmp_path, [annotation("forward", 5, 50), op("aten::add", 10, 10),
                            annotation("backward", 5, 50, tid=2), op("aten::add", 10, 10, tid=2),
                            memory(12, 64, 1), memory(12, 8, 2, tid=2)]) == {
        "forward/aten::add": 64, "backward/aten::add": 8}
