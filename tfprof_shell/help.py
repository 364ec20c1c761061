"""`help`, `help COMMAND`, `help -OPTION`: generated from the declarative tables.

Every line comes from :data:`~tfprof_shell.commands.COMMANDS`,
:data:`~tfprof_shell.options.OPTION_SPECS`, the attribute table
(:mod:`~tfprof_shell.metrics`), :data:`~tfprof_shell.outputs.OUTPUT_KINDS` and
the advisor's checker table, so help cannot drift from what the parser
accepts. :func:`choice_descriptions` is shared with the shell's completer.
"""

from __future__ import annotations

import difflib
from typing import Sequence

from . import metrics, options
from .advisor.catalog import CHECKER_HELP
from .capture.flags import SHELL, flag_help
from .commands import COMMANDS, VIEW, Command
from .errors import CommandError
from .options import DEFAULTS, OPTION_SPECS, OptionSpec, format_value
from .outputs import OUTPUT_KINDS

KEYS = ("Keys: Tab completes (commands, options, values, node names), Up/Down and "
        "Ctrl-R search the history, Ctrl-C abandons the line or a running command, "
        "Ctrl-D (or quit) leaves, F3 toggles the pager.")

BOOL_WORDS = "true or false (also t/f, yes/no, y/n, 1/0, any case)"

#: What tfprof reads and how to give it: `help` and `tfprof --help` print this list.
INPUT_KINDS = (
    ("TensorFlow 1 ProfileProto", "--profile_path=FILE"),
    ("TensorFlow 1 GraphDef, RunMetadata, OpLog",
     "--graph_path=G --run_meta_path=R0,R1 --op_log_path=L"),
    ("TensorFlow 2 .xplane.pb, run or log folder", "--profile_path=PATH [--run=RUN] [--host=H]"),
    ("JAX or XLA .xplane.pb (jax.profiler)", "--profile_path=PATH"),
    ("TensorFlow 1 timelines (timeline-N.json)", "--profile_path=T1.json,T2.json or their folder"),
    ("PyTorch traces (*.pt.trace.json[.gz])", "--profile_path=FILE or a folder of workers"),
    ("a tfprof record folder", "--profile_path=DIR"),
    ("several profiles", "--profile NAME=PATH, --base_profile_path=PATH"),
)

#: Where the user guide is.
GUIDE = ("User guide: docs/index.md in the tfprof-shell source; all commands and options: "
         "docs/reference.md.")


def inputs_text() -> str:
    """The input kinds as an indented two-column table."""
    return _table(INPUT_KINDS)

#: What the *_name_regexes options match, per view.
NAME_TARGETS = ("scope/graph: node names (layer1/MatMul); op: op types (MatMul); "
                "code: code locations (model.py:42:build)")


def help_text(args: Sequence[str]) -> str:
    """Help for ``args``: nothing -> overview; a command; an -option; an attribute.

    Raises CommandError (with the closest topic) for anything else.
    """
    if not args:
        return overview()
    return "\n".join(_topic(arg) for arg in args)


def overview() -> str:
    """Commands, options with defaults, and how the shell works."""
    cmds = [(c.name, c.summary) for c in COMMANDS.values()]
    opts = [(s.repl_name, _default(s), s.help) for s in OPTION_SPECS.values()]
    return "".join((
        "Commands:\n", _table(cmds), "\n\n",
        "Options (after a view command, e.g. op -select micros,bytes -order_by micros):\n",
        _table(opts, ("option", "default", "meaning")), "\n\n",
        "Options typed on a command apply to that command only; 'set -option value ...'\n"
        "changes the defaults of the following commands; an empty line shows them.\n"
        "More: help COMMAND (help scope), help -OPTION (help -select), help ATTRIBUTE "
        "(help micros).\n",
        KEYS, "\n\n",
        "Inputs (given to tfprof when it starts; load NAME PATH adds one):\n",
        inputs_text(), "\n\n",
        GUIDE, "\n",
    ))


def command_help(cmd: Command) -> str:
    """One command: what it does, its usage and the options it takes."""
    lines = ["%s: %s" % (cmd.name, cmd.summary)]
    if cmd.details:
        lines.append(cmd.details)
    if cmd.kind == "help":
        lines.append("Usage: help [COMMAND | -OPTION | ATTRIBUTE ...]")
    elif cmd.kind == "capture":
        lines.append("Usage: %s %s [--flag value ...]" % (cmd.name, " ".join(cmd.args)))
        lines += ["", "Flags:", flag_help(SHELL).rstrip("\n")]
    elif not cmd.takes_options:
        lines.append(" ".join(("Usage:", cmd.name) + cmd.args))
    else:
        lines.append("Usage: %s [-option value ...]" % cmd.name)
        specs = list(options.names_for(cmd.name))
        rows = [(s.repl_name, s.hint, _default(s), s.help_for(cmd.name)) for s in specs]
        lines += ["", "Options:", _table(rows, ("option", "value", "default", "meaning"))]
    if cmd.kind == VIEW:
        lines += ["", "Options apply to this command only; 'set' changes the defaults."]
    if cmd.kind == "advise":
        checkers = choice_descriptions(OPTION_SPECS["checkers"])
        if checkers:
            lines += ["", "Checkers:", _table(checkers)]
    return "\n".join(lines) + "\n"


def option_help(spec: OptionSpec) -> str:
    """One option: meaning, syntax, default, commands and allowed values."""
    lines = [("%s %s" % (spec.repl_name, spec.hint)).rstrip(), spec.help]
    lines += ["In %s: %s" % (command, text) for command, text in (spec.command_help or {}).items()]
    lines += ["Default: %s" % _default(spec), "Applies to: %s" % ", ".join(spec.commands)]
    lines.append(_value_rule(spec))
    choices = choice_descriptions(spec)
    if choices:
        lines += ["Values:", _table(choices)]
    return "\n".join(lines) + "\n"


def attribute_help(name: str) -> str:
    """One `-select` attribute or `-order_by` key."""
    lines = []
    attr = metrics.ATTRIBUTES.get(name)
    if attr is not None:
        lines += ["%s (-select): %s" % (name, attr.help)]
        lines += ["Doc: %s" % line for line in attr.doc.split("\n")]
    if name in metrics.ORDER_KEYS:
        lines.append("%s (-order_by): %s" % (name, metrics.order_help(name)))
    return "\n".join(lines) + "\n"


def choice_descriptions(spec: OptionSpec) -> list[tuple[str, str]]:
    """(value, one-line description) for each value an option accepts, if finite."""
    if spec.kind == options.BOOL:
        return [("true", "Yes."), ("false", "No.")]
    if spec.name == "order_by":
        return [(k, metrics.order_help(k)) for k in metrics.ORDER_KEYS]
    if spec.name == "select":
        return [(a.name, a.help) for a in metrics.ATTRIBUTES.values()]
    if spec.kind == options.OUTPUT:
        return [(k.name, _output_usage(k.name)) for k in OUTPUT_KINDS.values()]
    if spec.name == "checkers":
        return checker_descriptions()
    if spec.choice_help is not None:
        return list(spec.choice_help.items())
    if spec.choices is not None:
        return [(c, "") for c in _choices(spec)]
    return []


def checker_descriptions() -> list[tuple[str, str]]:
    """(name, help) of the advisor's checkers, in display order."""
    return list(CHECKER_HELP.items())


def topics() -> list[str]:
    """Every word `help` accepts (commands, -options, attributes and keys)."""
    names = list(COMMANDS) + [s.repl_name for s in OPTION_SPECS.values()]
    names += [n for n in list(metrics.ATTRIBUTES) + list(metrics.ORDER_KEYS) if n not in names]
    return names


# --------------------------------------------------------------------------

def _topic(arg: str) -> str:
    if arg in COMMANDS:
        return command_help(COMMANDS[arg])
    name = arg.lstrip("-")
    if name in OPTION_SPECS and (arg.startswith("-") or name not in metrics.ATTRIBUTES):
        return option_help(OPTION_SPECS[name])
    if name in metrics.ATTRIBUTES or name in metrics.ORDER_KEYS:
        return attribute_help(name)
    hint = difflib.get_close_matches(arg, topics(), n=1)
    maybe = " (did you mean %s?)" % hint[0] if hint else ""
    raise CommandError("no help for '%s'%s; try help, help COMMAND or help -OPTION" % (arg, maybe))


def _value_rule(spec: OptionSpec) -> str:
    kind = spec.kind
    if kind == options.INT32:
        return "Value: an integer from -2147483648 to 2147483647."
    if kind == options.INT64:
        return "Value: an integer (64-bit)."
    if kind == options.CHOICE:
        return "Value: one of the names below."
    if kind in (options.CHOICE_SET, options.NAME_LIST):
        return ("Value: a comma-separated list of the names below (no spaces); "
                "quotes around it are dropped.")
    if kind == options.REGEX_LIST:
        target = ("op types and user-defined types of each node"
                  if spec.name == "account_type_regexes" else NAME_TARGETS)
        return ("Value: comma-separated RE2 regular expressions, each matching a whole "
                "name (no commas inside a regex; quotes around the list are dropped; "
                "an empty list matches nothing). Matched against %s." % target)
    if kind == options.BOOL:
        return "Value: %s; alone (last, or before another option) it means true." % BOOL_WORDS
    if kind == options.OUTPUT:
        return ("Value: TYPE or TYPE:KEY=VALUE,... ; relative paths are relative to "
                "the current directory.")
    if kind == options.PROFILE:
        return ("Value: the name of a loaded profile (see the profiles command), or none "
                "to stop comparing.")
    if kind == options.PROFILE_LIST:
        return ("Value: comma-separated profile names or RE2 regular expressions over "
                "them (whole names), all, or none.")
    if kind == options.DEVICE:
        return ("Value: a device as the steps table names it (gpu:0, mtia:0, xpu:0; "
                "host1/gpu:0 when several hosts), or all.")
    if kind == options.OPTIONAL_STEP:
        return ("Value: an integer (64-bit), -1 to average over each node's steps, or same "
                "for the step -step chose.")
    if kind == options.REGEX:
        return ("Value: one RE2 regular expression matching a whole name (quotes around it "
                "are dropped), or none.")
    if kind == options.WHATIF:
        return ("Value: REGEX=FACTOR, cat:REGEX=FACTOR or bound:REGEX=FACTOR (FACTOR a "
                "number, 0 or more: 0.5 halves the time); several: repeat the option or "
                "separate rules with ';'; none clears them.")
    raise AssertionError(kind)


def _output_usage(kind_name: str) -> str:
    kind = OUTPUT_KINDS[kind_name]
    keys = []
    for key in kind.keys:
        value = "BOOL" if key in kind.bool_keys else "PATH"
        item = "%s=%s" % (key, value)
        keys.append(item if key in kind.required else "[%s]" % item)
    if not keys:
        return kind.help
    return "%s Use %s:%s" % (kind.help, kind.name, ",".join(keys))


def _default(spec: OptionSpec) -> str:
    text = format_value(spec, getattr(DEFAULTS, spec.name))
    if spec.kind == options.OUTPUT:
        text = text.rstrip(":")
    return text or "(none)"


def _choices(spec: OptionSpec) -> Sequence[str]:
    return tuple(spec.choices()) if spec.choices else ()


def _table(rows: Sequence[Sequence[str]], headers: Sequence[str] = ()) -> str:
    from tabulate import tabulate  # here: a one-shot view never needs it (start-up time)
    text = tabulate([list(r) for r in rows], headers=list(headers), tablefmt="plain",
                    disable_numparse=True)
    return "\n".join("  " + line.rstrip() for line in text.split("\n"))
