"""HTA run live gives the committed critical-path goldens, and ours matches it (skipped
without HTA: ``pip install HolisticTraceAnalysis 'pandas<3'``; CI installs it and runs
this)."""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest
from conftest import ROOT, needs
from critpath_compare import compare, golden
from test_critpath import DATA_LOADING, ROUNDING_DIFFERS, SHORT_EVENTS, our_path

needs("hta")
pytestmark = pytest.mark.hta


def _maker():
    path = os.path.join(ROOT, "tests", "golden", "hta", "make_critpath_goldens.py")
    spec = importlib.util.spec_from_file_location("make_critpath_goldens", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_critpath_goldens"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("case", ["torch_cnn.step2", "mixed.step1", "gpu_bound.step2"])
def test_hta_live_gives_the_golden_and_ours_matches_it(case, monkeypatch):
    monkeypatch.delenv("HTA_DISABLE_NS_ROUNDING", raising=False)
    folder, step = _maker().CASES[case]
    live = _maker().hta_critical_path(os.path.join(ROOT, folder), step)
    gold = golden(case, "rounded")
    assert sorted(map(tuple, live["events"])) == sorted(map(tuple, gold["events"]))
    assert live["length"] == gold["length"]
    c = compare(our_path(case), live)
    assert c.recall >= 0.95 and c.precision >= 0.95
    if case not in SHORT_EVENTS | DATA_LOADING | set(ROUNDING_DIFFERS):
        assert c.length_error <= 0.05
