"""A JAX program profiled on the CPU now, loaded, and checked against JAX itself (needs JAX).

The program (run in its own process: one profiler per process) jits a
gradient step with a ``jax.lax.fori_loop`` (a while thunk with its body's
thunks inside) and a small element-wise program, runs three annotated steps
under ``jax.profiler.start_trace``, and writes each program's
``jax.jit(f).lower(...).compile().as_text()``. Every node's HLO ops must be
instructions of those compiled programs and the node must be named by the
instruction's ``op_name``; the time must add up to the thunk events' own.
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import needs

needs("jax")
pytestmark = pytest.mark.jax

from test_jax_cpu import SampleFacts, _us  # noqa: E402
from tfprof_shell.load.xplane import load_xplane  # noqa: E402
from tfprof_shell.model import stats as S  # noqa: E402
from tfprof_shell.options import DEFAULTS  # noqa: E402
from tfprof_shell.session import Session  # noqa: E402

PROGRAM = r'''
import json, sys
import jax, jax.numpy as jnp

def f(w, x):
    def body(i, h):
        return jnp.tanh(h @ w) + 0.5 * h
    return jnp.sum(jax.lax.fori_loop(0, 3, body, x) ** 2)

def g(a):
    return jnp.exp(a) * 2.0

step, other = jax.jit(jax.value_and_grad(f)), jax.jit(g)
w = jnp.ones((64, 64)) * 0.01
x = jnp.ones((32, 64))
jax.block_until_ready((step(w, x), other(x)))
options = jax.profiler.ProfileOptions()
options.python_tracer_level = int(sys.argv[2])
jax.profiler.start_trace(sys.argv[1], profiler_options=options)
for n in range(3):
    with jax.profiler.StepTraceAnnotation("train", step_num=n):
        jax.block_until_ready((step(w, x), other(x)))
jax.profiler.stop_trace()
texts = [step.lower(w, x).compile().as_text(), other.lower(x).compile().as_text()]
with open(sys.argv[3], "w") as fh:
    json.dump(texts, fh)
'''

_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+) = (.*)$")
_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')
_MODULE = re.compile(r"^HloModule (\S+?),?\s")


def _instructions(text: str) -> tuple[str, dict[str, str]]:
    """(module name, instruction name -> op_name) of a compiled program's text."""
    module = _MODULE.match(text).group(1)
    out = {}
    for line in text.splitlines():
        m = _INSTRUCTION.match(line)
        if m and not line.lstrip().startswith(("HloModule", "ENTRY", "%fused", "//")):
            op = _OP_NAME.search(m.group(2))
            out[m.group(1)] = op.group(1) if op else ""
    return module, out


@pytest.fixture(scope="module", params=[0, 1], ids=["no_tracer", "python_tracer"])
def recorded(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("jax_cpu_live")
    script = tmp / "prog.py"
    script.write_text(PROGRAM)
    texts = tmp / "hlo.json"
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    subprocess.run([sys.executable, str(script), str(tmp / "logdir"), str(request.param),
                    str(texts)], check=True, env=env, timeout=300)
    (path,) = glob.glob(str(tmp / "logdir" / "plugins" / "profile" / "*" / "*.xplane.pb"))
    with open(texts) as fh:
        programs = dict(map(_instructions, json.load(fh)))
    return path, programs


def test_op_names_are_the_compiled_programs_instructions(recorded):
    path, programs = recorded
    model = load_xplane([path])
    assert model.steps == [0, 1, 2]
    assert model.nodes
    seen = set()
    for name, node in model.nodes.items():
        hlo_ops = [t.split(":", 1)[1] for t in node.op_types if t.startswith("hlo_op:")]
        assert hlo_ops, name
        for hlo_op in hlo_ops:
            owners = [(module, ins[hlo_op]) for module, ins in programs.items() if hlo_op in ins]
            assert owners, "%s: %s is no instruction of the compiled programs" % (name, hlo_op)
            assert any(name == (op_name or "%s/%s" % (module, hlo_op))
                       for module, op_name in owners), (name, owners)
            seen.add(hlo_op)
    assert any(op.startswith("while") for op in seen)  # the fori_loop


def test_times_add_up_to_the_thunk_events(recorded):
    path, programs = recorded
    facts = SampleFacts(path)
    names = set().union(*(ins for ins in programs.values()))
    assert {t[2] for t in facts.thunks} <= names  # every thunk is a compiled instruction
    session = Session(load_xplane([path]))
    for step in (0, 1, 2):
        root = session.show("scope", DEFAULTS.replace(max_depth=1000, step=step)).root
        want = sum(_us(d) for t, d in zip(facts.thunks, facts.self_ps)
                   if facts.step_of(t[0]) == step)
        assert want > 0 and root.total[S.CPU] == want


def test_the_code_view_shows_the_program_lines(recorded):
    path, _ = recorded
    text = Session(load_xplane([path])).execute("code -max_depth 8 -select micros").text
    assert "prog.py" in text and ":f" in text
