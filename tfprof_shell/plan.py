"""Plan a view command before any work is done: refuse what it cannot have,
and list the view runs it needs (one, or one per step for timelines)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from . import metrics, regex
from .combine.result import AGGREGATE, DIFF
from .errors import OptionError, RequestError
from .model import Model
from .options import Options

_HOW_TO_TRACE = {
    "graph": "give --op_log_path, written by write_op_log(..., add_trace=True)",
    "profile": "none were recorded (profile with an op log written with add_trace=True)",
    "xplane": "profile with Python tracing on "
              "(tf.profiler.experimental.ProfilerOptions(python_tracer_level=1))",
    "chrome_trace": "a TensorFlow timeline has them only with --op_log_path (written by "
                    "write_op_log(..., add_trace=True)); a PyTorch trace has them when "
                    "recorded with torch.profiler.profile(with_stack=True) or "
                    "tfprof record --python_tracer",
}


@dataclass(frozen=True)
class ViewPlan:
    """A checked view command: the view, its options, and the options of each run."""

    view: str
    options: Options
    runs: tuple[Options, ...]


def plan_view(model: Model, view: str, opts: Options) -> ViewPlan:
    """Check ``view`` with ``opts`` against ``model`` and plan its runs (RequestError if refused)."""
    check_step(model, opts.step)
    check_request(model, view, opts)
    return ViewPlan(view, opts, _runs(model, view, opts))


@dataclass(frozen=True)
class MultiPlan:
    """A checked view over several profiles: DIFF or AGGREGATE, and each profile's options.

    For a diff the current profile comes first, then the base.
    """

    view: str
    options: Options
    mode: str
    sides: tuple[tuple[str, Options], ...]


def plan_multi(models: Mapping[str, Model], current: str, view: str,
               opts: Options) -> Optional[MultiPlan]:
    """The plan of a view over several profiles, or None if ``opts`` asks for one.

    Raises OptionError for an unknown profile or an output that shows one
    profile, RequestError (naming the profile) for a missing step or
    missing code traces.
    """
    if not opts.base and not opts.profiles:
        return None
    if opts.base and opts.profiles:
        raise OptionError("-base compares two profiles and -profiles combines several: "
                          "give one of them")
    if opts.output.kind in ("timeline", "pprof"):
        raise OptionError("-output %s shows one profile: drop %s, or 'use NAME' to pick "
                          "the profile" % (opts.output.kind, "-base" if opts.base else
                                           "-profiles"))
    if not any(metrics.ATTRIBUTES[a].stat is not None for a in opts.select):
        raise OptionError("%s compares numbers: -select at least one of %s" % (
            "-base" if opts.base else "-profiles",
            ", ".join(a for a, attr in metrics.ATTRIBUTES.items() if attr.stat is not None)))
    if opts.base:
        if opts.base not in models:
            raise OptionError("-base %s: no such profile; loaded: %s"
                              % (opts.base, ", ".join(models)))
        base_step = opts.step if opts.base_step is None else opts.base_step
        sides = ((current, opts), (opts.base, opts.replace(step=base_step)))
        mode = DIFF
    else:
        sides = tuple((name, opts) for name in select_profiles(models, opts.profiles))
        mode = AGGREGATE
    for name, side_opts in sides:
        check_step(models[name], side_opts.step, name)
        check_request(models[name], view, side_opts, name)
    return MultiPlan(view, opts, mode, sides)


def select_profiles(models: Mapping[str, Model], patterns: tuple[str, ...]) -> list[str]:
    """The profiles ``-profiles`` names (exact names, whole-name regexes or all), in load order."""
    chosen: set[str] = set()
    for pattern in patterns:
        if pattern == "all":
            matched = set(models)
        elif pattern in models:
            matched = {pattern}
        else:
            matched = {n for n in models if regex.fullmatch(pattern, n)}
        if not matched:
            raise OptionError("-profiles: '%s' names no loaded profile; loaded: %s"
                              % (pattern, ", ".join(models)))
        chosen |= matched
    return [name for name in models if name in chosen]


def full_options(opts: Options) -> Options:
    """``opts`` without depth or threshold limits: every node a view can show."""
    return opts.replace(max_depth=2**31 - 1, **{name: 0 for name in metrics.MIN_FILTERS})


def check_step(model: Model, step: int, profile: str = "") -> None:
    """RequestError unless ``step`` is -1 (average) or a recorded step."""
    if step >= 0 and step not in model.steps:
        steps = " ".join(str(s) for s in model.steps) or "none"
        if profile:
            raise RequestError("profile %s has no step %d; its steps: %s"
                               % (profile, step, steps))
        raise RequestError("-step %d not found; available steps: %s" % (step, steps))


def check_request(model: Model, view: str, opts: Options, profile: str = "") -> None:
    """RequestError for outputs or views the request cannot have."""
    kind = opts.output.kind
    if view == "code" and not model.has_trace:
        raise RequestError("%scode view needs code traces: " % (
            "profile %s: " % profile if profile else "") + _HOW_TO_TRACE.get(
            model.source.kind, "none were recorded in this profile"))
    if kind == "timeline" and view == "op":
        raise RequestError("op view cannot write a timeline; use scope, graph or code")
    if kind == "pprof":
        if view != "code":
            raise RequestError("only the code view can write pprof output")
        if len(opts.select) != 1:
            raise RequestError("pprof output needs exactly one -select attribute (one of %s)"
                               % ", ".join(metrics.PPROF_ATTRIBUTES))
        (attr,) = opts.select
        if attr not in metrics.PPROF_ATTRIBUTES:
            raise RequestError("pprof output cannot carry -select %s (use one of %s)"
                               % (attr, ", ".join(metrics.PPROF_ATTRIBUTES)))


def is_per_step(model: Model, view: str, opts: Options) -> bool:
    """True when one timeline command runs the view once per recorded step.

    The graph view needs a concrete step, so ``-step -1`` means every recorded
    step (one file each, as in the engine); ``merge=true`` with ``-step -1``
    renders every step of any view into one file.
    """
    output = opts.output
    if output.kind != "timeline" or opts.step >= 0:
        return False
    return view == "graph" or bool(output.flag("merge") and model.steps)


def _runs(model: Model, view: str, opts: Options) -> tuple[Options, ...]:
    if is_per_step(model, view, opts):
        return tuple(opts.replace(step=s) for s in model.steps)
    return (opts,)
