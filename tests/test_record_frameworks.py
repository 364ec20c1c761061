"""Recordings of every framework, read without the framework: layout, manifest text, loading.

``sample_profiles/torch_record`` was written by ``tfprof record --warmup 3
--max_steps 2 --python_tracer --job train -- python torch_loop.py 6`` (the
program in tests/record_scripts/) with PyTorch 2.13 on CPU; its trace is gzipped.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from conftest import sample
from tfprof_shell.errors import LoadError
from tfprof_shell.load.record_dir import list_profiles
from tfprof_shell.record import layout, manifest
from tfprof_shell.record.process import ProcessRecording
from tfprof_shell.record.settings import Settings

TORCH_RECORD = sample("torch_record")


def _addmm_in_step(tfprof, path, step):
    run = tfprof(["--profile_path=" + path, "op", "-step", str(step), "-select", "occurrence",
                  "-account_type_regexes", "^aten::addmm$"])
    assert run.code == 0, run.err
    row = [line for line in run.out.splitlines() if line.startswith("aten::addmm ")]
    return int(row[0].split()[-1].split("|")[0]) if row else 0


def test_a_pytorch_recording_opens_with_its_steps(tfprof):
    (profile,) = list_profiles(TORCH_RECORD)
    doc = json.load(open(os.path.join(TORCH_RECORD, layout.MANIFEST)))
    (proc,) = doc["processes"]
    assert profile.name == proc["folder"] and proc["steps"] == [3, 4]
    assert profile.inputs.profile_path.endswith(".pt.trace.json.gz")
    # step k is one update of the two-layer model: two addmm (forward) in each
    assert [_addmm_in_step(tfprof, TORCH_RECORD, s) for s in (3, 4)] == [2, 2]
    other = tfprof(["--profile_path=" + TORCH_RECORD, "op", "-step", "5"])
    assert other.code == 1 and other.err == "tfprof: -step 5 not found; available steps: 3 4\n"


def test_the_code_view_reads_pytorch_stacks(tfprof):
    run = tfprof(["--profile_path=" + TORCH_RECORD, "code", "-max_depth", "8", "-select",
                  "occurrence", "-account_type_regexes", "^aten::addmm$", "-step", "4"])
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    rows = lines[lines.index("node name | op occurrence (run|defined)") + 2:]
    frames = [line.strip().split(" (")[0] for line in rows]
    assert frames[:2] == ["torch_loop.py:33:<module>", "torch_loop.py:23:main"]
    assert frames[-1] == "linear.py:130:forward"


def test_process_folder_with_two_frameworks_is_two_profiles(tmp_path):
    rec = tmp_path / "rec"
    shutil.copytree(TORCH_RECORD, rec)
    (folder,) = [p for p in rec.iterdir() if p.is_dir()]
    shutil.copytree(sample("tf2", "custom_loop", "plugins"), folder / "plugins")
    names = [p.name for p in list_profiles(str(rec))]
    assert names == [folder.name + ".tf2", folder.name + ".torch"]


def test_an_empty_pytorch_recording_says_why(tmp_path):
    rec = tmp_path / "rec"
    (rec / "p.h.pid1").mkdir(parents=True)
    (rec / "p.h.pid1" / layout.PROCESS).write_text(json.dumps({"pid": 1, "steps": []}))
    (rec / layout.MANIFEST).write_text(json.dumps({
        "settings": {"warmup": 10},
        "processes": [{"folder": "p.h.pid1", "steps": [], "steps_seen": 4,
                       "frameworks": {"torch": "2.13.0"}}]}))
    with pytest.raises(LoadError, match="the most frequent training call ran 4 times"):
        list_profiles(str(rec))


def test_summary_names_the_frameworks():
    few = [{"folder": None, "steps": [], "steps_seen": 2, "notes": [],
            "frameworks": {"torch": "2.13.0"}},
           {"folder": None, "steps": [], "steps_seen": 1, "notes": [],
            "frameworks": {"jax": "0.10.2", "torch": "2.13.0"}}]
    assert manifest.summary("/o", few, 10).startswith(
        "nothing recorded: 2 processes imported JAX and PyTorch, the most frequent training "
        "call ran 2 times")


def test_torch_trace_names_and_kinds():
    assert layout.torch_trace_name("train", "node-1", 3, 42) == "train-node-1-rank3.42.pt.trace.json"
    assert layout.torch_trace_name("my job!", "h", None, 7) == "my_job-h-rank0.7.pt.trace.json"
    assert layout.is_torch_trace("a-b-rank0.1.pt.trace.json.gz")
    assert not layout.is_torch_trace("timeline-1.json")


def test_one_claim_per_framework_and_a_late_rank(tmp_path):
    rec = ProcessRecording(Settings(dir=str(tmp_path)))
    assert rec.claim(layout.KIND_TORCH, "optimizer")
    assert not rec.claim(layout.KIND_TORCH, "nn.Module")
    assert rec.claim(layout.KIND_JAX, "jax.jit") and rec.claim(layout.KIND_TORCH, "optimizer")
    assert rec.claim(layout.KIND_TF2, "tf.function") and not rec.claim(layout.KIND_TF1, "x")
    rec.set_rank(5)
    assert rec.rank == 5 and rec.name.endswith(".5.pid%d" % rec.pid)
    described = rec.describe()
    assert (described["kind"], described["route"]) == ("torch", "optimizer")
    assert described["kinds"] == ["torch", "jax", "tf2"]
