"""`critpath -precision us`: with every event rounded inward to whole µs as HTA rounds
them, the path is HTA's own exactly (its events, its length and what bounds it), against
the goldens HTA made with its default rounding (tests/golden/hta/*.critpath.rounded.json).

The one difference is HTA 0.5.0's lack of a data-loading node: on the trace with a
DataLoader, our path adds the loader's span; with that span read as a scope (what HTA
0.5.0 makes of it) the path is HTA's exactly there too.
"""

from __future__ import annotations

import pytest
from conftest import run_cli, sample
from critpath_compare import CASES, compare, golden
from test_critpath import DATA_LOADING, _model, our_path

from tfprof_shell.views.critpath import critical_paths, window_path
from tfprof_shell.views.critpath_result import Window
from tfprof_shell.views.critpath_rounding import rounded


def _rounded_path(case: str, data_loading: bool = True):
    path, step = CASES[case]
    if data_loading:
        return critical_paths(_model(path), step=step, precision="us").paths[0]
    inp = rounded(our_path(case, data_loading=False).input)
    marker = next(i for i, s in inp.steps.items() if s == step)
    e = inp.events[marker]
    return window_path(inp, Window(e[3], 0, e[0], e[1], step))


def _assert_exact(path, gold: dict) -> None:
    c = compare(path, gold)
    assert c.ours == c.theirs
    assert c.length == gold["length"]  # whole µs: no float rounding between the two
    assert {k: round(v, 3) for k, v in c.bounds.items()} == gold["by_bound"]


@pytest.mark.parametrize("case", sorted(set(CASES) - DATA_LOADING))
def test_rounded_path_is_htas_exactly(case):
    _assert_exact(_rounded_path(case), golden(case, "rounded"))


@pytest.mark.parametrize("case", sorted(DATA_LOADING))
def test_rounded_path_with_the_loader_as_a_scope_is_htas_exactly(case):
    _assert_exact(_rounded_path(case, data_loading=False), golden(case, "rounded"))
    gold = golden(case, "rounded")
    with_loader = _rounded_path(case)
    assert with_loader.length / 1000.0 > gold["length"]
    assert with_loader.by_bound["data_loading"] > 0


def test_the_default_keeps_nanoseconds_and_the_label_says_which():
    cnn = "--profile_path=" + sample("torch_cnn")
    ns = run_cli([cnn, "critpath", "-step", "2"])
    us = run_cli([cnn, "critpath", "-step", "2", "-precision", "us"])
    assert ns.code == us.code == 0
    assert "at the trace's ns precision" in ns.out
    assert "each event rounded inward to whole us as HTA rounds it" in us.out
    assert us.out.splitlines()[3].split()[:6] == ["ProfilerStep#2", "2", "2892.0", "9741.0",
                                                  "29.7%", "281"]


def test_precision_us_refuses_paths_that_are_not_htas():
    run = run_cli(["--profile_path=" + sample("jax_gpt"), "critpath", "-precision", "us"])
    assert run.code != 0
    assert run.err.strip().splitlines()[-1].endswith("use -precision ns")
    assert "Traceback" not in run.err
