"""`collectives`: instances matched across ranks, skew, last rank, stragglers and causes.

The recorded gloo jobs (sample_profiles/torch_ddp) are checked against the facts a
separate stdlib script wrote from their raw events (tests/golden/collectives); the
synthetic NCCL job against the facts its generator planted.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil

import pytest

from conftest import ROOT, run_cli, sample
from tfprof_shell.load import Inputs, load_model
from tfprof_shell.load.jobs import jobs_of
from tfprof_shell.load.parallel import load_many
from tfprof_shell.model.collectives import CollectiveCall, RankCollectives, Region
from tfprof_shell.session import Session
from tfprof_shell.views.collectives import BY_GROUP_ORDER, BY_SEQ, BY_STEP_ORDER, align

GOLDEN = os.path.join(ROOT, "tests", "golden", "collectives")


def session_of(path: str) -> Session:
    """A session holding every rank of the folder ``path``, loaded in this process."""
    jobs, _ = jobs_of(Inputs(profile_path=path))
    session = Session(load_model(jobs[0].inputs), name=jobs[0].name)
    for job in jobs[1:]:
        session.add(job.name, load_model(job.inputs))
    return session


_SESSIONS: dict[str, Session] = {}


def document(path: str, line: str = "collectives -output json") -> dict:
    if path not in _SESSIONS:
        _SESSIONS[path] = session_of(path)
    return json.loads(_SESSIONS[path].execute(line).text)


# -- the recorded gloo jobs: order of the c10d calls in each step ---------------

@pytest.mark.parametrize("run", ["balanced", "delayed", "outside"])
def test_recorded_jobs_match_the_raw_event_reference(run):
    with open(os.path.join(GOLDEN, "torch_ddp_%s.json" % run)) as fh:
        ref = json.load(fh)
    doc = document(sample("torch_ddp", run))
    assert doc["matching"] == BY_STEP_ORDER and doc["mismatch"] is None
    assert doc["profiles"] == ref["ranks"]
    assert len(doc["collectives"]) == len(ref["instances"]) == 30
    for got, want in zip(doc["collectives"], ref["instances"]):
        assert (got["instance"], got["step"], got["op"], got["size"], got["last"]) == (
            want["instance"], want["step"], want["op"], want["size"], want["last"])
        assert got["skew"] == pytest.approx(want["skew"], abs=0.002)
        for rank, t in want["arrival"].items():
            assert got["arrival"][rank] == pytest.approx(t, abs=0.002)
    assert len(doc["steps"]) == len(ref["steps"]) == 6
    for got, want in zip(doc["steps"], ref["steps"]):
        assert (got["step"], got["straggler"], got["instance"]) == (
            want["step"], want["straggler"], want["instance"])
        for rank, late in want["lateness"].items():
            assert got["lateness"][rank] == pytest.approx(late, abs=0.01)
        assert got["cause"]["region"] == want["cause"]["region"]
        for key in ("excess", "rank_us", "others_us"):
            assert got["cause"][key] == pytest.approx(want["cause"][key], abs=0.01)


def test_the_delayed_rank_and_its_region_are_named_in_every_step():
    doc = document(sample("torch_ddp", "delayed"))
    assert {s["straggler"] for s in doc["steps"]} == {"rank3"}
    assert {s["cause"]["region"] for s in doc["steps"]} == {"load_batch"}
    # rank 3 slept 30 ms in load_batch: that is the excess, every step
    assert all(29_000 < s["cause"]["excess"] < 31_000 for s in doc["steps"])
    assert all(i["last"] == "rank3" for i in doc["collectives"])
    # inherited lateness is charged once, at each step's first bucket
    assert all(s["instance"] % 5 == 0 for s in doc["steps"])
    first = [i for i in doc["collectives"] if i["instance"] % 5 == 0]
    later = [i for i in doc["collectives"] if i["instance"] % 5]
    assert all(not i["chained"] for i in first) and all(i["chained"] for i in later)


def test_a_sleep_outside_any_region_shows_as_time_with_no_event():
    doc = document(sample("torch_ddp", "outside"))
    assert {s["straggler"] for s in doc["steps"]} == {"rank3"}
    assert {s["cause"]["region"] for s in doc["steps"]} == {"(no event)"}
    # rank 3 slept 30 ms outside any region; the machine was busy, so more or less
    assert all(20_000 < s["cause"]["excess"] < 40_000 for s in doc["steps"])


def test_the_json_has_the_issues_schema():
    doc = document(sample("torch_ddp", "balanced"))
    inst = doc["collectives"][0]
    assert {"instance", "step", "op", "size", "skew", "last", "arrival", "wait"} <= set(inst)
    assert set(inst["arrival"]) == set(inst["wait"]) == set(doc["profiles"])
    assert inst["wait"][inst["last"]] == 0
    step = doc["steps"][0]
    assert {"step", "straggler", "lateness", "cause"} <= set(step)
    assert set(step["cause"]) == {"region", "excess", "rank_us", "others_us"}


def test_one_step_text():
    text = session_of(sample("torch_ddp", "delayed")).execute("collectives -step 4").text
    assert "5 instances in 1 step" in text and "One host (localhost)" in text
    row = next(line for line in text.splitlines() if line.startswith("4     rank3"))
    assert row.split()[2] == "load_batch"


# -- the synthetic NCCL job: (process group, Seq) ----------------------------

def test_seq_matching_finds_the_planted_facts():
    doc = document(sample("synthetic_nccl"))
    assert doc["matching"] == BY_SEQ and doc["mismatch"] is None
    ops = [(i["op"], i["group"], i["seq"]) for i in doc["collectives"]]
    assert ops[:4] == [("broadcast", "1", 0), ("allreduce", "0", 0), ("allreduce", "0", 1),
                       ("allreduce", "0", 2)]
    broadcast = doc["collectives"][0]
    assert set(broadcast["arrival"]) == {"rank0", "rank1"}  # group "1" only
    steps = {s["step"]: s for s in doc["steps"]}
    assert steps[0]["straggler"] == "rank2" and steps[0]["cause"]["region"] == "load_batch"
    assert steps[0]["cause"]["rank_us"] == pytest.approx(12_000, abs=1)
    assert steps[1]["straggler"] == "rank1" and steps[1]["cause"]["region"] == "(no event)"
    assert 8_500 < steps[1]["cause"]["excess"] < 9_500
    # NCCL: the kernels' starts too; the second bucket's kernel waited for the first
    second = doc["collectives"][2]
    assert second["device_skew"] < second["skew"] / 10
    clock = doc["clock"]
    assert not clock["shared"] and set(clock["hosts"]) == {"hosta", "hostb"}
    assert clock["offsets"]["hostb"] == pytest.approx(400, abs=5)
    assert "assume their clocks agree" in clock["text"]


def _rewrite(src: str, dst: str, change) -> None:
    """Copy the trace folder ``src`` to ``dst``, each document passed through change(rank, doc)."""
    os.makedirs(dst)
    for name in sorted(os.listdir(src)):
        with gzip.open(os.path.join(src, name), "rt") as fh:
            doc = json.load(fh)
        change(doc["distributedInfo"]["rank"], doc)
        with gzip.open(os.path.join(dst, name), "wt") as fh:
            json.dump(doc, fh)


def test_group_order_matching_without_sequence_numbers(tmp_path):
    def drop_seq(rank, doc):
        for ev in doc["traceEvents"]:
            ev.get("args", {}).pop("Seq", None)
    _rewrite(sample("synthetic_nccl"), str(tmp_path / "noseq"), drop_seq)
    doc = document(str(tmp_path / "noseq"))
    with_seq = document(sample("synthetic_nccl"))
    assert doc["matching"] == BY_GROUP_ORDER
    assert [(i["op"], i["last"], i["skew"]) for i in doc["collectives"]] == [
        (i["op"], i["last"], i["skew"]) for i in with_seq["collectives"]]
    assert [s["straggler"] for s in doc["steps"]] == [s["straggler"] for s in with_seq["steps"]]


# -- disagreements stop the matching ------------------------------------------

def test_a_size_mismatch_in_step_order_stops_there(tmp_path):
    def resize(rank, doc):
        if rank == 2:
            calls = [e for e in doc["traceEvents"] if e.get("name") == "c10d::allreduce_"]
            calls.sort(key=lambda e: e["ts"])
            calls[2]["args"]["Input Dims"] = [[[7]], [], [], [], [], []]
    _rewrite(sample("torch_ddp", "delayed"), str(tmp_path / "bad"), resize)
    doc = document(str(tmp_path / "bad"))
    assert len(doc["collectives"]) == 2
    assert doc["mismatch"].startswith("step 2, collective #3: the ranks disagree on the size")
    assert "rank2 7" in doc["mismatch"] and doc["mismatch"].endswith("matching stops there")
    text = run_cli(["--profile_path=" + str(tmp_path / "bad"), "collectives"])
    assert text.code == 0 and "Note: step 2, collective #3" in text.out


def test_a_missing_call_in_step_order_stops_there(tmp_path):
    def drop(rank, doc):
        if rank == 1:
            calls = sorted((e for e in doc["traceEvents"] if e.get("name") == "c10d::allreduce_"),
                           key=lambda e: e["ts"])
            doc["traceEvents"].remove(calls[9])  # step 3's last bucket
    _rewrite(sample("torch_ddp", "balanced"), str(tmp_path / "short"), drop)
    doc = document(str(tmp_path / "short"))
    assert len(doc["collectives"]) == 9
    assert doc["mismatch"] == ("step 3: rank0 has a collective call #5 (allreduce) that rank1 "
                               "has not; matching stops there")


def test_an_op_mismatch_with_seq_stops_there(tmp_path):
    def rename(rank, doc):
        if rank == 3:
            for ev in doc["traceEvents"]:
                args = ev.get("args", {})
                if args.get("Seq") == 4 and args.get("Process Group Name") == "0":
                    args["Collective name"] = "allgather"
    _rewrite(sample("synthetic_nccl"), str(tmp_path / "op"), rename)
    doc = document(str(tmp_path / "op"))
    assert doc["mismatch"].startswith("group 0, Seq 4: the ranks disagree on the op")
    assert [i["seq"] for i in doc["collectives"] if i["group"] == "0"] == [0, 1, 2, 3]


# -- the rules, on calls made here --------------------------------------------

def _rank(rank, calls, regions=()):
    return RankCollectives([CollectiveCall(a, b, "allreduce", thread="1", step=0, size=8)
                            for a, b in calls], sorted(Region(*r) for r in regions),
                           [(0, 0.0, 1000.0)], rank=rank, host="h", base_ns=1)


def test_inherited_lateness_is_charged_once_and_a_blocking_call_resets_it():
    # async chain: rank1 is 100 late at the first call and stays 100 late at the next
    # two; then a blocking call everyone leaves together, and rank0 is 30 late after it
    r0 = _rank(0, [(10, 11), (20, 21), (30, 31), (140, 200), (260, 261)])
    r1 = _rank(1, [(110, 111), (120, 121), (130, 131), (190, 200), (230, 231)])
    result = align([("a", r0), ("b", r1)])
    late = [(i.chained, round(i.lateness["a"]), round(i.lateness["b"]))
            for i in result.instances]
    assert late == [(False, 0, 100), (True, 0, 0), (True, 0, 0), (False, 0, 50),
                    (False, 30, 0)]
    assert result.steps[0].straggler == "b" and result.steps[0].lateness["b"] == 150


def test_the_cause_is_the_region_with_the_largest_excess_of_wall_time():
    regions_a = [(0, 5, "load_batch"), (5, 50, "forward")]
    regions_b = [(0, 40, "load_batch"), (40, 85, "forward")]
    regions_c = [(0, 6, "load_batch"), (6, 50, "forward")]
    ranks = [("a", _rank(0, [(50, 51)], regions_a)), ("b", _rank(1, [(90, 91)], regions_b)),
             ("c", _rank(2, [(52, 53)], regions_c))]
    cause = align(ranks).steps[0].cause
    assert (cause.region, cause.rank_us, cause.others_us, cause.excess) == (
        "load_batch", 40, 5.5, 34.5)


def test_time_with_no_event_can_be_the_cause():
    ranks = [("a", _rank(0, [(50, 51)], [(0, 50, "forward")])),
             ("b", _rank(1, [(90, 91)], [(0, 50, "forward")]))]
    cause = align(ranks).steps[0].cause
    assert (cause.region, cause.rank_us, cause.others_us) == ("(no event)", 40, 0)


# -- routes, outputs and mistakes ------------------------------------------------

def test_the_parallel_load_carries_the_calls():
    jobs, _ = jobs_of(Inputs(profile_path=sample("synthetic_nccl")))
    loaded = load_many([(j.name, j.inputs) for j in jobs], workers=2)
    here = document(sample("synthetic_nccl"))
    result = align([(j.name, j.model.collectives()) for j in loaded])
    assert [i.last for i in result.instances] == [i["last"] for i in here["collectives"]]
    assert all(not j.model.later_notes for j in loaded)  # no profile was read again


def test_the_dask_route_carries_the_calls():
    distributed = pytest.importorskip("distributed")
    jobs, _ = jobs_of(Inputs(profile_path=sample("torch_ddp", "delayed")))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        loaded = load_many([(j.name, j.inputs) for j in jobs], scheduler=cluster.scheduler_address)
    result = align([(j.name, j.model.collectives()) for j in loaded])
    here = document(sample("torch_ddp", "delayed"))
    assert [round(i.skew, 3) for i in result.instances] == [i["skew"] for i in here["collectives"]]
    assert [v.cause.region for v in result.steps] == ["load_batch"] * 6
    assert all(not j.model.later_notes for j in loaded)


def test_profile_options_choose_the_ranks(tmp_path):
    ddp = sample("torch_ddp", "delayed")
    files = sorted(os.listdir(ddp))
    argv = ["--profile", "a=" + os.path.join(ddp, files[0]),
            "--profile", "b=" + os.path.join(ddp, files[3]), "collectives", "-output", "json"]
    run = run_cli(argv)
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    assert doc["profiles"] == ["a", "b"] and {i["last"] for i in doc["collectives"]} == {"b"}


def test_timeline_links_each_instances_arrivals(tmp_path):
    out = tmp_path / "coll.json"
    run = run_cli(["--profile_path=" + sample("synthetic_nccl"), "collectives", "-output",
                   "timeline:outfile=%s" % out])
    assert run.code == 0, run.err
    events = json.loads(out.read_text())["traceEvents"]
    flows = [e for e in events if e["ph"] in "stf" and e.get("cat") == "arrival"]
    by_id: dict = {}
    for e in flows:
        by_id.setdefault(e["id"], []).append(e)
    assert len(by_id) == 12
    for chain in by_id.values():
        phases = [e["ph"] for e in sorted(chain, key=lambda e: e["ts"])]
        assert phases[0] == "s" and phases[-1] == "f" and set(phases[1:-1]) <= {"t"}
    names = {e["args"]["name"] for e in events if e.get("name") == "process_name"}
    assert {"rank0", "rank1", "rank2", "rank3", "Instances"} <= names
    assert min(e["ts"] for e in events if "ts" in e and e["ph"] != "M") >= 0


@pytest.mark.parametrize("argv,message", [
    (["--profile_path=" + sample("torch_cnn")], "needs at least two profiles"),
    (["--profile_path=" + sample("torch_ranks")], "collective calls"),
    (["--profile_path=" + sample("torch_ddp", "delayed"), "-step", "9"], "no collective is "
     "matched in step 9; steps with collectives: 2 3 4 5 6 7"),
    (["--profile_path=" + sample("torch_ddp", "delayed"), "-output", "pprof:outfile=x"],
     "collectives cannot write -output pprof"),
    (["--profile_path=" + sample("torch_ddp", "delayed"), "-profiles", "rank1"],
     "at least two profiles"),
])
def test_mistakes_are_one_line(argv, message):
    run = run_cli(argv[:1] + ["collectives"] + argv[1:])
    assert run.code != 0 and run.out == ""
    lines = [line for line in run.err.splitlines() if not line.startswith("tfprof: ")
             or "collective" in line or "profiles" in line]
    assert any(message in line for line in lines), run.err
    assert "Traceback" not in run.err


def test_synthetic_sample_is_what_its_script_writes(tmp_path):
    import runpy
    out = tmp_path / "nccl"
    runpy.run_path(sample("make_nccl_synthetic.py"), run_name="not_main")["main"](str(out))
    for name in os.listdir(sample("synthetic_nccl")):
        with gzip.open(out / name) as a, gzip.open(sample("synthetic_nccl", name)) as b:
            assert json.load(a) == json.load(b)
    shutil.rmtree(out)


# -- steps -profiles all and advise read the arrivals -------------------------------

@pytest.mark.parametrize("run", ["balanced", "delayed", "outside"])
def test_steps_over_ranks_name_the_straggler_by_arrival(run):
    with open(os.path.join(GOLDEN, "torch_ddp_%s.json" % run)) as fh:
        ref = json.load(fh)
    doc = document(sample("torch_ddp", run), "steps -profiles all -output json")
    assert [(s["step"], s["profile"], s["by"]) for s in doc["stragglers"]] == [
        (s["step"], s["straggler"], "arrival") for s in ref["steps"]]
    assert [s["cause"] for s in doc["stragglers"]] == [s["cause"]["region"]
                                                       for s in ref["steps"]]


def test_steps_over_ranks_without_collectives_keep_the_walls():
    run = run_cli(["--profile_path=" + sample("torch_ranks"), "steps", "-profiles", "all",
                   "-output", "json"])
    assert {s["by"] for s in json.loads(run.out)["stragglers"]} == {"wall"}


def test_advise_names_the_rank_and_the_cause():
    reply = session_of(sample("torch_ddp", "delayed")).execute(
        "advise -checkers StragglerChecker")
    assert len(reply.text.strip().splitlines()) == 2
    line = reply.text.strip().splitlines()[1]
    assert line.startswith("straggler: rank3 arrives last at 30 of 30 all-reduces and is the "
                           "straggler of 6 of 6 steps, ")
    assert "late at each step's first all-reduce; before it, its `load_batch` region takes " \
           "30 ms against " in line


def test_advise_names_time_with_no_event():
    text = session_of(sample("synthetic_nccl")).execute("advise -checkers StragglerChecker").text
    assert ("rank1 arrives last at 4 of 12 collectives and is the straggler of 1 of 3 steps, "
            "9.0 ms late" in text)
    assert "it spends 9.1 ms in no event at all" in text


def test_a_trace_without_distributed_info_is_not_read(tmp_path):
    def strip(rank, doc):
        del doc["distributedInfo"]
    _rewrite(sample("torch_ddp", "balanced"), str(tmp_path / "plain"), strip)
    run = run_cli(["--profile_path=" + str(tmp_path / "plain"), "collectives"])
    assert run.code != 0 and "none has any" in run.err
