"""PyTorch traces: the step of each event by bisect, steps as a set, the API's paused collector."""

from __future__ import annotations

import gc

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import sample
from tfprof_shell import api
from tfprof_shell.load.torch_trace import _StepMarks
from tfprof_shell.model import Model, Source


def scan(marks, t, default, last=False):
    """The rule by definition: the last mark holding t, else (last=True) the last started."""
    if not marks:
        return default
    inside = [m[2] for m in marks if m[0] <= t < m[1]]
    if inside:
        return inside[-1]
    if last:
        started = [m[2] for m in marks if m[0] <= t]
        return started[-1] if started else None
    return None


spans = st.tuples(st.integers(0, 60), st.integers(0, 30), st.integers(0, 9))


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(raw=st.lists(spans, max_size=8), times=st.lists(st.integers(-5, 100), max_size=10),
       last=st.booleans())
def test_bisect_agrees_with_the_scan_even_for_overlapping_marks(raw, times, last):
    marks = sorted((float(a), float(a + d), s) for a, d, s in raw)
    index = _StepMarks(marks)
    for t in times:
        assert index.at(float(t), 7, last) == scan(marks, float(t), 7, last)


def test_sequential_marks_answer_each_step():
    marks = [(10.0 * i, 10.0 * i + 9.0, i) for i in range(1000)]
    index = _StepMarks(marks)
    assert index.at(5.0, -1) == 0
    assert index.at(9999.5, -1) is None
    assert index.at(9999.5, -1, last=True) == 999
    assert index.at(4321.0, -1) == 432


def test_model_steps_stay_sorted_and_unique():
    model = Model(Source("test"))
    for step in (5, 2, 5, 9, 2, 0):
        model.add_step(step)
    assert model.steps == [0, 2, 5, 9]
    model.steps = [1]  # a loader may replace the list; the set follows it
    model.add_step(1)
    model.add_step(3)
    assert model.steps == [1, 3]


def test_the_api_loads_with_the_collector_paused(monkeypatch):
    from tfprof_shell.load import parallel
    seen = []
    real = parallel.load_model

    def spy(inputs):
        seen.append(gc.isenabled())
        return real(inputs)

    monkeypatch.setattr(parallel, "load_model", spy)
    assert gc.isenabled()
    prof = api.Profile.load(sample("torch_cnn"))
    assert seen == [False]
    assert gc.isenabled()
    assert prof.steps == [2, 3, 4]


def test_code_traces_are_looked_up_when_first_asked_for():
    """Loading leaves a trace's Python stacks alone; the first read finds them all."""
    model = api.Profile.load(sample("torch_cnn")).model
    assert model.traces_deferred
    with_trace = [n for n in model.nodes.values() if n.trace_deferred]
    assert with_trace
    assert model.has_trace and not model.traces_deferred
    first = with_trace[0].trace
    assert first and all(f.file.endswith(".py") for f in first)
