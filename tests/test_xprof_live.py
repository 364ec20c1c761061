"""XProf run live gives the committed goldens the TF2/JAX comparisons read (skipped
without XProf: ``pip install xprof``; CI installs the release the goldens name and runs
this), so those goldens are XProf's own output and stay so.

Each sample's ``.xplane.pb`` is copied to a scratch run folder first: XProf caches what
it computes beside the file it reads.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import shutil
import sys

from importlib.metadata import version as xprof_version

import pytest
from conftest import ROOT, needs

from tfprof_shell.load import Inputs, load_model
from tfprof_shell.views.memory import memory_result

needs("xprof.convert.raw_to_tool_data", "xprof")
pytestmark = pytest.mark.xprof
XPROF = os.path.join(ROOT, "tests", "golden", "xprof")


def _script(name: str):
    """One of the golden-making scripts beside the goldens, as a module."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(XPROF, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _copy(sample: str, tmp_path) -> str:
    """The sample's one .xplane.pb, copied into a scratch run folder."""
    found = glob.glob(os.path.join(ROOT, "sample_profiles", sample, "**", "*.xplane.pb"),
                      recursive=True)
    assert len(found) == 1, found
    run = tmp_path / "plugins" / "profile" / "run"
    run.mkdir(parents=True)
    return str(shutil.copy(found[0], run / os.path.basename(found[0])))


def _golden(name: str) -> dict:
    with open(os.path.join(XPROF, name), encoding="utf-8") as fh:
        return json.load(fh)


TABLES = _script("make_xprof_goldens")
MEMORY = _script("make_xprof_memory")
STEPS = _script("make_xprof_steps")


@pytest.mark.parametrize("sample", TABLES.SAMPLES)
@pytest.mark.parametrize("tool", sorted(TABLES.COLUMNS))
def test_xprof_tables_are_the_goldens(sample, tool, tmp_path):
    golden = _golden("%s.%s.json" % (sample, tool))
    assert "xprof %s:" % xprof_version("xprof") in golden["made_by"]
    assert TABLES.convert(_copy(sample, tmp_path), tool) == golden["tables"]


@pytest.mark.parametrize("name", sorted(MEMORY.SAMPLES))
def test_xprof_memory_profile_is_the_golden(name, tmp_path):
    golden = _golden("%s.memory_profile.json" % name)
    assert golden["xprof"] == xprof_version("xprof")
    live = MEMORY.memory_profile(_copy(MEMORY.SAMPLES[name], tmp_path))
    assert live == golden["allocators"]


@pytest.mark.parametrize("name", sorted(MEMORY.SAMPLES))
def test_our_peak_is_xprofs_live(name, tmp_path):
    """The peak `memory` finds on each allocator equals the one XProf computes now."""
    path = _copy(MEMORY.SAMPLES[name], tmp_path)
    live = MEMORY.memory_profile(path)
    ours = memory_result(load_model(Inputs(profile_path=path)), "op")
    assert sorted(d.name for d in ours.devices) == sorted(live)
    for d in ours.devices:
        summary = live[d.name]["profileSummary"]
        assert d.peak.nbytes == int(summary["peakStats"]["peakBytesInUse"]), d.name
        assert d.capacity == int(summary["memoryCapacity"]), d.name


@pytest.mark.parametrize("sample", STEPS.SAMPLES)
def test_xprof_step_table_is_the_golden(sample, tmp_path):
    golden = _golden("%s.steps.json" % sample)
    assert golden["made_by"].startswith("xprof %s:" % xprof_version("xprof"))
    live = STEPS.step_table(_copy(sample, tmp_path))
    assert live == {"columns": golden["columns"], "rows": golden["rows"]}
