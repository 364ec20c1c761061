#!/usr/bin/env python3
"""Regenerate the JAX-on-CPU goldens (``<case>.txt``) with tfprof-shell itself.

XProf shows nothing for a CPU JAX profile and TensorFlow's engine cannot read
one, so no other tool makes these outputs: tfprof-shell does, and
``tests/test_jax_cpu.py`` checks every figure in them against facts from JAX
(the thunk events in the sample's file and ``compiled_hlo.json``, JAX's own
``compile().as_text()`` of the programs). Run from the repository root after
re-recording ``sample_profiles/jax_cpu``::

    python tests/golden/jax_cpu/make_jax_cpu_goldens.py
"""

from __future__ import annotations

import io
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PROFILE = "sample_profiles/jax_cpu"
#: case name -> command line
CASES = {
    "scope.step_11": "scope -step 11 -max_depth 20 -select micros,occurrence",
    "op.step_11": "op -step 11 -max_depth 100 -select micros,occurrence -order_by micros",
    "code.step_11": "code -step 11 -max_depth 20 -select micros",
    "graph.step_11": "graph -step 11 -max_depth 3 -select micros,occurrence",
}


def main() -> None:
    sys.path.insert(0, ROOT)
    from tfprof_shell.cli import main as tfprof

    os.chdir(ROOT)
    for name, command in CASES.items():
        out, err = io.StringIO(), io.StringIO()
        code = tfprof(["--profile_path=" + PROFILE] + command.split(), stdout=out, stderr=err)
        if code != 0:
            raise SystemExit("%s: exit %d: %s" % (name, code, err.getvalue()))
        with open(os.path.join(HERE, name + ".txt"), "w", encoding="utf-8") as fh:
            fh.write(out.getvalue())
        print("%s: %s" % (name, command))


if __name__ == "__main__":
    main()
