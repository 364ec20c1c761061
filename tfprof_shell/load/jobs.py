"""Which profiles an input names: one, or one per job of a folder holding several.

A folder holds several jobs when it is

* a PyTorch trace folder (``tensorboard_trace_handler``) with the traces of
  several workers: ``<worker>.<time>.pt.trace.json[.gz]``, grouped by
  ``<worker>`` (one worker's several files stay the steps of one profile);
* an XProf run folder (or a log directory's chosen run) with several
  ``<host>.xplane.pb`` files: one profile per host;
* a ``tfprof record`` folder with several process folders: one profile per
  process, named after its folder (``train.host1.0.pid42``).

Anything else, including a ProfilerHook folder of ``timeline-N.json`` files
(steps of one job) and an explicit comma list of files, is one profile.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import Optional, Sequence

from . import Inputs
from ..errors import LoadError
from .detect import XPLANE, host_name, resolve
from .files import where
from .record_dir import list_profiles

#: File stems too generic to name a profile: the folder's name is used instead.
_GENERIC_STEMS = ("profile", "graph", "op_log", "tfprof_log", "run_meta", "timeline", "trace")
_SUFFIXES = (".pt.trace.json.gz", ".pt.trace.json", ".trace.json.gz", ".trace.json",
             ".xplane.pb.gz", ".xplane.pb", ".json.gz", ".json", ".pbtxt", ".pb")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]+")
_PT_TRACE = re.compile(r"^(?P<worker>[^.]+)\..*\.pt\.trace\.json(\.gz)?$", re.IGNORECASE)


@dataclass(frozen=True)
class Job:
    """One profile to load: its name and its inputs."""

    name: str
    inputs: Inputs


def jobs_of(inputs: Inputs, name: Optional[str] = None) -> tuple[list[Job], list[str]]:
    """The profiles ``inputs`` names, and notes on how they were found.

    ``name`` names a single profile, or prefixes the job names of a folder
    (``NAME.rank0``); without it a single profile is named after its file or
    folder and jobs after themselves.
    """
    path = inputs.profile_path
    if path and os.path.isdir(path):
        split = _recorded(inputs) or _pytorch_workers(path) or _xplane_hosts(inputs)
        if split is not None and len(split[0]) > 1:
            jobs, note = split
            named = [Job("%s.%s" % (name, j.name) if name else j.name, j.inputs) for j in jobs]
            return named, [note] if note else []
    return [Job(name or default_name(inputs), inputs)], []


def check_found(jobs: Sequence[Job]) -> None:
    """LoadError for the first input file of ``jobs`` that does not exist, worded as
    loading it would say (``profile NAME:`` first when there are several jobs)."""
    for job in jobs:
        inputs = job.inputs
        # (a checkpoint path is a prefix of files, not a file)
        named = [("graph_path", inputs.graph_path), ("op_log_path", inputs.op_log_path)]
        named += [("run_meta_path", p) for p in inputs.run_meta_paths]
        path = inputs.profile_path
        if path and not os.path.exists(path):
            named += [("profile_path", p) for p in path.split(",") if p]
        for flag, given in named:
            if given and not os.path.exists(given):
                message = "%s: no such file" % where(flag, given)
                raise LoadError("profile %s: %s" % (job.name, message) if len(jobs) > 1
                                else message)


def default_name(inputs: Inputs) -> str:
    """A profile's name from its main file (its folder's, for generic file names)."""
    path = inputs.profile_path or inputs.graph_path or (
        inputs.run_meta_paths[0] if inputs.run_meta_paths else "")
    path = path.split(",")[0].rstrip("/" + os.sep)
    base = os.path.basename(path)
    stem = base
    for suffix in _SUFFIXES:
        if base.lower().endswith(suffix):
            stem = base[:-len(suffix)]
            break
    if not os.path.isdir(path) and (not stem or stem.lower().startswith(_GENERIC_STEMS)):
        stem = os.path.basename(os.path.dirname(os.path.abspath(path))) or stem
    return _UNSAFE.sub("_", stem).lstrip(".+-") or "profile"


def _recorded(inputs: Inputs) -> Optional[tuple[list[Job], str]]:
    path = inputs.profile_path or ""
    found = list_profiles(path, inputs)
    if not found:
        return None
    jobs = [Job(_UNSAFE.sub("_", p.name),
                replace(p.inputs, checkpoint_path=inputs.checkpoint_path)) for p in found]
    return jobs, "%s: a tfprof record folder of %d processes, one profile each" % (
        path, len(jobs))


def _pytorch_workers(directory: str) -> Optional[tuple[list[Job], str]]:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return None
    workers: dict[str, list[str]] = {}
    for file_name in names:
        match = _PT_TRACE.match(file_name)
        if match:
            workers.setdefault(match.group("worker"), []).append(
                os.path.join(directory, file_name))
    if len(workers) < 2:
        return None
    jobs = [Job(_UNSAFE.sub("_", worker), Inputs(profile_path=",".join(files)))
            for worker, files in sorted(workers.items())]
    return jobs, "%s: %d PyTorch workers, one profile each" % (directory, len(jobs))


def _xplane_hosts(inputs: Inputs) -> Optional[tuple[list[Job], str]]:
    found = resolve(inputs.profile_path or "", inputs.run, inputs.hosts)
    if found.kind != XPLANE or len(found.paths) < 2:
        return None
    jobs = [Job(_UNSAFE.sub("_", host_name(p)), replace(inputs, profile_path=p, run=None,
                                                        hosts=()))
            for p in found.paths]
    note = "%s hosts, one profile each" % len(jobs)
    return jobs, "%s; %s" % (found.note, note) if found.note else note
