"""What a ProfileProto carries beyond the node model: NodeDef attributes, CodeDefs, strings.

A model grown step by step (``load/stepwise.py``) keeps these beside it so
that ``Profiler.serialize_to_string()`` (``render/profile_out.py``) writes
every fact TensorFlow's engine would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ModelExtras:
    """Facts of a stepwise model that only a ProfileProto carries."""

    #: node name -> its NodeDef's attr map (the first NodeDef of that name)
    attrs: dict[str, Any] = field(default_factory=dict)
    #: node name -> the CodeDef that became its call stack (the first one applied)
    code_defs: dict[str, Any] = field(default_factory=dict)
    #: string id -> string, from the op logs (an id already known keeps its string)
    id_to_string: dict[int, str] = field(default_factory=dict)
