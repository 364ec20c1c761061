"""Running `tfprof record` on the toy programs in tests/record_scripts/ (framework tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT
from tfprof_shell.record import layout

SCRIPTS = os.path.join(ROOT, "tests", "record_scripts")
DEFAULT_OPTIONS = ("--warmup", "3", "--max_steps", "3")


def record_env(**extra: str) -> dict:
    """This environment without a recording of its own, this checkout first, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in ("TFPROF_RECORD",)}
    env["PYTHONPATH"] = ROOT
    env.update(extra)
    return env


def record_argv(out, options, script, *args) -> list:
    """`tfprof record -o OUT OPTIONS -- python SCRIPT ARGS` (SCRIPT under record_scripts/)."""
    return ([sys.executable, "-m", "tfprof_shell", "record", "-o", str(out)] + list(options)
            + ["--", sys.executable, os.path.join(SCRIPTS, script)] + [str(a) for a in args])


def record(tmp_path, script, *args, env, options=DEFAULT_OPTIONS):
    """Record ``script`` into tmp_path/rec; (completed process, output folder, manifest)."""
    out = tmp_path / "rec"
    run = subprocess.run(record_argv(out, options, script, *args), cwd=str(tmp_path), env=env,
                         capture_output=True, text=True, timeout=300)
    doc = json.loads((out / layout.MANIFEST).read_text())
    return run, str(out), doc


def only_process(doc) -> dict:
    """The manifest's one process (asserting there is exactly one)."""
    assert len(doc["processes"]) == 1, doc["processes"]
    return doc["processes"][0]


def three_complete_steps(run, doc, kind: str, route: str) -> dict:
    """The one process, asserting it traced steps 3-5 of ``kind`` by ``route`` and said so."""
    assert run.stderr.splitlines()[-1].startswith("tfprof record: recorded 3 steps in 1 process")
    proc = only_process(doc)
    assert (proc["kind"], proc["route"], proc["steps"], proc["status"]) == \
        (kind, route, [3, 4, 5], "complete")
    return proc
