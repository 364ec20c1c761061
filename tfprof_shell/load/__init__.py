"""Loaders: input files -> Model. Nothing here prints; failures raise LoadError."""

from __future__ import annotations

from ..errors import UsageError
from ..model import Model
from .inputs import Inputs, split_paths

__all__ = ["Inputs", "load_model", "split_paths"]


def load_model(inputs: Inputs) -> Model:
    """Load the model named by ``inputs``; LoadError or UsageError if it cannot be."""
    if inputs.profile_path:
        model = _load_profile_path(inputs)
    elif inputs.run or inputs.hosts:
        raise UsageError("--run and --host need --profile_path (a TF2 log directory)")
    elif inputs.graph_path or inputs.run_meta_paths:
        from .graph import load_graph_route
        model = load_graph_route(inputs.graph_path, inputs.run_meta_paths,
                                 inputs.op_log_path, inputs.step_ids)
        if inputs.run_meta_paths:
            from .memory_tf1 import RunMetaMemory
            from .runmeta_intervals import RunMetaIntervals
            model.set_interval_source(RunMetaIntervals(inputs.run_meta_paths,
                                                       inputs.step_ids or None))
            model.set_memory_source(RunMetaMemory(inputs.run_meta_paths,
                                                  inputs.step_ids or None))
    else:
        raise UsageError("no input: give --profile_path=FILE or --graph_path=FILE")
    if inputs.checkpoint_path:
        from .checkpoint import apply_checkpoint
        apply_checkpoint(model, inputs.checkpoint_path)
    return model


def _timelines_note(files: int, steps: list[int]) -> str:
    """The note for a folder of timelines: TensorFlow timelines are one step per file
    (0..files-1); a PyTorch trace's steps come from its ProfilerStep#N markers."""
    plural = "s" if files != 1 else ""
    if steps == list(range(files)):
        if files == 1:
            return "loaded 1 timeline file as step 0"
        return "loaded %d timeline files as steps 0..%d" % (files, files - 1)
    if not steps:
        return "loaded %d timeline file%s (no steps)" % (files, plural)
    if steps == list(range(steps[0], steps[-1] + 1)) and len(steps) > 1:
        named = "steps %d..%d" % (steps[0], steps[-1])
    else:
        named = ("step " if len(steps) == 1 else "steps ") + ", ".join(map(str, steps))
    return "loaded %d trace file%s: %s, from the trace's step markers (ProfilerStep#N)" % (
        files, plural, named)


def _load_profile_path(inputs: Inputs) -> Model:
    """--profile_path: a ProfileProto, TF2 .xplane.pb files, Chrome-trace timelines, or
    a ``tfprof record`` folder (its first process's profile)."""
    from .detect import CHROME_TRACE, PPROF, SNAPSHOT, XPLANE, resolve
    from .record_dir import open_recording

    recorded = open_recording(inputs)
    if recorded is not None:
        chosen, note = recorded
        model = load_model(chosen)
        if note:
            model.notes.insert(0, note)
        return model

    found = resolve(inputs.profile_path or "", inputs.run, inputs.hosts)
    if found.kind == CHROME_TRACE:
        if inputs.run_meta_paths:
            raise UsageError("--profile_path names timelines: do not also set --run_meta_path")
        from .chrome_trace import load_chrome_traces
        model = load_chrome_traces(found.paths, inputs.graph_path, inputs.op_log_path)
        if found.note:  # a folder of timelines: say which steps its files became
            model.source.note = _timelines_note(len(found.paths), model.steps)
            model.notes.insert(0, model.source.note)
        return model
    if inputs.graph_path or inputs.run_meta_paths:
        raise UsageError("--profile_path is set, do not set --graph_path or --run_meta_path")
    if found.kind == XPLANE:
        from .xplane import load_xplane
        return load_xplane(found.paths, found.note)
    if found.kind == PPROF:
        from .memory_pprof import load_pprof
        return load_pprof(found.paths, found.note)
    if found.kind == SNAPSHOT:
        from .memory_snapshot import load_snapshot
        return load_snapshot(found.paths, found.note)
    from ..errors import LoadError
    from .profile import load_profile
    try:
        return load_profile(found.paths[0])
    except LoadError:
        from .files import read_bytes
        from .sniff import identify
        try:
            is_xspace = identify(read_bytes(found.paths[0], "profile_path")).kind.key == "xspace"
        except LoadError:
            is_xspace = False
        if not is_xspace:
            raise
    from .xplane import load_xplane  # an .xplane.pb under another name
    return load_xplane(found.paths)
