"""`tfprof record` without TensorFlow: the launcher, the armed sitecustomize, settings and layout.

The launcher checks that TensorFlow is installed before recording; where it
is not, these tests put a stand-in ``tensorflow`` package on the launcher's
PYTHONPATH (the programs they run never import it unless a test says so).
"""

from __future__ import annotations

import ast
import importlib.util
import io
import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap

import pytest

from tfprof_shell.errors import UsageError
from tfprof_shell.record import layout, manifest, settings
from tfprof_shell.record.launcher import main as record_main
from tfprof_shell.record.launcher import parse
from tfprof_shell.record.process import identify
from tfprof_shell.record.steps import Dominant, StepPlan

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARMED_FILE = os.path.join(settings.ARMED_DIR, "sitecustomize.py")
HAS_FRAMEWORK = any(importlib.util.find_spec(m) is not None for m in ("tensorflow", "torch", "jax"))


@pytest.fixture
def fake_tf(tmp_path):
    """A folder holding a stand-in ``tensorflow`` package (an empty module)."""
    pkg = tmp_path / "fake_tf" / "tensorflow"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("FAKE = True\n")
    return str(pkg.parent)


def launch(args, cwd, pythonpath="", env_extra=None, timeout=60, **popen):
    """Run ``python -m tfprof_shell record ARGS`` (our checkout importable) and wait."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", settings.ENV_VAR)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pythonpath, ROOT) if p)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "tfprof_shell", "record"] + list(args),
                          cwd=str(cwd), env=env, capture_output=True, text=True,
                          timeout=timeout, **popen)


def script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


# -- command line ---------------------------------------------------------------
def test_parse_options_then_command():
    req = parse(["-o", "out", "--warmup=2", "--every", "3", "--max_steps", "4", "--python_tracer",
                 "--job", "trainer", "--", "python", "-u", "train.py", "--lr", "1"])
    assert (req.out_dir, req.warmup, req.every, req.max_steps, req.python_tracer, req.job) == \
        ("out", 2, 3, 4, True, "trainer")
    assert req.command == ["python", "-u", "train.py", "--lr", "1"]
    assert parse(["python", "train.py", "-o", "x"]).command == ["python", "train.py", "-o", "x"]
    torch_req = parse(["--shapes", "--memory", "--", "python", "t.py"])
    assert (torch_req.shapes, torch_req.memory, torch_req.python_tracer) == (True, True, False)
    with pytest.raises(UsageError, match="--shapes takes no value"):
        parse(["--shapes=1", "--", "true"])


@pytest.mark.parametrize("argv,message", [
    (["--warmup", "x", "--", "true"], "--warmup: 'x' is not a whole number"),
    (["--every", "0", "--", "true"], "--every must be at least 1"),
    (["--bogus", "--", "true"], "unknown option --bogus"),
    (["--job"], "--job needs a value"),
    ([], "no command to run"),
])
def test_usage_mistakes_are_one_line(argv, message):
    err = io.StringIO()
    assert record_main(argv, stdout=io.StringIO(), stderr=err, environ={}) == 2
    assert err.getvalue().count("\n") == 1 and message in err.getvalue()


def test_help_through_the_tfprof_command(tfprof):
    run = tfprof(["record", "--help"])
    assert run.code == 0 and run.out.startswith("usage: tfprof record")
    assert "--env" in run.out and "TFPROF_RECORD=off" in run.out
    assert "TensorFlow, PyTorch or JAX" in run.out and "--memory" in run.out


def test_env_prints_the_two_variables(tmp_path):
    out = io.StringIO()
    code = record_main(["--env", "-o", str(tmp_path / "rec"), "--warmup", "4", "--job", "w"],
                       stdout=out, environ={"PYTHONPATH": "/opt/lib"})
    assert code == 0
    lines = out.getvalue().splitlines()
    assert [line.split("=", 1)[0] for line in lines] == ["export PYTHONPATH",
                                                         "export " + settings.ENV_VAR]
    values = dict(shlex.split(line[len("export "):])[0].split("=", 1) for line in lines)
    assert values["PYTHONPATH"].split(os.pathsep) == [settings.ARMED_DIR, "/opt/lib"]
    decoded = settings.decode(values[settings.ENV_VAR])
    assert (decoded.dir, decoded.warmup, decoded.job, decoded.status_dir) == \
        (str(tmp_path / "rec"), 4, "w", "")


@pytest.mark.skipif(HAS_FRAMEWORK, reason="a framework is installed here")
def test_without_any_framework_one_line_and_nonzero(tmp_path):
    err = io.StringIO()
    code = record_main(["-o", str(tmp_path / "rec"), "--", sys.executable, "-c", "pass"],
                       stderr=err, environ={})
    assert code == 1
    assert err.getvalue().count("\n") == 1
    assert "none of TensorFlow, PyTorch or JAX is installed" in err.getvalue()
    assert not (tmp_path / "rec").exists()


def test_refuses_a_non_empty_output_folder(tmp_path, fake_tf):
    (tmp_path / "rec").mkdir()
    (tmp_path / "rec" / "old").write_text("x")
    run = launch(["-o", "rec", "--", sys.executable, "-c", "pass"], tmp_path, fake_tf)
    assert run.returncode == 2
    assert run.stderr == "tfprof record: -o rec: exists and is not an empty folder; give a new one\n"


def test_command_not_found_is_127(tmp_path, fake_tf):
    run = launch(["-o", "rec", "--", "no-such-command-xyz"], tmp_path, fake_tf)
    assert run.returncode == 127
    assert run.stderr == "tfprof record: no-such-command-xyz: command not found\n"


# -- running the program --------------------------------------------------------
def test_exit_code_stdout_stderr_and_manifest(tmp_path, fake_tf):
    prog = script(tmp_path, "prog.py", """
        import sys
        print("to stdout")
        print("to stderr", file=sys.stderr)
        sys.exit(7)
        """)
    run = launch(["-o", "rec", "--", sys.executable, prog, "a b"], tmp_path, fake_tf)
    assert run.returncode == 7
    assert run.stdout == "to stdout\n"
    first, ours = run.stderr.splitlines()
    assert first == "to stderr"
    assert ours == ("tfprof record: nothing recorded: no process of the program "
                    "imported TensorFlow, PyTorch or JAX")
    doc = json.loads((tmp_path / "rec" / layout.MANIFEST).read_text())
    assert doc["format"] == layout.FORMAT and doc["exit_code"] == 7 and doc["signal"] is None
    assert doc["command"] == [sys.executable, prog, "a b"] and doc["processes"] == []
    assert doc["settings"]["dir"] == str(tmp_path / "rec") and doc["seconds"] >= 0
    assert sorted(os.listdir(tmp_path / "rec")) == [layout.MANIFEST]


PROBE = """
    import json, os, subprocess, sys
    info = {"finder": [type(f).__name__ for f in sys.meta_path][:1],
            "armed_on_path": any(p.rstrip(os.sep).endswith(os.path.join("record", "armed"))
                                 for p in sys.path),
            "pythonpath": os.environ.get("PYTHONPATH", ""),
            "settings": os.environ.get("TFPROF_RECORD"),
            "hidden": os.environ.get("HIDDEN_RAN", "")}
    if len(sys.argv) > 1:  # the child asks its own child (a worker) the same
        out = subprocess.run([sys.executable, __file__], capture_output=True, text=True).stdout
        info["worker"] = json.loads(out)
    print(json.dumps(info))
    """


def test_program_and_its_children_are_armed(tmp_path, fake_tf):
    prog = script(tmp_path, "probe.py", PROBE)
    run = launch(["-o", "rec", "--warmup", "2", "--", sys.executable, prog, "spawn"],
                 tmp_path, fake_tf)
    assert run.returncode == 0, run.stderr
    info = json.loads(run.stdout)
    for proc in (info, info["worker"]):
        assert proc["finder"] == ["TfprofRecordFinder"]
        assert not proc["armed_on_path"]  # armed folder leaves sys.path once used
        assert proc["pythonpath"].split(os.pathsep)[0] == settings.ARMED_DIR
        assert fake_tf in proc["pythonpath"].split(os.pathsep)
        decoded = settings.decode(proc["settings"])
        assert decoded.dir == str(tmp_path / "rec") and decoded.warmup == 2


def test_chains_to_the_sitecustomize_it_hides(tmp_path, fake_tf):
    hidden = tmp_path / "site_dir"
    hidden.mkdir()
    (hidden / "sitecustomize.py").write_text(
        "import os\nos.environ['HIDDEN_RAN'] = 'yes:' + __file__\n")
    prog = script(tmp_path, "probe.py", PROBE)
    run = launch(["-o", "rec", "--", sys.executable, prog], tmp_path,
                 os.pathsep.join([str(hidden), fake_tf]))
    info = json.loads(run.stdout)
    assert info["hidden"] == "yes:" + str(hidden / "sitecustomize.py")
    assert info["finder"] == ["TfprofRecordFinder"]


def test_a_failing_hidden_sitecustomize_is_reported_as_python_does(tmp_path, fake_tf):
    hidden = tmp_path / "site_dir"
    hidden.mkdir()
    (hidden / "sitecustomize.py").write_text("raise RuntimeError('broken site')\n")
    run = launch(["-o", "rec", "--", sys.executable, "-c", "print('ran')"], tmp_path,
                 os.pathsep.join([str(hidden), fake_tf]))
    assert run.returncode == 0 and run.stdout == "ran\n"
    assert run.stderr.startswith("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                                 "RuntimeError: broken site\n")


def test_tfprof_record_off_runs_the_command_unarmed(tmp_path):
    prog = script(tmp_path, "probe.py", textwrap.dedent(PROBE) + "sys.exit(5)\n")
    run = launch(["-o", "rec", "--", sys.executable, prog], tmp_path,
                 env_extra={settings.ENV_VAR: "off"})
    assert run.returncode == 5 and run.stderr == ""
    info = json.loads(run.stdout)
    assert info["finder"] != ["TfprofRecordFinder"] and info["settings"] == "off"
    assert not (tmp_path / "rec").exists()


def test_armed_sitecustomize_off_values_agree_with_settings():
    tree = ast.parse(open(ARMED_FILE).read())
    off = next(ast.literal_eval(node.value) for node in tree.body
               if isinstance(node, ast.Assign) and node.targets[0].id == "_OFF")
    assert tuple(off) == settings.OFF_VALUES


def test_armed_sitecustomize_watches_the_modules_hooks_arms():
    from tfprof_shell.record.hooks import FRAMEWORK_OF

    from tfprof_shell.record.serve import FRAMEWORKS

    tree = ast.parse(open(ARMED_FILE).read())
    literals = {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body
                if isinstance(node, ast.Assign) and node.targets[0].id in ("_RECORDED", "_SERVED")}
    assert sorted(literals["_RECORDED"]) == sorted(FRAMEWORK_OF)
    assert sorted(literals["_SERVED"]) == sorted(FRAMEWORKS)


def test_child_killed_by_a_signal_kills_the_launcher_alike(tmp_path, fake_tf):
    prog = script(tmp_path, "die.py", """
        import os, signal
        print("dying", flush=True)
        os.kill(os.getpid(), signal.SIGTERM)
        """)
    run = launch(["-o", "rec", "--", sys.executable, prog], tmp_path, fake_tf)
    assert run.returncode == -signal.SIGTERM
    assert run.stdout == "dying\n"
    doc = json.loads((tmp_path / "rec" / layout.MANIFEST).read_text())
    assert doc["exit_code"] is None and doc["signal"] == signal.SIGTERM


def test_sigterm_to_the_launcher_reaches_the_program(tmp_path, fake_tf):
    prog = script(tmp_path, "wait.py", """
        import signal, sys, time
        def bye(signum, frame):
            print("got signal %d" % signum, flush=True)
            sys.exit(4)
        signal.signal(signal.SIGTERM, bye)
        print("ready", flush=True)
        time.sleep(60)
        """)
    env = {k: v for k, v in os.environ.items() if k != settings.ENV_VAR}
    env["PYTHONPATH"] = os.pathsep.join([fake_tf, ROOT])
    proc = subprocess.Popen([sys.executable, "-m", "tfprof_shell", "record", "-o", "rec", "--",
                             sys.executable, prog], cwd=str(tmp_path), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 4
    assert out == "got signal %d\n" % signal.SIGTERM


def test_a_signal_in_the_moment_the_child_starts_is_passed_on(tmp_path):
    # The signal lands right after the child is created: the launcher must already pass it
    # on (before, it died of it there and left the child running).
    child = script(tmp_path, "child.py", """
        import signal, sys, time
        signal.signal(signal.SIGTERM, lambda *a: sys.exit(4))
        time.sleep(20)
        """)
    driver = script(tmp_path, "driver.py", """
        import os, signal, subprocess, sys
        from tfprof_shell.record import launcher
        real = subprocess.Popen
        def popen_then_signal(*args, **kwargs):
            started = real(*args, **kwargs)
            os.kill(os.getpid(), signal.SIGTERM)
            return started
        launcher.subprocess.Popen = popen_then_signal
        print(launcher._run([sys.executable, sys.argv[1]], dict(os.environ)))
        """)
    env = {k: v for k, v in os.environ.items() if k != settings.ENV_VAR}
    env["PYTHONPATH"] = ROOT
    done = subprocess.run([sys.executable, driver, child], env=env, capture_output=True,
                          text=True, timeout=30)
    # The child ends by the signal: of it (-15) if it comes before the child's handler, else 4.
    assert done.returncode == 0, done.stderr
    assert done.stdout in ("-%d\n" % signal.SIGTERM, "4\n")


# -- arming: cost, laziness, never in the way ----------------------------------------------
def _modules_after_start(env_extra):
    env = {k: v for k, v in os.environ.items() if k != settings.ENV_VAR}
    env.update(env_extra)
    out = subprocess.run([sys.executable, "-c", "import sys; print('\\n'.join(sorted(sys.modules)))"],
                         env=env, capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_arming_loads_nothing_until_tensorflow_is_imported():
    plain = _modules_after_start({"PYTHONPATH": os.environ.get("PYTHONPATH", "")})
    armed = _modules_after_start({"PYTHONPATH": settings.ARMED_DIR,
                                  settings.ENV_VAR: '{"dir": "/nonexistent"}'})
    assert armed - plain <= {"sitecustomize"}
    assert not any(m.startswith(("google", "tfprof_shell.record")) for m in armed)


def test_arming_costs_well_under_10_ms():
    env = {k: v for k, v in os.environ.items() if k != settings.ENV_VAR}
    env.update(PYTHONPATH=settings.ARMED_DIR, TFPROF_RECORD='{"dir": "/nonexistent"}')
    best = None
    for _ in range(5):
        err = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], env=env,
                             capture_output=True, text=True, check=True).stderr
        # "import time: self | cumulative | name": ours is the top-level sitecustomize
        rows = [line.split("|") for line in err.splitlines() if line.endswith("|   sitecustomize")]
        micros = int(rows[0][1])
        best = micros if best is None else min(best, micros)
    assert best < 10_000, "arming took %d us" % best


def test_a_broken_tensorflow_never_breaks_the_program(tmp_path, fake_tf):
    prog = script(tmp_path, "uses_tf.py", """
        import sys
        before = "tfprof_shell.record.hooks" in sys.modules
        import tensorflow
        after = "tfprof_shell.record.hooks" in sys.modules
        print(before, after, tensorflow.FAKE)
        sys.exit(6)
        """)
    run = launch(["-o", "rec", "--", sys.executable, prog], tmp_path, fake_tf)
    assert run.returncode == 6
    assert run.stdout == "False True True\n"
    lines = run.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("tfprof record: stopped recording in process ")
    assert "(arming: ModuleNotFoundError" in lines[0]
    assert lines[1].startswith("tfprof record: nothing recorded: 1 process imported TensorFlow")


def test_bad_settings_in_the_environment_say_so_once(tmp_path, fake_tf):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([settings.ARMED_DIR, fake_tf, ROOT]))
    env[settings.ENV_VAR] = "not json"
    run = subprocess.run([sys.executable, "-c", "import tensorflow; print('ok')"], env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout == "ok\n"
    assert run.stderr == "tfprof record: not recording: TFPROF_RECORD is not JSON settings\n"


# -- settings, layout, identity, step choice, manifest ----------------------------------------
def test_settings_round_trip_and_validation():
    s = settings.Settings(dir="/x", warmup=0, every=2, max_steps=7, python_tracer=True, job="j")
    assert settings.decode(settings.encode(s)) == s
    assert settings.encode(settings.Settings(dir="/x")) == '{"dir":"/x"}'
    assert settings.decode('{"dir": "/x", "from_the_future": 1}') == settings.Settings(dir="/x")
    for bad in ('{"warmup": 1}', '{"dir": "/x", "every": 0}', '{"dir": "/x", "warmup": true}',
                '[1]'):
        with pytest.raises(ValueError):
            settings.decode(bad)
    assert settings.is_off("OFF") and settings.is_off(" ") and not settings.is_off("{}")


def test_armed_pythonpath_puts_the_armed_folder_first_once():
    joined = os.pathsep.join(["/a", settings.ARMED_DIR, "/b"])
    assert settings.armed_pythonpath(joined).split(os.pathsep) == [settings.ARMED_DIR, "/a", "/b"]
    assert settings.armed_pythonpath("") == settings.ARMED_DIR


def test_folder_names_and_run_meta_names():
    assert layout.folder_name("train", "node-1", 3, 42) == "train.node-1.3.pid42"
    assert layout.folder_name("my job!", "", None, 7) == "my_job.host.pid7"
    assert layout.step_of_run_meta(layout.run_meta_name(12)) == 12
    assert layout.step_of_run_meta("run_meta_1.tmp5") is None


@pytest.mark.parametrize("environ,job,rank", [
    ({"TF_CONFIG": '{"task": {"type": "worker", "index": 2}}'}, "worker", 2),
    ({"OMPI_COMM_WORLD_RANK": "5", "RANK": "9"}, "train", 5),
    ({"SLURM_PROCID": "3"}, "train", 3),
    ({"RANK": "1"}, "train", 1),
    ({"TF_CONFIG": "not json"}, "train", None),
])
def test_identity_from_the_launchers_variables(environ, job, rank):
    found = identify(settings.Settings(dir="/x"), environ, ["/path/train.py"])
    assert (found[0], found[2]) == (job, rank)
    assert identify(settings.Settings(dir="/x", job="mine"), environ, ["x.py"])[0] == "mine"


def test_step_plan():
    plan = StepPlan(settings.Settings(dir="/x", warmup=3, every=2, max_steps=3))
    assert [s for s in range(12) if plan.wants(s)] == [3, 5, 7] and plan.last() == 7


def test_the_dominant_call_is_the_step_and_stays_so():
    dom = Dominant()
    assert [dom.step_of("init") for _ in range(3)] == [0, 1, 2]
    got = []
    for i in range(20):
        got.append(dom.step_of("train"))
        if i % 5 == 0:
            assert dom.step_of("eval") is None  # rare: never a step while train dominates
    assert got[-1] == 19
    dom.lock("train")
    assert [dom.step_of("eval") for _ in range(30)] == [None] * 30
    assert dom.step_of("train") == 20


def test_summary_lines():
    procs = [{"folder": "a", "steps": [3, 4]}, {"folder": "b", "steps": [5]}]
    assert manifest.summary("/o", procs, 10) == ("recorded 3 steps in 2 processes; open it with: "
                                                 "tfprof --profile_path=/o")
    few = [{"folder": None, "steps": [], "steps_seen": 4, "notes": [],
            "frameworks": {"tensorflow": "2.21.0"}}]
    assert manifest.summary("/o", few, 10) == (
        "nothing recorded: 1 process imported TensorFlow, the most frequent training call "
        "ran 4 times and tracing starts after --warmup 10")


def test_collect_processes_prefers_process_folders(tmp_path):
    status = tmp_path / "status"
    status.mkdir()
    (status / "1.json").write_text(json.dumps({"pid": 1, "host": "h", "rank": 1, "steps": []}))
    (status / "2.json").write_text(json.dumps({"pid": 2, "host": "h", "rank": 0, "steps": [1]}))
    folder = tmp_path / "out" / "job.h.0.pid2"
    folder.mkdir(parents=True)
    (folder / layout.PROCESS).write_text(json.dumps({"pid": 2, "host": "h", "rank": 0,
                                                     "steps": [1, 2]}))
    found = manifest.collect_processes(str(tmp_path / "out"), str(status))
    assert [(p["pid"], p.get("folder"), p["steps"]) for p in found] == \
        [(2, "job.h.0.pid2", [1, 2]), (1, None, [])]
