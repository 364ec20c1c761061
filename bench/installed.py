"""Our side of every benchmark runs as an installed copy would: from compiled bytecode.

``pip install`` compiles the package; a checkout run with
``PYTHONDONTWRITEBYTECODE`` set (as some shells and CI images do) would compile
every module again in each timed process, which no user pays. :func:`env`
gives the environment for our processes (this checkout first on the path, the
bytecode kept in a cache outside it) and compiles the package there once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def env() -> dict[str, str]:
    """The environment for a process running this checkout's tfprof-shell, its
    modules compiled (once per call of this function) into a bytecode cache."""
    out = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "TFPROF_DEBUG")}
    out["PYTHONPATH"] = ROOT + os.pathsep + out.get("PYTHONPATH", "")
    out["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "tfprof_bench_pycache")
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "tfprof_shell")],
                   check=True, env=out, stdout=subprocess.DEVNULL)
    return out
