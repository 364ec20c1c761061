"""Shared fixtures: paths to the repository's sample profiles and an in-process CLI runner."""

from __future__ import annotations

import importlib
import io
import os
from dataclasses import dataclass, field
from typing import Optional, Sequence

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = os.path.join(ROOT, "sample_profiles")


# CI's framework virtualenvs name their framework here, so its tests fail instead of skipping.
REQUIRED_FRAMEWORKS = frozenset(filter(None, os.environ.get("TFPROF_TEST_REQUIRE", "").split(",")))


def needs(module: str, framework: Optional[str] = None):
    """Import an optional dependency for a test module, or skip the module without it.

    Where ``TFPROF_TEST_REQUIRE`` names ``framework`` (default: the module's top-level
    package), a missing module is an error instead, so CI never skips these tests silently.
    """
    framework = framework or module.split(".")[0]
    if framework in REQUIRED_FRAMEWORKS:
        return importlib.import_module(module)
    return pytest.importorskip(module)


def sample(*parts: str) -> str:
    """Absolute path of a file under sample_profiles/."""
    return os.path.join(SAMPLES, *parts)


@dataclass
class Run:
    code: int
    out: str
    err: str
    files: list[str] = field(default_factory=list)


def run_cli(argv: Sequence[str], cwd: Optional[str] = None, stdin: str = "") -> Run:
    """Run ``tfprof argv`` in-process (optionally in ``cwd``) and capture its streams."""
    from tfprof_shell.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    if cwd:
        os.chdir(cwd)
    try:
        code = main(list(argv), stdin=io.StringIO(stdin), stdout=out, stderr=err)
    finally:
        os.chdir(old)
    return Run(code, out.getvalue(), err.getvalue())


def golden_argv(case: dict) -> list[str]:
    """The tfprof argv of a tests/golden/cases.json case (input paths made absolute)."""
    inputs = case["inputs"]
    argv = []
    if "profile_path" in inputs:
        argv.append("--profile_path=" + os.path.join(ROOT, inputs["profile_path"]))
    if inputs.get("graph_path"):
        argv.append("--graph_path=" + os.path.join(ROOT, inputs["graph_path"]))
    if inputs.get("run_meta_path"):
        argv.append("--run_meta_path=" + ",".join(os.path.join(ROOT, p)
                                                   for p in inputs["run_meta_path"]))
    if inputs.get("op_log_path"):
        argv.append("--op_log_path=" + os.path.join(ROOT, inputs["op_log_path"]))
    return argv + case["command"].split(" ")


@pytest.fixture
def tfprof():
    """The in-process CLI runner."""
    return run_cli


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium through Playwright for a browser test module (closed after it)."""
    from playwright import sync_api
    from ui_tab import launch_chromium
    manager, b = launch_chromium(sync_api)
    yield b
    b.close()
    manager.__exit__(None, None, None)


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    """The folder the browser tests' screenshots go to: TFPROF_UI_SCREENSHOTS, else a
    temporary one."""
    folder = os.environ.get("TFPROF_UI_SCREENSHOTS") or str(tmp_path_factory.mktemp("shots"))
    os.makedirs(folder, exist_ok=True)
    return folder
