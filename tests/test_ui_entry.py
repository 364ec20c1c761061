"""The web UI's entry points: `tfprof ui`, the shell's `ui` command, Profile.ui()."""

from __future__ import annotations

import http.client
import io
import json
import sys

import pytest

from conftest import run_cli, sample
from tfprof_shell.cli import open_session, parse_invocation
from tfprof_shell.errors import UsageError
from tfprof_shell.ui import guard, require_server
from tfprof_shell.ui.launch import announce, ssh_hint
from tfprof_shell.ui.server import start_server

TINY = sample("tiny_mlp", "profile")


def session_for(argv):
    return open_session(parse_invocation(argv), io.StringIO())


def test_a_real_socket_serves_loopback_with_the_token():
    server = start_server(session_for(["--profile_path=" + TINY]), log=io.StringIO())
    try:
        assert server.url.startswith("http://127.0.0.1:%d/?token=" % server.port)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("GET", "/?token=" + server.token)
        r = conn.getresponse()
        r.read()
        assert r.status == 303 and "HttpOnly" in r.getheader("Set-Cookie")
        conn.request("GET", "/api/state")
        r = conn.getresponse()
        r.read()
        assert r.status == 403
    finally:
        server.stop()


def test_announce_prints_the_url_the_ssh_line_and_the_warning(monkeypatch):
    monkeypatch.setenv("SSH_CONNECTION", "10.0.0.5 51000 10.0.0.9 22")
    monkeypatch.setenv("USER", "ana")
    out = io.StringIO()
    announce("http://0.0.0.0:8080/?token=x", "0.0.0.0", 8080, out)
    text = out.getvalue()
    assert "serving at http://0.0.0.0:8080/?token=x" in text
    assert "ssh -N -L 8080:127.0.0.1:8080 ana@10.0.0.9" in text
    assert "warning: listening on 0.0.0.0" in text
    assert ssh_hint(1, {}) == ""
    quiet = io.StringIO()
    monkeypatch.delenv("SSH_CONNECTION")
    announce("u", "127.0.0.1", 1, quiet)
    assert quiet.getvalue() == "tfprof ui: serving at u\n"


def test_tfprof_ui_mistakes_are_one_line(monkeypatch):
    for argv, needle in ((["ui"], "no input"), (["ui", "--port", "99999"], "--port"),
                         (["ui", "--profile_path=" + TINY, "scope"], "takes no command"),
                         (["ui", "--profile_path=nowhere"], "nowhere")):
        run = run_cli(argv)
        assert run.code != 0 and needle in run.err and run.err.count("\n") == 1, run.err
    assert "usage: tfprof ui" in run_cli(["ui", "--help"]).out
    monkeypatch.setitem(sys.modules, "werkzeug", None)
    with pytest.raises(UsageError, match=r"pip install 'tfprof-shell\[ui\]'"):
        require_server()
    run = run_cli(["ui", "--profile_path=" + TINY])
    assert run.code == 2 and "pip install 'tfprof-shell[ui]'" in run.err


def test_ui_in_one_shot_or_a_pipe_says_where_it_works():
    run = run_cli(["--profile_path=" + TINY], stdin="ui\n")
    assert "tfprof ui INPUTS" in run.err


def test_profile_ui_serves_the_api_session():
    from tfprof_shell import Profile
    prof = Profile.load(profile_path=TINY)
    url = prof.ui()
    try:
        assert url.startswith("http://127.0.0.1:") and prof.ui() == url
        assert prof.run("ui").notes == ["web UI: " + url]
    finally:
        prof._ui.stop()


def test_the_shells_ui_serves_the_live_session(tmp_path):
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput
    from tfprof_shell.shell.repl import Repl
    from tfprof_shell.shell.toolbar import toolbar_text
    session = session_for(["--profile_path=" + TINY])
    out, err = io.StringIO(), io.StringIO()
    with create_pipe_input() as inp:
        inp.send_text("set -max_depth 2\rui\r")
        inp.close()
        repl = Repl(session, str(tmp_path / "history"), out, err, input=inp,
                    output=DummyOutput())
        assert repl.run() == 0
    server = repl.ui_server
    try:
        assert "web UI: %s\n" % server.url in err.getvalue()
        assert "ui " + server.url in toolbar_text(session, False, server.url)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("GET", "/api/state", headers={
            "Cookie": "%s=%s" % (guard.COOKIE, server.token)})
        state = json.loads(conn.getresponse().read())
        assert state["options"] == ["-max_depth", "2"]
    finally:
        server.stop()
