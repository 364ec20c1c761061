"""A ``tfprof record`` output folder: one profile per process that recorded steps.

A recording is a folder with ``manifest.json`` or with process folders (each
holding ``process.json``), or one process folder itself. A TF1 process
folder loads through the graph route (``graph.pb``, ``run_meta_<step>`` in
step order with their step ids, ``op_log``), a TF2 or JAX one through the
xplane reader (``plugins/profile/<run>/``), a PyTorch one through the
Chrome-trace reader (``*.pt.trace.json``, steps from its ``ProfilerStep#N``
markers). A process that recorded with two frameworks gives two profiles,
``<folder>.<kind>``.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import NamedTuple, Optional

from ..errors import LoadError, UsageError
from ..record import layout
from .inputs import Inputs


class RecordedProfile(NamedTuple):
    """One process's profile in a recording: its folder's name, and what to load."""

    name: str
    inputs: Inputs


def is_recording(path: str) -> bool:
    """Whether ``path`` is a recording folder or one of its process folders."""
    if not os.path.isdir(path):
        return False
    if os.path.isfile(os.path.join(path, layout.MANIFEST)):
        return True
    if os.path.isfile(os.path.join(path, layout.PROCESS)):
        return True
    return bool(_process_folders(path))


def list_profiles(path: str, base: Inputs = Inputs()) -> list[RecordedProfile]:
    """The recorded profiles under ``path`` in rank order ([] if it is not a recording).

    ``base`` supplies the TF2 ``run``/``hosts`` choice; LoadError if the
    recording holds no recorded step.
    """
    if not is_recording(path):
        return []
    if os.path.isfile(os.path.join(path, layout.PROCESS)):
        folders = [path]
    else:
        folders = [os.path.join(path, name) for name in _process_folders(path)]
    found = []
    for folder in folders:
        name = os.path.basename(os.path.normpath(folder))
        kinds = _inputs_of(folder, base)
        for kind, inputs in kinds:
            found.append(RecordedProfile(name if len(kinds) == 1 else "%s.%s" % (name, kind),
                                         inputs))
    if not found:
        raise LoadError("--profile_path %s: a tfprof record folder with no recorded steps%s"
                        % (path, _why_empty(path)))
    return found


def open_recording(inputs: Inputs) -> Optional[tuple[Inputs, str]]:
    """What ``--profile_path`` loads when it names a recording, and a note; None otherwise.

    With several processes the first is opened; the note says how to open the others.
    """
    path = inputs.profile_path or ""
    profiles = list_profiles(path, inputs)
    if not profiles:
        return None
    if inputs.graph_path or inputs.run_meta_paths or inputs.op_log_path:
        raise UsageError("--profile_path names a tfprof record folder: do not also set "
                         "--graph_path, --run_meta_path or --op_log_path")
    first = profiles[0]
    if (inputs.run or inputs.hosts) and not first.inputs.profile_path:
        raise UsageError("--run and --host apply only to TF2 and JAX recordings")
    chosen = replace(first.inputs, checkpoint_path=inputs.checkpoint_path)
    note = ""
    if len(profiles) > 1:
        others = [p.name for p in profiles[1:]]
        shown = ", ".join(others[:4]) + (", ..." if len(others) > 4 else "")
        note = ("%s holds %d process profiles; opened %s; open another with "
                "--profile_path=%s (%s)" % (path, len(profiles), first.name,
                                            os.path.join(path, "<folder>"), shown))
    return chosen, note


def _process_folders(path: str) -> list[str]:
    """Sub-folders holding process.json, ordered by rank (manifest order when there is one)."""
    try:
        names = [n for n in os.listdir(path) if not n.startswith(".")
                 and os.path.isfile(os.path.join(path, n, layout.PROCESS))]
    except OSError:
        return []
    listed = [p.get("folder") for p in _manifest(path).get("processes") or []
              if isinstance(p, dict)]
    position = {name: i for i, name in enumerate(listed) if isinstance(name, str)}

    def order(name: str) -> tuple:
        rank = _read_json(os.path.join(path, name, layout.PROCESS)).get("rank")
        known = isinstance(rank, int) and not isinstance(rank, bool)
        return (position.get(name, len(position)), not known, rank if known else 0, name)

    return sorted(names, key=order)


def _inputs_of(folder: str, base: Inputs) -> list[tuple[str, Inputs]]:
    """How to load what one process folder recorded: (kind, inputs) per framework, [] if
    nothing."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    found = []
    runs = os.path.join(folder, "plugins", "profile")
    if os.path.isdir(runs):
        kind = _read_json(os.path.join(folder, layout.PROCESS)).get("kinds") or []
        found.append((layout.KIND_JAX if layout.KIND_JAX in kind else layout.KIND_TF2,
                      Inputs(profile_path=runs, run=base.run, hosts=base.hosts)))
    traces = [os.path.join(folder, n) for n in names if layout.is_torch_trace(n)]
    if traces:
        found.append((layout.KIND_TORCH, Inputs(profile_path=",".join(traces))))
    steps = sorted((step, name) for name in names
                   if (step := layout.step_of_run_meta(name)) is not None)
    if steps:
        graph = os.path.join(folder, layout.GRAPH)
        op_log = os.path.join(folder, layout.OP_LOG)
        found.append((layout.KIND_TF1, Inputs(
            graph_path=graph if os.path.isfile(graph) else None,
            run_meta_paths=tuple(os.path.join(folder, n) for _, n in steps),
            op_log_path=op_log if os.path.isfile(op_log) else None,
            step_ids=tuple(s for s, _ in steps))))
    return found


def _why_empty(path: str) -> str:
    doc = _manifest(path)
    if not doc:
        return ""
    processes = doc.get("processes") or []
    if not processes:
        return " (no process of the program imported TensorFlow, PyTorch or JAX)"
    notes = sorted({n for p in processes if isinstance(p, dict)
                    for n in (p.get("notes") or []) if isinstance(n, str)})
    seen = max((p.get("steps_seen") or 0 for p in processes if isinstance(p, dict)), default=0)
    warmup = (doc.get("settings") or {}).get("warmup")
    text = " (the most frequent training call ran %d times; --warmup was %s" % (seen, warmup)
    return text + ("; " + "; ".join(notes) if notes else "") + ")"


def _manifest(path: str) -> dict:
    return _read_json(os.path.join(path, layout.MANIFEST))


def _read_json(path: str) -> dict:
    from .json_doc import parse_json  # here: most loads read no JSON (start-up time)
    try:
        with open(path, "rb") as fh:
            doc = parse_json(fh.read().decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return doc if isinstance(doc, dict) else {}
