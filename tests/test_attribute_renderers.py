"""Every `-select` attribute with every renderer, on one profile and on several.

The metrics table must give each renderer what it reads (a legend label, a
unit, a diff/aggregate label), and each view command with one attribute
must either render or refuse with a UserError: text, file, JSON, timeline,
pprof and none outputs, alone, as a diff (-base) and as an aggregate
(-profiles, with and without -by_profile). A bug here was a KeyError for
`-select occurrence` in the multi-profile text.
"""

from __future__ import annotations

import os

import pytest

from conftest import run_cli, sample
from tfprof_shell import metrics
from tfprof_shell.api import Profile
from tfprof_shell.errors import UserError
from tfprof_shell.formats import FORMATTERS
from tfprof_shell.outputs import OUTPUT_KINDS
from tfprof_shell.render.json_out import UNIT_NAMES

VIEWS = ("scope", "graph", "op", "code")
MODES = {"single": "", "diff": "-base before", "aggregate": "-profiles all",
         "by_profile": "-profiles all -aggregate max -by_profile"}


def test_every_attribute_row_has_what_each_renderer_reads():
    for name, attr in metrics.ATTRIBUTES.items():
        assert attr.name == name
        assert attr.label and attr.legend(True) and attr.legend(False), name
        assert attr.help.endswith(".") and attr.doc, name
        if attr.stat is not None:
            assert attr.unit in FORMATTERS and attr.unit in UNIT_NAMES, name
            assert attr.number_label(), name
        else:
            assert not attr.unit, name
        if attr.pprof_comment:
            assert attr.stat is not None, name
    assert set(metrics.PPROF_ATTRIBUTES) <= set(metrics.ATTRIBUTES)


@pytest.fixture(scope="module")
def pair() -> Profile:
    prof = Profile.load(profile_path=sample("mlp_after", "profile"))
    prof.add("before", sample("mlp_before", "profile"))
    return prof


def _output(kind: str, tmp: str, n: int) -> str:
    spec = OUTPUT_KINDS[kind]
    if kind == "timeline":
        return "timeline:outfile=%s" % os.path.join(tmp, "t%d.json" % n)
    if kind == "pprof":
        return "pprof:outfile=%s" % os.path.join(tmp, "p%d.pb.gz" % n)
    if "outfile" in spec.required or kind == "json":
        return "%s:outfile=%s" % (kind, os.path.join(tmp, "f%d" % n))
    return kind


@pytest.mark.parametrize("mode", sorted(MODES))
def test_each_attribute_renders_or_refuses_in_every_output(pair, mode, tmp_path):
    session = pair.session
    before = session.options
    n = 0
    outcomes = set()
    for attr in metrics.ATTRIBUTES:
        for kind in OUTPUT_KINDS:
            for view in VIEWS:
                n += 1
                line = "%s -select %s -output %s %s" % (view, attr, _output(kind, str(tmp_path), n),
                                                        MODES[mode])
                try:
                    session.execute(line)
                    outcomes.add("ok")
                except UserError:
                    outcomes.add("refused")
                assert session.options == before, line
    assert "ok" in outcomes


@pytest.mark.parametrize("attr", sorted(metrics.ATTRIBUTES))
def test_each_numeric_attribute_labels_a_diff_and_an_aggregate(pair, attr):
    info = metrics.ATTRIBUTES[attr]
    if info.stat is None:
        pytest.skip("descriptive attribute: multi-profile views refuse it alone")
    for extra in ("-base before", "-profiles all -by_profile"):
        text = pair.session.execute("op -select %s %s" % (attr, extra)).text
        legend = text.splitlines()[1]
        assert info.number_label() in legend, (attr, legend)


def test_the_torch_rank_folder_aggregates_occurrence():
    run = run_cli(["--profile_path=" + sample("torch_ranks"), "op", "-profiles", "all",
                   "-select", "occurrence"])
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert lines[1] == "node name | run count (sum)"
    assert lines[2].startswith("_TFProfRoot (")


def test_one_shot_reports_a_bug_on_one_line(monkeypatch):
    from tfprof_shell.views.cache import ProfileViews

    def broken(self, view, opts):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(ProfileViews, "show", broken)
    monkeypatch.delenv("TFPROF_DEBUG", raising=False)
    run = run_cli(["--profile_path=" + sample("tiny_mlp", "profile"), "scope"])
    assert run.code == 1
    assert run.out == ""
    assert run.err.splitlines() == ["tfprof: internal error: ZeroDivisionError: boom (please "
                                    "report it; TFPROF_DEBUG=1 shows the traceback)"]
    monkeypatch.setenv("TFPROF_DEBUG", "1")
    run = run_cli(["--profile_path=" + sample("tiny_mlp", "profile"), "scope"])
    assert run.code == 1
    assert "Traceback (most recent call last)" in run.err
    assert run.err.splitlines()[-1].startswith("tfprof: internal error: ZeroDivisionError")


@pytest.mark.parametrize("argv,module,name", [
    (["capture", "localhost:1"], "tfprof_shell.capture.cli", "main"),
    (["top", "localhost:1"], "tfprof_shell.capture.top", "main"),
    (["record", "--", "true"], "tfprof_shell.record.launcher", "main"),
])
def test_a_bug_in_a_subcommand_is_one_line_too(argv, module, name, monkeypatch):
    import importlib

    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(importlib.import_module(module), name, broken)
    monkeypatch.delenv("TFPROF_DEBUG", raising=False)
    run = run_cli(argv)
    assert run.code == 1
    assert run.err.splitlines() == ["tfprof: internal error: ZeroDivisionError: boom (please "
                                    "report it; TFPROF_DEBUG=1 shows the traceback)"]


def test_one_shot_prints_no_python_traceback_in_a_subprocess(tmp_path):
    """The console entry point itself (not only main()) keeps to one line."""
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    env.pop("TFPROF_DEBUG", None)
    proc = subprocess.run([sys.executable, "-m", "tfprof_shell",
                           "--profile_path=" + sample("torch_ranks"), "op", "-base", "rank1",
                           "-select", "occurrence"],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path),
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout.splitlines()[1] == "node name | run count: rank0 vs rank1, delta, ratio"
