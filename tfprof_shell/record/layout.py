"""The layout of a recording folder, shared by the recorder that writes it and the loader.

::

    DIR/manifest.json                      written by ``tfprof record`` when the program ends
    DIR/<job>.<host>[.<rank>].pid<N>/      one folder per process that recorded steps
        process.json                       who the process was and what it recorded
        graph.pb  op_log  run_meta_<step>  TF1: the graph route's inputs, one file per step
        plugins/profile/<run>/<host>.xplane.pb   TF2 and JAX: one profiler session
        <job>-<host>-rank<R>.<ns>.pt.trace.json  PyTorch: one torch.profiler trace

Only the standard library is used: the recorder imports this module inside
the user's program.
"""

from __future__ import annotations

import re
from typing import Optional

FORMAT = "tfprof-record"
VERSION = 1
MANIFEST = "manifest.json"
PROCESS = "process.json"
GRAPH = "graph.pb"
OP_LOG = "op_log"
RUN_META_PREFIX = "run_meta_"
#: What a process recorded: TF1 graph-route files, a TF2 or JAX profiler session, a
#: PyTorch trace.
KIND_TF1 = "tf1"
KIND_TF2 = "tf2"
KIND_TORCH = "torch"
KIND_JAX = "jax"
#: The framework each kind belongs to (one recorder per framework traces a process).
FAMILY = {KIND_TF1: "tensorflow", KIND_TF2: "tensorflow", KIND_TORCH: "torch", KIND_JAX: "jax"}
TORCH_TRACE_SUFFIX = ".pt.trace.json"

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_RUN_META = re.compile(re.escape(RUN_META_PREFIX) + r"(-?\d+)")


def safe_part(text: str, fallback: str) -> str:
    """``text`` reduced to letters, digits, '_' and '-' (dots separate the name's parts)."""
    cleaned = _UNSAFE.sub("_", text).strip("_")
    return cleaned[:64] or fallback


def folder_name(job: str, host: str, rank: Optional[int], pid: int) -> str:
    """A process folder's name: ``<job>.<host>[.<rank>].pid<N>``."""
    parts = [safe_part(job, "job"), safe_part(host, "host")]
    if rank is not None:
        parts.append(str(rank))
    parts.append("pid%d" % pid)
    return ".".join(parts)


def torch_trace_name(job: str, host: str, rank: Optional[int], ns: int) -> str:
    """A PyTorch trace's name: ``<job>-<host>-rank<R>.<ns>.pt.trace.json`` (rank 0 if unknown),
    as ``tensorboard_trace_handler`` names its files, one worker per job, host and rank."""
    return "%s-%s-rank%d.%d%s" % (safe_part(job, "job"), safe_part(host, "host"), rank or 0, ns,
                                  TORCH_TRACE_SUFFIX)


def is_torch_trace(name: str) -> bool:
    """Whether a file name is a PyTorch trace the recorder wrote (or one gzipped since)."""
    return name.endswith((TORCH_TRACE_SUFFIX, TORCH_TRACE_SUFFIX + ".gz"))


def run_meta_name(step: int) -> str:
    """The file holding the RunMetadata of ``step``."""
    return "%s%d" % (RUN_META_PREFIX, step)


def step_of_run_meta(name: str) -> Optional[int]:
    """The step a ``run_meta_<step>`` file name holds, else None."""
    match = _RUN_META.fullmatch(name)
    return int(match.group(1)) if match else None
