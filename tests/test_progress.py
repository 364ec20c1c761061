"""Progress of long loads: what loaders report, the terminal's bar, the web UI's loading page.

The bar in a real terminal (and none in a pipe) is tested in test_e2e_pty.py.
"""

from __future__ import annotations

import io
import os
import shutil
import time

import pytest

from conftest import run_cli, sample
from tfprof_shell.load import Inputs
from tfprof_shell.load.parallel import load_many
from tfprof_shell.load.progress import BYTES, PROFILES, Fanout
from tfprof_shell.progress_bar import DELAY, TerminalProgress, terminal_progress

TORCH = sample("torch_cnn", "worker0.1795426547943862326.pt.trace.json.gz")
RANKS = sample("torch_ranks")
TINY = sample("tiny_mlp", "profile")
XPLANE = sample("jax_gpt")


class Heard:
    """A Progress that writes down what it hears."""

    def __init__(self):
        self.calls = []

    def begin(self, what, total, unit):
        self.calls.append(("begin", what, total, unit))

    def update(self, done):
        self.calls.append(("update", done))

    def end(self):
        self.calls.append(("end",))

    def updates(self):
        return [c[1] for c in self.calls if c[0] == "update"]


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Terminal(io.StringIO):
    def isatty(self):
        return True


def _one(path, **kw):
    heard = Heard()
    load_many([("p", Inputs(profile_path=path))], progress=heard, **kw)
    return heard


# -- what the loaders report ----------------------------------------------------------

@pytest.mark.parametrize("path", [TORCH, TINY, XPLANE], ids=["pytorch", "profileproto", "xplane"])
def test_one_profile_reports_its_bytes_up_to_the_whole_file(path):
    heard = _one(path)
    first, last = heard.calls[0], heard.calls[-1]
    assert first[0] == "begin" and first[3] == BYTES
    total = first[2]
    if os.path.isfile(path):
        assert total == os.path.getsize(path) and first[1] == os.path.basename(path)
    done = heard.updates()
    assert done == sorted(done) and 0 < done[0] and done[-1] == total
    assert len(done) >= 2  # it moved before the end
    assert last == ("end",)


def test_several_profiles_loaded_here_report_profiles_and_the_share_of_each():
    heard = Heard()
    jobs = [("r%d" % i, Inputs(profile_path=TORCH)) for i in range(3)]
    load_many(jobs, workers=1, progress=heard)
    assert heard.calls[0] == ("begin", "3 profiles", 3, PROFILES)
    done = heard.updates()
    assert done == sorted(done) and done[-1] == 3
    assert {1, 2, 3} <= set(done)
    assert any(0 < d < 1 for d in done)  # the first profile's bytes, as a share of one
    assert heard.calls[-1] == ("end",)


def test_several_profiles_in_processes_report_each_one_done():
    heard = Heard()
    load_many([("a", Inputs(profile_path=TINY)), ("b", Inputs(profile_path=TORCH))],
              workers=2, progress=heard)
    assert heard.calls == [("begin", "2 profiles", 2, PROFILES), ("update", 1), ("update", 2),
                           ("end",)]


def test_a_failed_load_still_ends_its_progress(tmp_path):
    broken = tmp_path / "broken.pt.trace.json"
    broken.write_text('{"traceEvents": [')
    heard = Heard()
    with pytest.raises(Exception):
        load_many([("p", Inputs(profile_path=str(broken)))], progress=heard)
    assert heard.calls[-1] == ("end",)


def test_a_profile_read_again_by_a_command_reports_its_bytes_and_ends():
    from tfprof_shell.load import load_model
    from tfprof_shell.model.summary import pack_model, unpack_model
    from tfprof_shell.session import Session

    inputs = Inputs(profile_path=TINY)
    packed = unpack_model(pack_model(load_model(inputs)), lambda: load_model(inputs))
    session = Session(packed)
    heard = session.load_progress = Heard()
    session.execute("scope -max_depth 1")  # the summary answers: nothing is read
    assert heard.calls == [("end",)]
    heard.calls.clear()
    # A step's statistics need the full profile: it is read again, in the view's thread.
    reply = session.execute("scope -max_depth 1 -step %d" % packed.steps[0])
    assert "again in full" in reply.notes[-1]
    assert heard.calls[0] == ("begin", "profile", os.path.getsize(TINY), BYTES)
    assert heard.updates()[-1] == os.path.getsize(TINY) and heard.calls[-1] == ("end",)


def test_fanout_tells_every_listener_and_skips_none():
    a, b = Heard(), Heard()
    fan = Fanout(a, None, b)
    fan.begin("x", 10, BYTES)
    fan.update(4)
    fan.end()
    assert a.calls == b.calls == [("begin", "x", 10, BYTES), ("update", 4), ("end",)]


# -- the terminal's bar --------------------------------------------------------------

def _bar(columns=100):
    clock, out = Clock(), Terminal()
    return TerminalProgress(out, clock=clock, ticking=False, columns=columns), clock, out


def test_a_short_load_draws_nothing():
    bar, clock, out = _bar()
    bar.begin("trace.json", 50e6, BYTES)
    clock.now += 0.1
    bar.update(25e6)  # half done in 0.1 s: it will not take long
    clock.now += 0.1
    bar.update(50e6)
    bar.end()
    assert out.getvalue() == ""


def test_a_long_load_is_drawn_after_the_delay_and_erased_at_the_end():
    bar, clock, out = _bar()
    bar.begin("trace.json", 200e6, BYTES)
    clock.now += DELAY / 2
    bar.update(10e6)  # 5 % in half the delay: 10 s in all
    text = out.getvalue()
    assert text.startswith("\rtfprof: loading trace.json [#...................] 5%  "
                           "10/200 MB  20 MB/s  10s left"), text
    clock.now += DELAY * 2
    bar.update(100e6)
    assert out.getvalue().endswith("[##########..........] 50%  100/200 MB  40 MB/s  "
                                   "2s left\x1b[K")
    bar.end()
    assert out.getvalue().endswith("\r\x1b[K")


def test_the_bar_waits_for_the_delay_when_the_rate_is_unknown():
    bar, clock, out = _bar()
    bar.begin("3 profiles", 3, PROFILES)
    clock.now += DELAY / 2
    bar.update(0)
    assert out.getvalue() == ""
    clock.now += DELAY
    bar.update(1)
    assert "loading 3 profiles [#######.............] 33%  1/3 profiles  0.7/s  3s left" \
        in out.getvalue()


def test_the_line_fits_the_terminal_by_shortening_the_name():
    bar, clock, out = _bar(columns=70)
    bar.begin("a_very_long_trace_file_name_from_a_cluster_job.pt.trace.json", 10e6, BYTES)
    clock.now += DELAY
    bar.update(5e6)
    line = out.getvalue().split("\r")[-1].replace("\x1b[K", "")
    assert len(line) <= 69 and line.startswith("tfprof: loading ...") and "50%" in line


def test_a_bar_only_for_a_terminal_that_allows_one():
    assert terminal_progress(io.StringIO(), {}) is None
    assert isinstance(terminal_progress(Terminal(), {}), TerminalProgress)
    for off in ("0", "off", "NO"):
        assert terminal_progress(Terminal(), {"TFPROF_PROGRESS": off}) is None


def test_the_redraw_thread_keeps_the_time_left_counting(monkeypatch):
    import tfprof_shell.progress_bar as pb
    monkeypatch.setattr(pb, "INTERVAL", 0.01)
    clock, out = Clock(), Terminal()
    bar = TerminalProgress(out, clock=clock, columns=100)
    bar.begin("t", 100, PROFILES)
    clock.now += DELAY
    bar.update(10)  # 10 % in 1 s: 10 s in all
    clock.now += 5  # no update since: 4 s left
    for _ in range(500):
        if "4s left" in out.getvalue():
            break
        time.sleep(0.01)
    bar.end()
    assert "9s left" in out.getvalue() and "4s left" in out.getvalue()


def test_the_cli_draws_no_bar_into_captured_streams(tmp_path):
    for i in range(3):
        shutil.copy(TORCH, tmp_path / ("rank%d.1.pt.trace.json.gz" % i))
    run = run_cli(["--profile_path=%s" % tmp_path, "--jobs", "1", "profiles"])
    assert run.code == 0 and "\r" not in run.err and "loading" not in run.err


# -- the web UI's loading page ----------------------------------------------------------

def test_the_page_shows_progress_until_the_profiles_are_loaded():
    from werkzeug.test import Client

    from tfprof_shell.cli import open_session, parse_invocation
    from tfprof_shell.ui import guard
    from tfprof_shell.ui.loading import LoadingState
    from tfprof_shell.ui.runner import LineRunner
    from tfprof_shell.ui.server import UiApp

    clock = Clock()
    loading = LoadingState(clock)
    app = UiApp(None, "tok", guard.allowed_hosts("127.0.0.1", 1), loading=loading)
    client = Client(app)
    client.set_cookie(guard.COOKIE, "tok", domain="127.0.0.1")
    host = {"Host": "127.0.0.1:1"}

    page = client.get("/", headers=host)
    assert page.status_code == 200 and b"/static/loading.js" in page.data
    assert client.get("/static/loading.js", headers=host).status_code == 200
    assert client.get("/api/state", headers=host).status_code == 503
    refused = client.post("/api/run", data='{"line": "scope"}', content_type="application/json",
                          headers=dict(host, Origin="http://127.0.0.1:1"))
    assert refused.status_code == 503 and "still loading" in refused.get_json()["error"]

    loading.begin("trace.json", 200, BYTES)
    clock.now += 2
    loading.update(50)
    clock.now += 1
    state = client.get("/api/progress", headers=host).get_json()
    assert state == {"what": "trace.json", "unit": BYTES, "done": 50, "total": 200,
                     "elapsed": 3, "left": 5, "ready": False, "error": None}
    assert loading.watched()

    session = open_session(parse_invocation(["--profile_path=" + TINY]), io.StringIO(),
                           loading)
    app.ready(LineRunner(session))
    assert client.get("/api/progress", headers=host).get_json()["ready"] is True
    assert b"/static/app.js" in client.get("/", headers=host).data
    assert client.get("/api/state", headers=host).status_code == 200


def test_a_failed_load_is_what_the_page_shows():
    from tfprof_shell.ui.loading import LoadingState
    loading = LoadingState()
    loading.fail("--profile_path x: not valid JSON")
    assert loading.snapshot()["error"] == "--profile_path x: not valid JSON"
    assert not loading.snapshot()["ready"]
