"""The page's option controls and presets, generated from the options table.

Each control is one row of options.OPTION_SPECS (name, kind, help, value
hint, choices, default, the commands that take it), so the sidebar can
never drift from what the parser accepts. The presets are TensorFlow's
ProfileOptionBuilder dictionaries (compat.py) turned into shell tokens.
"""

from __future__ import annotations

from typing import Any

from .. import metrics
from ..option_builder import ProfileOptionBuilder
from ..option_dicts import options_from_dict
from ..options import DEFAULTS, OPTION_SPECS, Options, format_value
from .runner import changed_tokens

#: Options the page never offers (the browser shows results itself).
HIDDEN = frozenset({"output"})


def option_controls() -> list[dict[str, Any]]:
    """One description per option of the table, in table order."""
    out = []
    for name, spec in OPTION_SPECS.items():
        if name in HIDDEN:
            continue
        choices = list(spec.choices()) if spec.choices else []
        out.append({"name": name, "flag": spec.repl_name, "kind": spec.kind, "help": spec.help,
                    "hint": spec.hint, "choices": choices,
                    "choice_help": dict(spec.choice_help or {}),
                    "command_help": dict(spec.command_help or {}),
                    "default": format_value(spec, getattr(DEFAULTS, name)),
                    "commands": list(spec.commands)})
    return out


def _preset_tokens(options: dict[str, Any]) -> list[str]:
    opts, _ = options_from_dict(options)
    return changed_tokens(opts.replace(output=DEFAULTS.output), DEFAULTS)


def presets() -> list[dict[str, Any]]:
    """ProfileOptionBuilder's presets as the option tokens that differ from the defaults."""
    builder = ProfileOptionBuilder
    found = [("default", "ProfileOptionBuilder() (the shell's defaults)", []),
             ("trainable_variables_parameter", builder.trainable_variables_parameter.__doc__,
              _preset_tokens(builder.trainable_variables_parameter())),
             ("float_operation", builder.float_operation.__doc__,
              _preset_tokens(builder.float_operation())),
             ("time_and_memory", builder.time_and_memory.__doc__,
              _preset_tokens(builder.time_and_memory()))]
    return [{"name": n, "help": (h or "").strip(), "tokens": t} for n, h, t in found]


def attributes() -> list[dict[str, str]]:
    """The metrics table: attribute names, units and help (for column headers)."""
    return [{"name": a.name, "unit": a.unit, "help": a.help,
             "numeric": a.stat is not None} for a in metrics.ATTRIBUTES.values()]


def controls_document() -> dict[str, Any]:
    """Everything the page builds its sidebar from (static for a process)."""
    return {"options": option_controls(), "presets": presets(), "attributes": attributes(),
            "defaults": changed_tokens(Options(), DEFAULTS)}
