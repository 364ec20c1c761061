"""Python-stack look-ups: the random-access descent and the per-node look-up plan
agree with the full scans they replace."""

from __future__ import annotations

import random

import pytest

from tfprof_shell.load import frame_lines, pystack, xspace
from tfprof_shell.load.pystack import Line, attach_traces, nested_stacks
from tfprof_shell.load.xplane import load_xplane
from tfprof_shell.model import Frame
from xspace_builder import Space


def _nested_events(rng: random.Random, count: int) -> list[tuple[int, int, Frame | None]]:
    """(start, end, frame or None) of properly nested calls in start order; about a
    third are not frames (TF ops), some last zero time, some start with their parent."""
    events: list[list] = []

    def call(start: int, depth: int) -> int:
        idx = len(events)
        frame = None if rng.random() < 0.3 else Frame("f.py", idx, "fn%d" % depth, idx)
        events.append([start, start, frame])
        t = start + rng.choice((0, 0, 1, 2))
        while depth < 10 and len(events) < count and rng.random() < 0.6:
            t = call(t, depth + 1) + rng.randrange(0, 3)
        events[idx][1] = max(t, start + rng.randrange(0, 4))
        return events[idx][1]

    t = 0
    while len(events) < count:
        t = call(t, 0) + rng.randrange(0, 4)
    return [tuple(e) for e in events]


def _naive(events, t):
    return [f for s, e, f in events if f is not None and s <= t < e]


@pytest.mark.parametrize("seed", range(6))
def test_nested_stacks_agree_with_a_naive_scan(seed):
    rng = random.Random(seed)
    events = _nested_events(rng, 3000)
    last = max(e for _, e, _ in events)
    times = {rng.randrange(-2, last + 3) for _ in range(rng.choice((1, 5, 200)))}
    got = nested_stacks(len(events), lambda k: events[k][0], lambda k: events[k][1],
                        lambda k: events[k][2], times)
    assert got is not None and set(got) == times
    for t in times:
        assert got[t] == _naive(events, t)


def test_nested_stacks_refuse_events_out_of_order_or_not_nested():
    f = Frame("f.py", 1, "f", 1)
    unsorted = [(10, 20, f), (5, 30, f)]
    crossing = [(0, 10, f), (5, 15, f)]
    for events in (unsorted, crossing):
        got = nested_stacks(len(events), lambda k: events[k][0], lambda k: events[k][1],
                            lambda k: events[k][2], {7, 12})
        assert got is None


def _plan_lines(rng: random.Random):
    """A Python line and an executor line whose ops take the stack of an executor event."""
    frames = [Frame("f.py", i, "fn%d" % i, i) for i in range(5)]
    py, other = Line(has_frames=True), Line()
    names = ["a", "b", "c"]
    for s in range(0, 400, 3):
        py.exec_starts.append(s)
        py.exec_names.append(rng.choice(names))
    for k in range(10):
        py.ids.append((k * 40, k * 40 + 30, k))
        other.ids.append((k * 40 + 1, k * 40 + 35, k))
        for s in range(k * 40 + 2, k * 40 + 30, 7):
            other.exec_starts.append(s)
            other.exec_names.append(rng.choice(names + ["d"]))
    stack_at = {t: [] if rng.random() < 0.5 else rng.sample(frames, 2) for t in range(400)}
    return [py, other], stack_at


@pytest.mark.parametrize("seed", range(6))
def test_looking_up_only_what_picks_a_trace_picks_the_same_traces(seed):
    def first_traces(wanted_given: bool) -> dict[str, tuple[int, list[Frame]]]:
        lines, stack_at = _plan_lines(random.Random(seed))
        if seed % 2:  # executions not in time order
            for line in lines:
                pairs = list(zip(line.exec_starts, line.exec_names))
                random.Random(seed).shuffle(pairs)
                line.exec_starts = [s for s, _ in pairs]
                line.exec_names = [n for _, n in pairs]

        def stacks_of(j, times):
            return {t: list(stack_at[t]) for t in times}
        wanted = (lambda s: s % 5 != 0)
        attach_traces(lines, [list(line.exec_starts) for line in lines], stacks_of,
                      wanted if wanted_given else None)
        first: dict[str, tuple[int, list[Frame]]] = {}
        for line in lines:  # as the model's deferred traces pick them
            for start, name in zip(line.exec_starts, line.exec_names):
                trace = line.traces.get(start)
                if not trace or not wanted(start):
                    continue
                if name not in first or start < first[name][0]:
                    first[name] = (start, trace)
        return first

    assert first_traces(True) == first_traces(False)


def _tf2_like(path, steps: int, unsorted: bool = False, compress: bool = False) -> str:
    """A host with a Python line holding nested frames, TF ops and an executor
    event per step, and a compute line whose op takes the executor's stack."""
    sp = Space()
    plane = sp.plane("/host:CPU")
    py = plane.line("python")
    compute = plane.line("tf_Compute/1")
    events = [("$train.py:10 main", 0, 100 * steps + 50, {})]
    # before the first step: left out, so the node's trace is taken from step 0
    events.append(("dense/MatMul:MatMul", 1, 1, {}))
    for k in range(steps):
        t = 10 + 100 * k
        events += [("train", t, 90, {"step_num": k}),
                   ("$train.py:20 loop", t, 80, {}),
                   ("$model.py:3 step", t + 5, 60, {}),
                   ("$<built-in> len", t + 6, 0, {}),
                   ("dense/MatMul:MatMul", t + 10, 5, {}),
                   ("$model.py:9 log", t + 30, 20, {}),
                   ("dense/Relu:Relu", t + 35, 5, {}),
                   ("FunctionRun", t + 40, 20, {"id": k + 1})]
        compute.event("ExecutorState::Process", t + 41, 15, id=k + 1)
        compute.event("dense/BiasAdd:BiasAdd", t + 42, 5)
    if unsorted:
        events.reverse()
    for name, start, dur, stats in events:
        py.event(name, start, dur, **stats)
    return sp.write(path, compress=compress)


def _traces(model) -> dict[str, list[tuple[str, int, str]]]:
    model.has_trace  # resolves the deferred traces
    return {name: [(f.file, f.lineno, f.function) for f in (node.trace or [])]
            for name, node in sorted(model.nodes.items())}


@pytest.mark.parametrize("unsorted,compress", [(False, False), (True, False), (False, True)])
def test_random_access_and_full_walk_give_the_same_traces(tmp_path, monkeypatch, unsorted,
                                                          compress):
    name = "h.xplane.pb.gz" if compress else "h.xplane.pb"
    path = _tf2_like(tmp_path / name, 20, unsorted, compress)
    walked = _traces(load_xplane([path]))
    assert walked["dense/MatMul"] == [("train.py", 10, "main"), ("train.py", 20, "loop"),
                                      ("model.py", 3, "step")]
    assert walked["dense/BiasAdd"][-1] == ("model.py", 9, "log")
    monkeypatch.setattr(frame_lines, "WALK_AT_MOST", 0)
    assert _traces(load_xplane([path])) == walked
    real = pystack.attach_traces
    monkeypatch.setattr(xspace, "attach_traces",
                        lambda lines, starts, stacks_of, wanted=None: real(lines, starts, stacks_of))
    assert _traces(load_xplane([path])) == walked
