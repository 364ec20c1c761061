"""HTA run live on torch_cnn and on the synthetic cuda_sync trace gives the committed
goldens (skipped without HTA: ``pip install HolisticTraceAnalysis``; CI installs it and
runs this)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys

import pytest
from conftest import ROOT, needs, sample

needs("hta")
pytestmark = pytest.mark.hta


def _hta_steps(folder: str) -> dict:
    spec = importlib.util.spec_from_file_location(
        "hta_steps", os.path.join(ROOT, "bench", "hta_steps.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules["hta_steps"] = module
    spec.loader.exec_module(module)
    return module.hta_steps(folder)


def _golden(name: str) -> dict:
    with open(os.path.join(ROOT, "tests", "golden", "hta", name), encoding="utf-8") as fh:
        return json.load(fh)


def test_hta_live_matches_the_golden():
    assert _hta_steps(sample("torch_cnn"))["steps"] == _golden("torch_cnn.steps.json")["steps"]


def test_hta_live_matches_the_cuda_sync_golden(tmp_path):
    shutil.copy(sample("torch_generations", "synthetic_cuda_sync.pt.trace.json.gz"), tmp_path)
    assert _hta_steps(str(tmp_path))["steps"] == _golden(
        "synthetic_cuda_sync.steps.json")["steps"]
