"""HTA run live on torch_cnn gives the committed golden (skipped without HTA:
``pip install HolisticTraceAnalysis``; CI installs it and runs this)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys

import pytest
from conftest import ROOT, needs, sample

needs("hta")
pytestmark = pytest.mark.hta


def test_hta_live_matches_the_golden():
    spec = importlib.util.spec_from_file_location(
        "hta_steps", os.path.join(ROOT, "bench", "hta_steps.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules["hta_steps"] = module
    spec.loader.exec_module(module)
    live = module.hta_steps(sample("torch_cnn"))
    with open(os.path.join(ROOT, "tests", "golden", "hta", "torch_cnn.steps.json")) as fh:
        golden = json.load(fh)
    assert live["steps"] == golden["steps"]
