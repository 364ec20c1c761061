"""`tfprof record` end to end on PyTorch toy programs in tests/record_scripts/ (needs PyTorch).

Skipped without PyTorch. Run them with a Python that has both PyTorch and this
checkout, e.g. ``.venv-torch/bin/python -m pytest -m torch``.
"""

from __future__ import annotations

import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, needs  # noqa: E402

needs("torch")
pytestmark = pytest.mark.torch

from tfprof_shell.load.record_dir import list_profiles  # noqa: E402
from tfprof_shell.record import layout  # noqa: E402

import record_helpers  # noqa: E402
from record_helpers import (DEFAULT_OPTIONS, only_process, record_argv,  # noqa: E402
                            record_env, three_complete_steps)


def _env():
    return record_env(PYTHONWARNINGS="ignore")


def record(tmp_path, script, *args, options=DEFAULT_OPTIONS):
    """Record ``script`` into tmp_path/rec; (completed process, output folder, manifest)."""
    return record_helpers.record(tmp_path, script, *args, env=_env(), options=options)


def occurrences(tfprof, out, op_type, step):
    """How many times ``op_type`` ran in ``step`` of the recording (0 if not at all)."""
    run = tfprof(["--profile_path=" + out, "op", "-step", str(step), "-select", "occurrence",
                  "-account_type_regexes", "^%s$" % re.escape(op_type)])
    assert run.code == 0, run.err
    for line in run.out.splitlines():
        if line.startswith(op_type + " "):
            return int(line.split()[-1].split("|")[0])
    return 0


def test_plain_loop(tmp_path, tfprof):
    run, out, doc = record(tmp_path, "torch_loop.py", 12)
    assert run.returncode == 3, run.stderr
    assert re.fullmatch(r"final loss \d+\.\d+\n", run.stdout)
    proc = three_complete_steps(run, doc, "torch", "optimizer")
    assert doc["exit_code"] == 3 and proc["frameworks"]["torch"].startswith("2.")
    names = sorted(os.listdir(os.path.join(out, proc["folder"])))
    assert len(names) == 2 and names[0] == layout.PROCESS
    assert re.fullmatch(r"torch_loop-[A-Za-z0-9_-]+-rank0\.\d+\.pt\.trace\.json", names[1])
    # step k runs from update k-1 to update k: two Linear layers, one forward each;
    # the evaluation after update 4 (loop index 4) falls in step 5
    assert [occurrences(tfprof, out, "aten::addmm", s) for s in (3, 4, 5)] == [2, 2, 4]
    assert occurrences(tfprof, out, "aten::add_", 4) == 4  # SGD: one update per parameter


def test_gradient_accumulation(tmp_path, tfprof):
    run, out, doc = record(tmp_path, "torch_loop.py", 10, 4)
    assert run.returncode == 3, run.stderr
    assert only_process(doc)["steps"] == [3, 4, 5]
    # one step = one update = four micro-batches (backward calls are not steps)
    assert [occurrences(tfprof, out, "aten::addmm", s) for s in (3, 4)] == [8, 8]
    assert occurrences(tfprof, out, "AddmmBackward0", 4) == 8


def test_two_optimizers_the_most_frequent_delimits(tmp_path, tfprof):
    run, out, doc = record(tmp_path, "torch_two_optimizers.py", 8,
                           options=("--warmup", "6", "--max_steps", "3"))
    assert run.returncode == 0 and run.stdout == "generator updates 8\n", run.stderr
    proc = only_process(doc)
    assert (proc["route"], proc["steps"]) == ("optimizer", [6, 7, 8])
    # the critic (3 updates per generator update) is the step: each step holds one critic
    # update (two critic calls), one step in three the generator's too (two more layers)
    backward = [occurrences(tfprof, out, "AddmmBackward0", s) for s in (6, 7, 8)]
    adam = [occurrences(tfprof, out, "aten::addcdiv_", s) for s in (6, 7, 8)]
    assert sorted(backward) == [2, 2, 4] and sorted(adam) == [0, 0, 2]
    assert backward.index(4) == adam.index(2)


def test_dataloader_workers_stay_silent(tmp_path, tfprof):
    run, out, doc = record(tmp_path, "torch_dataloader.py", 1)
    assert run.returncode == 0 and run.stdout == "updates 12\n", run.stderr
    proc = only_process(doc)  # the two spawned workers are not in the manifest
    assert proc["steps"] == [3, 4, 5] and proc["job"] == "torch_dataloader"
    assert len([n for n in os.listdir(out) if not n.startswith(".")]) == 2
    assert occurrences(tfprof, out, "aten::addmm", 4) == 1


def test_program_with_its_own_profiler(tmp_path, tfprof):
    own = tmp_path / "own"
    own.mkdir()
    run, out, doc = record(tmp_path, "torch_own_profiler.py", own,
                           options=("--warmup", "2", "--max_steps", "8"))
    assert run.returncode == 0 and run.stdout == "own traces written\n", run.stderr
    for name in ("first.json", "second.json"):  # both of the program's traces are whole
        events = json.loads((own / name).read_text())["traceEvents"]
        assert any(e.get("name") == "aten::addmm" for e in events)
    proc = only_process(doc)
    # the program's profiler ran through steps 1-2: ours waited at 2 and 3, took 4-6, and
    # gave way when the program started again in step 7 (left out: not traced whole)
    assert proc["status"] == "gave way" and proc["steps"] == [4, 5, 6]
    assert "waited for the program's own profiler to stop" in proc["notes"]
    assert "gave way to the program's own profiler" in proc["notes"]
    assert occurrences(tfprof, out, "aten::addmm", 4) == 1


def test_torch_compile(tmp_path, tfprof):
    run, out, doc = record(tmp_path, "torch_compiled.py", 10)
    assert run.returncode == 0 and run.stdout.startswith("final loss "), run.stderr
    proc = only_process(doc)
    assert (proc["route"], proc["steps"], proc["status"]) == ("optimizer", [3, 4, 5], "complete")
    assert [occurrences(tfprof, out, "aten::addmm", s) for s in (3, 4, 5)] == [2, 2, 2]
    scope = tfprof(["--profile_path=" + out, "scope", "-step", "4", "-max_depth", "2"])
    assert scope.code == 0 and "Torch-Compiled Region" in scope.out


def test_two_ranks_are_two_profiles(tmp_path, tfprof):
    run, out, doc = record(tmp_path, "torch_ranks.py", 8)
    assert run.returncode == 0, run.stderr
    assert sorted(run.stdout.splitlines()) == ["rank 0 done", "rank 1 done"]
    procs = doc["processes"]  # the launcher imports no framework: not listed
    assert [(p["rank"], p["steps"]) for p in procs] == [(0, [3, 4, 5]), (1, [3, 4, 5])]
    assert [p.name for p in list_profiles(out)] == [p["folder"] for p in procs]
    for p in procs:
        assert ".%d.pid" % p["rank"] in p["folder"]
        trace, = glob.glob(os.path.join(out, p["folder"], "*.pt.trace.json"))
        assert "-rank%d." % p["rank"] in os.path.basename(trace)
    listing = tfprof(["--profile_path=" + out, "profiles"])
    assert listing.code == 0 and all(p["folder"] in listing.out for p in procs)
    first = tfprof(["--profile_path=" + out, "op", "-step", "4"])
    assert first.code == 0 and "2 processes, one profile each" in first.err
    assert occurrences(tfprof, os.path.join(out, procs[1]["folder"]), "aten::addmm", 4) == 1


def test_inference_counts_calls_of_the_largest_model(tmp_path, tfprof):
    run, out, doc = record(tmp_path, "torch_inference.py", 10)
    assert run.returncode == 0 and run.stdout == "out (16, 8)\n", run.stderr
    proc = only_process(doc)
    assert (proc["route"], proc["steps"]) == ("nn.Module", [3, 4, 5])
    # a step is one call of the large model: its two Linear layers, not the small one's
    assert occurrences(tfprof, out, "aten::addmm", 4) == 2


def test_python_stacks_feed_the_code_view(tmp_path, tfprof):
    run, out, doc = record(tmp_path, "torch_loop.py", 8,
                           options=("--warmup", "3", "--max_steps", "2", "--python_tracer"))
    assert run.returncode == 3, run.stderr
    code = tfprof(["--profile_path=" + out, "code", "-max_depth", "30", "-select", "micros",
                   "-account_type_regexes", "aten::addmm"])
    assert code.code == 0, code.err
    assert "torch_loop.py:" in code.out and ":main" in code.out


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_a_signal_saves_what_was_traced(tmp_path, tfprof, signum):
    out = tmp_path / "rec"
    # Ctrl-C reaches the whole foreground process group from the terminal: a session of its own
    proc = subprocess.Popen(record_argv(out, ("--warmup", "3", "--max_steps", "100000"),
                                        "torch_sigterm.py"),
                            cwd=str(tmp_path), env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    for line in proc.stdout:  # wait until a few steps have been traced
        if line == "step 8\n" or time.monotonic() > deadline:
            break
    if signum == signal.SIGINT:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    doc = json.loads((out / layout.MANIFEST).read_text())
    if signum == signal.SIGTERM:
        assert proc.returncode == -signum and doc["signal"] == signum, err
    else:  # Python ends an uncaught KeyboardInterrupt with status 1, as it does unrecorded
        assert proc.returncode == 1 and doc["exit_code"] == 1, err
        assert "KeyboardInterrupt" in err
    rec = only_process(doc)
    # SIGTERM: our handler saves, then the process dies of it; Ctrl-C: KeyboardInterrupt
    # unwinds the program and the trace is saved at exit
    assert rec["status"] == ("SIGTERM" if signum == signal.SIGTERM else "exit")
    assert len(rec["steps"]) >= 5 and rec["steps"][0] == 3
    # the last step is saved as far as it ran (perhaps not at all); the one before is whole
    assert occurrences(tfprof, str(out), "aten::addmm", rec["steps"][-2]) == 1


def test_arming_never_imports_dynamo(tmp_path):
    from tfprof_shell.record import settings

    env = dict(_env(), PYTHONPATH=os.pathsep.join([settings.ARMED_DIR, ROOT]))
    env[settings.ENV_VAR] = settings.encode(settings.Settings(dir=str(tmp_path / "rec")))
    probe = ("import sys, torch; print('torch._dynamo' in sys.modules, "
             "'tfprof_shell.record.pytorch' in sys.modules, "
             "torch.nn.Module._call_impl.__name__)")
    run = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "False True tfprof_record_module_call\n"
    assert not (tmp_path / "rec").exists()  # nothing written for a process that never stepped
