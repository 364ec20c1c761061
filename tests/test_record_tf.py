"""`tfprof record` end to end on the toy programs in tests/record_scripts/ (needs TensorFlow).

Skipped without TensorFlow. Run them with a Python that has both TensorFlow and
this checkout, e.g. ``.venv-tf/bin/python -m pytest tests/test_record_tf.py``
(about a minute: each test starts TensorFlow once or twice).
"""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import needs  # noqa: E402

needs("tensorflow")
pytestmark = pytest.mark.tensorflow

from tfprof_shell.load.record_dir import list_profiles  # noqa: E402
from tfprof_shell.record import layout  # noqa: E402

import record_helpers  # noqa: E402
from record_helpers import (DEFAULT_OPTIONS, SCRIPTS, only_process,  # noqa: E402
                            record_argv, record_env, three_complete_steps)


def _env():
    return record_env(TF_CPP_MIN_LOG_LEVEL="2")


def record(tmp_path, script, *args, options=DEFAULT_OPTIONS):
    """Record ``script`` into tmp_path/rec; (completed process, output folder, manifest)."""
    return record_helpers.record(tmp_path, script, *args, env=_env(), options=options)


def test_tf1_session_loop(tmp_path, tfprof):
    run, out, doc = record(tmp_path, "engine_guard.py", tmp_path / "engine.log",
                           os.path.join(SCRIPTS, "tf1_session.py"), 12)
    assert run.returncode == 3, run.stderr
    assert run.stdout.splitlines()[0].startswith("final loss ")
    assert len(run.stdout.splitlines()) == 1
    proc = three_complete_steps(run, doc, "tf1", "Session.run")
    assert doc["exit_code"] == 3
    assert sorted(os.listdir(os.path.join(out, proc["folder"]))) == [
        "graph.pb", "op_log", "process.json", "run_meta_3", "run_meta_4", "run_meta_5"]
    # tfprof's C++ engine was never called in the program; the guard's own control call shows
    # that calls would have been seen.
    assert (tmp_path / "engine.log").read_text().split("\n")[0] == "control NewProfiler"
    assert "program" not in (tmp_path / "engine.log").read_text()

    code = tfprof(["--profile_path=" + out, "code", "-max_depth", "9", "-select", "micros"])
    assert code.code == 0 and code.err == ""
    assert "tf1_session.py:" in code.out and ":main " in code.out and ":build_model " in code.out
    op = tfprof(["--profile_path=" + out, "op", "-select", "float_ops", "-order_by", "float_ops"])
    assert op.code == 0 and "MatMul" in op.out
    # x was fed with a batch of 16: the first MatMul counts 2*16*20*32 float ops
    scope = tfprof(["--profile_path=" + out, "scope", "-select", "float_ops", "-step", "4"])
    assert "hidden/MatMul (20.48k/20.48k flops)" in scope.out


@pytest.mark.parametrize("how", ["callable", "callable_nofeed"])
def test_tf1_make_callable(tmp_path, tfprof, how):
    run, out, doc = record(tmp_path, "tf1_session.py", 9, how)
    assert run.returncode == 3, run.stderr
    assert only_process(doc)["steps"] == [3, 4, 5]
    code = tfprof(["--profile_path=" + out, "code", "-max_depth", "3"])
    assert code.code == 0 and "tf1_session.py:" in code.out


def test_monitored_training_session_with_hooks(tmp_path, tfprof):
    timelines = tmp_path / "timelines"
    run, out, doc = record(tmp_path, "tf1_monitored.py", timelines, 14)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "trained 14 steps\n"
    proc = only_process(doc)
    assert proc["steps"] == [3, 4, 5] and proc["kind"] == "tf1"
    assert len(glob.glob(str(timelines / "timeline-*.json"))) >= 2  # its own ProfilerHook
    scope = tfprof(["--profile_path=" + out, "scope", "-max_depth", "2", "-select", "params"])
    assert scope.code == 0 and "dense (0/18 params)" in scope.out


def test_keras_fit(tmp_path, tfprof):
    run, out, doc = record(tmp_path, "keras_fit.py")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("final loss ")
    proc = only_process(doc)
    assert (proc["kind"], proc["route"], proc["steps"]) == ("tf2", "keras fit", [3, 4, 5])
    op = tfprof(["--profile_path=" + out, "op", "-step", "4", "-select", "occurrence"])
    assert op.code == 0 and "MatMul" in op.out


def test_custom_tf_function_loop_with_python_tracer(tmp_path, tfprof):
    run, out, doc = record(tmp_path, "tf_function_loop.py", 12,
                           options=("--warmup", "3", "--max_steps", "3", "--python_tracer"))
    assert run.returncode == 0, run.stderr
    proc = only_process(doc)
    assert (proc["route"], proc["steps"]) == ("tf.function", [3, 4, 5])
    scope = tfprof(["--profile_path=" + out, "scope", "-max_depth", "3"])
    assert scope.code == 0 and "layer1" in scope.out and "sgd" in scope.out
    code = tfprof(["--profile_path=" + out, "code", "-max_depth", "4"])
    assert code.code == 0 and "polymorphic_function.py" in code.out


def test_eager_loop(tmp_path, tfprof):
    run, out, doc = record(tmp_path, "eager_loop.py", 12)
    assert run.returncode == 0, run.stderr
    proc = only_process(doc)
    assert (proc["route"], proc["steps"]) == ("optimizer", [3, 4, 5])
    op = tfprof(["--profile_path=" + out, "op", "-select", "occurrence"])
    assert op.code == 0 and "MatMul" in op.out


def test_program_with_its_own_profiler(tmp_path, tfprof):
    own = tmp_path / "own"
    run, out, doc = record(tmp_path, "own_profiler.py", own,
                           options=("--warmup", "2", "--max_steps", "5"))
    assert run.returncode == 0, run.stderr
    assert run.stdout == "own profiles written\n"
    for name in ("first", "second"):  # both of the program's own sessions were written
        assert glob.glob(str(own / name / "plugins" / "profile" / "*" / "*.xplane.pb"))
    proc = only_process(doc)
    # steps 1-2 were the program's: ours waited, took 3-5, and gave way at step 6
    assert proc["steps"] == [3, 4, 5] and proc["status"] == "gave way"
    assert "gave way to the program's own profiler" in proc["notes"]
    assert tfprof(["--profile_path=" + out, "op"]).code == 0


def test_launcher_that_spawns_a_worker(tmp_path, tfprof):
    run, out, doc = record(tmp_path, "spawn_worker.py", options=("--warmup", "3",
                                                                 "--max_steps", "2"))
    assert run.returncode == 0, run.stderr
    procs = doc["processes"]
    assert [(p["rank"], p["kind"], p["steps"]) for p in procs] == [(0, "tf1", [3, 4]),
                                                                   (1, "tf2", [3, 4])]
    assert procs[0]["folder"].startswith("spawn_worker.") and ".0.pid" in procs[0]["folder"]
    assert procs[1]["folder"].startswith("tf_function_loop.") and ".1.pid" in procs[1]["folder"]
    assert [p.name for p in list_profiles(out)] == [procs[0]["folder"], procs[1]["folder"]]
    first = tfprof(["--profile_path=" + out, "op"])
    assert first.code == 0 and "record folder of 2 processes, one profile each" in first.err
    listing = tfprof(["--profile_path=" + out, "profiles"])
    assert listing.code == 0
    assert all(p["folder"] in listing.out for p in procs), listing.out
    second = tfprof(["--profile_path=" + os.path.join(out, procs[1]["folder"]), "op"])
    assert second.code == 0


def test_sigterm_during_training_writes_what_was_traced(tmp_path, tfprof):
    out = tmp_path / "rec"
    proc = subprocess.Popen(record_argv(out, ("--warmup", "3", "--max_steps", "1000"),
                                        "sigterm_train.py"),
                            cwd=str(tmp_path), env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    for line in proc.stdout:  # wait until a few steps have been traced
        if line == "step 8\n" or time.monotonic() > deadline:
            break
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGTERM
    doc = json.loads((out / layout.MANIFEST).read_text())
    assert doc["signal"] == signal.SIGTERM
    rec = only_process(doc)
    assert rec["status"] == "SIGTERM" and len(rec["steps"]) >= 5 and rec["steps"][0] == 3
    op = tfprof(["--profile_path=" + str(out), "op", "-step", str(rec["steps"][-1])])
    assert op.code == 0 and "MatMul" in op.out
