"""Loading several profiles at once: a process pool and a Dask cluster answer as
loading each profile here does, and a bad or lost job is one clear error."""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import sample
from tfprof_shell.errors import LoadError, UsageError, UserError
from tfprof_shell.load import Inputs, load_model
from tfprof_shell.load import parallel
from tfprof_shell.load.parallel import LoadedJob, load_many
from tfprof_shell.model import Model
from tfprof_shell.session import Session

JOBS = [
    ("mlp", Inputs(profile_path=sample("tiny_mlp", "profile"))),
    ("gpu", Inputs(graph_path=sample("synthetic_gpu", "graph.pb"),
                   run_meta_paths=tuple(sample("synthetic_gpu", "run_meta_%d" % i)
                                        for i in range(3)))),
    ("tf2", Inputs(profile_path=sample("tf2", "custom_loop_py"))),
    ("hook", Inputs(profile_path=sample("timeline", "mlp"))),
]
LINES = ["%s -max_depth 100000 -select micros,bytes,occurrence,device,input_shapes "
         "-order_by micros%s" % (view, extra)
         for view in ("scope", "graph", "op") for extra in ("", " -output json")]


def outputs(model: Model) -> list[str]:
    session = Session(model)
    return [session.execute("%s -step %d" % (line, step)).text
            for step in [-1] + model.steps for line in LINES]


@pytest.fixture(scope="module")
def here() -> dict[str, tuple[list[str], tuple[str, ...]]]:
    """Each job loaded in this process: its view outputs and notes."""
    return {name: (outputs(load_model(inputs)), tuple(load_model(inputs).notes))
            for name, inputs in JOBS}


def assert_same(loaded: list[LoadedJob], here) -> None:
    assert [job.name for job in loaded] == [name for name, _ in JOBS]
    for job in loaded:
        assert outputs(job.model) == here[job.name][0], job.name
        assert job.notes == here[job.name][1] == tuple(job.model.notes)
    assert any(job.notes for job in loaded)


def test_the_pool_answers_as_loading_here(here):
    loaded = load_many(JOBS, workers=2)
    assert_same(loaded, here)
    # Detailed records (the accelerator advice) come from a reload of the same inputs.
    gpu = loaded[1].model
    assert Session(gpu).execute("advise").text == Session(load_model(JOBS[1][1])).execute(
        "advise").text


def test_one_worker_or_one_job_loads_here_in_full(here, monkeypatch):
    # Neither processes nor summaries: calling these would fail.
    monkeypatch.setattr(parallel, "_load_in_processes", None)
    monkeypatch.setattr(parallel, "unpack_model", None)
    assert_same(load_many(JOBS, workers=1), here)
    assert [job.name for job in load_many(JOBS[:1], workers=4)] == ["mlp"]


def test_relative_paths_follow_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(sample("tiny_mlp"))
    loaded = load_many([("a", Inputs(profile_path="profile")),
                        ("b", Inputs(graph_path="graph.pbtxt",
                                     run_meta_paths=("run_meta_0", "run_meta_1")))], workers=2)
    assert [len(job.model.nodes) for job in loaded] == [126, 126]


def test_reloads_and_dask_jobs_get_absolute_paths(tmp_path):
    absolute = parallel._absolute(Inputs(profile_path="a,/b", graph_path="g",
                                         run_meta_paths=("r0", "/r1"), op_log_path="o"), "/w")
    assert absolute == Inputs(profile_path="/w/a,/b", graph_path="/w/g",
                              run_meta_paths=("/w/r0", "/r1"), op_log_path="/w/o")
    (tmp_path / "x,y").write_bytes(b"")  # a name with a comma is one path
    assert parallel._absolute(Inputs(profile_path="x,y"), str(tmp_path)).profile_path == str(
        tmp_path / "x,y")


@pytest.mark.parametrize("workers", [1, 2])
def test_a_bad_file_is_its_own_error_naming_the_profile(tmp_path, workers):
    bad = tmp_path / "broken.pb"
    bad.write_bytes(b"\x08\x96\x01 not a profile")
    here = pytest.raises(LoadError, load_model, Inputs(profile_path=str(bad))).value
    with pytest.raises(LoadError) as err:
        load_many(JOBS[:2] + [("broken", Inputs(profile_path=str(bad)))], workers=workers)
    assert err.value.message == "profile broken: " + here.message
    assert err.value.exit_code == here.exit_code


@pytest.mark.parametrize("workers", [1, 2])
def test_a_usage_error_keeps_its_kind_and_exit_status(workers):
    inputs = Inputs(graph_path=sample("tiny_mlp", "graph.pbtxt"), run="latest")
    with pytest.raises(UsageError) as err:
        load_many([JOBS[0], ("odd", inputs)], workers=workers)
    assert err.value.message == "profile odd: --run and --host need --profile_path " \
                                "(a TF2 log directory)"
    assert err.value.exit_code == 2


def test_one_job_keeps_the_loader_message():
    with pytest.raises(LoadError, match=r"^--profile_path /nonexistent: no such file$"):
        load_many([("x", Inputs(profile_path="/nonexistent"))], workers=2)


def _fifo(tmp_path) -> str:
    path = str(tmp_path / "never_written")
    os.mkfifo(path)
    return path


def _children() -> list:
    return [p for p in multiprocessing.active_children() if p.name.startswith("tfprof-load")]


def _when_loading(index: int, action) -> threading.Thread:
    """Run ``action(process)`` once the process loading job ``index`` is up."""
    def watch() -> None:
        for _ in range(500):
            kids = [p for p in _children() if p.name == "tfprof-load-%d" % index and p.pid]
            if kids:
                time.sleep(0.3)  # let it reach the read of its FIFO
                action(kids[0])
                return
            time.sleep(0.02)
    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_killed_worker_is_one_clear_error(tmp_path):
    stuck = ("stuck", Inputs(run_meta_paths=(_fifo(tmp_path),)))
    thread = _when_loading(1, lambda child: os.kill(child.pid, signal.SIGKILL))
    with pytest.raises(LoadError, match=r"^profile stuck: the process loading it was killed "
                                        r"\(SIGKILL; out of memory\?\)$"):
        load_many([JOBS[0], stuck], workers=2)
    thread.join()
    assert _children() == []


CTRL_C = """
import faulthandler, multiprocessing, sys, threading, time
from tfprof_shell.load import Inputs

# Should this ever hang (it did once in a full test run, never alone), say where.
faulthandler.dump_traceback_later(40, exit=True)
from tfprof_shell.load.parallel import load_many

def ready():
    while not any(p.name == "tfprof-load-1" for p in multiprocessing.active_children()):
        time.sleep(0.02)
    time.sleep(0.3)
    print("ready", flush=True)

if __name__ == "__main__":
    threading.Thread(target=ready, daemon=True).start()
    try:
        load_many([(p, Inputs(run_meta_paths=(p,))) for p in sys.argv[1:]], workers=2)
    except KeyboardInterrupt:
        print("interrupted", len(multiprocessing.active_children()), flush=True)
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_ctrl_c_cancels_the_pool_quietly(tmp_path):
    """Ctrl-C at a terminal reaches the whole process group: the loaders stop, silently."""
    script = tmp_path / "load.py"
    script.write_text(CTRL_C)
    fifos = []
    for d in "ab":
        (tmp_path / d).mkdir()
        fifos.append(_fifo(tmp_path / d))
    proc = subprocess.Popen([sys.executable, str(script)] + fifos, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert out == "interrupted 0\n", err
    assert err == ""


def test_a_worker_bug_shows_its_traceback():
    result = parallel.load_summary(Inputs(profile_path=123))  # type: ignore[arg-type]
    assert result[0] == parallel.BUG and "Traceback" in result[1]
    with pytest.raises(RuntimeError, match="loading profile p failed in a worker process"):
        parallel._finish("p", JOBS[0][1], result)


def test_bad_worker_counts_are_refused():
    with pytest.raises(ValueError):
        load_many(JOBS, workers=-1)


# -- Dask ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as local:
        yield local


def test_the_dask_route_answers_as_the_local_one(cluster, here):
    assert_same(load_many(JOBS, scheduler=cluster.scheduler_address), here)


def test_the_dask_route_reports_each_profile_done(cluster):
    heard = []

    class Heard:
        def begin(self, what, total, unit):
            heard.append(("begin", what, total, unit))

        def update(self, done):
            heard.append(("update", done))

        def end(self):
            heard.append(("end",))

    load_many(JOBS, scheduler=cluster.scheduler_address, progress=Heard())
    count = len(JOBS)
    assert heard == ([("begin", "%d profiles" % count, count, "profiles")]
                     + [("update", i) for i in range(1, count + 1)] + [("end",)])


def test_dask_errors_name_the_profile(cluster):
    with pytest.raises(LoadError, match=r"^profile gone: --profile_path /nonexistent/p: "
                                        r"no such file$"):
        load_many([JOBS[0], ("gone", Inputs(profile_path="/nonexistent/p"))],
                  scheduler=cluster.scheduler_address)


def _closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return "tcp://127.0.0.1:%d" % sock.getsockname()[1]


@pytest.mark.parametrize("address", ["closed", "no-port", "nonsense://x:1"])
def test_an_unreachable_scheduler_is_one_line(monkeypatch, address):
    pytest.importorskip("distributed")
    monkeypatch.setattr(parallel, "DASK_CONNECT_TIMEOUT", 1)
    address = _closed_port() if address == "closed" else address
    with pytest.raises(LoadError) as err:
        load_many(JOBS[:1], scheduler=address)
    assert err.value.message.startswith("cannot reach the Dask scheduler at %s: " % address)
    assert "\n" not in err.value.message


def test_without_distributed_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(UserError, match=r"pip install 'tfprof-shell\[dask\]'"):
        load_many(JOBS, scheduler="tcp://127.0.0.1:1")


def test_by_default_profile_files_go_to_the_pool_and_graphs_load_here(here):
    from tfprof_shell.model.summary import SummaryExecs

    def summarized(model: Model) -> bool:
        return any(isinstance(getattr(n._lazy, "source", None), SummaryExecs)
                   for n in model.nodes.values())

    loaded = load_many(JOBS, workers=0)
    assert_same(loaded, here)
    assert [summarized(job.model) for job in loaded] == [True, False, True, True]
