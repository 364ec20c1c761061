"""Python-stack look-ups: the random-access descent and the per-node look-up plan
agree with the full scans they replace."""

from __future__ import annotations

import glob
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import sample
from tfprof_shell.load import frame_lines, pystack, wire, xspace
from tfprof_shell.load.pystack import Line, attach_traces, nested_stacks
from tfprof_shell.load.xplane import load_xplane
from tfprof_shell.model import Frame
from tfprof_shell.proto import xplane_stacks_pb2
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


def _assert_naive_stacks(rng: random.Random, events, leaves=None) -> None:
    """nested_stacks at random times gives what a naive scan of ``events`` gives."""
    last = max(e for _, e, _ in events)
    times = {rng.randrange(-2, last + 3) for _ in range(rng.choice((1, 5, 200)))}
    got = nested_stacks(len(events), lambda k: events[k][0], lambda k: events[k][1],
                        lambda k: events[k][2], times, leaves)
    assert got is not None and set(got) == times
    for t in times:
        assert got[t] == _naive(events, t)


@pytest.mark.parametrize("seed", range(6))
def test_nested_stacks_agree_with_a_naive_scan(seed):
    rng = random.Random(seed)
    _assert_naive_stacks(rng, _nested_events(rng, 3000))


def _flat_runs(rng: random.Random, count: int) -> list[tuple[int, int, Frame | None]]:
    """Nested calls with long runs of leaf calls (short calls with nothing inside),
    some of zero or negative duration, some starting where the one before ends."""
    events: list[list] = []

    def call(start: int, depth: int) -> int:
        idx = len(events)
        events.append([start, start, Frame("f.py", idx, "fn%d" % depth, idx)])
        t = start + rng.choice((0, 1))
        while depth < 4 and len(events) < count and rng.random() < 0.7:
            if rng.random() < 0.3:  # a run of leaves
                for _ in range(rng.randrange(1, 300)):
                    dur = rng.choice((0, 1, 2, 5, -1)) if rng.random() < 0.1 else rng.randrange(1, 9)
                    events.append([t, t + dur, Frame("g.py", len(events), "leaf", 1)])
                    t += max(dur, 0) + rng.choice((0, 0, 1))
            else:
                t = call(t, depth + 1) + rng.randrange(0, 3)
        events[idx][1] = max(t, start + 1)
        return events[idx][1]

    t = 0
    while len(events) < count:
        t = call(t, 0) + rng.randrange(0, 4)
    return [tuple(e) for e in events]


def _leaves_of(events, asked: list[int]):
    """nested_stacks' ``leaves``, one event at a time (its contract, plainly)."""
    def leaves(k, t):
        asked.append(k)
        first = k
        while k + 1 < len(events):
            s, e, _ = events[k]
            if not (s <= e <= t and e <= events[k + 1][0]):
                break
            k += 1
        return k, (events[k - 1][0] if k > first else None)
    return leaves


@pytest.mark.parametrize("seed", range(6))
def test_nested_stacks_stepping_over_runs_of_leaves_agree_with_a_naive_scan(seed):
    rng = random.Random(seed)
    events = _flat_runs(rng, 5000)
    asked: list[int] = []
    _assert_naive_stacks(rng, events, _leaves_of(events, asked))
    assert asked  # the runs were stepped over by ``leaves``


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


@pytest.mark.parametrize("seed", range(4))
def test_frame_lines_leaves_answer_as_one_event_at_a_time(tmp_path, seed):
    rng = random.Random(seed)
    sp = Space()
    line = sp.plane("/host:CPU").line("python")
    events = []
    t = 0
    for _ in range(6000):  # runs of leaves, with zero and negative durations, some stats
        dur = rng.choice((0, 0, -2, 3, 40)) if rng.random() < 0.05 else rng.randrange(1, 30)
        if rng.random() < 0.01:  # a call with something inside
            dur = 50
        stats = {"id": rng.randrange(9)} if rng.random() < 0.05 else {}
        ev = line.event("$f.py:%d g" % rng.randrange(4), 0, 0, **stats)
        ev.offset_ps, ev.duration_ps = t, dur  # exact picoseconds
        events.append((t, t + dur, None))
        t += max(dur, 0) // (5 if dur == 50 else 1) + rng.choice((0, 0, 1))
    path = sp.write(tmp_path / "h.xplane.pb")
    source = frame_lines.FrameLines(None, path, [(0, 0)])
    leaves = source.leaves(0, 0)
    assert leaves is not None
    for k in [0, 1, 17, 2999, 5998, 5999] + [rng.randrange(6000) for _ in range(60)]:
        for at in (events[k][0], events[min(k + 300, 5999)][0], t + 10, -1):
            assert leaves(k, at) == _leaves_of(events, [])(k, at), (k, at)


def _count_leaves(monkeypatch) -> list[int]:
    """The indices FrameLines.leaves will be asked from, as they are asked."""
    asked: list[int] = []
    real_leaves = frame_lines.FrameLines.leaves

    def counted(source, p, li):
        found = real_leaves(source, p, li)
        return found and (lambda k, t: asked.append(k) or found(k, t))
    monkeypatch.setattr(frame_lines.FrameLines, "leaves", counted)
    return asked


def test_random_access_gives_the_walks_traces_on_a_recorded_jax_profile(monkeypatch):
    """jax_gpt's Python thread is small enough to be walked whole; read by random
    access instead, with its runs of short calls stepped over in blocks, every
    node gets the same trace."""
    path = glob.glob(sample("jax_gpt", "plugins", "profile", "*", "*.xplane.pb"))[0]
    walked = _traces(load_xplane([path]))
    assert sum(map(bool, walked.values())) > 100
    monkeypatch.setattr(frame_lines, "WALK_AT_MOST", 0)
    asked = _count_leaves(monkeypatch)
    assert _traces(load_xplane([path])) == walked
    assert asked


def _tf2_like(path, steps: int, unsorted: bool = False, compress: bool = False,
              leaves: int = 0) -> str:
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
                   # short calls with nothing inside (zero durations among them)
                   *[("$model.py:%d helper" % (5 + j % 3), t + 6 + j / 1e3, j % 7 / 8e3, {})
                     for j in range(leaves)],
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


@pytest.mark.parametrize("unsorted,compress,leaves", [(False, False, 0), (True, False, 0),
                                                       (False, True, 0), (False, False, 3000)])
def test_random_access_and_full_walk_give_the_same_traces(tmp_path, monkeypatch, unsorted,
                                                          compress, leaves):
    name = "h.xplane.pb.gz" if compress else "h.xplane.pb"
    path = _tf2_like(tmp_path / name, 20, unsorted, compress, leaves)
    walked = _traces(load_xplane([path]))
    assert walked["dense/MatMul"] == [("train.py", 10, "main"), ("train.py", 20, "loop"),
                                      ("model.py", 3, "step")]
    assert walked["dense/BiasAdd"][-1] == ("model.py", 9, "log")
    monkeypatch.setattr(frame_lines, "WALK_AT_MOST", 0)
    asked = _count_leaves(monkeypatch)
    assert _traces(load_xplane([path])) == walked
    assert bool(asked) == bool(leaves)  # runs of leaves were stepped over in blocks
    real = pystack.attach_traces
    monkeypatch.setattr(xspace, "attach_traces",
                        lambda lines, starts, stacks_of, wanted=None: real(lines, starts, stacks_of))
    assert _traces(load_xplane([path])) == walked


@given(st.integers(1, 536870911), st.binary(max_size=20000))
def test_length_prefix_opens_a_field_as_protobuf_writes_it(number, payload):
    written = xplane_stacks_pb2.LineRaw(events=[payload]).SerializeToString()
    assert written == wire.length_prefix(4, len(payload)) + payload
    head = memoryview(wire.length_prefix(number, len(payload)))
    tag, pos = wire._varint(head, 0, len(head))
    length, pos = wire._varint(head, pos, len(head))
    assert (tag, length, pos) == (number << 3 | wire.LEN, len(payload), len(head))
