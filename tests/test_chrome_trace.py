"""Chrome-trace inputs: ProfilerHook timelines (the real sample) and PyTorch traces."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from collections import Counter

import pytest

from tfprof_shell.errors import LoadError, RequestError, UsageError
from tfprof_shell.load import Inputs, load_model
from tfprof_shell.model import stats as S
from tfprof_shell.options import DEFAULTS
from tfprof_shell.proto import framework_pb2
from tfprof_shell.session import Session

HERE = os.path.dirname(os.path.abspath(__file__))
MLP = os.path.join(os.path.dirname(HERE), "sample_profiles", "timeline", "mlp")
TIMELINES = [os.path.join(MLP, "timeline-%d.json" % s) for s in (4, 5, 6)]
ALL = DEFAULTS.replace(max_depth=1000)


def timeline_records(path: str) -> list[dict]:
    with open(path) as f:
        return [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]


def test_timelines_load_as_successive_steps():
    model = load_model(Inputs(profile_path=",".join(TIMELINES)))
    assert model.source.kind == "chrome_trace"
    assert model.steps == [0, 1, 2]
    for step, path in enumerate(TIMELINES):
        want = Counter()
        runs = Counter()
        for e in timeline_records(path):
            name = e["args"]["name"]
            if name in ("_SOURCE", "RecvTensor"):
                continue  # the engine never makes nodes of these
            want[name] += e["dur"] or 1  # 0 µs counts as 1 µs, as in the engine
            runs[name] += 1
        got = {n.name: n.execs[step].cpu_micros() for n in model.nodes.values()
               if step in n.execs}
        assert got == dict(want)
        assert {n: model.nodes[n].execs[step].run_count for n in runs} == dict(runs)


def test_without_a_graph_op_types_are_the_kernels_that_ran():
    model = load_model(Inputs(profile_path=",".join(TIMELINES)))
    kernel = {e["args"]["name"]: e["args"]["op"] for e in timeline_records(TIMELINES[0])}
    for name, op in kernel.items():
        if name in model.nodes:
            assert model.nodes[name].op == op
    assert model.nodes["gradients/layer2/affine/MatMul_grad/MatMul"].op == "_MklMatMul"
    assert model.nodes["layer1/Relu"].op == "_MklNativeFusedMatMul"  # MatMul+BiasAdd+Relu


def test_with_a_graph_op_types_come_from_the_graph():
    model = load_model(Inputs(profile_path=",".join(TIMELINES),
                              graph_path=os.path.join(MLP, "graph.pbtxt")))
    graph = framework_pb2.GraphDef()
    from google.protobuf import text_format
    with open(os.path.join(MLP, "graph.pbtxt")) as f:
        text_format.Parse(f.read(), graph)
    types = {n.name: n.op for n in graph.node}
    assert model.nodes["gradients/layer2/affine/MatMul_grad/MatMul"].op == "MatMul"
    assert model.nodes["layer1/Relu"].op == "Relu"
    for name, node in model.nodes.items():
        assert node.op == types.get(name, name)  # run-time-only nodes: named by themselves


def test_a_directory_of_timelines_loads_in_step_order(tmp_path):
    for path in reversed(TIMELINES):
        shutil.copy(path, tmp_path)
    (tmp_path / "notes.json").write_text("{}")  # not a timeline name: ignored
    model = load_model(Inputs(profile_path=str(tmp_path)))
    assert model.source.paths == tuple(str(tmp_path / os.path.basename(p)) for p in TIMELINES)
    assert model.notes == ["loaded 3 timeline files as steps 0..2"]


def test_gzipped_timelines_load_the_same(tmp_path):
    gz = []
    for path in TIMELINES:
        out = tmp_path / (os.path.basename(path) + ".gz")
        out.write_bytes(gzip.compress(open(path, "rb").read()))
        gz.append(str(out))
    plain = Session(load_model(Inputs(profile_path=",".join(TIMELINES))))
    packed = Session(load_model(Inputs(profile_path=",".join(gz))))
    for step in (0, 1, 2, -1):
        a = plain.execute("scope -max_depth 100 -step %d -select micros,occurrence" % step)
        b = packed.execute("scope -max_depth 100 -step %d -select micros,occurrence" % step)
        assert a.text == b.text


def test_views_and_outputs_on_a_timeline(tmp_path):
    session = Session(load_model(Inputs(profile_path=",".join(TIMELINES))))
    for command in ("scope -select micros,occurrence", "graph", "op -order_by micros",
                    "advise", "scope -output json"):
        assert session.execute(command).text
    reply = session.execute("scope -step 1 -output timeline:outfile=%s" % (tmp_path / "t"))
    assert reply.files
    with pytest.raises(Exception, match="code"):
        session.execute("code")  # a timeline carries no Python traces


def test_bad_chrome_traces_are_one_line_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(LoadError, match="not valid JSON"):
        load_model(Inputs(profile_path=str(bad)))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"traceEvents": [{"ph": "X", "name": "x", "ts": 1, "dur": 2}]}))
    with pytest.raises(LoadError, match="neither a TensorFlow timeline"):
        load_model(Inputs(profile_path=str(other)))
    with pytest.raises(LoadError, match="entry 2 of 2.*no traceEvents"):
        (tmp_path / "list.json").write_text(json.dumps({"x": 1}))
        load_model(Inputs(profile_path="%s,%s" % (TIMELINES[0], tmp_path / "list.json")))
    with pytest.raises(UsageError, match="several files"):
        load_model(Inputs(profile_path="%s,%s" % (TIMELINES[0], os.path.join(MLP, "profile"))))
    with pytest.raises(UsageError):
        load_model(Inputs(profile_path=TIMELINES[0],
                          run_meta_paths=(os.path.join(MLP, "run_meta_0"),)))


# ---------------------------------------------------------------------------
# PyTorch profiler traces (structure as torch.profiler's export_chrome_trace)
# ---------------------------------------------------------------------------
def torch_trace(step0: int) -> dict:
    """Two ProfilerStep windows: a Linear module (aten::linear > aten::addmm with a
    GPU kernel) and a record_function label around aten::relu."""
    events = [{"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans",
               "tid": "PyTorch Profiler", "ts": 1000.0, "dur": 900.0}]
    ext = 0
    for i in range(2):
        t = 1000.0 + 400 * i
        ext += 10

        def cpu(cat, name, ts, dur, **args):
            events.append({"ph": "X", "cat": cat, "name": name, "pid": 77, "tid": 77,
                           "ts": ts, "dur": dur, "args": args})
        cpu("user_annotation", "ProfilerStep#%d" % (step0 + i), t, 300.0)
        cpu("python_function", "nn.Module: Sequential_0", t + 10, 200.0)
        cpu("python_function", "nn.Module: Linear_0", t + 20, 100.0)
        cpu("cpu_op", "aten::linear", t + 30, 60.4, **{"External id": ext})
        cpu("cpu_op", "aten::addmm", t + 40, 40.2, **{"External id": ext + 1})
        cpu("cuda_runtime", "cudaLaunchKernel", t + 50, 5.0, correlation=ext, **{
            "External id": ext + 1})
        cpu("user_annotation", "activation", t + 130, 50.0)
        cpu("cpu_op", "aten::relu", t + 140, 20.6, **{"External id": ext + 2})
        events.append({"ph": "X", "cat": "kernel", "name": "void gemm_kernel", "pid": 0,
                       "tid": 7, "ts": t + 320.0, "dur": 12.0,  # after the step's cpu work
                       "args": {"External id": ext + 1, "device": 0, "stream": 7,
                                "correlation": ext}})
    return {"schemaVersion": 1, "deviceProperties": [], "traceEvents": events}


def test_pytorch_trace_op_and_scope_views(tmp_path):
    path = tmp_path / "worker0.1.pt.trace.json"
    path.write_text(json.dumps(torch_trace(3)))
    model = load_model(Inputs(profile_path=str(path)))
    assert model.steps == [3, 4]
    linear = "Sequential_0/Linear_0/aten::linear"
    assert sorted(model.nodes) == [linear, linear + "/aten::addmm",
                                   "Sequential_0/activation/aten::relu"]
    addmm = model.nodes[linear + "/aten::addmm"]
    assert addmm.op == "aten::addmm"
    assert addmm.canonical_device.endswith("device:gpu:0")
    assert addmm.execs[3].cpu_micros() == 40 and addmm.execs[3].accelerator_micros() == 12
    assert model.nodes[linear].execs[4].cpu_micros() == 20  # 60.4 - 40.2 (self time)
    session = Session(model)
    ops = {r.name: (r.self_stats[S.CPU], r.self_stats[S.ACCEL])
           for r in session.show("op", ALL.replace(step=3)).root.children}
    assert ops == {"aten::addmm": (40, 12), "aten::linear": (20, 0), "aten::relu": (21, 0)}
    root = session.show("scope", ALL.replace(step=4)).root
    assert root.total[S.EXEC] == 40 + 12 + 20 + 21


def test_pytorch_traces_without_step_markers_are_one_step_per_file(tmp_path):
    paths = []
    for i in range(2):
        trace = torch_trace(0)
        trace["traceEvents"] = [e for e in trace["traceEvents"]
                                if not e["name"].startswith("ProfilerStep")]
        path = tmp_path / ("t%d.json" % i)
        path.write_text(json.dumps(trace))
        paths.append(str(path))
    model = load_model(Inputs(profile_path=",".join(paths)))
    assert model.steps == [0, 1]
    relu = model.nodes["Sequential_0/activation/aten::relu"]
    assert relu.execs[1].run_count == 2  # both windows of the second file


def test_pytorch_op_run_with_and_without_kernels_keeps_every_run(tmp_path):
    """An op that launches a kernel only on some calls (AdamW's _foreach_add_): all its
    calls count, not only those on its first device (the engine keeps one device)."""
    events = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#5", "pid": 1,
               "tid": 1, "ts": 0.0, "dur": 500.0}]
    for i, ts in enumerate((10.0, 100.0, 200.0)):
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::_foreach_add_", "pid": 1,
                       "tid": 1, "ts": ts, "dur": 30.0, "args": {"External id": i + 1}})
    events.append({"ph": "X", "cat": "kernel", "name": "multi_tensor_apply_kernel",
                   "pid": 0, "tid": 7, "ts": 120.0, "dur": 8.0,
                   "args": {"External id": 2, "device": 0}})
    path = tmp_path / "w.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    node = load_model(Inputs(profile_path=str(path))).nodes["aten::_foreach_add_"]
    assert node.canonical_device.endswith("device:gpu:0")
    assert (node.execs[5].run_count, node.execs[5].cpu_micros(),
            node.execs[5].accelerator_micros()) == (3, 90, 8)


def test_a_pytorch_trace_folder_notes_the_steps_its_markers_give():
    """The folder note names the steps the table shows (ProfilerStep#2..4), not 0..0."""
    folder = os.path.join(os.path.dirname(HERE), "sample_profiles", "torch_cnn")
    model = load_model(Inputs(profile_path=folder))
    assert model.steps == [2, 3, 4]
    assert model.notes[0] == ("loaded 1 trace file: steps 2..4, from the trace's step "
                              "markers (ProfilerStep#N)")


def test_a_folder_of_one_timeline_notes_step_zero(tmp_path):
    shutil.copy(TIMELINES[0], tmp_path)
    assert load_model(Inputs(profile_path=str(tmp_path))).notes == [
        "loaded 1 timeline file as step 0"]


def test_code_view_on_a_trace_says_how_to_get_code_traces():
    folder = os.path.join(os.path.dirname(HERE), "sample_profiles", "timeline", "mlp")
    session = Session(load_model(Inputs(profile_path=folder)))
    with pytest.raises(RequestError) as err:
        session.execute("code")
    message = err.value.message
    assert "--op_log_path" in message and "with_stack=True" in message
