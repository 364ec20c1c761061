"""What arms a program: ``PYTHONPATH`` (the armed folder first) and ``TFPROF_RECORD`` (settings).

``TFPROF_RECORD`` holds the settings as one line of JSON; ``off`` (or empty,
``0``, ``false``, ``no``) disables recording. Standard library only: the
recorder decodes the settings inside the user's program.
"""

from __future__ import annotations

import json
import os
from typing import Mapping, NamedTuple, Optional

ENV_VAR = "TFPROF_RECORD"
#: Values of TFPROF_RECORD that leave a program unarmed (armed/sitecustomize.py agrees).
OFF_VALUES = ("", "off", "0", "false", "no")
ARMED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "armed")

DEFAULT_WARMUP = 10
DEFAULT_EVERY = 1
DEFAULT_MAX_STEPS = 5


class Settings(NamedTuple):
    """One recording's settings, as the launcher passes them to every process.

    A NamedTuple rather than a dataclass: it is built in every armed process
    that imports a framework, and costs a fraction of a frozen dataclass to define.
    """

    #: The output folder (absolute); process folders go below it.
    dir: str
    #: Steps run untraced before the first traced one.
    warmup: int = DEFAULT_WARMUP
    #: Trace every N-th step after the warm-up.
    every: int = DEFAULT_EVERY
    #: Stop after this many traced steps.
    max_steps: int = DEFAULT_MAX_STEPS
    #: Record Python calls too (feeds the code view): TF2, JAX, and PyTorch (``with_stack``).
    python_tracer: bool = False
    #: PyTorch: record each op's input shapes (``record_shapes``).
    shapes: bool = False
    #: PyTorch: record memory allocations (``profile_memory``).
    memory: bool = False
    #: The job part of process folder names ("" = from TF_CONFIG, else the script's name).
    job: str = ""
    #: Set by the launcher: where each process that imported a framework leaves a status file.
    status_dir: str = ""


def is_off(value: Optional[str]) -> bool:
    """Whether a TFPROF_RECORD value disables recording."""
    return value is None or value.strip().lower() in OFF_VALUES


def encode(settings: Settings) -> str:
    """The TFPROF_RECORD value for ``settings`` (defaults and empty fields left out)."""
    default = Settings._field_defaults
    items = {k: v for k, v in settings._asdict().items()
             if k == "dir" or (v != default[k] and v != "")}
    return json.dumps(items, sort_keys=True, separators=(",", ":"))


def decode(value: str) -> Settings:
    """Settings from a TFPROF_RECORD value; ValueError if it is not valid."""
    try:
        items = json.loads(value)
    except ValueError:
        raise ValueError("%s is not JSON settings" % ENV_VAR) from None
    if not isinstance(items, dict) or not isinstance(items.get("dir"), str) or not items["dir"]:
        raise ValueError("%s does not name an output folder (\"dir\")" % ENV_VAR)
    known = dict(Settings._field_defaults, dir="")
    kwargs = {}
    for key, item in items.items():
        if key not in known:
            continue  # written by a newer tfprof-shell: ignored
        want = type(known[key])
        if type(item) is not want:  # noqa: E721 -- bool is not an int here
            raise ValueError("%s: %r must be a %s" % (ENV_VAR, key, want.__name__))
        kwargs[key] = item
    settings = Settings(**kwargs)
    if settings.warmup < 0 or settings.every < 1 or settings.max_steps < 1:
        raise ValueError("%s: warmup must be >= 0, every and max_steps >= 1" % ENV_VAR)
    return settings


def armed_environment(settings: Settings, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` plus the two variables that arm every Python process started with it."""
    env = dict(base)
    env["PYTHONPATH"] = armed_pythonpath(base.get("PYTHONPATH", ""))
    env[ENV_VAR] = encode(settings)
    return env


def armed_pythonpath(existing: str) -> str:
    """``existing`` with the armed folder first (and nowhere else)."""
    rest = [p for p in existing.split(os.pathsep) if p and os.path.abspath(p) != ARMED_DIR]
    return os.pathsep.join([ARMED_DIR] + rest)
