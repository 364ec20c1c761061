"""TF2 profiles (.xplane.pb): the real samples checked against their raw events,
path resolution, and small synthetic XSpaces for what a CPU sample cannot show."""

from __future__ import annotations

import gzip
import io
import os
import re
import shutil
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfprof_shell.cli import main
from tfprof_shell.errors import LoadError, RequestError, UsageError
from tfprof_shell.load import Inputs, load_model
from tfprof_shell.load.xplane import _CpuExecs, load_xplane
from tfprof_shell.model import stats as S
from tfprof_shell.options import DEFAULTS
from tfprof_shell.proto import xplane_pb2
from tfprof_shell.session import Session
from xspace_builder import U64, Space

HERE = os.path.dirname(os.path.abspath(__file__))
TF2 = os.path.join(os.path.dirname(HERE), "sample_profiles", "tf2")
SAMPLES = ("custom_loop", "custom_loop_py", "keras_fit")
TF_OP = re.compile(r"[A-Za-z0-9.][A-Za-z0-9_./>-]*:[A-Z_][A-Za-z0-9_]*")
ALL = DEFAULTS.replace(max_depth=1000)


def sample_file(name: str) -> str:
    for dirpath, _, files in os.walk(os.path.join(TF2, name)):
        for f in files:
            if f.endswith(".xplane.pb"):
                return os.path.join(dirpath, f)
    raise AssertionError("no .xplane.pb under " + name)


# ---------------------------------------------------------------------------
# An independent reading of the raw events (naive on purpose)
# ---------------------------------------------------------------------------
def raw_events(path: str) -> list[list[dict]]:
    """Host-plane events per line: name, start/end (ps), stats by name."""
    space = xplane_pb2.XSpace()
    with open(path, "rb") as f:
        space.ParseFromString(f.read())
    plane = next(p for p in space.planes if p.name == "/host:CPU")
    names = {k: v.name for k, v in plane.stat_metadata.items()}
    lines = []
    for line in plane.lines:
        evs = []
        for ev in line.events:
            stats = {}
            for stat in ev.stats:
                which = stat.WhichOneof("value")
                value = getattr(stat, which)
                stats[names[stat.metadata_id]] = names[value] if which == "ref_value" else value
            start = line.timestamp_ns * 1000 + ev.offset_ps
            evs.append({"name": plane.event_metadata[ev.metadata_id].name, "start": start,
                        "end": start + ev.duration_ps, "stats": stats})
        lines.append(evs)
    return lines


def micros(ps: int) -> int:
    us = (ps + 500_000) // 1_000_000
    return us if us > 0 else 1


def expected_execs(path: str) -> list[tuple[int, str, str, int]]:
    """(step, node name, op type, µs) of every op execution inside a step marker."""
    lines = raw_events(path)
    markers = [(e["start"], e["end"], e["stats"]["step_num"])
               for evs in lines for e in evs if "step_num" in e["stats"]]

    def step_of(t):
        inside = [m for m in markers if m[0] <= t < m[1]]
        return max(inside)[2] if inside else None

    out = []
    for evs in lines:
        ops = [e for e in evs if TF_OP.fullmatch(e["name"])]
        for op in ops:
            inner = [c for c in ops if c is not op
                     and op["start"] <= c["start"] and c["end"] <= op["end"]]
            direct = [c for c in inner if not any(
                d is not c and d["start"] <= c["start"] and c["end"] <= d["end"] for d in inner)]
            self_ps = (op["end"] - op["start"]) - sum(c["end"] - c["start"] for c in direct)
            name, op_type = op["name"].split(":")
            out.append((step_of(op["start"]), name, op_type, micros(self_ps)))
        for e in evs:
            if e["name"] != "EagerExecute" or "eager_op" not in e["stats"] \
                    or e["stats"].get("is_func"):
                continue
            kernels = [k for k in evs if k["name"] == "EagerKernelExecute"
                       and e["start"] <= k["start"] and k["end"] <= e["end"]]
            timed = min(kernels, key=lambda k: k["start"]) if kernels else e
            op_type = e["stats"]["eager_op"]
            out.append((step_of(timed["start"]), op_type, op_type,
                        micros(timed["end"] - timed["start"])))
    return out


@pytest.fixture(scope="module", params=SAMPLES)
def sample(request):
    path = sample_file(request.param)
    return request.param, path, Session(load_xplane([path])), expected_execs(path)


def test_op_view_totals_equal_raw_event_sums(sample):
    _, _, session, execs = sample
    steps = sorted({s for s, *_ in execs if s is not None})
    assert session.model.steps == steps
    for step in steps:
        want = Counter()
        for s, _, op_type, us in execs:
            if s == step:
                want[op_type] += us
        rows = session.show("op", ALL.replace(step=step)).root.children
        got = {r.name: r.self_stats[S.EXEC] for r in rows if r.self_stats[S.EXEC]}
        assert want and got == dict(want)


def test_scope_root_total_is_all_tf_op_time(sample):
    _, _, session, execs = sample
    for step in session.model.steps:
        root = session.show("scope", ALL.replace(step=step)).root
        assert root.total[S.EXEC] == sum(us for s, _, _, us in execs if s == step)
        assert root.total[S.ACCEL] == 0  # a CPU-only profile


def test_step_selection_picks_the_events_inside_each_marker(sample):
    _, _, session, execs = sample
    model = session.model
    for step in model.steps:
        want = Counter(name for s, name, _, _ in execs if s == step)
        got = {n.name: n.execs[step].run_count for n in model.nodes.values() if step in n.execs}
        assert got == dict(want)
    left_out = sum(1 for s, *_ in execs if s is None)
    if left_out:
        assert "%d op executions outside any step marker were left out" % left_out \
            in model.notes


def test_samples_have_the_expected_steps_and_kernel_types():
    loop = load_xplane([sample_file("custom_loop")])
    assert loop.steps == [10, 11, 12]
    assert loop.nodes["layer1/Relu"].op == "_MklNativeFusedMatMul"  # the kernel that ran
    assert loop.nodes["Max"].op == "Max"  # an eager op, named by its type
    keras = load_xplane([sample_file("keras_fit")])
    assert keras.steps == [3, 4, 5]  # "Profiled batch" markers


def test_code_view_needs_python_tracing():
    traced = Session(load_xplane([sample_file("custom_loop_py")]))
    assert traced.model.has_trace
    ops = [n for n in traced.model.nodes.values() if n.execs]
    assert all(n.trace for n in ops)
    # ops of the tf.function are followed to the Python call that ran the function
    assert traced.model.nodes["layer1/Relu"].trace[-1].function == "quick_execute"
    assert any(f.function == "reduce_max" for f in traced.model.nodes["Max"].trace)
    code = traced.show("code", ALL.replace(step=10)).root
    scope = traced.show("scope", ALL.replace(step=10)).root
    assert code.total[S.EXEC] == scope.total[S.EXEC]
    plain = Session(load_xplane([sample_file("custom_loop")]))
    assert not plain.model.has_trace
    with pytest.raises(RequestError):
        plain.run_view("code", DEFAULTS)


@pytest.mark.parametrize("command", [
    "scope -select micros,occurrence -order_by micros",
    "graph -max_depth 3", "op -select micros,cpu_micros -order_by cpu_micros -step 11",
    "code -max_depth 4 -select micros", "scope -output json", "op -output json",
    "scope -show_name_regexes .*layer.* -min_micros 2", "advise"])
def test_commands_run_on_tf2_profiles(command):
    session = Session(load_xplane([sample_file("custom_loop_py")]))
    reply = session.execute(command)
    assert reply.text


def test_timeline_output(tmp_path):
    session = Session(load_xplane([sample_file("custom_loop")]))
    out = tmp_path / "tl.json"
    reply = session.execute("scope -step 11 -output timeline:outfile=%s" % out)
    assert reply.files and all(os.path.getsize(f) > 100 for f in reply.files)


# ---------------------------------------------------------------------------
# --profile_path as a file, run directory or log directory; --run; --host
# ---------------------------------------------------------------------------
def test_log_directory_picks_the_newest_run_and_says_which(tmp_path):
    src = os.path.dirname(sample_file("custom_loop"))
    runs = tmp_path / "plugins" / "profile"
    for run in ("2024_01_01_00_00_00", "2025_06_01_12_00_00"):
        shutil.copytree(src, runs / run)
    model = load_model(Inputs(profile_path=str(tmp_path)))
    assert model.source.paths[0].endswith(
        os.path.join("2025_06_01_12_00_00", "localhost.xplane.pb"))
    assert model.notes[0].startswith("profile run plugins/profile/2025_06_01_12_00_00 "
                                     "(newest of 2 runs)")
    older = load_model(Inputs(profile_path=str(tmp_path), run="2024_01_01_00_00_00"))
    assert "2024_01_01_00_00_00" in older.source.paths[0]
    with pytest.raises(UsageError, match="no such run.*2024_01_01_00_00_00"):
        load_model(Inputs(profile_path=str(tmp_path), run="nope"))


def test_keras_log_directory_and_run_directory():
    keras = load_model(Inputs(profile_path=os.path.join(TF2, "keras_fit")))
    assert keras.source.kind == "xplane" and keras.steps == [3, 4, 5]
    run_dir = load_model(Inputs(profile_path=os.path.dirname(sample_file("keras_fit"))))
    assert sorted(run_dir.nodes) == sorted(keras.nodes)


def test_hosts_load_together_and_can_be_restricted(tmp_path):
    src = sample_file("custom_loop")
    for host in ("worker0", "worker1"):
        shutil.copy(src, tmp_path / ("%s.xplane.pb" % host))
    both = load_model(Inputs(profile_path=str(tmp_path)))
    single = load_xplane([src])
    assert sorted(both.nodes) == sorted(h + "/" + n for h in ("worker0", "worker1")
                                        for n in single.nodes)
    assert both.nodes["worker1/layer1/Relu"].canonical_device == \
        "/job:localhost/replica:0/task:1/device:cpu:0"
    root = Session(both).show("scope", ALL.replace(step=11)).root
    assert root.total[S.EXEC] == 2 * Session(single).show("scope", ALL.replace(step=11)).root.total[S.EXEC]
    one = load_model(Inputs(profile_path=str(tmp_path), hosts=("worker1",)))
    assert sorted(one.nodes) == sorted(single.nodes)
    with pytest.raises(UsageError, match="hosts: worker0, worker1"):
        load_model(Inputs(profile_path=str(tmp_path), hosts=("nope",)))


def test_cli_prints_loader_notes_on_stderr():
    out, err = io.StringIO(), io.StringIO()
    status = main(["--profile_path=" + os.path.join(TF2, "custom_loop"), "op",
                   "-select", "micros,occurrence"], stdout=out, stderr=err)
    assert status == 0
    assert "_MklNativeFusedMatMul" in out.getvalue()
    assert "tfprof: profile run plugins/profile/" in err.getvalue()


def test_bad_inputs_are_one_line_errors(tmp_path):
    riegeli = tmp_path / "host.xplane.riegeli"
    riegeli.write_bytes(b"riegeli")
    with pytest.raises(LoadError, match="riegeli files are not supported"):
        load_model(Inputs(profile_path=str(riegeli)))
    junk = tmp_path / "junk.xplane.pb"
    junk.write_bytes(b"\xff" * 64)
    with pytest.raises(LoadError, match="not an XSpace"):
        load_model(Inputs(profile_path=str(junk)))
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    with pytest.raises(LoadError, match="no .xplane.pb files"):
        load_model(Inputs(profile_path=str(empty_dir)))
    with pytest.raises(UsageError):
        load_model(Inputs(profile_path=sample_file("custom_loop"), graph_path="g.pbtxt"))


# ---------------------------------------------------------------------------
# Synthetic XSpaces: GPU kernels, nesting, memory, format drift
# ---------------------------------------------------------------------------
def test_gpu_kernels_count_as_accelerator_time_of_their_op(tmp_path):
    sp = Space()
    host = sp.plane("/host:CPU").line("tf_Compute/1")
    sp.plane("Task Environment")
    sp.plane("/host:CPU").line("python").event("train", 0, 1000, step_num=7)
    host.event("net/conv:Conv2D", 10, 5)
    host.event("net/relu:Relu", 20, 2)
    gpu = sp.plane("/device:GPU:0")
    stream = gpu.line("Stream #7(Compute)")
    stream.event("implicit_convolve_sgemm", 30, 40, tf_op="net/conv:Conv2D", correlation_id=1)
    stream.event("winograd_kernel", 80, 10, tf_op="outer:While::net/conv:Conv2D")
    stream.event("memcpy", 95, 3)  # names no op
    derived = gpu.line("TensorFlow Ops")
    derived.event("net/conv:Conv2D", 30, 60)  # XProf's derived line: not counted again
    model = load_xplane([sp.write(tmp_path / "h.xplane.pb")])
    conv = model.nodes["net/conv"]
    assert conv.canonical_device == "/job:localhost/replica:0/task:0/device:gpu:0"
    assert conv.execs[7].accelerator_micros() == 50
    assert conv.execs[7].cpu_micros() == 5
    assert model.nodes["net/relu"].canonical_device.endswith("device:cpu:0")
    assert "1 device events name no TensorFlow op and were left out" in model.notes
    rows = Session(model).show("op", ALL).root.children
    assert [(r.name, r.self_stats[S.ACCEL], r.self_stats[S.CPU]) for r in rows] == \
        [("Conv2D", 50, 5), ("Relu", 0, 2)]


def test_nested_ops_count_self_time_and_no_markers_mean_step_0(tmp_path):
    sp = Space()
    plane = sp.plane("Host Threads")  # the host plane's name in older TensorFlow
    sp.plane("/device:GPU:1")  # an empty plane
    line = plane.line("tf_Compute/1")
    line.event("loop/while:While", 0, 100)
    line.event("loop/while/body/add:AddV2", 10, 30)
    line.event("loop/while/body/mul:Mul", 50, 20.4)
    line.event("tiny:NoOp", 120, 0.2)
    model = load_xplane([sp.write(tmp_path / "h.xplane.pb.gz", compress=True,
                                  extra=b"\xa2\x06\x03abc")])  # gzip + an unknown field
    assert model.steps == [0]
    assert any(n.startswith("no step markers") for n in model.notes)
    got = {name: n.execs[0].cpu_micros() for name, n in model.nodes.items()}
    assert got == {"loop/while": 50, "loop/while/body/add": 30, "loop/while/body/mul": 20,
                   "tiny": 1}  # rounded to the nearest µs, at least 1 µs


def test_memory_allocation_events_feed_the_bytes_attributes(tmp_path):
    sp = Space()
    plane = sp.plane("/host:CPU")
    plane.line("python").event("train", 0, 1000, step_num=1)
    line = plane.line("tf_Compute/1")
    line.event("a/matmul:MatMul", 10, 20)
    line.event("MemoryAllocation", 12, 0, tf_op="a/matmul", allocator_name="GPU_0_bfc",
               addr=100, requested_bytes=1000, allocation_bytes=1024, region_type="output")
    line.event("MemoryAllocation", 13, 0, tf_op=gzip.compress(b"a/matmul:MatMul"),
               allocator_name="GPU_0_bfc", addr=200, requested_bytes=500,
               allocation_bytes=512, region_type="temp")  # a gzip-compressed string stat
    line.event("MemoryDeallocation", 25, 0, allocator_name="GPU_0_bfc", addr=200)
    model = load_xplane([sp.write(tmp_path / "h.xplane.pb")])
    root = Session(model).show("scope", ALL.replace(step=1)).root
    assert root.total[S.REQUESTED] == 1500
    assert root.total[S.PEAK] == 1536
    assert root.total[S.OUTPUT] == 1024
    assert root.total[S.RESIDUAL] == 1024  # the temp buffer was freed


def test_python_frames_and_executor_ids_give_code_traces(tmp_path):
    sp = Space()
    plane = sp.plane("/host:CPU")
    py = plane.line("python")
    py.event("$train.py:10 main", 0, 500)
    py.event("$model.py:3 step", 5, 200)
    py.event("$<unknown> len", 6, 1)  # a C function: not a frame
    py.event("FunctionRun", 20, 100, id=42)
    py.event("$train.py:40 log", 300, 50)
    compute = plane.line("tf_Compute/9")
    compute.event("ExecutorState::Process", 30, 80, id=42)
    compute.event("dense/MatMul:MatMul", 40, 10)
    model = load_xplane([sp.write(tmp_path / "h.xplane.pb")])
    trace = model.nodes["dense/MatMul"].trace
    assert [(f.file, f.lineno, f.function) for f in trace] == \
        [("train.py", 10, "main"), ("model.py", 3, "step")]
    assert model.has_trace


def test_events_picked_by_metadata_id_give_the_same_model_as_reading_every_event(tmp_path):
    from tfprof_shell.load.xplane import model_from_hosts
    from tfprof_shell.load.xspace import Host, time_origin
    from tfprof_shell.load.xspace_pick import read_xspace_picked
    from tfprof_shell.model import Source

    sp = Space()
    plane = sp.plane("/host:CPU")
    py = plane.line("python")
    py.event("train", 0, 1000, step_num=3)
    py.event("$train.py:10 main", 0, 500)
    py.event("$<unknown> len", 6, 1)
    py.event("FunctionRun", 20, 100, id=7)
    compute = plane.line("tf_Compute/1")
    compute.event("ExecutorState::Process", 30, 80, id=7)
    compute.event("dense/MatMul:MatMul", 40, 10)
    path = sp.write(tmp_path / "h.xplane.pb")
    models = []
    for pick in (True, False):  # without picks, every event is looked at
        space, picked = read_xspace_picked(path, pick)
        assert bool(picked) == pick
        epoch, first = time_origin(space)
        host = Host(space, 0, "", -first, path, picked)
        models.append(model_from_hosts([host], epoch + first, Source("xplane", (path,))))
    for model in models:
        node = model.nodes["dense/MatMul"]
        assert model.steps == [3] and list(node.execs) == [3]
        assert [f.function for f in node.trace] == ["main"]
        assert model.has_trace


def test_python_frames_written_out_of_start_order_give_the_same_traces(tmp_path):
    sp = Space()
    plane = sp.plane("/host:CPU")
    py = plane.line("python")
    py.event("$train.py:40 log", 300, 50)
    py.event("$model.py:3 step", 5, 200)
    py.event("$train.py:10 main", 0, 500)
    py.event("dense/MatMul:MatMul", 40, 10)
    py.event("dense/Relu:Relu", 320, 10)
    model = load_xplane([sp.write(tmp_path / "h.xplane.pb")])
    assert [f.function for f in model.nodes["dense/MatMul"].trace] == ["main", "step"]
    assert [f.function for f in model.nodes["dense/Relu"].trace] == ["main", "log"]


def test_python_stack_lookups_agree_with_a_naive_scan():
    import random

    from tfprof_shell.load.pystack import stacks as _stacks
    from tfprof_shell.load.xspace import Line
    from tfprof_shell.model import Frame

    rng = random.Random(3)
    line = Line()
    spans = []

    def call(start, depth):  # a properly nested call tree, written in start order
        end = start + rng.randrange(1, 50)
        idx = len(spans)
        spans.append([start, None])
        frame = Frame("f.py", idx, "fn%d" % depth, idx)
        line.f_start.append(start)
        line.f_end.append(0)
        line.f_frame.append(frame)
        t = start + 1
        while depth < 12 and rng.random() < 0.6:
            t = call(t, depth + 1) + rng.randrange(0, 3)
        end = max(end, t + 1)
        line.f_end[idx] = end
        return end

    t = 0
    while len(spans) < 20000:
        t = call(t, 0) + rng.randrange(0, 5)
    few = [{rng.randrange(0, t), rng.randrange(0, t)} for _ in range(10)]  # block scans
    many = set(range(0, t, max(1, t // 40000)))  # one sweep
    for wanted in few + [many]:
        got = _stacks(line, wanted)
        for q in list(wanted)[:300]:
            naive = [line.f_frame[i] for i in range(len(spans))
                     if line.f_start[i] <= q < line.f_end[i]]
            assert got[q] == naive


def test_cli_flags_reach_the_inputs():
    from tfprof_shell.cli import parse_argv

    inputs, _, words, _ = parse_argv(["--profile_path=logs", "--run=2025_01_01_00_00_00",
                                      "--host=w0,w1", "scope"])
    assert (inputs.run, inputs.hosts, words) == ("2025_01_01_00_00_00", ("w0", "w1"), ["scope"])
    err = io.StringIO()
    assert main(["--graph_path=g", "--run=x", "scope"], stdout=io.StringIO(), stderr=err) == 2
    assert "--run and --host need --profile_path" in err.getvalue()


def test_an_xspace_under_another_name_still_loads(tmp_path):
    renamed = tmp_path / "profile"
    shutil.copy(sample_file("custom_loop"), renamed)
    model = load_model(Inputs(profile_path=str(renamed)))
    assert model.source.kind == "xplane" and model.steps == [10, 11, 12]


def _random_space(seed):
    """A host plane mixing what the column reader treats specially: nested and
    zero-length ops, events without an offset, executor ids on events of several
    metadata (some of whose first event has none), markers, eager ops, memory."""
    import random

    rng = random.Random(seed)
    mixed_eager, funcs = rng.random() < 0.3, rng.random() < 0.5
    sp = Space()
    plane = sp.plane("/host:CPU")
    py = plane.line("python")
    t = 0.0 if rng.random() < 0.5 else 1.0
    for step in range(rng.randrange(1, 4)):
        start = t
        py.event("train", start, 400, step_num=step)
        py.event("$train.py:%d main" % rng.randrange(1, 5), start + 1, 300)
        py.event("FunctionRun", start + 2, 200, id=step + 1)
        if rng.random() < 0.5:
            # eager ops whose stats the column reader takes, or leaves to messages
            eager = {"eager_op": rng.choice(["AddV2", "MatMul"])}
            if mixed_eager:
                eager = rng.choice([eager, {"is_func": rng.choice([0, 1]), **eager},
                                    {**eager, "_r": 1}, {}, {"eager_op": 7}])
            elif funcs:
                eager["is_func"] = rng.choice([0, 1])
            py.event("EagerExecute", start + 3, rng.choice([5, 5, 0]) if mixed_eager else 5,
                     **eager)
            py.event("EagerKernelExecute", start + 4, rng.choice([1, 1, 0]))
        t += 500
    for c in range(rng.randrange(1, 4)):
        line = plane.line("tf_Compute/%d" % c)
        t = 0.0 if rng.random() < 0.3 else 2.0
        for k in range(rng.randrange(0, 40)):
            r = rng.random()
            ident = {"id": rng.randrange(1, 4)} if rng.random() < 0.8 else {}
            if r < 0.2:
                line.event("ExecutorState::Process", t, rng.choice([0, 3]), **ident)
            elif r < 0.3:
                line.event("ThreadpoolListener::Record", t, 0,
                           **(ident if rng.random() < 0.2 else {}))
            elif r < 0.35:
                line.event("MemoryAllocation", t, 0, tf_op="op%d:Mul" % rng.randrange(5),
                           allocation_bytes=64, requested_bytes=60)
            else:
                dur = rng.choice([0, 1, 2, 5])
                ev = line.event("s/op%d:%s" % (rng.randrange(8), rng.choice(["Mul", "AddV2"])),
                                t, dur)
                if rng.random() < 0.03:  # no offset written at all: the column is short
                    ev.ClearField("offset_ps")
                if rng.random() < 0.3:  # nested inside the last op
                    line.event("s/in%d:Relu" % rng.randrange(3), t, min(dur, 1))
            t += rng.choice([0, 0.5, 1, 3])
    return sp


@pytest.mark.parametrize("seed", range(40))
def test_column_reading_gives_the_model_of_reading_every_event(tmp_path, seed, monkeypatch):
    from tfprof_shell.load import xplane as X
    from tfprof_shell.load.xspace import Host, time_origin
    from tfprof_shell.load.xspace_pick import read_xspace_picked
    from tfprof_shell.model import Source

    path = _random_space(seed).write(tmp_path / "h.xplane.pb")

    def build(pick, fast):
        monkeypatch.setattr(X, "_plain_cpu", lambda kind: fast and bool(
            kind.canonical and not kind.stream))
        space, picked = read_xspace_picked(path, pick)
        epoch, first = time_origin(space)
        host = Host(space, 0, "", -first, path, picked)
        host.read_ids()
        model = X.model_from_hosts([host], epoch + first, Source("xplane", (path,)))
        return model, [(line.ids, line.has_frames) for line in host.lines], host.markers

    def facts(built):
        model, lines, markers = built
        nodes = [(n.name, n.id, n.op, sorted(n.op_types), n.canonical_device,
                  n.host_device, n.steps_run, {s: n.stats(s) for s in (-1, *model.steps)},
                  n.execs, n.trace) for n in model.nodes.values()]
        return model.steps, model.notes, bool(model.has_trace), nodes, lines, sorted(markers)

    reference = facts(build(False, False))
    assert facts(build(True, True)) == reference
    assert facts(build(False, True)) == reference


def _executor_space(seed):
    """Compute lines whose executor events mostly read as columns (every one with
    an ``id`` and the same stats), with one defect or none that must send a group
    back to being read one event at a time."""
    import random

    rng = random.Random(seed)
    sp = Space()
    plane = sp.plane("/host:CPU")
    py = plane.line("python")
    for step in range(3):
        py.event("train", step * 500, 400, step_num=step)
        py.event("$train.py:%d main" % (step + 1), step * 500 + 1, 300)
        py.event("FunctionRun", step * 500 + 2, 200, id=step + 1)
    defect = rng.choice(["none", "none", "no id", "extra stat", "str id", "zero duration",
                         "marker", "uint id", "mixed kinds", "later metadata", "no offset",
                         "compensated", "moved id", "marker instead", "str instead"])
    extra = rng.random() < 0.5
    u64 = rng.random() < 0.3
    for c in range(rng.randrange(1, 3)):
        line = plane.line("tf_Compute/%d" % c)
        t = 1.0
        n = rng.randrange(5, 30)
        bad = rng.randrange(n) if c == 0 else -1
        other = (bad + 1) % n if c == 0 else -1
        for k in range(n):
            ident = rng.randrange(1, 4)
            stats = {"id": U64(ident) if u64 else ident}
            if extra:  # more stats, the id among them
                stats = {"iter_num": k, "id": stats["id"], "_c": 2}
            dur = 3
            if k == bad:
                if defect == "no id":
                    stats.pop("id")
                elif defect == "extra stat":
                    stats["_x"] = 1
                elif defect == "str id":
                    stats["id"] = "7"
                elif defect == "zero duration":
                    dur = 0
                elif defect == "marker":
                    stats["step_num"] = 1
                elif defect == "uint id":
                    stats["id"] = U64(5) if not u64 else 5
                elif defect == "mixed kinds" and extra:
                    stats["_c"] = U64(2) if not u64 else 2
                elif defect == "compensated":  # as many stats as the others in all
                    stats.pop("id")
                elif defect == "moved id" and extra:
                    stats = {"id": stats.pop("id"), **stats}
                elif defect == "marker instead" and extra:
                    stats = {"iter_num": k, "id": stats["id"], "step_num": 1}
                elif defect == "str instead" and extra:
                    stats = {"iter_num": "k", "id": stats["id"], "_c": U64(3) if not u64 else 3}
            elif k == other and defect == "compensated":
                stats["_x"] = 1
            ev = line.event("ExecutorState::Process", t, dur, **stats)
            if k == bad and defect == "no offset":
                ev.ClearField("offset_ps")
            line.event("s/op%d:Mul" % rng.randrange(5), t + 0.5, 1)
            line.event("ThreadpoolListener::Record", t + 2, 0,
                       **({"id": 9} if k == bad and defect == "later metadata" else {}))
            t += rng.choice([0, 4, 5])
    return sp, defect


@pytest.mark.parametrize("seed", range(150))
def test_executor_ids_read_as_columns_give_what_reading_each_event_gives(
        tmp_path, seed, monkeypatch):
    from tfprof_shell.load import xspace_pick as XS
    from tfprof_shell.load.xplane import model_from_hosts
    from tfprof_shell.load.xspace import Host, time_origin
    from tfprof_shell.load.xspace_pick import read_xspace_picked
    from tfprof_shell.model import Source

    monkeypatch.setattr(XS, "IDS_AS_COLUMNS_AT_LEAST", 1)
    monkeypatch.setattr(XS, "_ID_GROUP_AT_LEAST", 1)
    pick_lines = XS._pick
    id_picks = []  # the picks of Host.read_ids, which reads the ids as columns

    def recorded(planes, only=None, with_ids=False):
        found = pick_lines(planes, only, with_ids)
        if with_ids:
            id_picks.append(found)
        return found

    monkeypatch.setattr(XS, "_pick", recorded)
    sp, defect = _executor_space(seed)
    path = sp.write(tmp_path / "h.xplane.pb")
    built = []
    for pick in (True, False):
        space, picked = read_xspace_picked(path, pick)
        assert not any(p.id_columns for p in picked.values())  # not when loading
        epoch, first = time_origin(space)
        host = Host(space, 0, "", -first, path, picked)
        host.read_ids()
        model = model_from_hosts([host], epoch + first, Source("xplane", (path,)))
        traces = {name: node.trace for name, node in model.nodes.items()}
        built.append(([line.ids for line in host.lines], sorted(host.markers), traces,
                      model.steps))
        if pick:
            assert len(id_picks) == 1
            as_columns = [p.id_columns for p in id_picks[0].values() if p.id_columns]
            first_line = next(v.id_columns for (p, li), v in id_picks[0].items()
                              if space.planes[p].lines[li].name == "tf_Compute/0")
    assert built[0] == built[1]
    if defect == "none":
        assert as_columns  # the columns were read, not the events one by one
    if defect in ("mixed kinds", "str instead"):
        # other stats of another kind than the id's: the id is still read as a
        # column (see event_columns._slot_values)
        assert first_line


def _picks(path):
    from tfprof_shell.load.xspace_pick import read_xspace_picked

    _, picked = read_xspace_picked(path)
    return {key: vars(p) for key, p in picked.items()}


def _fork_allowed(monkeypatch):
    """The picking child's conditions met on any machine: any size, two cores, and
    not a pool worker (other tests leave threads running)."""
    from tfprof_shell.load import xspace_pick as XS
    monkeypatch.setattr(XS, "FORK_AT_LEAST", 0)
    monkeypatch.setattr(XS, "_cores", lambda: 2)
    monkeypatch.setattr(XS, "_in_pool_worker", lambda: False)


def _children(monkeypatch):
    """The pids of the picking children started from now on."""
    from tfprof_shell.load import xspace_pick as XS

    pids = []
    init = XS._PickingChild.__init__

    def recorded(self, pid, fd):
        pids.append(pid)
        init(self, pid, fd)

    monkeypatch.setattr(XS._PickingChild, "__init__", recorded)
    return pids


def _no_child_left(pids):
    assert pids
    for pid in pids:  # each one waited for already
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork")
@pytest.mark.parametrize("seed", range(6))
def test_lines_picked_in_a_forked_child_are_picked_as_here(tmp_path, seed, monkeypatch):
    from tfprof_shell.load import xspace_pick as XS

    sp, _ = _executor_space(seed)
    path = sp.write(tmp_path / "h.xplane.pb")
    monkeypatch.setattr(XS, "IDS_AS_COLUMNS_AT_LEAST", 1)
    monkeypatch.setattr(XS, "_ID_GROUP_AT_LEAST", 1)
    monkeypatch.setattr(XS, "FORK_AT_LEAST", 1 << 62)
    serial = _picks(path)
    _fork_allowed(monkeypatch)
    monkeypatch.setattr(XS, "_busy", lambda: False)  # other work on the machine
    monkeypatch.setattr(XS, "_PARENT_SHARE_AT_LEAST", 0)
    pids = _children(monkeypatch)
    assert _picks(path) == serial
    _no_child_left(pids)  # a child did pick, and has ended
    model = load_xplane([path])  # and the whole load, as in the CLI
    monkeypatch.setattr(XS, "FORK_AT_LEAST", 1 << 62)
    reference = load_xplane([path])
    assert ({n: (v.execs, v.trace) for n, v in model.nodes.items()}
            == {n: (v.execs, v.trace) for n, v in reference.nodes.items()})
    _no_child_left(pids)


def test_no_child_is_forked_without_an_idle_core(tmp_path, monkeypatch):
    from tfprof_shell.load import xspace_pick as XS

    path = _executor_space(0)[0].write(tmp_path / "h.xplane.pb")
    serial = _picks(path)
    _fork_allowed(monkeypatch)
    monkeypatch.setattr(XS, "_running", lambda: 2)  # this one and another
    pids = _children(monkeypatch)
    assert _picks(path) == serial
    assert not pids
    monkeypatch.setattr(XS, "_running", lambda: 1)
    if hasattr(os, "fork"):
        monkeypatch.setattr(XS, "_PARENT_SHARE_AT_LEAST", 0)
        assert _picks(path) == serial
        _no_child_left(pids)


def test_no_child_is_forked_when_one_line_is_most_of_the_file(tmp_path, monkeypatch):
    from tfprof_shell.load import xspace_pick as XS

    sp = Space()
    plane = sp.plane("/host:CPU")
    plane.line("python").event("train", 0, 10, step_num=1)
    big = plane.line("tf_Compute/1")
    for k in range(200):
        big.event("s/op:Mul", k, 1)
    path = sp.write(tmp_path / "h.xplane.pb")
    _fork_allowed(monkeypatch)
    monkeypatch.setattr(XS, "_running", lambda: 1)
    planes = XS.raw_host_planes(open(path, "rb").read())
    assert XS._child_share(planes, 1 << 30) == set()
    monkeypatch.setattr(XS, "_PARENT_SHARE_AT_LEAST", 0)
    assert XS._child_share(planes, 1 << 30) == {(0, 1)}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork")
def test_a_failing_child_leaves_the_picks_to_the_parent(tmp_path, monkeypatch):
    from tfprof_shell.load import xspace_pick as XS

    path = _executor_space(0)[0].write(tmp_path / "h.xplane.pb")
    serial = _picks(path)
    _fork_allowed(monkeypatch)
    monkeypatch.setattr(XS, "_busy", lambda: False)  # other work on the machine
    monkeypatch.setattr(XS, "_PARENT_SHARE_AT_LEAST", 0)
    parent, pick = os.getpid(), XS._pick
    pids = _children(monkeypatch)

    def failing(planes, only=None, with_ids=False):
        if os.getpid() != parent:
            raise MemoryError  # in the child only
        return pick(planes, only, with_ids=with_ids)

    monkeypatch.setattr(XS, "_pick", failing)
    assert _picks(path) == serial
    _no_child_left(pids)
    monkeypatch.setattr(XS, "_pack_picked", lambda picked: b"damaged")
    monkeypatch.setattr(XS, "_pick", pick)
    assert _picks(path) == serial
    assert len(pids) == 2
    _no_child_left(pids)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork")
def test_a_failing_parent_stops_its_child(tmp_path, monkeypatch):
    from tfprof_shell.load import xspace_pick as XS

    path = _executor_space(0)[0].write(tmp_path / "h.xplane.pb")
    _fork_allowed(monkeypatch)
    monkeypatch.setattr(XS, "_busy", lambda: False)  # other work on the machine
    monkeypatch.setattr(XS, "_PARENT_SHARE_AT_LEAST", 0)
    pids = _children(monkeypatch)

    def interrupted(data):
        raise KeyboardInterrupt

    monkeypatch.setattr(XS, "split_space", interrupted)
    with pytest.raises(KeyboardInterrupt):
        XS.read_xspace_picked(path)
    _no_child_left(pids)


# -- a host's deferred cpu records, all steps at once ----------------------------

@st.composite
def cpu_execs(draw) -> tuple[int, list[tuple[int, int, int]]]:
    """A time origin and (start ps, self ps, step) rows; starts often at the edge of
    the first counted one (1_000_000 - ref_ps), durations at the edge of rounding."""
    ref_ps = draw(st.integers(-2_000_000, 2_000_000))
    edge = 1_000_000 - ref_ps
    starts = st.one_of(st.integers(-3_000_000, 5_000_000),
                       st.integers(-2, 2).map(lambda d: edge + d))
    durations = st.one_of(st.integers(-2_000_000, 3_000_000),
                          st.sampled_from([0, 499_999, 500_000, 1_499_999, 1_500_000]))
    rows = draw(st.lists(st.tuples(starts, durations, st.integers(0, 4)), min_size=1,
                         max_size=12))
    return ref_ps, rows


@settings(max_examples=400, deadline=None)
@given(cpu_execs(), st.booleans())
def test_cpu_steps_values_equal_each_steps_values(drawn, one_per_step):
    """_CpuExecs.steps_values (what a summary packs) against step_values, step by step:
    starts before the time origin, zero and negative durations, several runs a step
    (the one-execution-per-step case is computed apart)."""
    ref_ps, raw = drawn
    if one_per_step:  # a tf.function's op: one execution per step, steps in time order
        raw = [(t, d, i) for i, (t, d, _) in enumerate(raw)]
    rows = sorted(((t, d, step, "Op") for t, d, step in raw), key=lambda r: r[0])
    execs = _CpuExecs("/host:CPU", ref_ps)
    execs.rows.append(rows)
    steps = tuple(dict.fromkeys(r[2] for r in rows))
    expected = [execs.step_values(0, step) for step in steps]
    assert [tuple(v) for v in execs.steps_values(0, steps)] == expected


def test_cpu_steps_values_round_as_step_values_at_the_edges():
    """The one-execution-per-step case on every rounding edge of ps_to_micros."""
    durations = [0, 1, 499_999, 500_000, 1_499_999, 1_500_000, -1, -500_001, 7_250_000_000]
    execs = _CpuExecs("/host:CPU", 0)
    execs.rows.append([(1_000_000 + i, d, i, "Op") for i, d in enumerate(durations)])
    steps = tuple(range(len(durations)))
    expected = [execs.step_values(0, step) for step in steps]
    assert [tuple(v) for v in execs.steps_values(0, steps)] == expected
    assert [v[1] for v in expected] == [1, 1, 1, 1, 1, 2, 1, -1, 7250]
