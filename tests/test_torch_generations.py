"""Device time per op on every PyTorch trace generation, against an independent reference.

The corpus is sample_profiles/torch_generations/ (synthetic traces in the event
shapes of each Kineto generation and backend, and CPU traces recorded with torch
2.1.2 and 2.13.0) plus sample_profiles/torch_cnn (a real H100 trace). For each,
tests/golden/torch_attribution/reference.py computed the self device time per op
from the raw events by PyTorch's rule (its goldens are checked to be current
here); the `op` view, summed over the steps, must give every op the reference's
time within 1 % (or the whole-µs rounding of the op's nodes, 0.5 µs each, where
that is more), the `scope` view the same total, and the unattributed remainder
must be a row of its own. PyTorch's own ``key_averages`` tables (torch_cnn's, and
those recorded with the CPU traces) are checked against the reference.
"""

from __future__ import annotations

import glob
import gzip
import importlib.util
import json
import os
import sys
from collections import Counter

import pytest

from conftest import ROOT, run_cli
from tfprof_shell.load.chrome_trace import load_chrome_traces
from tfprof_shell.load.torch_trace import UNATTRIBUTED
from tfprof_shell.model import stats as S
from tfprof_shell.options import DEFAULTS
from tfprof_shell.session import Session

CORPUS = os.path.join(ROOT, "sample_profiles", "torch_generations")
GOLDEN = os.path.join(ROOT, "tests", "golden", "torch_attribution")
TRACES = sorted(glob.glob(os.path.join(CORPUS, "*.pt.trace.json.gz"))) + glob.glob(
    os.path.join(ROOT, "sample_profiles", "torch_cnn", "*.pt.trace.json.gz"))
ALL = DEFAULTS.replace(max_depth=1000)


def _module(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


reference = _module(os.path.join(GOLDEN, "reference.py"), "torch_attribution_reference")
synthetic = _module(os.path.join(CORPUS, "make_synthetic.py"), "torch_generations_synthetic")


def _id(path: str) -> str:
    return os.path.basename(path).split(".pt.trace")[0]


def golden(trace: str) -> dict:
    with open(reference.golden_path(trace), encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture(scope="module", params=TRACES, ids=_id)
def loaded(request):
    return request.param, load_chrome_traces([request.param])


def per_step(session: Session, view: str, model, key):
    """``key(row) -> value`` of the view's rows, summed over every step."""
    out: Counter = Counter()
    for step in model.steps:
        result = session.show(view, ALL.replace(step=step))
        for name, value in key(result):
            out[name] += value
    return out


def op_rows(result):
    return [(r.name, r.self_stats[S.ACCEL]) for r in result.root.children]


def root_total(result):
    return [("root", result.root.total[S.ACCEL])]


def bound(model, op: str, expected: float) -> float:
    """1 % of the expected µs, or the whole-µs rounding of the op's nodes' totals."""
    nodes = sum(1 for n in model.nodes.values() if n.op == op)
    return max(0.01 * expected, 0.5 * nodes)


def test_the_goldens_are_what_the_reference_computes():
    for trace in TRACES:
        assert dict(reference.reference(reference.read_events(trace)),
                    trace=os.path.basename(trace)) == golden(trace), trace


def test_the_synthetic_traces_are_what_the_generator_writes():
    for generation in synthetic.GENERATIONS:
        path = os.path.join(CORPUS, "synthetic_%s.pt.trace.json.gz" % generation)
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            assert json.load(fh) == json.loads(json.dumps(synthetic.build(generation))), path


def test_op_view_charges_every_op_the_reference_time(loaded):
    path, model = loaded
    ref = golden(path)
    expected = dict(ref["ops"])
    unattributed = sum(ref["unattributed"].values())
    if unattributed:
        expected[UNATTRIBUTED] = unattributed
    ours = per_step(Session(model), "op", model, op_rows)
    ours = {op: us for op, us in ours.items() if us}
    assert set(ours) == {op for op, us in expected.items() if us >= 1}, path
    for op, us in expected.items():
        assert abs(ours.get(op, 0) - us) <= bound(model, op, us), (path, op, ours.get(op), us)


def test_scope_and_op_views_total_the_same_device_time(loaded):
    path, model = loaded
    session = Session(model)
    op = per_step(session, "op", model, root_total)["root"]
    scope = per_step(session, "scope", model, root_total)["root"]
    assert op == scope
    with_work = sum(1 for n in model.nodes.values()
                    if any(n.stats(s)[S.ACCEL] for s in n.steps_run))
    assert abs(op - golden(path)["total"]) <= max(0.01 * golden(path)["total"], 0.5 * with_work)


def test_code_view_totals_the_ops_it_has_traces_for(loaded):
    path, model = loaded
    if not model.has_trace:
        pytest.skip("no Python stacks in this trace")
    session = Session(model)
    code = per_step(session, "code", model, root_total)["root"]
    traced = sum(n.stats(s)[S.ACCEL] for n in model.nodes.values() if n.trace
                 for s in n.steps_run)
    assert code == traced
    # a record_function range that owns device work has the frames around it too
    for name in ("fused", "cudagraph_replay"):
        if name in model.nodes:
            assert model.nodes[name].trace, (path, name)


def test_the_unattributed_remainder_is_a_row_of_its_own():
    path = os.path.join(CORPUS, "synthetic_kineto2022.pt.trace.json.gz")
    model = load_chrome_traces([path])
    rows = dict(op_rows(Session(model).show("op", ALL.replace(step=6))))
    assert rows[UNATTRIBUTED] == 26  # the NCCL kernel of step 6, on a thread with no op
    names = sorted(n for n in model.nodes if n.startswith(UNATTRIBUTED))
    assert names == [UNATTRIBUTED + "/launched outside any op",
                     UNATTRIBUTED + "/no launch in the trace"]
    assert any("unattributed" in note for note in model.notes)


@pytest.mark.parametrize("generation", ["kineto2022"])
def test_old_external_ids_are_noted_not_followed(generation):
    """In 2022 traces a launch's External id is its own correlation: it names no op."""
    model = load_chrome_traces([os.path.join(CORPUS, "synthetic_%s.pt.trace.json.gz"
                                             % generation)])
    assert any("External id" in note for note in model.notes)


def test_the_2023_copy_is_charged_to_aten_copy_not_to_aten_to():
    model = load_chrome_traces([os.path.join(CORPUS, "synthetic_kineto2023.pt.trace.json.gz")])
    ours = per_step(Session(model), "op", model, op_rows)
    assert ours["aten::to"] == 0 and ours["aten::empty_strided"] == 0
    assert ours["aten::copy_"] == pytest.approx(golden(
        os.path.join(CORPUS, "synthetic_kineto2023.pt.trace.json.gz"))["ops"]["aten::copy_"],
        abs=1)


@pytest.mark.parametrize("generation,device", [("kineto2024", "gpu:0"), ("rocm", "gpu:0"),
                                               ("mtia", "mtia:0"), ("xpu", "xpu:0"),
                                               ("privateuse1", "privateuse1:0")])
def test_each_backend_names_its_device(generation, device):
    path = os.path.join(CORPUS, "synthetic_%s.pt.trace.json.gz" % generation)
    model = load_chrome_traces([path])
    iv = model.intervals()
    assert iv.device_names() == [device] == list(golden(path)["devices"])
    total = sum(e.end - e.start for e in iv.devices) / 1000
    assert total == pytest.approx(golden(path)["devices"][device], abs=0.01)
    placed = {n.canonical_device for n in model.nodes.values()} - {""}
    assert "/job:localhost/replica:0/task:0/device:%s" % device in placed


def _key_averages(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        return {r["name"]: r for r in json.load(fh)["key_averages"]}


def test_the_reference_is_pytorchs_key_averages_on_the_h100_trace():
    """key_averages has a row per op and per kernel name; the ops' self device times are
    the reference's, and add up to all the device time (none unattributed)."""
    (trace,) = glob.glob(os.path.join(ROOT, "sample_profiles", "torch_cnn", "*.pt.trace.json.gz"))
    table = _key_averages(os.path.join(ROOT, "sample_profiles", "torch_cnn",
                                       "key_averages.json"))
    ref = golden(trace)
    for op, us in ref["ops"].items():
        assert table[op]["self_device_us"] == pytest.approx(us, abs=0.002), op
    ops = [r for r in table.values() if r["name"].startswith("aten::") and r["self_device_us"]]
    assert len(ops) == len(ref["ops"])
    assert sum(r["self_device_us"] for r in ops) == pytest.approx(ref["total"], abs=0.01)
    assert sum(ref["unattributed"].values()) == 0


@pytest.mark.parametrize("version", ["2.1.2", "2.13.0"])
def test_recorded_cpu_traces_agree_with_their_key_averages(version):
    """Recorded on a CPU: no device time anywhere (PyTorch's table says so too), and
    every op ran as often as key_averages counts."""
    stem = os.path.join(CORPUS, "recorded_torch%s" % version)
    table = _key_averages(stem + ".key_averages.json")
    model = load_chrome_traces([stem + ".pt.trace.json.gz"])
    assert not any(r["self_device_us"] for r in table.values())
    assert golden(stem + ".pt.trace.json.gz")["total"] == 0
    runs: Counter = Counter()
    for node in model.nodes.values():
        for step in node.steps_run:
            runs[node.op] += node.stats(step)[S.RUN_COUNT]
            assert node.stats(step)[S.ACCEL] == 0
    assert runs and all(runs[op] == table[op]["count"] for op in runs)


@pytest.mark.parametrize("generation,device", [("mtia", "mtia:0"), ("xpu", "xpu:0"),
                                               ("rocm", "gpu:0"),
                                               ("privateuse1", "privateuse1:0")])
def test_kernels_steps_and_timeline_name_each_backends_device(generation, device, tmp_path):
    path = os.path.join(CORPUS, "synthetic_%s.pt.trace.json.gz" % generation)
    kernels = run_cli(["--profile_path=" + path, "kernels", "-device", device])
    assert kernels.code == 0 and "on %s, all steps" % device in kernels.out
    assert "ampere_sgemm_128x64_nn" in kernels.out
    steps = run_cli(["--profile_path=" + path, "steps", "-device", device, "-output", "json"])
    doc = json.loads(steps.out)
    assert doc["devices"] == [device] and all(device in s["devices"] for s in doc["steps"])
    out = tmp_path / "steps.json"
    run_cli(["--profile_path=" + path, "steps", "-output", "timeline:outfile=%s" % out])
    names = {e["args"]["name"] for e in json.loads(out.read_text())["traceEvents"]
             if e.get("ph") == "M"}
    assert "Steps %s" % device in names
    wrong = run_cli(["--profile_path=" + path, "kernels", "-device", "gpu:7"])
    assert wrong.code != 0 and ("devices: %s" % device) in wrong.err


def test_ids_of_a_wrong_type_name_nothing(tmp_path):
    """A broken trace's correlation or External id may be a list or an object: such work
    has no launch and no op, and every command still answers."""
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
         "ts": 0, "dur": 100},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10,
         "dur": 50, "args": {"External id": [3]}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 20, "dur": 5, "args": {"correlation": [7], "External id": {"a": 1}}},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 30, "dur": 5,
         "args": {"correlation": [7], "External id": [3], "device": "x"}},
        {"ph": "X", "cat": "cuda_sync", "name": "Event Sync", "pid": 0, "tid": 7, "ts": 30,
         "dur": 5, "args": {"correlation": 7, "wait_on_stream": [1],
                            "wait_on_cuda_event_record_corr_id": {"q": 1}}}]
    path = tmp_path / "broken.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    for command in ("op", "scope", "steps", "kernels"):
        run = run_cli(["--profile_path=%s" % path, command])
        assert run.code == 0 and "internal error" not in run.err, (command, run.err)
    model = load_chrome_traces([str(path)])
    assert model.nodes[UNATTRIBUTED + "/no launch in the trace"].stats(1)[S.ACCEL] == 5
