"""How `memory -by KEY` names a block: by op, scope, code line, shape, region or category.

Each key reads what the format records and names what it lacks in parentheses:
``(no op)``, ``(no code trace)``, a shape that is not recorded by the block's size
(``(262144 bytes)``: blocks of one size usually hold tensors of one shape).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Callable, Optional

from ..load.own_code import code_label, own_code
from ..model import Model
from ..model.memory import BEFORE, Blocks, DeviceMemory, MemoryProfile
from ..model.node import Frame
from ..options import MEMORY_KEYS

#: -by's keys, with what each groups by.
KEYS = MEMORY_KEYS

#: (blocks, block index, device) -> the block's key.
KeyOf = Callable[[Blocks, int, DeviceMemory], str]

FREED_IN_STEP = "freed within its step"
FREED_LATER = "freed in a later step"
NOT_FREED = "not freed while profiled"
OUTSIDE_STEPS = "allocated outside any step"
NO_STEPS_FREED = "freed while profiled"


def key_function(by: str, profile: MemoryProfile, model: Optional[Model] = None) -> KeyOf:
    """The key function of ``by`` (one of KEYS) over ``profile``'s blocks; ``model``
    gives code traces where blocks name a node but no stack (TF2)."""
    owners, labels, traces = profile.owners, profile.labels, profile.traces
    if by == "op":
        return lambda b, i, d: (owners[b.owner[i]].op if b.owner[i] >= 0 else "") or "(no op)"
    if by == "scope":
        return lambda b, i, d: ((owners[b.owner[i]].scope if b.owner[i] >= 0 else "")
                                or "(no scope)")
    if by == "shape":
        return lambda b, i, d: (labels[b.shape[i]] if b.shape[i] >= 0
                                else "(%d bytes)" % b.nbytes[i])
    if by == "region":
        return lambda b, i, d: labels[b.region[i]] if b.region[i] >= 0 else "(no region)"
    if by == "code":
        return _code_key(profile, model)
    if by == "category":
        return _category_key(profile)
    raise ValueError(by)


def _code_key(profile: MemoryProfile, model: Optional[Model]) -> KeyOf:
    labels: dict[int, str] = {}
    by_node: dict[int, str] = {}
    traces, owners = profile.traces, profile.owners

    def label(frames: Optional[list[Frame]] | tuple[Frame, ...]) -> str:
        if not frames:
            return "(no code trace)"
        chosen = next((f for f in reversed(frames) if own_code(f)), frames[-1])
        return code_label(chosen)

    def key(b: Blocks, i: int, d: DeviceMemory) -> str:
        code = b.code[i]
        if code >= 0:
            found = labels.get(code)
            if found is None:
                found = labels[code] = label(traces[code])
            return found
        owner = b.owner[i]
        if owner < 0 or model is None:
            return "(no code trace)"
        found = by_node.get(owner)
        if found is None:
            node = model.nodes.get(owners[owner].scope)
            found = by_node[owner] = label(node.trace if node is not None else None)
        return found

    return key


def _category_key(profile: MemoryProfile) -> KeyOf:
    marks = sorted(profile.marks, key=lambda m: m.start)
    starts = [m.start for m in marks]

    def step_index(t: int) -> int:
        s = bisect_right(starts, t) - 1
        return s if s >= 0 and t < marks[s].end else -1

    def key(b: Blocks, i: int, d: DeviceMemory) -> str:
        first, last = b.first[i], b.last[i]
        if last >= len(d.times):
            return NOT_FREED
        if not marks:
            return NO_STEPS_FREED
        if first == BEFORE:
            return FREED_LATER
        s = step_index(d.times[first])
        if s < 0:
            return OUTSIDE_STEPS
        return FREED_IN_STEP if step_index(d.times[last]) == s else FREED_LATER

    return key
