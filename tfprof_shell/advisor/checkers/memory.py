"""MemoryChecker: will it fit, and does it grow? Read from the profile's memory over time.

Reports, per device: a peak near the device's capacity, high fragmentation at the
peak, an allocator reserving far more than it allocated, steady growth over the
steps (naming the leak suspects), one block holding most of the peak; and what
the format leaves out (coverage): TensorFlow on the CPU records only allocations
of 256 KiB or more (and none with oneDNN off), JAX on the CPU records none, a
PyTorch trace without ``profile_memory`` has no memory events.
"""

from __future__ import annotations

from typing import Optional

from ...formats import format_memory
from ...model import Model
from ...model.memory import HAS_CODE, HAS_OWNER, MemoryProfile
from ...views.memory import DeviceResult, Suspect, memory_result
from ..catalog import MEMORY as NAME
from .base import Checker, Findings, Subject

#: A peak at or above this share of the device's capacity is near it.
NEAR_CAPACITY = 0.9
#: Fragmentation at or above this share at the peak is high (where a quarter of the
#: capacity or more is in use: below that, pieces do not matter).
FRAGMENTATION = 0.3
FRAGMENTATION_USE = 0.25
#: Reserved at least this many times the peak allocated, and by this many bytes.
RESERVED_RATIO = 1.5
RESERVED_BYTES = 64 << 20
#: One block holding at least this share of the peak (of at least DOMINANT_PEAK bytes)
#: dominates it.
DOMINANT = 0.5
DOMINANT_PEAK = 1 << 20
#: Growth over the profile at least this share of the peak is steady growth.
GROWTH_SHARE = 0.02


def check(subject: Subject) -> Findings:
    """The reports of every device with memory events, and coverage warnings."""
    model = subject.model
    findings = Findings()
    profile = model.memory()
    coverage = _coverage(model, profile)
    if coverage:
        findings.reports.append(coverage)
    if not any(len(d.times) for d in profile.devices):
        return findings
    has = profile.has
    result = memory_result(model, "op" if HAS_OWNER in has or HAS_CODE not in has else "code")
    by_code = (memory_result(model, "code") if HAS_OWNER in has and HAS_CODE in has
               else None)
    several = len(result.devices) > 1
    for i, d in enumerate(result.devices):
        where = "%s: " % d.name if several else ""
        lines = by_code.devices[i].suspects if by_code is not None else []
        findings.reports.extend(where + r for r in _device_reports(d, result.by, lines))
    return findings


def _device_reports(d: DeviceResult, by: str, lines: list[Suspect]) -> list[str]:
    out = []
    peak = d.peak.nbytes
    if d.capacity > 0 and peak >= NEAR_CAPACITY * d.capacity:
        out.append("peak near capacity: %s of %s (%.0f%%) at step %s; a larger batch or "
                   "model will not fit. Free what the step no longer needs, use activation "
                   "checkpointing or a smaller batch." % (
                       format_memory(peak), format_memory(d.capacity),
                       100.0 * peak / d.capacity, _step(d)))
    frag = d.peak.fragmentation
    if (frag is not None and frag >= FRAGMENTATION
            and (d.capacity <= 0 or peak >= FRAGMENTATION_USE * d.capacity)):
        out.append("high fragmentation: %.0f%% of the free memory is in pieces too small "
                   "for the largest free block at the peak; allocations of varying sizes "
                   "(dynamic shapes) cause it." % (100.0 * frag))
    if (d.reserved_max is not None and d.reserved_max >= RESERVED_RATIO * peak
            and d.reserved_max - peak >= RESERVED_BYTES):
        out.append("reserved far above allocated: the allocator reserved up to %s for a peak "
                   "of %s allocated (%.1fx): its cache keeps freed blocks, which other "
                   "processes cannot use and blocks of other sizes may not fit. Fewer distinct "
                   "tensor sizes, or PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, keep "
                   "it closer." % (format_memory(d.reserved_max), format_memory(peak),
                                   d.reserved_max / max(peak, 1)))
    growth = _growth(d)
    if d.suspects or growth is not None:
        names = ", ".join("%s (%s per step)" % (s.key, format_memory(s.per_step))
                          for s in d.suspects[:3])
        code = ", ".join(s.key for s in lines[:3])
        rate = format_memory(int(d.slope)) if d.slope and d.slope > 0 else None
        out.append("memory grows over the steps%s%s%s. Allocations that outlive their step "
                   "are kept somewhere: a list of tensors, a cache, losses kept without "
                   ".item()." % (": +%s per step" % rate if rate else "",
                                 "; leak suspects by %s: %s" % (by, names) if names else "",
                                 ", allocated at %s" % code if code else ""))
    if (d.largest is not None and peak >= DOMINANT_PEAK
            and d.largest[0] >= DOMINANT * peak):
        out.append("one allocation dominates the peak: %s of %s (%.0f%%), by %s %s." % (
            format_memory(d.largest[0]), format_memory(peak), 100.0 * d.largest[0] / peak,
            by, d.largest[1]))
    return out


def _step(d: DeviceResult) -> str:
    return "%d" % d.peak.step if d.peak.step is not None else "--"


def _growth(d: DeviceResult) -> Optional[int]:
    """The growth over the profile's steps if steady (most end levels rise), else None."""
    ends = [s.end for s in d.steps]
    if len(ends) < 3 or not d.slope or d.slope <= 0:
        return None
    rises = sum(b > a for a, b in zip(ends, ends[1:]))
    total = ends[-1] - ends[0]
    if rises * 3 < 2 * (len(ends) - 1) or total < GROWTH_SHARE * max(d.peak.nbytes, 1):
        return None
    return total


def _coverage(model: Model, profile: MemoryProfile) -> str:
    """What the format leaves out, where it matters here ("" if nothing)."""
    kind = model.source.kind
    events = any(len(d.times) for d in profile.devices)
    if kind == "xplane":
        if any(d.name.endswith(("mklcpu", "cpu")) for d in profile.devices):
            return ("coverage: TensorFlow on the CPU records only allocations of 256 KiB or "
                    "more, so smaller tensors are not in these figures.")
        if not events:
            return ("coverage: no memory events. TensorFlow records them at host tracer "
                    "level 2 or more, on the CPU only with oneDNN on (TF_ENABLE_ONEDNN_OPTS=1, "
                    "the x86 default) and for 256 KiB or more; JAX records none on the CPU: "
                    "use jax.profiler.device_memory_profile().")
    if kind == "chrome_trace" and not events and _is_torch(model):
        return ("coverage: this PyTorch trace has no memory events: record with "
                "torch.profiler.profile(profile_memory=True).")
    return ""


def _is_torch(model: Model) -> bool:
    """Whether the model came from PyTorch traces (their memory source is PyTorch's)."""
    return model.memory().origin.startswith("PyTorch")


CHECKER = Checker(NAME, check)
