"""The web UI's server (tfprof ui) without a browser: its answers are the shell's,
and its guards hold (token cookie, Host allow-list, CSP, same-origin POST)."""

from __future__ import annotations

import gzip
import io
import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from werkzeug.test import Client

from conftest import run_cli, sample
from hostile_names import HOSTILE, hostile_trace
from tfprof_shell.cli import open_session, parse_invocation
from tfprof_shell.ui import guard
from tfprof_shell.ui.runner import LineRunner
from tfprof_shell.ui.server import UiApp

TINY = sample("tiny_mlp", "profile")
BEFORE = sample("mlp_before", "profile")
AFTER = sample("mlp_after", "profile")
WORKER0 = sample("mlp_worker0", "profile")
WORKER1 = sample("mlp_worker1", "profile")
PORT = 4321
HOST = "127.0.0.1:%d" % PORT
ORIGIN = "http://" + HOST
TOKEN = "t0ken-for-tests"


def session_for(argv):
    return open_session(parse_invocation(argv), io.StringIO())


class Browser:
    """A werkzeug test client speaking as the page would (cookie, Host, Origin)."""

    def __init__(self, argv):
        self.argv = argv
        self.session = session_for(argv)
        self.app = UiApp(LineRunner(self.session), TOKEN, guard.allowed_hosts("127.0.0.1", PORT))
        self.client = Client(self.app)
        self.client.set_cookie(guard.COOKIE, TOKEN, domain="127.0.0.1")

    def get(self, path, **kw):
        headers = {"Host": HOST, **kw.pop("headers", {})}
        return self.client.get(path, headers=headers, **kw)

    def post(self, path, body, headers=None):
        h = {"Host": HOST, "Origin": ORIGIN}
        h.update(headers or {})
        return self.client.post(path, data=json.dumps(body), content_type="application/json",
                                headers=h)

    def run(self, line, text=False):
        r = self.post("/api/run", {"line": line, "text": text})
        assert r.status_code == 200, r.get_data(as_text=True)
        return r.get_json()

    def error(self, line):
        r = self.post("/api/run", {"line": line})
        assert r.status_code == 400, r.get_data(as_text=True)
        return r.get_json()["error"]


@pytest.fixture(scope="module")
def tiny():
    return Browser(["--profile_path=" + TINY])


@pytest.fixture(scope="module")
def pair():
    return Browser(["--profile_path=" + AFTER, "--profile", "before=" + BEFORE,
                    "--profile", "w0=" + WORKER0, "--profile", "w1=" + WORKER1])


# -- answers are the shell's ---------------------------------------------------

def _rebuild_single(answer):
    """The -output json tree rebuilt from columns: name, self, total (, cumulative)."""
    s = answer["strings"]
    nodes = []
    for i in range(answer["rows"]):
        node = {"name": s[answer["name"][i]],
                "self": {a: answer["self"][a][i] for a in answer["attrs"]},
                "total": {a: answer["total"][a][i] for a in answer["attrs"]}, "children": []}
        if "cumulative" in answer and i:
            node["cumulative"] = {a: answer["cumulative"][a][i] for a in answer["attrs"]}
        nodes.append(node)
        if answer["parent"][i] >= 0:
            nodes[answer["parent"][i]]["children"].append(node)
    return nodes[0]


def _rebuild_multi(answer):
    s = answer["strings"]
    nodes = []
    for i in range(answer["rows"]):
        node = {"name": s[answer["name"][i]],
                "total": {a: answer["total"][a][i] for a in answer["attrs"]}, "children": []}
        if answer["kind"] == "diff":
            node["status"] = answer["status"][i]
            node["base_total"] = {a: answer["base"][a][i] for a in answer["attrs"]}
        else:
            node["profiles_with_node"] = answer["present"][i]
            node["by_profile"] = {
                side["name"]: (None if cols[answer["attrs"][0]][i] is None else
                               {a: cols[a][i] for a in answer["attrs"]})
                for side, cols in zip(answer["sides"], answer["by_profile"])}
        nodes.append(node)
        if answer["parent"][i] >= 0:
            nodes[answer["parent"][i]]["children"].append(node)
    return nodes[0]


def _keep(doc, keys):
    out = {k: doc[k] for k in keys if k in doc}
    out["children"] = [_keep(c, keys) for c in doc["children"]]
    return out


def _shell(argv, line, *extra):
    run = run_cli(argv + line.split(" ") + list(extra))
    assert run.code == 0, run.err
    return run.out


SINGLE_LINES = ["scope -max_depth 3", "scope -select micros,bytes,params -order_by micros",
                "graph -max_depth 4 -step 1", "op -select micros,float_ops -order_by micros",
                "code -max_depth 5", "scope -account_type_regexes MatMul -max_depth 100",
                "op -show_name_regexes Mat.* -select bytes,peak_bytes"]


@pytest.mark.parametrize("line", SINGLE_LINES)
def test_a_view_answer_is_the_shells_text_and_json(tiny, line):
    answer = tiny.run(line, text=True)
    assert answer["text"] == _shell(tiny.argv, line)
    doc = json.loads(_shell(tiny.argv, line, "-output", "json"))
    keys = ("name", "self", "total", "cumulative")
    assert _keep(_rebuild_single(answer), keys) == _keep(doc["root"], keys)
    assert answer["attrs"] == list(doc["units"])


@pytest.mark.parametrize("line", ["scope -base before -max_depth 4",
                                  "op -base before -order_by micros",
                                  "scope -profiles w0,w1 -aggregate max -by_profile true",
                                  "code -profiles all -max_depth 4 -by_profile true",
                                  "scope -base mlp_after -step 2 -base_step 0"])
def test_a_comparison_or_aggregate_answer_is_the_shells(pair, line):
    answer = pair.run(line, text=True)
    assert answer["text"] == _shell(pair.argv, line)
    doc = json.loads(_shell(pair.argv, line, "-output", "json"))
    keys = ("name", "total", "status", "base_total", "profiles_with_node", "by_profile")
    assert _keep(_rebuild_multi(answer), keys) == _keep(doc["root"], keys)


def test_non_view_commands_answer_the_shells_text(tiny):
    for line in ("advise", "help", "help -max_depth", "profiles"):
        assert tiny.run(line)["text"] == _shell(tiny.argv, line)
    advice = tiny.run("advise")
    assert set(advice["checkers"]) == {"AcceleratorUtilizationChecker", "OperationChecker",
                                       "ExpensiveOperationChecker"}


def test_details_describe_the_row(tiny):
    line = "scope -max_depth 2 -select micros,params"
    answer = tiny.run(line)
    names = [answer["strings"][i] for i in answer["name"]]
    row = names.index("layer1")
    details = tiny.post("/api/details", {"line": line, "row": row}).get_json()
    assert details["name"] == "layer1"
    assert details["total"]["micros"] == answer["total"]["micros"][row]
    leaf = tiny.post("/api/details", {"line": "scope -max_depth 100",
                                      "row": 1}).get_json()
    assert leaf["device"] and leaf["op"] and leaf["steps"] == [0, 1, 2]
    bad = tiny.post("/api/details", {"line": line, "row": 10 ** 6})
    assert bad.status_code == 400 and "no row" in bad.get_json()["error"]


def test_completion_is_the_shells_completer(tiny):
    from tfprof_shell.shell.completer import engine_for
    engine = engine_for(tiny.session)
    for text in ("sc", "scope -ord", "scope -order_by mic", "scope -select micros,pa",
                 "scope -show_name_regexes lay"):
        got = tiny.post("/api/complete", {"text": text}).get_json()
        assert [c["text"] for c in got] == [c.text for c in engine.complete(text)][:200]
        assert got or text.endswith("lay")


def test_controls_come_from_the_options_table_and_presets_from_the_builder(tiny):
    from tfprof_shell.options import OPTION_SPECS
    controls = tiny.get("/api/controls").get_json()
    assert [o["name"] for o in controls["options"]] == [n for n in OPTION_SPECS if n != "output"]
    step = {o["name"]: o for o in controls["options"]}["step"]
    assert step["command_help"]["steps"] == OPTION_SPECS["step"].help_for("steps")
    presets = {p["name"]: p["tokens"] for p in controls["presets"]}
    assert presets["float_operation"][presets["float_operation"].index("-order_by") + 1] \
        == "float_ops"
    for tokens in presets.values():  # every preset is a line the shell accepts
        tiny.run(" ".join(["scope"] + tokens))


def _blocks(data):
    """Every block of a timeline answer: (lane name, start, dur, count)."""
    return [(lane["name"], ts, dur, n) for lane in data["lanes"] for row in lane["blocks"]
            for ts, dur, n in zip(row["ts"], row["dur"], row["count"])]


def test_timeline_lanes_hold_every_event_of_the_shells_trace(tiny, tmp_path):
    out = tmp_path / "trace"
    _shell(tiny.argv, "graph -step 1 -max_depth 100", "-output", "timeline:outfile=%s" % out)
    regions = [e for e in json.load(open(str(out) + "_1"))["traceEvents"] if e["ph"] == "X"]
    line = "graph -step 1 -max_depth 100"
    wide = tiny.post("/api/timeline", {"line": line, "width": 8000}).get_json()
    narrow = tiny.post("/api/timeline", {"line": line, "width": 20}).get_json()
    for data in (wide, narrow):
        assert sum(n for *_, n in _blocks(data)) == len(regions)
    assert narrow["merged"] > 0 and "merged at this zoom" in narrow["notes"][0]
    names = {e["pid"]: e["args"]["name"] for e in json.load(open(str(out) + "_1"))[
        "traceEvents"] if e.get("name") == "process_name"}
    assert {lane["name"] for lane in wide["lanes"]} == \
        {names[e["pid"]] for e in regions}  # a lane per device, named as the engine names it
    first = min(e["ts"] for e in regions)
    mid = (wide["start"] + wide["end"]) // 2
    half = tiny.post("/api/timeline", {"line": line, "t0": mid, "width": 8000}).get_json()
    overlapping = [e for e in regions if (e["ts"] + e["dur"] - first) * 1000 >= mid]
    assert sum(n for *_, n in _blocks(half)) == len(overlapping) > 0
    assert half["t0"] == mid and half["t1"] == wide["end"]
    assert [lane["name"] for lane in half["lanes"]] == [lane["name"] for lane in wide["lanes"]]
    trace = tiny.get("/api/trace", query_string={"line": line})
    assert trace.get_data() == open(str(out) + "_1", "rb").read()
    assert "attachment" in trace.headers["Content-Disposition"]


def test_a_graph_timeline_without_a_step_is_every_step_merged(tiny, tmp_path):
    out = tmp_path / "merged"
    line = "graph -max_depth 100"
    _shell(tiny.argv, line, "-output", "timeline:outfile=%s,merge=true" % out)
    assert tiny.get("/api/trace", query_string={"line": line}).get_data() == out.read_bytes()
    data = tiny.post("/api/timeline", {"line": line, "width": 8000}).get_json()
    assert [s["step"] for s in data["steps"]] == [0, 1, 2]
    assert "Steps" not in [lane["name"] for lane in data["lanes"]]
    assert data["download"] == line


# -- bad lines ------------------------------------------------------------------

def test_a_bad_line_gives_the_shells_message_and_changes_nothing(tiny):
    before = tiny.session.options
    for line in ("scpoe", "scope -max_depth x", "set -max_depth x", "scope -order_by nope",
                 "graph -step 99", "use nobody"):
        shell = run_cli(tiny.argv + line.split(" "))
        assert shell.code != 0
        assert tiny.error(line) == shell.err.strip()[len("tfprof: "):]
    assert tiny.session.options == before


def test_the_browser_cannot_load_write_or_quit(tiny, tmp_path):
    target = tmp_path / "out.txt"
    for line in ("load x %s" % TINY, "unload tiny_mlp", "quit", "ui",
                 "scope -output file:outfile=%s" % target,
                 "scope -output timeline:outfile=%s" % target,
                 "set -output file:outfile=%s" % target):
        assert tiny.error(line)
    assert not os.listdir(tmp_path)
    assert list(tiny.session.profiles) == ["tiny_mlp"]


def test_set_through_the_page_is_the_shells_set(pair):
    try:
        assert pair.run("set -max_depth 2")["text"] == ""
        assert pair.session.options.max_depth == 2
        assert "-max_depth" in pair.get("/api/state").get_json()["options"]
    finally:
        pair.run("set -max_depth 10")


@pytest.mark.parametrize("body,code", [({}, 400), ({"line": 3}, 400), ({"line": None}, 400),
                                       ({"line": "scope -max_depth 1", "text": []}, 200)])
def test_malformed_requests_are_400(tiny, body, code):
    assert tiny.post("/api/run", body).status_code == code
    assert tiny.post("/api/details", {"line": "scope", "row": "1"}).status_code == 400
    assert tiny.post("/api/timeline", {"line": "graph -step 0", "t0": "x"}).status_code == 400


def test_a_bug_is_a_500_line_and_the_server_goes_on(tiny, monkeypatch):
    def broken(line, text=False, document=False, starts=False):
        raise RuntimeError("boom")
    monkeypatch.setattr(tiny.app.runner, "run", broken)
    r = tiny.post("/api/run", {"line": "scope"})
    assert r.status_code == 500 and r.get_json()["error"] == "internal error: RuntimeError: boom"
    monkeypatch.undo()
    assert tiny.run("scope -max_depth 1")["rows"] == 1


# -- guards ---------------------------------------------------------------------

def test_the_token_is_exchanged_for_a_strict_cookie(tiny):
    anonymous = Client(tiny.app)
    assert anonymous.get("/", headers={"Host": HOST}).status_code == 403
    assert anonymous.get("/?token=wrong", headers={"Host": HOST}).status_code == 403
    r = anonymous.get("/?token=%s&page=flame&line=code" % TOKEN, headers={"Host": HOST})
    assert r.status_code == 303
    assert r.headers["Location"] == "/?page=flame&line=code"
    cookie = r.headers["Set-Cookie"]
    assert cookie.startswith("%s=%s;" % (guard.COOKIE, TOKEN))
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert anonymous.get("/", headers={"Host": HOST}).status_code == 200


@pytest.mark.parametrize("path", ["/", "/static/app.js", "/api/state", "/api/controls",
                                  "/api/trace?line=scope"])
def test_every_route_needs_the_cookie_and_an_allowed_host(tiny, path):
    anonymous = Client(tiny.app)
    assert anonymous.get(path, headers={"Host": HOST}).status_code == 403
    wrong = Client(tiny.app)
    wrong.set_cookie(guard.COOKIE, "not-the-token", domain="127.0.0.1")
    assert wrong.get(path, headers={"Host": HOST}).status_code == 403
    for host in ("evil.example:%d" % PORT, "127.0.0.1:%d" % (PORT + 1), "127.0.0.1"):
        assert tiny.get(path, headers={"Host": host}).status_code == 403
    assert tiny.get(path).status_code == 200
    by_name = Client(tiny.app, use_cookies=False)
    assert by_name.get(path, headers={"Host": "localhost:%d" % PORT,
                                      "Cookie": "%s=%s" % (guard.COOKIE, TOKEN)}).status_code == 200


def test_posts_need_same_origin_json(tiny):
    body = {"line": "scope"}
    assert tiny.post("/api/run", body, headers={"Origin": "http://evil.example"}).status_code == 403
    assert tiny.post("/api/run", body, headers={"Origin": "null"}).status_code == 403
    assert tiny.post("/api/run", body, headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
    no_origin = tiny.client.post("/api/run", data=json.dumps(body),
                                 content_type="application/json", headers={"Host": HOST})
    assert no_origin.status_code == 403
    form = tiny.client.post("/api/run", data="line=scope", headers={
        "Host": HOST, "Origin": ORIGIN, "Content-Type": "application/x-www-form-urlencoded"})
    assert form.status_code == 415
    assert tiny.get("/api/run").status_code == 405
    assert tiny.post("/api/state", {}).status_code == 405


def test_every_answer_carries_the_csp(tiny):
    for r in (tiny.get("/"), tiny.get("/static/app.js"), tiny.get("/api/state"),
              tiny.post("/api/run", {"line": "nope"}), tiny.get("/static/missing.js"),
              Client(tiny.app).get("/", headers={"Host": "evil:1"})):
        csp = r.headers["Content-Security-Policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp
        assert "unsafe" not in csp and "http" not in csp
        assert "frame-ancestors 'none'" in csp
        assert r.headers["X-Content-Type-Options"] == "nosniff"


def test_static_files_are_the_packages_only(tiny):
    assert tiny.get("/static/app.js").headers["Content-Type"].startswith("text/javascript")
    for path in ("/static/../runner.py", "/static/%2e%2e/runner.py", "/static/runner.py",
                 "/static/.hidden.js", "/static/app.js/x"):
        assert tiny.get(path).status_code == 404
    page = tiny.get("/").get_data(as_text=True)
    assert "<script>" not in page and "style=" not in page and "http" not in page.split(
        "<body>")[0]


def test_large_answers_are_gzipped(tiny):
    r = tiny.post("/api/run", {"line": "scope -max_depth 100"},
                  headers={"Accept-Encoding": "gzip"})
    assert r.headers["Content-Encoding"] == "gzip"
    assert json.loads(gzip.decompress(r.get_data()))["rows"] > 100


def test_hostile_names_travel_as_json_data_only(tmp_path):
    path = hostile_trace(tmp_path)
    b = Browser(["--profile_path=" + path])
    r = b.post("/api/run", {"line": "scope -max_depth 100", "text": True})
    assert r.headers["Content-Type"] == "application/json"
    answer = r.get_json()
    names = {answer["strings"][i] for i in answer["name"]}
    assert set(HOSTILE) <= names
    assert answer["text"] == _shell(b.argv, "scope -max_depth 100")
    assert "<img" not in b.get("/").get_data(as_text=True)


def test_hosts_for_every_interface_are_this_machines_names():
    hosts = guard.allowed_hosts("0.0.0.0", 8080)
    assert "127.0.0.1:8080" in hosts and "0.0.0.0:8080" not in hosts
    assert {"%s:8080" % guard.url_host(n) for n in guard.machine_names()} <= hosts
    assert guard.allowed_hosts("10.1.2.3", 9) == {"127.0.0.1:9", "localhost:9", "[::1]:9",
                                                 "10.1.2.3:9"}
    assert guard.is_loopback("127.0.0.2") and not guard.is_loopback("10.1.2.3")


WORDS = ["scope", "graph", "op", "code", "advise", "set", "help", "profiles", "use", "load",
         "quit", "ui", "steps", "kernels", "-device", "gpu:0", "-max_depth", "-step", "-order_by", "-select", "-output", "-base",
         "-profiles", "-account_type_regexes", "-show_name_regexes", "micros", "bytes", "1",
         "-1", "99", "x", "(", "[a-", ".*", "none", "all", "tiny_mlp", "timeline", "json",
         "file:outfile=/dev/null", "true", "", " ", "\u00e9", "<img src=x>"]


def test_no_line_crashes_the_server_or_changes_the_session(tiny):
    @settings(max_examples=150, deadline=None, database=None)
    @given(st.lists(st.sampled_from(WORDS), max_size=6))
    def check(words):
        before = tiny.session.options
        line = " ".join(words)
        r = tiny.post("/api/run", {"line": line})
        assert r.status_code in (200, 400), (line, r.get_data(as_text=True))
        if not (words[:1] == ["set"] and r.status_code == 200):
            assert tiny.session.options == before
        tiny.session.options = before
        assert list(tiny.session.profiles) == ["tiny_mlp"]

    check()



def test_steps_and_kernels_lines_answer_the_shells_text():
    gpu = Browser(["--profile_path=" + sample("torch_cnn")])
    shell = gpu.session
    for line in ("steps -step 3", "kernels -device gpu:0 -step 2"):
        answer = gpu.run(line)
        assert answer["kind"] == "text" and answer["command"] == line.split()[0]
        assert answer["text"] == shell.execute(line).text
    assert "kernels" in [c["name"] for c in gpu.get("/api/state").get_json()["commands"]]
    assert gpu.error("kernels -output json").startswith("-output: the web UI shows results")
    assert gpu.error("kernels -step 9") == "-step 9 not found; available steps: 2 3 4"
