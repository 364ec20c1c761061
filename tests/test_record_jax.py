"""`tfprof record` end to end on JAX toy programs in tests/record_scripts/ (needs JAX).

Skipped without JAX. Run them with a Python that has both JAX and this checkout,
e.g. ``.venv-jax/bin/python -m pytest -m jax``.
"""

from __future__ import annotations

import glob
import os
import re

import pytest

from conftest import needs  # noqa: E402

needs("jax")
pytestmark = pytest.mark.jax

from tfprof_shell.load.record_dir import list_profiles  # noqa: E402

import record_helpers  # noqa: E402
from record_helpers import (DEFAULT_OPTIONS, only_process, record_env,  # noqa: E402
                            three_complete_steps)


def _env():
    return record_env()


def record(tmp_path, script, *args, options=DEFAULT_OPTIONS):
    """Record ``script`` into tmp_path/rec; (completed process, output folder, manifest)."""
    return record_helpers.record(tmp_path, script, *args, env=_env(), options=options)


def programs_in_step(tfprof, out, step):
    """{jitted program: thunk executions} in ``step`` (scope view, first level)."""
    run = tfprof(["--profile_path=" + out, "scope", "-step", str(step), "-select", "occurrence",
                  "-max_depth", "2"])
    assert run.code == 0, run.err
    found = {}
    for line in run.out.splitlines():
        m = re.fullmatch(r"  (\S+) \(\d+/(\d+)\|\d+/\d+\)", line)
        if m and int(m.group(2)):
            found[m.group(1)] = int(m.group(2))
    return found


def test_jitted_loop(tmp_path, tfprof):
    run, out, doc = record(tmp_path, "jax_loop.py", 12)
    assert run.returncode == 4, run.stderr
    assert re.fullmatch(r"final loss \d+\.\d+, last score -?\d+\.\d+\n", run.stdout)
    proc = three_complete_steps(run, doc, "jax", "jax.jit")
    assert doc["exit_code"] == 4 and "jax" in proc["frameworks"]
    assert glob.glob(os.path.join(out, proc["folder"], "plugins", "profile", "*", "*.xplane.pb"))
    (profile,) = list_profiles(out)
    assert profile.name == proc["folder"]
    # each step holds one run of the training step (its thunks, all finished inside its
    # marker); the evaluation called (and read) after step 4's call is in step 4 only
    steps = [programs_in_step(tfprof, out, s) for s in (3, 4, 5)]
    train = [s.get("jit(train_step)") for s in steps]
    assert train[0] and train == [train[0]] * 3, steps
    assert [sorted(s) for s in steps] == [["jit(train_step)"],
                                          ["jit(evaluate)", "jit(train_step)", "jit_evaluate"],
                                          ["jit(train_step)"]]
    op = tfprof(["--profile_path=" + out, "op", "-step", "4", "-select", "micros,occurrence"])
    assert op.code == 0 and "dot_general" in op.out
    # the code view holds the program's lines, not the recorder's proxy around jax.jit
    code = tfprof(["--profile_path=" + out, "code", "-step", "4", "-max_depth", "4"])
    assert code.code == 0 and "jax_loop.py:33:main" in code.out
    assert "jax_loop.py:17:train_step" in code.out and "jax_trace.py" not in code.out


def test_program_with_its_own_trace(tmp_path, tfprof):
    own = tmp_path / "own"
    run, out, doc = record(tmp_path, "jax_own_trace.py", own,
                           options=("--warmup", "2", "--max_steps", "5"))
    assert run.returncode == 0 and run.stdout == "own traces written\n", run.stderr
    for name in ("first", "second"):  # both of the program's own traces were written
        assert glob.glob(str(own / name / "plugins" / "profile" / "*" / "*.xplane.pb"))
    proc = only_process(doc)
    # steps 1-2 were the program's: ours waited, took 3-5, and gave way at step 6
    assert proc["steps"] == [3, 4, 5] and proc["status"] == "gave way"
    assert "waited for the program's own profiler to stop" in proc["notes"]
    assert "gave way to the program's own profiler" in proc["notes"]
    steps = [programs_in_step(tfprof, out, s) for s in (3, 4, 5)]
    assert all(list(s) == ["jit(train_step)"] for s in steps), steps
