"""`tfprof capture`, `tfprof top` and the shell's `capture` against an in-process fake profiler service.

The fake (tests/profiler_fake.py) serves a real XSpace file's bytes and
behaves as the TensorFlow 2.21 / JAX 0.10 servers were measured to; no
TensorFlow is needed. Each error the issue lists has its own test.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("grpc")

from conftest import ROOT, run_cli  # noqa: E402
from profiler_fake import SAMPLE, FakeProfiler, Served  # noqa: E402

from tfprof_shell.capture import flags as F  # noqa: E402
from tfprof_shell.capture.client import parse_target  # noqa: E402


@pytest.fixture
def served():
    started = []

    def start(fake=None, **kwargs):
        s = Served(fake if fake is not None else FakeProfiler(**kwargs))
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def _files(folder):
    return sorted(os.path.relpath(os.path.join(d, f), folder)
                  for d, _, names in os.walk(folder) for f in names)


def _one_error(run):
    """The one error line of a failed run (progress lines aside)."""
    lines = [line for line in run.err.strip().splitlines()
             if not line.startswith("tfprof capture: capturing ")]
    assert run.code != 0 and len(lines) == 1 and "Traceback" not in run.err, run.err
    return lines[0]


# -- a capture ---------------------------------------------------------------

def test_capture_writes_the_xspace_and_runs_a_command_on_it(served, tmp_path):
    s = served()
    out = tmp_path / "cap"
    run = run_cli(["capture", s.address, "--duration", "0.3", "-o", str(out), "--run", "r1",
                   "op", "-max_depth", "5"])
    assert run.code == 0, run.err
    assert _files(out) == ["plugins/profile/r1/localhost_%d.xplane.pb" % s.port]
    written = out / "plugins" / "profile" / "r1" / ("localhost_%d.xplane.pb" % s.port)
    with open(SAMPLE, "rb") as fh:
        assert written.read_bytes() == fh.read()
    # the view is the one tfprof shows for the same file
    assert run.out == run_cli(["--profile_path", str(written), "op", "-max_depth", "5"]).out
    probe, req = s.fake.requests
    assert probe.opts.duration_ms == 1 and req.opts.duration_ms == 300 == req.duration_ms
    assert req.emit_xspace and req.opts.version == 1 and req.session_id == "r1"
    assert req.repository_root.startswith("/dev/null/")  # a misjudged old server fails, never writes
    assert (req.opts.host_tracer_level, req.opts.device_tracer_level,
            req.opts.python_tracer_level) == (2, 1, 0)
    assert "capturing 0.3 s from %s" % s.address in run.err


def test_capture_flags_reach_the_request(served, tmp_path):
    s = served()
    before = time.time_ns()
    run = run_cli(["capture", "grpc://" + s.address, "--duration", "0.2", "--delay", "0.3",
                   "--python_tracer", "--host_tracer_level", "3", "--device_tracer_level", "0",
                   "--no-shell", "-o", str(tmp_path / "c")])
    assert run.code == 0, run.err
    assert run.out == str(tmp_path / "c") + "\n"
    probe, req = s.fake.requests
    assert (req.opts.host_tracer_level, req.opts.device_tracer_level,
            req.opts.python_tracer_level) == (3, 0, 1)
    assert probe.opts.python_tracer_level == 0  # the probe never waits on the target's GIL
    assert req.opts.start_timestamp_ns >= before + 300_000_000


def test_multi_host_capture_gives_one_profile_per_host(served, tmp_path):
    a, b = served(), served()
    run = run_cli(["capture", "%s,%s" % (a.address, b.address), "--duration", "0.5",
                   "-o", str(tmp_path / "c"), "--run", "r", "profiles"])
    assert run.code == 0, run.err
    (a_start, a_end), (b_start, b_end) = a.fake.spans[-1], b.fake.spans[-1]
    assert max(a_start, b_start) < min(a_end, b_end)  # at the same time, not one after the other
    assert _files(tmp_path / "c") == sorted("plugins/profile/r/localhost_%d.xplane.pb" % s.port
                                            for s in (a, b))
    assert "localhost_%d" % a.port in run.out and "localhost_%d" % b.port in run.out


def test_shell_capture_loads_beside_the_others(served, tmp_path):
    s = served()
    lines = ("capture live %s --duration 0.2 -o %s\nprofiles\nop -base live -max_depth 3\n"
             "capture live %s\ncapture ../x %s\n" % (s.address, tmp_path / "c", s.address,
                                                     s.address))
    run = run_cli(["--profile_path", SAMPLE], stdin=lines)
    assert run.code == 0, run.err
    assert "live" in run.out and "captured %s into" % s.address in run.err
    assert "a profile named live is already loaded" in run.err
    assert len(s.fake.requests) == 2  # the refused lines never reached the server
    assert "Traceback" not in run.err


def test_shell_capture_of_two_hosts_loads_one_profile_each(served, tmp_path):
    a, b = served(), served()
    lines = ("capture live %s,%s --duration 0.2 -o %s\nprofiles\nop -profiles all\n"
             % (a.address, b.address, tmp_path / "c"))
    run = run_cli(["--profile_path", SAMPLE], stdin=lines)
    assert run.code == 0, run.err
    for s in (a, b):
        assert "live.localhost_%d" % s.port in run.out
    assert "Traceback" not in run.err


def test_capture_help_lists_every_flag_of_the_table():
    run = run_cli(["capture", "--help"])
    assert run.code == 0
    for flag in F.flags_for(F.CAPTURE):
        assert flag.name in run.out
    assert "ssh -L" in run.out


# -- continuous profiling: tfprof top ----------------------------------------

def test_top_redraws_two_snapshots_and_stops_the_session(served, tmp_path):
    s = served()
    keep = tmp_path / "keep"
    run = run_cli(["top", s.address, "--interval", "0.2", "--iterations", "2",
                   "--keep", str(keep), "scope", "-max_depth", "2"])
    assert run.code == 0, run.err
    assert run.out.count("tfprof top %s   snapshot" % s.address) == 2
    assert "snapshot 2" in run.out and "_TFProfRoot" in run.out
    assert s.fake.snapshots == 2 and s.fake.stopped == 1
    assert len(_files(keep)) == 2


def test_top_on_a_server_without_continuous_profiling(served):
    s = served(old=True)
    line = _one_error(run_cli(["top", s.address, "--iterations", "1"]))
    assert "no continuous profiling" in line


def test_top_checks_the_command_before_connecting():
    line = _one_error(run_cli(["top", "localhost:1", "opp"]))
    assert "unknown command 'opp'" in line


# -- Ctrl-C --------------------------------------------------------------------

def _spawn(args, cwd, **popen):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "tfprof_shell"] + args, cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def _until(predicate, seconds=20.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_ctrl_c_terminates_the_capture_and_keeps_the_trace(served, tmp_path):
    s = served()
    proc = _spawn(["capture", s.address, "--duration", "60", "--no-shell", "-o", "c",
                   "--run", "r"], str(tmp_path))
    assert _until(lambda: len(s.fake.requests) == 2)
    time.sleep(0.3)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert time.monotonic() - t0 < 10
    assert s.fake.terminated == ["r"] and "stopping early" in err
    assert _files(tmp_path / "c") == ["plugins/profile/r/localhost_%d.xplane.pb" % s.port]


def test_ctrl_c_ends_top_and_its_session(served, tmp_path):
    s = served()
    proc = _spawn(["top", s.address, "--interval", "0.2"], str(tmp_path))
    assert _until(lambda: s.fake.snapshots >= 1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert s.fake.stopped == 1 and "Traceback" not in err


def test_ctrl_c_ends_top_even_when_started_with_sigint_ignored(served, tmp_path):
    # top handles Ctrl-C itself (a flag checked between calls, so it never breaks into an
    # import or a gRPC call: once it hung in the import lock that way), so it stops even when
    # started, as a background job of a non-interactive shell is, with SIGINT ignored.
    s = served()
    proc = _spawn(["top", s.address, "--interval", "0.2"], str(tmp_path),
                  preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert _until(lambda: s.fake.snapshots >= 2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert s.fake.stopped == 1 and "Traceback" not in err


# -- errors: one line, non-zero, no traceback ------------------------------------

def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_connection_refused_fails_fast(tmp_path):
    t0 = time.monotonic()
    line = _one_error(run_cli(["capture", "localhost:%d" % _free_port(), "-o",
                               str(tmp_path / "c")]))
    assert "connection refused" in line and time.monotonic() - t0 < 5
    assert not (tmp_path / "c").exists()


def test_a_listener_that_never_answers_hits_the_deadline(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(5)
        t0 = time.monotonic()
        line = _one_error(run_cli(["capture", "127.0.0.1:%d" % sock.getsockname()[1],
                                   "--timeout", "0.5", "-o", str(tmp_path / "c")]))
    assert "no answer within 0.5 s" in line and time.monotonic() - t0 < 5


def test_an_http1_server_is_not_a_profiler_service(tmp_path):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(5)

    def answer():
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            conn.close()

    threading.Thread(target=answer, daemon=True).start()
    try:
        line = _one_error(run_cli(["capture", "127.0.0.1:%d" % sock.getsockname()[1],
                                   "-o", str(tmp_path / "c")]))
    finally:
        sock.close()
    assert "not a profiler service" in line


def test_a_grpc_server_without_the_service(served, tmp_path):
    s = Served(None)
    try:
        line = _one_error(run_cli(["capture", s.address, "-o", str(tmp_path / "c")]))
    finally:
        s.stop()
    assert "not a profiler service" in line


def test_another_profiling_session_active(served, tmp_path):
    s = served()
    first = threading.Thread(target=run_cli, args=(["capture", s.address, "--duration", "2",
                                                    "--no-shell", "-o",
                                                    str(tmp_path / "a")],))
    first.start()
    assert _until(lambda: len(s.fake.requests) == 2)
    line = _one_error(run_cli(["capture", s.address, "-o", str(tmp_path / "b")]))
    first.join()
    assert "another profiling session is active" in line
    assert (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_an_idle_target_is_retried_then_reported(served, tmp_path):
    s = served(empty_first=3)
    line = _one_error(run_cli(["capture", s.address, "--duration", "0.1", "-o",
                               str(tmp_path / "c")]))
    assert "empty trace 3 times" in line and len(s.fake.requests) == 4  # probe + 3 attempts
    s2 = served(empty_first=2)
    run = run_cli(["capture", s2.address, "--duration", "0.1", "--no-shell", "-o",
                   str(tmp_path / "d")])
    assert run.code == 0 and "(attempt 3)" in run.err


def test_the_target_exits_mid_capture(tmp_path):
    port_file = tmp_path / "port"
    fake = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "profiler_fake.py"),
                             str(port_file), "--exit-after", "0.5"])
    try:
        assert _until(port_file.exists)
        line = _one_error(run_cli(["capture", "localhost:%s" % port_file.read_text(),
                                   "--duration", "10", "-o", str(tmp_path / "c")]))
    finally:
        fake.kill()
        fake.wait()
    assert "exited" in line and "during the capture" in line


def test_a_response_over_max_size(served, tmp_path):
    s = served(pad_to=3 << 20)
    line = _one_error(run_cli(["capture", s.address, "--duration", "0.1", "--max_size", "1M",
                               "-o", str(tmp_path / "c")]))
    assert "over --max_size 1048576 bytes" in line and "3145" in line


def test_names_with_separators_or_dot_dot_are_refused(tmp_path):
    for bad in ("../x", "a/b", ".."):
        line = _one_error(run_cli(["capture", "localhost:1", "--run", bad]))
        assert "no path separators" in line


def test_bad_addresses_and_values():
    assert "is not an address" in _one_error(run_cli(["capture", "localhost"]))
    assert "is not a size" in _one_error(run_cli(["capture", "h:1", "--max_size", "lots"]))
    assert "between" in _one_error(run_cli(["capture", "h:1", "--duration", "0"]))
    assert "no address" in _one_error(run_cli(["capture", "--duration", "1"]))
    assert "not an option of tfprof top" in _one_error(run_cli(["top", "h:1", "--duration",
                                                                "1"]))


def test_without_grpcio_one_line_says_how_to_install():
    code = ("import sys; sys.modules['grpc'] = None\n"
            "from tfprof_shell.cli import main\n"
            "sys.exit(main(['capture', 'localhost:1']))")
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr == ("tfprof capture: live capture needs grpcio: "
                           "pip install 'tfprof-shell[capture]'\n")


# -- servers before TensorFlow 2.21 ------------------------------------------------

def test_an_old_server_is_detected_without_writing(served, tmp_path):
    s = served(old=True)
    line = _one_error(run_cli(["capture", s.address, "-o", str(tmp_path / "c")]))
    assert "writes captures on its own disk" in line and "--server_logdir" in line
    assert s.fake.written == []


def test_an_old_server_writes_to_server_logdir_and_it_is_read_back(served, tmp_path):
    s = served(old=True)
    shared = tmp_path / "shared"
    shared.mkdir()
    run = run_cli(["capture", s.address, "--duration", "0.1", "--server_logdir", str(shared),
                   "--run", "r", "-o", str(tmp_path / "c"), "op"])
    assert run.code == 0, run.err
    assert s.fake.written == [str(shared / "r" / ("localhost_%d.xplane.pb" % s.port))]
    assert not s.fake.requests[-1].emit_xspace
    assert (tmp_path / "c" / "plugins" / "profile" / "r"
            / ("localhost_%d.xplane.pb" % s.port)).read_bytes() == open(SAMPLE, "rb").read()


# -- units ----------------------------------------------------------------------------

@pytest.mark.parametrize("text,size", [("123", 123), ("64M", 64 << 20), ("1.5k", 1536),
                                       ("2GiB", 2 ** 31 - 1), ("9G", 2 ** 31 - 1)])
def test_sizes(text, size):
    assert F.parse_size(text) == size


def test_targets():
    t = parse_target("grpc://[::1]:6009")
    assert (t.host, t.port, t.dial, t.is_loopback()) == ("::1", 6009, "[::1]:6009", True)
    assert not parse_target("10.0.0.5:6009").is_loopback()
    assert parse_target("worker-1.example:6009").file_stem == "worker-1.example_6009"


def _outside_address():
    """This machine's address on its main interface (no packet is sent), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("10.255.255.255", 9))
            address = sock.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_a_remote_plaintext_target_gets_a_note(tmp_path):
    address = _outside_address()
    if address is None:
        pytest.skip("no network interface besides loopback")
    s = Served(FakeProfiler(), host="0.0.0.0")
    try:
        run = run_cli(["capture", "%s:%d" % (address, s.port), "--duration", "0.1",
                       "--no-shell", "-o", str(tmp_path / "c")])
        local = run_cli(["capture", s.address, "--duration", "0.1", "--no-shell", "-o",
                         str(tmp_path / "d")])
    finally:
        s.stop()
    assert run.code == 0 and local.code == 0, run.err + local.err
    assert "plaintext, unauthenticated gRPC" in run.err and "ssh -L" in run.err
    assert "plaintext" not in local.err.replace(str(tmp_path), "")


# -- tfprof record --serve, with a stand-in framework -----------------------------

_FAKE_JAX_PROFILER = '''
import sys
sys.path.insert(0, {tests!r})
from profiler_fake import FakeProfiler, Served

def start_server(port, requires_backend=True):
    assert requires_backend is False
    return Served(FakeProfiler(), port=port)
'''


def test_record_serve_starts_the_server_when_the_framework_is_imported(tmp_path):
    """A stand-in `jax` whose profiler.start_server serves the fake: the program, unchanged,
    imports it and sleeps; a capture reaches it; nothing is written before."""
    fake = tmp_path / "frameworks" / "jax"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "profiler.py").write_text(_FAKE_JAX_PROFILER.format(tests=os.path.join(ROOT,
                                                                                   "tests")))
    program = tmp_path / "train.py"
    program.write_text("import subprocess, sys, time, jax\n"
                       "subprocess.run([sys.executable, '-c', 'import jax'])  # a second process\n"
                       "print('training', flush=True)\ntime.sleep(600)\n")
    port = _free_port()
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, str(tmp_path / "frameworks")]))
    proc = subprocess.Popen([sys.executable, "-m", "tfprof_shell", "record", "--serve",
                             str(port), "--", sys.executable, str(program)], cwd=str(work),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "training\n"
        assert os.listdir(work) == []
        run = run_cli(["capture", "localhost:%d" % port, "--duration", "0.2", "--no-shell",
                       "-o", str(tmp_path / "c")])
        assert run.code == 0, run.err
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert "jax profiler server on port %d" % port in err
    assert "port %d is taken (another process serves it)" % port in err
    assert len(_files(tmp_path / "c")) == 1


def test_record_serve_needs_a_port():
    from tfprof_shell.record.launcher import main as record_main
    import io
    err = io.StringIO()
    assert record_main(["--serve", "http", "--", "true"], stderr=err) == 2
    assert err.getvalue() == "tfprof record: --serve: 'http' is not a port (1-65535)\n"


# -- TLS (TF Serving with --ssl_config_file) ------------------------------------------

def test_ssl_with_a_ca_file(tmp_path):
    import grpc
    import shutil
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost"], check=True, capture_output=True)
    creds = grpc.ssl_server_credentials([(key.read_bytes(), cert.read_bytes())])
    secure, plain = Served(FakeProfiler(), credentials=creds), Served(FakeProfiler())
    try:
        run = run_cli(["capture", secure.address, "--ssl", str(cert), "--duration", "0.1",
                       "--no-shell", "-o", str(tmp_path / "c")])
        assert run.code == 0, run.err
        assert len(_files(tmp_path / "c")) == 1
        line = _one_error(run_cli(["capture", plain.address, "--ssl", str(cert), "-o",
                                   str(tmp_path / "d")]))
        assert "TLS handshake failed" in line
        line = _one_error(run_cli(["capture", secure.address, "-o", str(tmp_path / "e")]))
        assert secure.address in line  # plaintext to a TLS port: refused in one line
    finally:
        secure.stop()
        plain.stop()
    line = _one_error(run_cli(["capture", "localhost:1", "--ssl", str(tmp_path / "none.pem")]))
    assert "--ssl" in line and "No such file" in line


# -- tfprof top in a terminal -----------------------------------------------------------

def test_top_in_a_terminal_redraws_in_place_and_quits_on_q(served, tmp_path):
    pexpect = pytest.importorskip("pexpect")
    s = served()
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TERM="xterm")
    child = pexpect.spawn(sys.executable, ["-m", "tfprof_shell", "top", s.address,
                                           "--interval", "0.3"],
                          env=env, cwd=str(tmp_path), dimensions=(30, 120), encoding="utf-8",
                          timeout=30)
    try:
        child.expect(r"\x1b\[H\x1b\[2Jtfprof top \S+   snapshot 1 .* q quits")
        child.expect(r"snapshot 2 ")
        child.send("q")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert s.fake.stopped == 1 and s.fake.snapshots >= 2


def test_capture_into_a_log_folder_with_other_runs_opens_the_new_one(served, tmp_path):
    s = served()
    old_run = tmp_path / "c" / "plugins" / "profile" / "9999_12_31_23_59_59"
    old_run.mkdir(parents=True)
    (old_run / "other.xplane.pb").write_bytes(b"")  # newer by name, and broken
    run = run_cli(["capture", s.address, "--duration", "0.1", "-o", str(tmp_path / "c"),
                   "--run", "a_run", "profiles"])
    assert run.code == 0, run.err
    assert "a_run" in run.out and "other" not in run.out


def test_an_output_folder_that_cannot_be_written(served, tmp_path):
    s = served()
    blocker = tmp_path / "file"
    blocker.write_text("")
    line = _one_error(run_cli(["capture", s.address, "--duration", "0.1", "-o",
                               str(blocker / "c")]))
    assert "cannot write" in line and "is not a writable folder" in line
    assert s.fake.requests == []  # told before capturing
