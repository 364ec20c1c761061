"""Running `steps` and `kernels`: pick profiles, check the request, build, render.

Every mistake (no steps, an unknown step or device, a -base that cannot be
compared, an output kind these commands do not write) is one RequestError line.
"""

from __future__ import annotations

from typing import Mapping

from .. import regex
from ..errors import RequestError
from ..model import Model
from ..model.intervals import short_device
from ..options import Options
from ..plan import select_profiles
from ..views.collectives import align_models
from ..views.kernels import kernel_rows
from ..views.steps import StepsResult, step_breakdowns
from .base import Rendered
from .kernels import kernels_document, kernels_text
from .document import deliver_document
from .steps import steps_document, steps_text
from .steps_multi import diff_rows, diff_text, ranks_text, stragglers

_WRITTEN = ("stdout", "file", "json", "none", "timeline")


def _check_output(command: str, opts: Options) -> None:
    kind = opts.output.kind
    if kind not in _WRITTEN or (kind == "timeline" and command != "steps"):
        raise RequestError("%s cannot write -output %s; use stdout, file or json%s"
                           % (command, kind, ", or timeline" if command == "steps" else ""))


def breakdown(model: Model, name: str, opts: Options, several: bool = False) -> StepsResult:
    """The checked steps breakdown of one profile for ``opts`` (-step, -device)."""
    iv = model.intervals()
    who = "profile %s" % name if several else "this profile"
    if not iv.marks:
        raise RequestError("%s has no steps to break down (no step markers and no timed "
                           "executions)" % who)
    steps = sorted({m.step for m in iv.marks})
    if opts.step >= 0 and opts.step not in steps:
        _no_step(opts.step, steps, name if several else "")
    devices = iv.device_names()
    device = _device(opts, devices)
    if device and device not in devices:
        raise RequestError("%s has no device %s; devices: %s"
                           % (who, opts.device, ", ".join(devices) or "none (CPU only)"))
    return step_breakdowns(iv, [opts.step] if opts.step >= 0 else None, device)


def _no_step(step: int, steps: list[int], profile: str = "") -> None:
    """The views' words for a -step the profile does not have."""
    listed = " ".join(map(str, steps))
    if profile:
        raise RequestError("profile %s has no step %d; its steps: %s" % (profile, step, listed))
    raise RequestError("-step %d not found; available steps: %s" % (step, listed))


def _device(opts: Options, devices: list[str]) -> str:
    """-device as the steps table names it: a name it shows (host1/gpu:0) as it is, any
    other spelling of a GPU (/device:GPU:0) as gpu:N."""
    if not opts.device or opts.device in devices:
        return opts.device
    return short_device(opts.device)


def run_steps(models: Mapping[str, Model], current: str, opts: Options) -> Rendered:
    """`steps` on the current profile, against -base, or over -profiles."""
    _check_output("steps", opts)
    if opts.output.kind == "timeline" and (opts.profiles or opts.base):
        raise RequestError("-output timeline shows one profile: drop %s, or 'use NAME' to pick "
                           "the profile" % ("-base" if opts.base else "-profiles"))
    if opts.profiles:
        names = select_profiles(models, opts.profiles)
        results = [(n, breakdown(models[n], n, opts, True)) for n in names]
        arrivals = align_models(models, names)
        doc = {"schema_version": 1, "mode": "steps",
               "profiles": {n: steps_document(r) for n, r in results},
               "stragglers": stragglers(results, arrivals)}
        return deliver_document(ranks_text(results, arrivals), doc, opts)
    result = breakdown(models[current], current, opts, bool(opts.base))
    if opts.base:
        if opts.base not in models:
            raise RequestError("-base %s: no such profile; loaded: %s"
                               % (opts.base, ", ".join(models)))
        base = breakdown(models[opts.base], opts.base, opts, True)
        if bool(result.devices) != bool(base.devices):
            gpu, cpu = (current, opts.base) if result.devices else (opts.base, current)
            raise RequestError("cannot compare steps of %s (device events) with %s (CPU "
                               "only)" % (gpu, cpu))
        shared = [d for d in result.devices if d in base.devices]
        if result.devices and not shared:
            raise RequestError("cannot compare steps of %s (%s) with %s (%s): no device in "
                               "both" % (current, ", ".join(result.devices), opts.base,
                                         ", ".join(base.devices)))
        rows = diff_rows(result, base, shared)
        doc = {"schema_version": 1, "mode": "steps", "base": opts.base,
               "profiles": {current: steps_document(result), opts.base: steps_document(base)},
               "diff": [{"category": c, "current": a, "base": b,
                         "change": None if a is None or b is None else a - b}
                        for c, a, b in rows]}
        text = diff_text(current, opts.base, rows, opts.step if opts.step >= 0 else None)
        return deliver_document(text, doc, opts)
    if opts.output.kind == "timeline":
        from .steps_timeline import steps_trace
        from .timeline import notice
        path = opts.output.outfile or ""
        return Rendered(notice(path), writes=[(path, steps_trace(models[current], result))],
                        result=steps_document(result))
    title = "Steps of %s" % current if len(models) > 1 else "Steps"
    return deliver_document(steps_text(result, title), steps_document(result), opts)


def run_kernels(model: Model, opts: Options) -> Rendered:
    """`kernels` on one profile."""
    _check_output("kernels", opts)
    iv = model.intervals()
    if not iv.devices:
        raise RequestError("this profile has no device events (CPU only): no kernels")
    devices = iv.device_names()
    device = _device(opts, devices)
    if device and device not in devices:
        raise RequestError("this profile has no device %s; devices: %s"
                           % (opts.device, ", ".join(devices)))
    steps = sorted({m.step for m in iv.marks})
    if opts.step >= 0 and opts.step not in steps:
        _no_step(opts.step, steps)
    show = regex.any_matcher(opts.show_name_regexes)
    hide = regex.any_matcher(opts.hide_name_regexes)
    rows = kernel_rows(iv, opts.step if opts.step >= 0 else None, device,
                       lambda name: show(name) and not hide(name))
    where = "%s, %s" % (device or "all devices",
                        "step %d" % opts.step if opts.step >= 0 else "all steps")
    return deliver_document(kernels_text(rows, where),
                            kernels_document(rows, opts.step, device), opts)
