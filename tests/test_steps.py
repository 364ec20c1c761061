"""The steps breakdown: figures of a constructed trace, parts that add up on every
sample, HTA's per-step figures on torch_cnn, and one-line errors."""

from __future__ import annotations

import json
import math
import os

import pytest
from conftest import ROOT, run_cli, sample

from tfprof_shell.load import Inputs, load_model
from tfprof_shell.model.intervals import COMPUTE, Intervals, classify_kernel
from tfprof_shell.views.step_values import device_values, host_values
from tfprof_shell.views.steps import (DEVICE_PARTS, HOST_PARTS, average, device_parts,
                                      step_breakdowns)


def _x(cat, name, ts, dur, tid=1, pid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid,
            "args": args}


def _launch(corr, ts, dur=5.0):
    return _x("cuda_runtime", "cudaLaunchKernel", ts, dur, correlation=corr)


def _device(cat, name, corr, ts, dur, stream, **args):
    return _x(cat, name, ts, dur, pid=0, tid=stream, device=0, stream=stream,
              correlation=corr, **args)


#: Step 1 (0..1000 µs) with known intervals (see test_constructed_trace), step 2
#: (1100..1200) whose one kernel runs after its marker ends.
SYNTHETIC = [
    _x("user_annotation", "ProfilerStep#1", 0, 1000),
    _x("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 0, 8),
    _x("cpu_op", "aten::mm", 9, 91, **{"External id": 1}),
    _launch(1, 10), _launch(2, 20), _launch(4, 30), _launch(5, 40),
    _x("cpu_op", "gloo:all_reduce", 500, 50),
    _launch(3, 600),
    _x("cuda_runtime", "cudaDeviceSynchronize", 900, 50, correlation=99),
    _device("kernel", "gemm_a", 1, 100, 200, 7),
    _device("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 2, 250, 200, 20),
    _device("kernel", "gemm_b", 3, 620, 80, 7),
    _device("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 4, 750, 50, 7, bytes=1_000_000),
    _device("gpu_memset", "Memset (Device)", 5, 790, 20, 8, bytes=4096),
    _x("user_annotation", "ProfilerStep#2", 1100, 100),
    _launch(6, 1110),
    _device("kernel", "gemm_c", 6, 1500, 10, 7),
]


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    path = tmp_path_factory.mktemp("trace") / "w.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": SYNTHETIC}))
    return str(path)


def _us(result, step):
    s = next(x for x in result.steps if x.step == step)
    return s, {n: device_values(d, result.has) for n, d in s.devices.items()}, \
        host_values(s.host, result.has)


def test_constructed_trace(synthetic):
    result = step_breakdowns(load_model(Inputs(profile_path=synthetic)).intervals())
    s, devs, host = _us(result, 1)
    d = devs["gpu:0"]
    assert (d["span"], d["busy"], d["compute"]) == (710, 490, 280)
    assert (d["communication"], d["overlap"], d["communication_exposed"]) == (200, 50, 150)
    assert (d["memory"], d["memory_exposed"], d["other"]) == (60, 60, 0)
    assert (d["idle"], d["idle_host_wait"], d["idle_queued"]) == (220, 150, 70)
    mem = s.devices["gpu:0"].memory_kinds
    assert (mem["memcpy_h2d"].count, mem["memcpy_h2d"].nbytes, mem["memcpy_h2d"].time) \
        == (1, 1_000_000, 50_000)
    assert mem["memset"].nbytes == 4096
    assert host == {"wall": 1000, "sync": 50, "communication": 50, "input": 8, "launch": 25,
                    "ops": 71, "rest": 796, "launch_count": 5, "launch_total": 25,
                    "launch_delay_mean": 357}
    s2, devs2, _ = _us(result, 2)
    assert devs2["gpu:0"]["span"] == 10 and s2.gap_before == 100_000


def test_kernel_classification_follows_hta():
    assert classify_kernel("ncclDevKernel_AllReduce") == "communication"
    assert classify_kernel("Memcpy DtoH (Device -> Pinned)") == "memcpy_d2h"
    assert classify_kernel("MemcpyP2P") == "memcpy_p2p"
    assert classify_kernel("Memset (Device)") == "memset"
    assert classify_kernel("void foo_Memcpy_kernel") == "other"
    assert classify_kernel("cudaStreamSync_kernel") == "other"
    assert classify_kernel("sm90_xmma_gemm") == COMPUTE


PROFILES = {
    "torch_cnn": Inputs(profile_path=sample("torch_cnn")),
    "jax_gpt": Inputs(profile_path=sample("jax_gpt")),
    "jax_attention": Inputs(profile_path=sample("jax_attention")),
    "tf2_keras_fit": Inputs(profile_path=sample("tf2", "keras_fit")),
    "tf2_custom_loop_py": Inputs(profile_path=sample("tf2", "custom_loop_py")),
    "synthetic_gpu_profile": Inputs(profile_path=sample("synthetic_gpu", "profile")),
    "synthetic_gpu_runmeta": Inputs(
        graph_path=sample("synthetic_gpu", "graph.pb"),
        run_meta_paths=[sample("synthetic_gpu", "run_meta_%d" % i) for i in range(3)]),
    "tiny_mlp": Inputs(profile_path=sample("tiny_mlp", "profile")),
}


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_parts_add_up_to_the_span_on_every_sample(name):
    result = step_breakdowns(load_model(PROFILES[name]).intervals())
    assert result.steps
    for s in list(result.steps) + [average(result.steps)]:
        assert sum(s.host.parts[p] for p in HOST_PARTS) == s.wall
        host = host_values(s.host, result.has)
        assert sum(host[p] or 0 for p in HOST_PARTS) == host["wall"]
        for d in s.devices.values():
            assert sum(v for _, v in device_parts(d)) == d.span
            v = device_values(d, result.has)
            parts = [v["compute"], v["communication_exposed"], v["memory_exposed"], v["other"]]
            assert sum(parts) == v["busy"] and v["busy"] + v["idle"] == v["span"]
            if v["idle_host_wait"] is not None:
                assert v["idle_host_wait"] + v["idle_queued"] == v["idle"]
            assert 0 <= d.overlap <= min(d.compute, d.communication)
    assert set(DEVICE_PARTS) >= {p for p, _ in device_parts(d)} - {"idle"} \
        if result.steps[0].devices else True


def test_gpu_samples_have_devices_and_cpu_samples_none():
    for name in ("torch_cnn", "jax_gpt", "jax_attention", "synthetic_gpu_runmeta"):
        iv = load_model(PROFILES[name]).intervals()
        assert iv.device_names() == ["gpu:0"], name
    for name in ("tiny_mlp", "tf2_keras_fit"):
        assert load_model(PROFILES[name]).intervals().devices == [], name


def _hta_rounded(iv: Intervals) -> Intervals:
    """The intervals with HTA's inward rounding: start up, end down to whole µs."""
    devices = []
    for e in iv.devices:
        start = math.ceil(e.start / 1000) * 1000
        end = max(math.floor(e.end / 1000) * 1000, start)
        devices.append(e._replace(start=start, end=end))
    return Intervals(devices, iv.host, iv.marks, iv.has, iv.origin)


def _hta_figures(d):
    return {"kernel_time": d.span, "idle": d.idle, "compute": d.compute,
            "non_compute": d.busy - d.compute}


def test_torch_cnn_agrees_with_hta_per_step():
    with open(os.path.join(ROOT, "tests", "golden", "hta", "torch_cnn.steps.json")) as fh:
        golden = {s["step"]: s for s in json.load(fh)["steps"]}
    iv = load_model(PROFILES["torch_cnn"]).intervals()
    exact = {s.step: s.devices["gpu:0"] for s in step_breakdowns(iv).steps}
    rounded = {s.step: s.devices["gpu:0"] for s in step_breakdowns(_hta_rounded(iv)).steps}
    assert sorted(golden) == sorted(exact) == [2, 3, 4]
    for step, hta in golden.items():
        span = hta["kernel_time"]
        ours = {k: v / 1000 for k, v in _hta_figures(rounded[step]).items()}
        for key in ("kernel_time", "idle", "compute", "non_compute"):
            assert abs(ours[key] - hta[key]) <= 0.01 * span, (step, key, ours[key], hta[key])
        # Unrounded, compute is larger by what HTA's rounding cuts from ~125 kernels.
        plain = {k: v / 1000 for k, v in _hta_figures(exact[step]).items()}
        assert abs(plain["kernel_time"] - span) <= 0.01 * span
        assert 0 < plain["compute"] - hta["compute"] <= 0.02 * span


def _cli(*args):
    return run_cli(["--profile_path=" + args[0], *args[1:]])


@pytest.mark.parametrize("argv, message", [
    ((sample("torch_cnn"), "steps", "-device", "gpu:9"),
     "this profile has no device gpu:9; devices: gpu:0"),
    ((sample("torch_cnn"), "steps", "-step", "9"), "-step 9 not found; available steps: 2 3 4"),
    ((sample("torch_cnn"), "steps", "-output", "pprof:outfile=x.pb"),
     "steps cannot write -output pprof"),
    ((sample("tiny_mlp", "profile"), "kernels"), "no device events (CPU only)"),
    ((sample("tiny_mlp", "profile"), "steps", "-device", "gpu:0"),
     "devices: none (CPU only)"),
])
def test_bad_requests_are_one_line(argv, message):
    run = _cli(*argv)
    assert run.code != 0 and message in run.err
    assert len(run.err.strip().splitlines()[-1:]) == 1 and "Traceback" not in run.err


def test_base_of_another_kind_is_one_line(tmp_path):
    script = "load cpu %s\nsteps -base cpu\n" % sample("tiny_mlp", "profile")
    run = run_cli(["--profile_path=" + sample("torch_cnn")], stdin=script)
    assert "cannot compare steps of torch_cnn (device events) with cpu (CPU only)" in run.err
    assert "Traceback" not in run.err


def test_no_steps_is_one_line(tmp_path):
    path = tmp_path / "empty.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": [
        _x("cpu_op", "aten::mm", 0, 0, **{"External id": 1})]}))
    run = _cli(str(path), "steps")
    assert run.code != 0 and "no steps to break down" in run.err


def test_json_document(synthetic):
    run = _cli(synthetic, "steps", "-output", "json")
    doc = json.loads(run.out)
    assert doc["mode"] == "steps" and [s["step"] for s in doc["steps"]] == [1, 2]
    dev = doc["steps"][0]["devices"]["gpu:0"]
    assert (dev["span"], dev["idle_host_wait"], dev["idle_queued"]) == (710, 150, 70)
    assert doc["steps"][0]["host"]["input"] == 8 and "average" in doc


def test_formats_without_launch_times_say_so():
    run = _cli(sample("tiny_mlp", "profile"), "steps")
    assert "Device: none recorded" in run.out
    host = [line for line in run.out.splitlines() if line.startswith("avg")][0]
    assert host.split()[2] == "--"  # sync: not recorded by a ProfileProto


def test_ranks_table_names_the_slowest(tmp_path):
    run = run_cli(["--profile_path=" + sample("torch_ranks"), "steps", "-profiles", "all",
                   "-output", "json"])
    doc = json.loads(run.out)
    assert sorted(doc["profiles"]) == ["rank0", "rank1"]
    assert [s["step"] for s in doc["stragglers"]] == [2, 3, 4]
    assert all(s["waited_on"] == "device idle, host wait" for s in doc["stragglers"])


def test_kernel_table_counts_every_device_event():
    iv = load_model(PROFILES["torch_cnn"]).intervals()
    run = _cli(sample("torch_cnn"), "kernels", "-output", "json")
    doc = json.loads(run.out)
    assert doc["mode"] == "kernels"
    assert sum(k["count"] for k in doc["kernels"]) == len(iv.devices)
    assert abs(sum(k["share"] for k in doc["kernels"]) - 1) < 1e-3


def test_steps_timeline(synthetic, tmp_path):
    out = tmp_path / "steps.json"
    run = _cli(synthetic, "steps", "-output", "timeline:outfile=%s" % out)
    assert run.code == 0, run.err
    assert "Timeline file is written to %s." % out in run.out  # as the views say it
    events = json.loads(out.read_text())["traceEvents"]
    labels = {}
    for e in events:
        if e.get("cat") == "step category" and e["args"]["step"] == 1:
            labels[e["name"]] = labels.get(e["name"], 0) + e["dur"]
    assert labels == pytest.approx({"compute": 280, "communication": 150, "memory": 60,
                                    "idle: host wait": 150, "idle: queued": 70})


@pytest.mark.parametrize("name", ["torch_cnn", "jax_gpt"])
def test_kernel_names_are_op_types(name):
    """`op -account_type_regexes 'kernel:.*gemm.*'` accounts the nodes that ran a gemm
    kernel: their accelerator time covers every gemm kernel's."""
    from tfprof_shell.model import stats as S
    from tfprof_shell.options import DEFAULTS
    from tfprof_shell.session import Session

    model = load_model(PROFILES[name])
    gemm = [n for n in model.nodes.values()
            if any(t.startswith("kernel:") and "gemm" in t for t in n.op_types)]
    assert gemm
    iv = model.intervals()
    steps = len({e.step for e in iv.devices if e.step is not None})
    # -step -1 shows the average over the steps.
    kernel_us = sum(e.end - e.start for e in iv.devices if "gemm" in e.name) / 1000 / steps
    opts = DEFAULTS.replace(account_type_regexes=("kernel:.*gemm.*",), max_depth=100)
    root = Session(model).show("op", opts).root
    assert root.total[S.ACCEL] >= 0.95 * kernel_us > 0


# -- advice read from the breakdown -------------------------------------------

def _advice(path, *names):
    from tfprof_shell.session import Session
    session = Session(load_model(Inputs(profile_path=path)))
    words = "advise -checkers " + ",".join(names) if names else "advise"
    return session.execute(words).result.checkers


def test_step_checkers_on_the_constructed_trace(synthetic, tmp_path):
    found = _advice(synthetic, "InputBoundChecker", "CommunicationChecker", "CopiesChecker",
                    "SyncStallChecker", "StarvedDeviceChecker")
    assert found["CommunicationChecker"] == [
        "communication-bound: collectives outside compute take 21% of the device span (75us "
        "per step). Overlap them with compute (DDP bucket sizes, gradient accumulation, async "
        "collectives) or communicate less. Collectives: "
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL (200us).",
        "poor overlap: only 25% of communication (100us per step) runs while compute runs. "
        "Start collectives earlier (bucketing, prefetching parameters) so they hide behind "
        "compute. Collectives: ncclDevKernel_AllReduce_Sum_f32_RING_LL (200us)."]
    # Step 2 copies nothing; syncs are 50 of 1100 us (under 5%); input 8 us.
    assert found["CopiesChecker"] == found["SyncStallChecker"] == []
    assert found["InputBoundChecker"] == found["StarvedDeviceChecker"] == []
    one_step = tmp_path / "one.pt.trace.json"
    one_step.write_text(json.dumps({"traceEvents": SYNTHETIC[:SYNTHETIC.index(
        _x("user_annotation", "ProfilerStep#2", 1100, 100))]}))
    found = _advice(str(one_step), "CopiesChecker", "SyncStallChecker")
    assert found["CopiesChecker"][0].startswith(
        "copies every step: 1 host-to-device copies per step, 50us, 1000000 bytes at 20.0 "
        "GB/s.")
    # The copy's launch (correlation 4, at 30 us) ran inside aten::mm (9..100 us).
    assert found["CopiesChecker"][0].endswith(" Launched from: aten::mm (1 call).")
    assert found["SyncStallChecker"][0].startswith(
        "sync stalls: the host waits on the device 5% of the step (50us per step): "
        "cudaDeviceSynchronize 50us.")


def test_starved_device_and_tiny_kernels_on_torch_cnn():
    found = _advice(sample("torch_cnn"))
    starved = found["StarvedDeviceChecker"]
    assert starved[0].startswith("starved device: idle 88% of its span, 85% of that waiting")
    assert "In step 2 the host ran: aten::linear" in starved[0]
    assert starved[0].endswith(" Your Python lines meanwhile: capture.py(88): step (4041us), "
                               "capture.py(79): forward (2749us).")
    assert starved[1].startswith("many tiny kernels: 116 kernels per step, 74% of them")
    assert "CopiesChecker" not in found  # no host-to-device copy in this trace


def test_engine_inputs_keep_the_engines_advice():
    assert list(_advice(sample("synthetic_gpu", "profile"))) == [
        "AcceleratorUtilizationChecker", "OperationChecker", "ExpensiveOperationChecker"]


@pytest.mark.parametrize("name", ["jax_gpt", "jax_attention"])
def test_utilization_never_above_one(name):
    report = _advice(sample(name), "AcceleratorUtilizationChecker")[
        "AcceleratorUtilizationChecker"][0]
    assert 0.5 < float(report.rsplit(" ", 1)[1]) <= 1.0


def test_merged_graph_timeline_has_step_category_tracks(tmp_path):
    out = tmp_path / "tl.json"
    run = _cli(sample("torch_cnn"), "graph", "-step", "3", "-output",
               "timeline:outfile=%s,merge=true" % out)
    assert run.code == 0, run.err
    events = json.loads(out.read_text())["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M"}
    pid = [p for p, n in names.items() if n == "Step categories gpu:0"]
    assert len(pid) == 1
    total = sum(e["dur"] for e in events if e.get("pid") == pid[0] and e.get("ph") == "X")
    span = next(s for s in step_breakdowns(load_model(PROFILES["torch_cnn"]).intervals()).steps
                if s.step == 3).devices["gpu:0"].span / 1000
    assert abs(total - span) <= 5  # whole-µs event boundaries


@pytest.mark.parametrize("name", ["jax_gpt", "jax_attention"])
def test_kernel_table_agrees_with_xprof_kernel_stats(name):
    """XProf's kernel_stats (golden, grouped by name, dims and op) summed per kernel name
    gives each row of the kernels command: the same launches and total time."""
    with open(os.path.join(ROOT, "tests", "golden", "xprof", name + ".kernel_stats.json")) as fh:
        doc = json.load(fh)
    cols = doc["columns"]
    xprof: dict[str, list[float]] = {}
    for table in doc["tables"]:
        for row in table:
            r = dict(zip(cols, row))
            acc = xprof.setdefault(r["kernel_name"], [0, 0.0])
            acc[0] += int(r["occurrences"])
            acc[1] += float(r["total_duration_us"])
    run = _cli(sample(name), "kernels", "-output", "json")
    ours = {k["name"]: k for k in json.loads(run.out)["kernels"] if k["kind"] == "compute"}
    assert set(ours) == set(xprof)
    for kernel, (count, total) in xprof.items():
        assert ours[kernel]["count"] == count, kernel
        assert abs(ours[kernel]["total"] - total) <= 1, kernel


@pytest.mark.parametrize("name", ["jax_gpt", "jax_attention"])
def test_steps_agree_with_xprof_step_time_breakdown(name):
    """XProf's input-pipeline step table (golden): its step time is our device span,
    its device compute + device-to-device + collectives our busy time, and its
    "all others" our idle time, to the µs."""
    with open(os.path.join(ROOT, "tests", "golden", "xprof", name + ".steps.json")) as fh:
        doc = json.load(fh)
    ours = {s.step: s.devices["gpu:0"]
            for s in step_breakdowns(load_model(PROFILES[name]).intervals()).steps}
    assert doc["rows"]
    for row in doc["rows"]:
        x = dict(zip(doc["columns"], row))
        d = ours[int(x["stepnum"])]
        busy = x["deviceComputeTimeMs"] + x["deviceToDeviceTimeMs"] + \
            x["deviceCollectivesTimeMs"]
        assert abs(d.span / 1e6 - x["stepTimeMs"]) <= 0.001
        assert abs(d.busy / 1e6 - busy) <= 0.001
        assert abs(d.idle / 1e6 - x["otherTimeMs"]) <= 0.001


def test_base_compares_each_category(synthetic, tmp_path):
    one_step = tmp_path / "one.pt.trace.json"
    one_step.write_text(json.dumps({"traceEvents": SYNTHETIC[:SYNTHETIC.index(
        _x("user_annotation", "ProfilerStep#2", 1100, 100))]}))
    script = "load one %s\nsteps -base one -output json\n" % one_step
    run = run_cli(["--profile_path=" + synthetic], stdin=script)
    start = run.out.index("{")
    doc = json.loads(run.out[start:run.out.rindex("}") + 1])
    diff = {d["category"]: d for d in doc["diff"]}
    # Current: steps of 1000 and 100 us (average 550); base: the 1000 us step alone.
    assert (diff["wall"]["current"], diff["wall"]["base"], diff["wall"]["change"]) == \
        (550, 1000, -450)
    assert diff["gpu:0 span"]["base"] == 710 and diff["gpu:0 idle_host_wait"]["base"] == 150
    assert doc["base"] == "one" and len(doc["profiles"]) == 2


def test_straggler_checker_names_the_slow_rank(synthetic, tmp_path):
    slow = [dict(e) for e in SYNTHETIC]
    slow[0] = _x("user_annotation", "ProfilerStep#1", 0, 1500)
    slow[1] = _x("user_annotation", "DataLoader.__next__", 0, 408)  # (enumerate(DataLoader)...)
    path = tmp_path / "slow.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": slow}))
    script = "load slow %s\nadvise -checkers StragglerChecker\n" % path
    run = run_cli(["--profile_path=" + synthetic], stdin=script)
    assert ("straggler: slow is the slowest profile in 1 of 2 steps, 50% slower than the "
            "median of the others on average; its largest non-compute time there is input "
            "(408us per step).") in run.out


def test_base_with_one_step_titles_that_step():
    path = sample("torch_ranks")
    run = run_cli(["--profile_path=" + path, "steps", "-base", "rank1", "-step", "3"])
    assert "Step 3 of rank0 against -base rank1; times in us." in run.out
    run = run_cli(["--profile_path=" + path, "steps", "-base", "rank1"])
    assert "Step averages of rank0 against -base rank1; times in us." in run.out


def test_device_may_be_given_as_tensorflow_spells_it():
    path = "--profile_path=" + sample("torch_cnn")
    short = run_cli([path, "steps", "-device", "gpu:0"])
    for spelling in ("/device:GPU:0", "GPU:0"):
        assert run_cli([path, "steps", "-device", spelling]).out == short.out
    kernels = run_cli([path, "kernels", "-device", "/device:GPU:0", "-step", "2"])
    assert kernels.out.split("\n", 1)[0].endswith("on gpu:0, step 2; times in us "
                                                  "(summed durations, not their union).")
    assert "no device GPU:1; devices: gpu:0" in run_cli([path, "steps", "-device", "GPU:1"]).err


def test_input_and_sync_checkers_name_the_host_ops_of_the_interval(tmp_path):
    """A step of 1000 us: the loader's __next__ (0..400) runs aten::stack (50..350);
    aten::item (500..700) waits in cudaStreamSynchronize (550..690)."""
    trace = [
        _x("user_annotation", "ProfilerStep#1", 0, 1000),
        _x("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
           0, 400),
        _x("cpu_op", "aten::stack", 50, 300),
        _x("cpu_op", "aten::mm", 410, 40), _launch(1, 420),
        _x("cpu_op", "aten::item", 500, 200),
        _x("cuda_runtime", "cudaStreamSynchronize", 550, 140, correlation=98),
        _device("kernel", "gemm_a", 1, 430, 100, 7),
        # Python frames (with_stack=True): the program's own, and a library's inside them.
        _x("python_function", "train.py(10): loop", 0, 1000),
        _x("python_function", "train.py(20): load_batch", 0, 400),
        _x("python_function", "torch/utils/data/dataloader.py(700): _next_data", 10, 380),
        _x("python_function", "enum.py(1200): __hash__", 600, 20),
    ]
    path = tmp_path / "w.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": trace}))
    found = _advice(str(path), "InputBoundChecker", "SyncStallChecker")
    (inputs,) = found["InputBoundChecker"]
    assert inputs.endswith(" In step 1 the input waited in: enumerate(DataLoader)#"
                           "_SingleProcessDataLoaderIter.__next__ (400us). Host ops "
                           "meanwhile: aten::stack (300us). Your Python lines meanwhile: "
                           "train.py(20): load_batch (400us).")
    (sync,) = found["SyncStallChecker"]
    assert "cudaStreamSynchronize 140us" in sync
    # The innermost of the program's own frames; torch/ and the standard library are not.
    assert sync.endswith(" The waits ran inside: aten::item (140us). Your Python lines: "
                         "train.py(10): loop (140us).")


def test_cpu_collectives_of_an_xspace_are_host_communication(tmp_path):
    """On a CPU-only XSpace a collective op is host communication (not '--'); with a GPU
    plane the host event only launches it, and the column stays '--'."""
    from xspace_builder import Space
    from tfprof_shell.load.xspace_intervals import XSpaceIntervals
    from tfprof_shell.model.intervals import HAS_HOST_COMM, HOST_COMMUNICATION
    from tfprof_shell.views.steps import step_breakdowns

    def space(gpu):
        sp = Space()
        host = sp.plane("/host:CPU")
        host.line("python").event("train", 0, 1000, step_num=1)
        ops = host.line("tf_Compute")
        ops.event("MatMul:MatMul", 10, 100)
        ops.event("CollectiveReduceV2:CollectiveReduceV2", 200, 300)
        ops.event("all-reduce.3", 600, 50)
        if gpu:
            sp.plane("/device:GPU:0").line("stream:7").event("gemm", 20, 5)
        return sp.write(tmp_path / ("gpu.xplane.pb" if gpu else "cpu.xplane.pb"))

    iv = XSpaceIntervals([space(False)])()
    assert HAS_HOST_COMM in iv.has
    assert sorted(e.name for e in iv.host if e.kind == HOST_COMMUNICATION) == [
        "CollectiveReduceV2:CollectiveReduceV2", "all-reduce.3"]
    assert host_values(average(step_breakdowns(iv).steps).host, iv.has)["communication"] == 350
    gpu = XSpaceIntervals([space(True)])()
    assert HAS_HOST_COMM not in gpu.has
    assert not [e for e in gpu.host if e.kind == HOST_COMMUNICATION]


def test_a_missing_step_is_worded_as_the_views_word_it():
    path = "--profile_path=" + sample("torch_cnn")
    errors = {run_cli([path, cmd, "-step", "9"]).err.splitlines()[-1]
              for cmd in ("scope", "steps", "kernels")}
    assert errors == {"tfprof: -step 9 not found; available steps: 2 3 4"}


def test_device_names_of_several_hosts_are_taken_as_they_are(tmp_path):
    from xspace_builder import Space
    from tfprof_shell.load.xspace_intervals import XSpaceIntervals
    from tfprof_shell.options import DEFAULTS
    from tfprof_shell.render.steps_run import breakdown
    paths = []
    for k in range(2):
        sp = Space()
        sp.plane("/host:CPU").line("python").event("train", 0, 1000, step_num=1)
        sp.plane("/device:GPU:0").line("stream:7").event("gemm", 20 + k, 5)
        paths.append(sp.write(tmp_path / ("h%d.xplane.pb" % k)))
    assert XSpaceIntervals(paths)().device_names() == ["host0/gpu:0", "host1/gpu:0"]
    model = load_model(Inputs(profile_path=",".join(paths)))
    result = breakdown(model, "m", DEFAULTS.replace(device="host1/gpu:0"))
    assert [list(s.devices) for s in result.steps] == [["host1/gpu:0"]]


def test_one_kernel_name_is_singular():
    run = run_cli(["--profile_path=" + sample("torch_cnn"), "kernels", "-show_name_regexes",
                   "Memset.*"])
    assert run.out.startswith("1 kernel name on all devices, all steps;")


def test_one_call_launching_several_kernels_counts_once(tmp_path):
    """A CUDA graph launch (one runtime call, one correlation id) runs three kernels:
    one launch of 10 us, and a launch delay per kernel (5, 15, 25 us: mean 15)."""
    trace = [
        _x("user_annotation", "ProfilerStep#1", 0, 200),
        _x("cuda_runtime", "cudaGraphLaunch", 10, 10, correlation=1),
        _device("kernel", "gemm_a", 1, 25, 5, 7),
        _device("kernel", "gemm_b", 1, 35, 5, 7),
        _device("kernel", "gemm_c", 1, 45, 5, 7),
    ]
    path = tmp_path / "graph.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": trace}))
    _, _, host = _us(step_breakdowns(load_model(Inputs(profile_path=str(path))).intervals()), 1)
    assert (host["launch_count"], host["launch_total"], host["launch_delay_mean"]) == \
        (1, 10, 15)


@pytest.mark.parametrize("option", ["-profiles all", "-base rank1"])
def test_a_timeline_of_several_profiles_is_refused_as_the_views_refuse_it(option, tmp_path):
    out = "timeline:outfile=%s" % (tmp_path / "t.json")
    errors = {run_cli(["--profile_path=" + sample("torch_ranks"), cmd] + option.split()
                      + ["-output", out]).err.splitlines()[-1] for cmd in ("steps", "scope")}
    assert errors == {"tfprof: -output timeline shows one profile: drop %s, or 'use NAME' to "
                      "pick the profile" % option.split()[0]}


def test_cpu_only_stragglers_name_host_ops_not_compute_0us():
    argv = ["--profile", "w0=" + sample("mlp_worker0", "profile"),
            "--profile", "w1=" + sample("mlp_worker1", "profile")]
    doc = json.loads(run_cli(argv + ["steps", "-profiles", "all", "-output", "json"]).out)
    assert {(s["profile"], s["waited_on"], s["waited_us"]) for s in doc["stragglers"]} == {
        ("w1", "host ops", 0)}
    text = run_cli(argv + ["steps", "-profiles", "all"]).out
    assert "(0us)" not in text and text.rstrip().endswith("host ops")
    advice = run_cli(argv + ["advise", "-checkers", "StragglerChecker"]).out
    assert "it spends that time in host ops, waiting on nothing" in advice
