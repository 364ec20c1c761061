"""The `memory` command: its outputs, options, comparisons and mistakes; the advice; and
the column reader of TF2 memory events against reading them one message each."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from conftest import run_cli, sample
from test_memory_references import JAX_LEAK_LINE, TORCH_LEAK_LINE
from tfprof_shell.load import Inputs, load_model
from tfprof_shell.proto import pprof_profile_pb2
from tfprof_shell.views.memory import memory_result

TORCH_LEAK = sample("memory", "torch_leak")
TF2 = sample("memory", "tf2")


def test_text_has_the_sparkline_peak_live_set_steps_and_growth():
    run = run_cli(["--profile_path=" + TORCH_LEAK, "memory"])
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert lines[0].startswith("Memory on cpu: 254 events over 4 steps (PyTorch [memory] events)")
    assert lines[1].startswith("peak 2.25MB at ") and "(step 5), reached 1 time" in lines[1]
    assert set(lines[2].split()[0]) <= set("▁▂▃▄▅▆▇█ ")
    assert lines[3].split()[:3] == ["2", "3", "4"] and lines[3].endswith("(step starts)")
    assert "Alive at the peak, by op: 2.25MB in 13 blocks." in run.out
    assert "aten::clamp_min: 131.07KB per step, in 3 of 3 steps" in run.out


@pytest.mark.parametrize("by,first", [("op", "aten::mm"), ("scope", None), ("code", None),
                                      ("shape", "(1048576 bytes)"),
                                      ("region", "(no region)"),
                                      ("category", None)])
def test_every_key_groups_the_same_bytes(by, first):
    model = load_model(Inputs(profile_path=TORCH_LEAK))
    (d,) = memory_result(model, by).devices
    assert sum(r.nbytes for r in d.live) == d.peak.nbytes
    if first:
        assert d.live[0].key == first


def test_category_separates_the_leak_from_the_steps_temporaries():
    model = load_model(Inputs(profile_path=TORCH_LEAK))
    (d,) = memory_result(model, "category").devices
    keys = {r.key: r for r in d.live}
    assert keys["not freed while profiled"].nbytes >= 4 * 131072


def test_json_document_draws_a_chart():
    run = run_cli(["--profile_path=" + TORCH_LEAK, "memory", "-output", "json"])
    doc = json.loads(run.out)
    assert doc["mode"] == "memory" and doc["schema_version"] == 1 and doc["by"] == "op"
    assert [s["step"] for s in doc["steps"]] == [2, 3, 4, 5]
    (d,) = doc["devices"]
    assert d["peak"]["bytes"] == max(d["timeline"]["allocated"])
    assert len(d["timeline"]["time"]) == len(d["timeline"]["allocated"]) == d["events"]
    assert d["growth"]["suspects"][0]["key"] == "aten::clamp_min"
    assert sum(r["bytes"] for r in d["live"]["rows"]) == d["peak"]["bytes"]


def test_step_and_device_choose_what_is_shown(tmp_path):
    doc = json.loads(run_cli(["--profile_path=" + TORCH_LEAK, "memory", "-step", "3",
                              "-output", "json"]).out)
    (d,) = doc["devices"]
    assert d["peak"]["step"] == 3
    text = run_cli(["--profile_path=" + TORCH_LEAK, "memory", "-step", "3"]).out
    assert text.splitlines()[1].startswith("step 3's peak 1.99MB at ")
    run = run_cli(["--profile_path=" + TORCH_LEAK, "memory", "-step", "9"])
    assert run.code != 0 and "has no step 9; its steps: 2 3 4 5" in run.err
    run = run_cli(["--profile_path=" + TORCH_LEAK, "memory", "-device", "gpu:0"])
    assert run.code != 0 and "has no memory on device gpu:0; devices: cpu" in run.err


def test_timeline_writes_counter_tracks(tmp_path):
    out = tmp_path / "mem.json"
    run = run_cli(["--profile_path=" + TORCH_LEAK, "memory", "-output",
                   "timeline:outfile=%s" % out])
    assert run.code == 0, run.err
    events = json.loads(out.read_text())["traceEvents"]
    counters = [e for e in events if e["ph"] == "C"]
    assert len(counters) == 254
    assert max(e["args"]["allocated"] for e in counters) == 2252848
    assert [e["name"] for e in events if e.get("cat") == "step"] == [
        "step 2", "step 3", "step 4", "step 5"]


def test_pprof_holds_the_live_set_by_stack(tmp_path):
    out = tmp_path / "peak.pb.gz"
    run = run_cli(["--profile_path=" + TORCH_LEAK, "memory", "-output",
                   "pprof:outfile=%s" % out])
    assert run.code == 0, run.err
    profile = pprof_profile_pb2.Profile.FromString(gzip.decompress(out.read_bytes()))
    strings = profile.string_table
    assert [strings[t.type] for t in profile.sample_type] == ["blocks", "space"]
    assert sum(s.value[1] for s in profile.sample) == 2252848
    names = {strings[f.name] for f in profile.function}
    assert "forward" in names


def test_base_compares_peaks_and_live_sets():
    run = run_cli(["--profile_path=" + TORCH_LEAK, "--base_profile_path=" +
                   sample("memory", "torch"), "memory"])
    assert run.code == 0, run.err
    assert "peak 2.25MB vs 1.73MB (+524.29KB, 1.30x)" in run.out
    assert "aten::clamp_min" in run.out.split("change", 1)[1].splitlines()[1]


def test_profiles_ranks_the_peaks():
    run = run_cli(["--profile_path=" + TORCH_LEAK, "--base_profile_path=" +
                   sample("memory", "torch"), "memory", "-profiles", "all", "-output",
                   "json"])
    doc = json.loads(run.out)
    assert [r["peak"] for r in doc["ranks"]] == sorted((r["peak"] for r in doc["ranks"]),
                                                       reverse=True)
    assert len(doc["profiles"]) == 2


@pytest.mark.parametrize("argv,message", [
    (["--profile_path=" + sample("convnet", "profile"), "memory"],
     "has no memory events: TensorFlow's profiler keeps allocation records of GPU "
     "allocators only"),
    (["--profile_path=" + sample("jax_cpu"), "memory"], "JAX records none on the CPU"),
    (["--profile_path=" + sample("torch_record"), "memory"], "profile_memory=True"),
    (["--profile_path=" + TORCH_LEAK, "memory", "-output", "pprof"], "needs outfile"),
    (["--profile_path=" + TORCH_LEAK, "memory", "-by", "thread"], "-by: unknown value"),
])
def test_mistakes_are_one_line(argv, message):
    run = run_cli(argv)
    assert run.code != 0
    *notes, last = run.err.strip().splitlines()
    assert message in last and "Traceback" not in run.err
    assert all(message not in note for note in notes)


@pytest.mark.parametrize("folder,words", [
    ("torch_leak", ["memory grows over the steps: +131.07KB per step",
                    "aten::clamp_min", TORCH_LEAK_LINE]),
    ("tf2_leak", ["memory grows over the steps: +1.05MB per step", "_MklNativeFusedMatMul",
                  "coverage: TensorFlow on the CPU records only allocations of 256 KiB"]),
    ("jax_leak", ["memory grows over the steps: +262.14KB per step", JAX_LEAK_LINE]),
])
def test_advise_names_the_leak(folder, words):
    run = run_cli(["--profile_path=" + sample("memory", folder), "advise"])
    assert run.code == 0, run.err
    advice = run.out.split("MemoryChecker:", 1)[1]
    for word in words:
        assert word in advice


def test_advise_on_real_gpu_memory():
    run = run_cli(["--profile_path=" + sample("torch_cnn"), "advise", "-checkers",
                   "MemoryChecker"])
    assert "reserved far above allocated: the allocator reserved up to 228.59MB for a peak " \
           "of 145.24MB" in run.out
    quiet = run_cli(["--profile_path=" + sample("memory", "torch"), "advise", "-checkers",
                     "MemoryChecker"])
    assert "grows" not in quiet.out


def _memory_rows(path: str, columns: bool):
    """Each host's memory events as rows, read as columns or one message each."""
    from tfprof_shell.load import xspace
    from tfprof_shell.load.memory_xplane import host_memory
    from tfprof_shell.load.xspace_pick import read_xspace_picked

    if not columns:
        saved = xspace.Host._read_memory_columns
        xspace.Host._read_memory_columns = lambda self, special, *a: special
    try:
        space, picked = read_xspace_picked(path)
        host = xspace.Host(space, 0, "", 0, path, picked)
    finally:
        if not columns:
            xspace.Host._read_memory_columns = saved
    read_as_columns = len(host.memory_columns)
    mem = host_memory(host)
    rows = sorted(zip(mem.time, mem.alloc, mem.nbytes, mem.addr, mem.requested, mem.allocated,
                      mem.available, mem.fragmentation, mem.allocator, mem.op, mem.region,
                      mem.shape, mem.where))
    return rows, read_as_columns


@pytest.mark.parametrize("parts", [("memory", "tf2_leak"), ("jax_gpt",)])
def test_memory_columns_read_what_one_message_each_reads(parts):
    import glob
    (path,) = glob.glob(os.path.join(sample(*parts), "**", "*.xplane.pb"), recursive=True)
    by_columns, groups = _memory_rows(path, True)
    one_by_one, none = _memory_rows(path, False)
    assert groups > 0 and none == 0
    assert by_columns == one_by_one


class _Payload:
    """Runs a shell command when unpickled by pickle.load."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


@pytest.mark.parametrize("payload", ["system", "nested", "builtin"])
def test_a_hostile_snapshot_is_refused_without_running_it(tmp_path, payload):
    import pickle

    marker = tmp_path / "ran"
    evil = _Payload("touch %s" % marker)
    data = {"system": evil, "nested": {"device_traces": [[{"action": "alloc", "x": evil}]]},
            "builtin": eval}[payload]
    path = tmp_path / "snapshot.pickle"
    path.write_bytes(pickle.dumps(data))
    run = run_cli(["--profile_path=%s" % path, "memory"])
    assert run.code != 0 and "refused: not plain data" in run.err
    assert "Traceback" not in run.err
    assert not marker.exists()
    pickle.loads(path.read_bytes()) if payload != "builtin" else None
    assert marker.exists() == (payload != "builtin")  # the payload is real


def test_another_accelerators_memory_is_named_as_steps_names_its_device(tmp_path):
    """[memory] events of an MTIA device (c10's Device Type 19) are on mtia:0, the name
    `steps` and -device give that device."""
    with gzip.open(sample("torch_generations", "synthetic_mtia.pt.trace.json.gz")) as fh:
        doc = json.load(fh)
    op = next(e for e in doc["traceEvents"] if e.get("cat") == "cpu_op")
    addr = 1 << 40
    for i, nbytes in enumerate((4096, -4096)):
        doc["traceEvents"].append({
            "ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
            "pid": op["pid"], "tid": op["tid"], "ts": op["ts"] + (i + 1) * op["dur"] / 3,
            "args": {"Total Reserved": 8192, "Total Allocated": 4096 * (1 - i),
                     "Bytes": nbytes, "Device Id": 0, "Device Type": 19, "Addr": addr}})
    path = str(tmp_path / "mtia_memory.pt.trace.json")
    with open(path, "w") as fh:
        json.dump(doc, fh)
    steps = run_cli(["--profile_path=" + path, "steps"])
    assert steps.code == 0 and "mtia:0" in steps.out, steps.err
    run = run_cli(["--profile_path=" + path, "memory", "-device", "mtia:0"])
    assert run.code == 0, run.err
    assert run.out.startswith("Memory on mtia:0: 2 events")
    assert "peak 4.10KB" in run.out
