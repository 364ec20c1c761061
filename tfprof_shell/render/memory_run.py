"""Running `memory`: pick profiles, check the request, build, render.

Every mistake (a profile without memory facts, an unknown step or device, an
output this command does not write) is one RequestError line.
"""

from __future__ import annotations

from typing import Mapping, Optional

from ..errors import RequestError
from ..model import Model
from ..model.intervals import short_device
from ..options import Options
from ..plan import select_profiles
from ..views.memory import MemoryResult, memory_result
from .base import Rendered
from .memory import memory_document, memory_text
from .memory_multi import diff_document, diff_text, ranks_document, ranks_text
from .document import deliver_document

_WRITTEN = ("stdout", "file", "json", "none", "timeline", "pprof")

#: Why a format has no memory facts, and how to record them.
_NO_MEMORY = {
    "xplane": "TensorFlow records them at host tracer level 2 or more, on the CPU only "
              "with oneDNN on and for tensors of 256 KiB or more; JAX records none on the "
              "CPU (use jax.profiler.device_memory_profile())",
    "chrome_trace": "a PyTorch trace has memory events only when recorded with "
                    "torch.profiler.profile(profile_memory=True); a TensorFlow timeline "
                    "only when written with show_memory=True",
    "profile": "TensorFlow's profiler keeps allocation records of GPU allocators only; "
               "give the run metadata files (--graph_path with --run_meta_path) for CPU "
               "memory over time",
}


def check_memory(model: Model, name: str = "") -> None:
    """RequestError unless ``model`` has memory events."""
    profile = model.memory()
    if any(len(d.times) for d in profile.devices):
        return
    who = "profile %s" % name if name else "this profile"
    why = _NO_MEMORY.get(model.source.kind, "its format records no memory over time")
    raise RequestError("%s has no memory events: %s" % (who, why))


def memory_of(model: Model, name: str, opts: Options, several: bool = False) -> MemoryResult:
    """The checked memory result of one profile for ``opts`` (-by, -step, -device)."""
    check_memory(model, name if several else "")
    profile = model.memory()
    who = "profile %s" % name if several else "this profile"
    step: Optional[int] = None
    if opts.step >= 0:
        steps = sorted({m.step for m in profile.marks})
        if opts.step not in steps:
            raise RequestError("%s has no step %d; its steps: %s"
                               % (who, opts.step, " ".join(map(str, steps)) or "none"))
        step = opts.step
    devices = [d.name for d in profile.devices if len(d.times)]
    device = opts.device
    if device and device not in devices:
        device = short_device(device)
        if device not in devices:
            raise RequestError("%s has no memory on device %s; devices: %s"
                               % (who, opts.device, ", ".join(devices)))
    return memory_result(model, opts.by, step, device)


def run_memory(models: Mapping[str, Model], current: str, opts: Options) -> Rendered:
    """`memory` on the current profile, against -base, or over -profiles."""
    kind = opts.output.kind
    if kind not in _WRITTEN:
        raise RequestError("memory cannot write -output %s; use stdout, file, json, "
                           "timeline or pprof" % kind)
    if kind in ("timeline", "pprof") and (opts.profiles or opts.base):
        raise RequestError("-output %s shows one profile: drop %s, or 'use NAME' to pick "
                           "the profile" % (kind, "-base" if opts.base else "-profiles"))
    if opts.profiles:  # over -base (which --base_profile_path sets), as steps does
        names = select_profiles(models, opts.profiles)
        results = [(n, memory_of(models[n], n, opts, True)) for n in names]
        return deliver_document(ranks_text(results), ranks_document(results), opts)
    several = len(models) > 1
    result = memory_of(models[current], current, opts, bool(opts.base))
    if opts.base:
        if opts.base not in models:
            raise RequestError("-base %s: no such profile; loaded: %s"
                               % (opts.base, ", ".join(models)))
        base = memory_of(models[opts.base], opts.base, opts, True)
        return deliver_document(diff_text(current, result, opts.base, base),
                        diff_document(current, result, opts.base, base), opts)
    if kind in ("timeline", "pprof"):
        from .memory_out import memory_pprof, memory_trace
        from .timeline import notice
        path = opts.output.outfile or ""
        if kind == "timeline":
            return Rendered(notice(path), writes=[(path, memory_trace(result))],
                            result=memory_document(result))
        return Rendered(writes=[(path, memory_pprof(models[current], result))],
                        result=memory_document(result))
    title = "Memory of %s" % current if several else "Memory"
    return deliver_document(memory_text(result, title, opts.min_bytes), memory_document(result),
                            opts)
