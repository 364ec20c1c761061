"""Several profiles in one session: diffs, aggregates, profile commands and errors.

The expected figures come from each profile's own single-profile view (its
JSON document, whose numbers the engine goldens check), combined by hand:
a diff's values are the two profiles' values for the same node, an
aggregate's the sum/mean/max/min of every profile's value.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tfprof_shell.api import Profile
from tfprof_shell.cli import main as cli_main
from tfprof_shell.combine.result import aggregate_values
from tfprof_shell.errors import OptionError, RequestError, UsageError
from tfprof_shell.load import Inputs
from tfprof_shell.load.jobs import default_name, jobs_of
from tfprof_shell.shell.completer import engine_for
from tfprof_shell.shell.repl import run_pipe

SAMPLES = Path(__file__).resolve().parent.parent / "sample_profiles"
BEFORE = str(SAMPLES / "mlp_before" / "profile")
AFTER = str(SAMPLES / "mlp_after" / "profile")
WORKER0 = str(SAMPLES / "mlp_worker0" / "profile")
WORKER1 = str(SAMPLES / "mlp_worker1" / "profile")
RANKS = str(SAMPLES / "torch_ranks")
TINY = str(SAMPLES / "tiny_mlp" / "profile")
CONVNET = str(SAMPLES / "convnet" / "profile")
ALL_NODES = "-max_depth 1000"
TIMES = ("micros", "accelerator_micros", "cpu_micros")


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def pair() -> Profile:
    prof = Profile.load(profile_path=AFTER)
    prof.add("before", BEFORE)
    return prof


@pytest.fixture(scope="module")
def workers() -> Profile:
    prof = Profile.load(profile_path=WORKER0)
    prof.add("w1", WORKER1)
    return prof


def single_values(path: str, view: str, extra: str = "") -> dict[Any, dict[str, int]]:
    """node key -> the value its single-profile line shows (JSON), every node displayed."""
    prof = Profile.load(profile_path=path)
    doc = prof.run("%s %s -select micros,bytes,params,float_ops,occurrence %s -output json"
                   % (view, ALL_NODES, extra)).data
    values: dict[Any, dict[str, int]] = {}
    stack = [(doc["root"], ())]
    while stack:
        node, path_so_far = stack.pop()
        key_path = path_so_far + (node["name"],)
        key = key_path if view == "code" else node["name"]
        values[key] = node["total"]
        stack.extend((c, key_path if node["depth"] else ()) for c in node["children"])
    return values


def walk(doc_root: dict, view: str):
    stack = [(doc_root, ())]
    while stack:
        node, path_so_far = stack.pop()
        key_path = path_so_far + (node["name"],)
        yield (key_path if view == "code" else node["name"]), node
        stack.extend((c, key_path if node["depth"] else ()) for c in node["children"])


# -- diff ----------------------------------------------------------------------

@pytest.mark.parametrize("view", ["scope", "graph", "op", "code"])
def test_a_diff_shows_both_profiles_figures_for_every_node(pair, view):
    doc = pair.run("%s -base before %s -select micros,bytes,params -output json"
                   % (view, ALL_NODES)).data
    assert doc["mode"] == "diff"
    assert doc["base"]["name"] == "before" and BEFORE in doc["base"]["source"]
    assert doc["current"]["name"] == "mlp_after"
    new, old = single_values(AFTER, view), single_values(BEFORE, view)
    statuses = set()
    for key, node in walk(doc["root"], view):
        statuses.add(node["status"])
        for attr in ("micros", "bytes", "params"):
            assert node["delta_total"][attr] == node["total"][attr] - node["base_total"][attr]
        if node["status"] == "+":
            assert key not in old and node["base_total"]["micros"] == 0
        elif node["status"] == "-":
            assert key not in new and node["total"]["micros"] == 0
        else:
            assert node["total"]["micros"] == new[key]["micros"], key
            assert node["base_total"]["micros"] == old[key]["micros"], key
            assert node["base_total"]["bytes"] == old[key]["bytes"], key
    root_key = ("_TFProfRoot",) if view == "code" else "_TFProfRoot"
    assert doc["root"]["total"]["micros"] == new[root_key]["micros"]
    assert doc["root"]["base_total"]["micros"] == old[root_key]["micros"]
    if view in ("scope", "graph"):  # dropout went away, layer3 came
        assert {"+", "-"} <= statuses
        names = {n["name"]: n["status"] for _, n in walk(doc["root"], view)}
        assert names["layer3" if view == "scope" else "layer3/Relu"] == "+"
        assert names["dropout" if view == "scope" else "dropout/dropout/GreaterEqual"] == "-"


def test_a_node_hidden_on_one_side_keeps_that_sides_value(pair):
    """Display filters apply to each profile; a node shown by either is in the diff."""
    new, old = single_values(AFTER, "scope"), single_values(BEFORE, "scope")
    # A bound between a top-level scope's two values: one side shows it, the other hides it.
    both = [k for k in new if k in old and "/" not in k and k != "_TFProfRoot"]
    key = max(both, key=lambda k: abs(new[k]["micros"] - old[k]["micros"]))
    bound = (new[key]["micros"] + old[key]["micros"]) // 2 + 1
    doc = pair.run("scope -base before -min_micros %d -max_depth 2 -output json" % bound).data
    rows = {n["name"]: n for _, n in walk(doc["root"], "scope")}
    shown_new = {k for k, v in new.items() if v["micros"] >= bound and "/" not in k}
    shown_old = {k for k, v in old.items() if v["micros"] >= bound and "/" not in k}
    assert set(rows) - {"_TFProfRoot"} == (shown_new | shown_old) - {"_TFProfRoot"}
    one_sided = [k for k in (shown_new ^ shown_old) if k in new and k in old]
    assert key in one_sided
    for key in one_sided:
        assert rows[key]["status"] == ""
        assert rows[key]["total"]["micros"] == new[key]["micros"]
        assert rows[key]["base_total"]["micros"] == old[key]["micros"]


def test_diff_text_rows_and_ordering_by_absolute_delta(pair):
    res = pair.run("scope -base before -max_depth 2 -order_by micros", text=True)
    lines = res.text.splitlines()
    assert lines[0].startswith("Diff of the scope view: mlp_after (average over steps) "
                               "against before (average over steps)")
    assert lines[1] == "node name | total execution time: mlp_after vs before, delta, ratio"
    assert re.fullmatch(r"_TFProfRoot \(\S+ vs \S+, -\S+, 0\.\d\dx\)", lines[2])
    row = re.compile(r"  ([+-]?)(\S+) \((\S+|--) vs (\S+|--), ([+-]?\S+), (\S+)\)")
    rows = [row.fullmatch(line) for line in lines[3:]]
    assert all(rows), lines
    assert any(m.group(1) == "-" and m.group(6) == "gone" and m.group(3) == "--" for m in rows)
    assert any(m.group(1) == "+" and m.group(6) == "new" and m.group(4) == "--" for m in rows)
    deltas = [abs(n["delta_total"]["micros"]) for n in pair.run(
        "scope -base before -max_depth 2 -order_by micros -output json").data["root"]["children"]]
    assert deltas == sorted(deltas, reverse=True)


def test_every_numeric_attribute_has_a_column_label_in_diffs_and_aggregates(pair, workers):
    # -select occurrence once raised KeyError in the text legend of both modes.
    diff = pair.run("op -base before -select micros,occurrence -max_depth 2", text=True).text
    assert diff.splitlines()[1].endswith("| run count: mlp_after vs before, delta, ratio")
    agg = workers.run("op -profiles all -select occurrence -max_depth 2", text=True).text
    assert agg.splitlines()[1] == "node name | run count (sum)"


def test_base_step_selects_the_base_profiles_step(pair):
    step2 = single_values(BEFORE, "scope", "-step 2")
    step0 = single_values(AFTER, "scope", "-step 0")
    doc = pair.run("scope -base before -step 0 -base_step 2 -output json").data
    assert doc["step"] == 0 and doc["base_step"] == 2
    assert doc["root"]["total"]["micros"] == step0["_TFProfRoot"]["micros"]
    assert doc["root"]["base_total"]["micros"] == step2["_TFProfRoot"]["micros"]
    same = pair.run("scope -base before -step 1 -output json").data
    assert same["base_step"] == 1


def test_code_diff_can_match_by_function_only(pair):
    by_line = pair.run("code -base before %s -output json" % ALL_NODES).data
    by_function = pair.run("code -base before -code_match function %s -output json"
                           % ALL_NODES).data
    assert by_function["root"]["total"] == by_line["root"]["total"]
    assert by_function["root"]["base_total"] == by_line["root"]["base_total"]
    labels = [n["name"] for _, n in walk(by_function["root"], "code")][1:]
    assert labels and all(re.fullmatch(r"[^:]+:[^:]+", label) for label in labels), labels[:5]
    # Ignoring lines can only match more nodes: fewer one-sided rows.
    one_sided = lambda doc: sum(n["status"] != "" for _, n in walk(doc["root"], "code"))
    assert one_sided(by_function) <= one_sided(by_line)


def test_set_base_is_sticky_until_none(pair):
    pair.run("set -base before")
    try:
        assert pair.run("op -max_depth 3").data["mode"] == "diff"
    finally:
        pair.run("set -base none")
    assert pair.run("op -max_depth 3").data["mode"] == "single"


def test_a_profile_matches_itself_with_zero_deltas(pair):
    doc = pair.run("scope -base mlp_after %s -output json" % ALL_NODES).data
    for _, node in walk(doc["root"], "scope"):
        assert node["status"] == "" and set(node["delta_total"].values()) == {0}


# -- aggregate -------------------------------------------------------------------

@pytest.mark.parametrize("how", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("view", ["scope", "op", "code"])
def test_aggregates_combine_the_profiles_figures(workers, view, how):
    doc = workers.run("%s -profiles all -aggregate %s -by_profile %s -select micros,bytes "
                      "-output json" % (view, how, ALL_NODES)).data
    assert doc["mode"] == "aggregate" and doc["aggregate"] == how
    assert doc["profiles"] == ["mlp_worker0", "w1"]
    per = {"mlp_worker0": single_values(WORKER0, view), "w1": single_values(WORKER1, view)}
    for key, node in walk(doc["root"], view):
        present = [per[name].get(key) for name in doc["profiles"]]
        assert node["profiles_with_node"] == sum(v is not None for v in present)
        for attr in ("micros", "bytes"):
            values = [None if v is None else (v[attr],) for v in present]
            assert node["total"][attr] == aggregate_values(values, how)[0], (key, attr)
        for name in doc["profiles"]:
            own = per[name].get(key)
            expect = None if own is None else {a: own[a] for a in ("micros", "bytes") + TIMES[1:]}
            got = node["by_profile"][name]
            assert (got if got is None else {a: got[a] for a in expect}) == expect


def test_a_straggler_shows_with_max_and_min(workers):
    text = workers.run("scope -profiles all -aggregate max -by_profile -max_depth 1",
                       text=True).text
    assert text.splitlines()[1] == ("node name | total execution time (max) | mlp_worker0 | w1")
    top = workers.run("scope -profiles all -aggregate max -output json").data["root"]
    bottom = workers.run("scope -profiles all -aggregate min -output json").data["root"]
    w1 = single_values(WORKER1, "scope")["_TFProfRoot"]["micros"]
    w0 = single_values(WORKER0, "scope")["_TFProfRoot"]["micros"]
    assert top["total"]["micros"] == max(w0, w1) and bottom["total"]["micros"] == min(w0, w1)


def test_profiles_take_names_and_regexes(workers):
    assert workers.run("op -profiles w.* -output json").data["profiles"] == ["w1"]
    assert workers.run("op -profiles w1,mlp_worker0 -output json").data["profiles"] == [
        "mlp_worker0", "w1"]


def test_a_missing_step_names_the_profile():
    prof = Profile.load(profile_path=TINY)
    prof.add("convnet", CONVNET)
    with pytest.raises(RequestError, match="profile tiny_mlp has no step 10; its steps: 0 1 2"):
        prof.run("op -profiles all -step 10")
    with pytest.raises(RequestError, match="profile convnet has no step 1"):
        prof.run("op -base convnet -step 1")


def test_profiles_of_different_kinds_cannot_be_diffed():
    prof = Profile.load(profile_path=TINY)
    prof.add("torch", RANKS)
    with pytest.raises(RequestError, match=r"cannot compare tiny_mlp \(profile\) with "
                                           r"torch.rank0 \(chrome_trace\)"):
        prof.run("scope -base torch.rank0")


# -- folders of several jobs -----------------------------------------------------

def test_a_pytorch_rank_folder_is_one_profile_per_worker():
    jobs, notes = jobs_of(Inputs(profile_path=RANKS))
    assert [j.name for j in jobs] == ["rank0", "rank1"]
    assert notes == ["%s: 2 PyTorch workers, one profile each" % RANKS]
    code, out, err = cli("--profile_path=" + RANKS, "op", "-profiles", "all", "-select",
                         "accelerator_micros", "-order_by", "accelerator_micros", "-output", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["profiles"] == ["rank0", "rank1"]
    one = Profile.load(profile_path=os.path.join(
        RANKS, sorted(os.listdir(RANKS))[0])).run("op -select accelerator_micros -output json")
    assert doc["root"]["total"]["accelerator_micros"] == \
        2 * one.data["root"]["total"]["accelerator_micros"]


def test_one_workers_several_files_stay_its_steps(tmp_path):
    src = sorted(os.listdir(RANKS))[0]
    for i in range(2):
        shutil.copy(os.path.join(RANKS, src), tmp_path / ("rank0.%d.pt.trace.json.gz" % i))
    jobs, _ = jobs_of(Inputs(profile_path=str(tmp_path)))
    assert len(jobs) == 1


def test_an_xplane_run_folder_is_one_profile_per_host(tmp_path):
    src = next((SAMPLES / "tf2").rglob("*.xplane.pb"))
    for host in ("worker0", "worker1"):
        shutil.copy(src, tmp_path / ("%s.xplane.pb" % host))
    jobs, _ = jobs_of(Inputs(profile_path=str(tmp_path)))
    assert [(j.name, os.path.basename(j.inputs.profile_path or "")) for j in jobs] == [
        ("worker0", "worker0.xplane.pb"), ("worker1", "worker1.xplane.pb")]
    named, _ = jobs_of(Inputs(profile_path=str(tmp_path)), "run1")
    assert [j.name for j in named] == ["run1.worker0", "run1.worker1"]


@pytest.mark.parametrize("inputs, name", [
    (Inputs(profile_path="sample_profiles/tiny_mlp/profile"), "tiny_mlp"),
    (Inputs(profile_path="x/vm.xplane.pb"), "vm"),
    (Inputs(graph_path="runs/convnet/graph.pbtxt"), "convnet"),
    (Inputs(profile_path="a b/step 1.json"), "step_1"),
])
def test_default_names(inputs, name):
    assert default_name(inputs) == name


# -- the command line and the shell ----------------------------------------------

def test_cli_base_profile_path_compares_every_view():
    code, out, err = cli("--profile_path=" + AFTER, "--base_profile_path", BEFORE, "op",
                         "-max_depth", "2")
    assert code == 0 and err == ""
    assert out.startswith("Diff of the op view: mlp_after (average over steps) against base")


@pytest.mark.parametrize("argv, message, status", [
    (["--profile_path=" + TINY, "scope", "-base", "nope"],
     "tfprof: -base nope: no such profile; loaded: tiny_mlp\n", 2),
    (["--profile_path=" + TINY, "scope", "-profiles", "nope"],
     "tfprof: -profiles: 'nope' names no loaded profile; loaded: tiny_mlp\n", 2),
    (["--profile_path=" + TINY, "use", "nope"],
     "tfprof: use nope: no such profile; loaded: tiny_mlp\n", 2),
    (["--profile_path=" + TINY, "--profile", "bad name=" + TINY, "scope"],
     "tfprof: --profile: 'bad name' cannot name a profile (use letters, digits, _ . + -; "
     "not all or none)\n", 2),
    (["--profile_path=" + TINY, "--profile", TINY, "scope"],
     "tfprof: --profile takes NAME=PATH, got '%s'\n" % TINY, 2),
    (["--profile_path=" + TINY, "--profile", "tiny_mlp=" + TINY, "scope"],
     "tfprof: two profiles are named tiny_mlp: name them with --profile NAME=PATH\n", 2),
    (["--profile_path=" + AFTER, "--base_profile_path=" + BEFORE, "scope", "-output",
      "timeline:outfile=/tmp/x"],
     "tfprof: -output timeline shows one profile: drop -base, or 'use NAME' to pick the "
     "profile\n", 2),
    (["--profile_path=" + AFTER, "--base_profile_path=" + BEFORE, "code", "-output",
      "pprof:outfile=/tmp/x"],
     "tfprof: -output pprof shows one profile: drop -base, or 'use NAME' to pick the "
     "profile\n", 2),
    (["--profile_path=" + AFTER, "--base_profile_path=" + BEFORE, "scope", "-profiles", "all"],
     "tfprof: -base compares two profiles and -profiles combines several: give one of "
     "them\n", 2),
    (["--profile_path=" + AFTER, "--base=nope", "scope"],
     "tfprof: -base nope: no such profile; loaded: mlp_after\n", 2),
    (["--profile_path=" + AFTER, "--base_profile_path=" + BEFORE, "scope", "-select",
      "device"], None, 2),
])
def test_mistakes_are_one_line_and_print_nothing(argv, message, status):
    code, out, err = cli(*argv)
    assert (code, out) == (status, "")
    assert err.count("\n") == 1 and err.startswith("tfprof: ")
    if message is not None:
        assert err == message


def test_shell_profile_commands_and_a_failed_command_changes_nothing():
    from tfprof_shell.session import Session
    from tfprof_shell.load import load_model
    session = Session(load_model(Inputs(profile_path=WORKER0)), name="w0")
    out, err = io.StringIO(), io.StringIO()
    lines = ["load w1 " + WORKER1, "profiles", "use w1", "scope -base nope",
             "set -base nope", "use nope", "load w1 " + WORKER0, "unload nope",
             "scope -max_depth 1 -base w0", "unload w1", "profiles", "unload w0"]
    assert run_pipe(session, io.StringIO("\n".join(lines) + "\n"), out, err) == 0
    said = [line for line in err.getvalue().splitlines() if line.startswith("tfprof:")]
    assert said == [
        "tfprof: loaded w1; 'use NAME' makes one current",
        "tfprof: -base nope: no such profile; loaded: w0, w1",
        "tfprof: -base nope: no such profile; loaded: w0, w1",
        "tfprof: use nope: no such profile; loaded: w0, w1",
        "tfprof: a profile named w1 is already loaded (unload it first)",
        "tfprof: unload nope: no such profile; loaded: w0, w1",
        "tfprof: unload: w0 is the only profile loaded",
    ]
    text = out.getvalue()
    tables = [t for t in text.split("\n") if t.lstrip().startswith(("*", "name"))]
    assert re.match(r"\*\s+w0\s+profile\s+0,1,2\s+126\s+\S+\s+.*mlp_worker0/profile", tables[1])
    assert "Diff of the scope view: w1 (average over steps) against w0" in text
    assert re.search(r"^\*\s+w0\s", text.split("Diff of")[1], re.M)  # after unload w1
    assert session.current == "w0" and list(session.profiles) == ["w0"]
    assert session.options.base == ""


def test_prompt_names_the_current_profile_when_several_are_loaded(workers):
    from tfprof_shell.shell.repl import Repl
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput
    with create_pipe_input() as inp:
        repl = Repl(workers.session, None, io.StringIO(), io.StringIO(), input=inp,
                    output=DummyOutput())
        assert repl._message() == [("class:prompt", "tfprof[mlp_worker0]> ")]
        workers.use("w1")
        try:
            assert repl._message() == [("class:prompt", "tfprof[w1]> ")]
        finally:
            workers.use("mlp_worker0")
    single = Profile.load(profile_path=TINY)
    with create_pipe_input() as inp:
        repl = Repl(single.session, None, io.StringIO(), io.StringIO(), input=inp,
                    output=DummyOutput())
        assert repl._message() == [("class:prompt", "tfprof> ")]


def test_completion_offers_profile_names(workers):
    engine = engine_for(workers.session)
    texts = lambda line: [c.text for c in engine.complete(line)]
    assert texts("use ") == ["mlp_worker0", "w1"]
    assert texts("unload w") == ["w1"]
    assert texts("scope -base ") == ["mlp_worker0", "w1", "none"]
    assert texts("op -profiles w1,") == ["mlp_worker0", "all"]
    assert texts("scope -aggregate m") == ["mean", "max", "min"]
    assert "sample_profiles/" in texts("load x sample_")


def test_help_lists_the_profile_commands_and_options():
    from tfprof_shell.help import help_text
    text = help_text([])
    for word in ("profiles", "use", "load", "unload", "-base", "-profiles", "-aggregate",
                 "-by_profile", "-base_step", "-code_match"):
        assert word in text
    from tfprof_shell.options import AGGREGATES
    lines = help_text(["-aggregate"]).splitlines()
    for value, meaning in AGGREGATES.items():
        assert any(line.split() == [value] + meaning.split() for line in lines), value


def test_options_reject_bad_profile_names():
    from tfprof_shell.options import DEFAULTS, parse_tokens
    with pytest.raises(OptionError, match="cannot name a profile"):
        parse_tokens(["-base", "a/b"], DEFAULTS, "scope")
    assert parse_tokens(["-base", "none"], DEFAULTS, "scope").base == ""
    assert parse_tokens(["-profiles", "none"], DEFAULTS, "scope").profiles == ()
    assert parse_tokens(["-base_step", "same"], DEFAULTS, "scope").base_step is None
    with pytest.raises(UsageError):
        parse_tokens(["-base_step", "x"], DEFAULTS, "scope")
