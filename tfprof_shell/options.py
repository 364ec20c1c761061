"""THE options table: one typed declaration per option of the shell.

:class:`Options` is a frozen dataclass; each field's metadata holds its
:class:`OptionSpec` (kind, help, value hint). CLI flags (``--max_depth=3``),
REPL tokens (``-max_depth 3``), ``set``, ``help``, completion and the
option dump are all derived from :data:`OPTION_SPECS`, in declaration order,
which is also the order of the engine's option dump.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from . import metrics, regex
from .advisor.catalog import CHECKER_NAMES
from .errors import OptionError
from .outputs import OUTPUT_KINDS, Output, parse_bool_word, parse_output

INT32 = "int32"
INT64 = "int64"
CHOICE = "choice"
CHOICE_SET = "choice_set"
REGEX_LIST = "regex_list"
BOOL = "bool"
OUTPUT = "output"
NAME_LIST = "name_list"
#: A loaded profile's name, or "none" (stored as "").
PROFILE = "profile"
#: Loaded profiles: names or regular expressions over names, or "all".
PROFILE_LIST = "profile_list"
#: A device name as the steps table spells it, or "all" (stored as "").
DEVICE = "device"
#: A step, or nothing (stored as None): "the same as -step".
OPTIONAL_STEP = "optional_step"
#: One RE2 regular expression, or nothing (stored as "").
REGEX = "regex"
#: `critpath -whatif` rules, REGEX=FACTOR; repeatable, or separated by ';' (stored as a tuple).
WHATIF = "whatif"

VIEW_COMMANDS = ("scope", "graph", "op", "code")
#: Commands that read the profile's time intervals (steps breakdown, kernel table).
INTERVAL_COMMANDS = ("steps", "kernels")
#: The critical-path command.
CRITPATH = "critpath"
#: The command that aligns the collective calls of several profiles (ranks).
COLLECTIVES_COMMAND = "collectives"
#: Commands that take the options of comparing and combining profiles.
MULTI_COMMANDS = VIEW_COMMANDS + ("set",)
#: ... and the steps and memory commands, which compare and combine their own way.
STEPS_MULTI_COMMANDS = MULTI_COMMANDS + ("steps", "memory")
#: What `memory -by` groups the blocks alive at the peak by, with what each means.
MEMORY_KEYS = {
    "op": "The op type that allocated (a JAX program where events name no op).",
    "scope": "The node that allocated: its name scope path.",
    "code": "The innermost line of the program's own code on the allocating stack.",
    "shape": "The tensor shape and type (the block's size where none is recorded).",
    "region": "The allocation's region as the format names it (TensorFlow: output, "
              "temp, persist...).",
    "category": "How long the block lived: freed within its step, freed in a later "
                "step, or not freed while profiled.",
}
#: The times `critpath -precision` builds the path from, with what each means.
PRECISIONS = {
    "ns": "The trace's own times, to the nanosecond.",
    "us": "Each event rounded inward to whole microseconds (its start up, its end down), "
          "as Holistic Trace Analysis rounds them: HTA's figures exactly.",
}
#: How -profiles combines each node's values, with what each means.
AGGREGATES = {
    "sum": "Add the profiles' values (a profile without the node adds nothing).",
    "mean": "Average over the profiles that have the node.",
    "max": "The largest value of any profile that has the node (finds stragglers).",
    "min": "The smallest value of any profile that has the node.",
}
#: How a diff matches code view nodes, with what each means.
CODE_MATCHES = {
    "line": "Match call stacks frame by frame: file, line and function.",
    "function": "Match file and function only (lines move when code is edited).",
}
#: Commands that accept the view options (advise and set accept and ignore
#: or keep them, as in the original).
OPTION_COMMANDS = VIEW_COMMANDS + ("advise", "set")

_INT_RE = re.compile(r"^\s*[+-]?[0-9]+\s*$")
_LIMITS = {INT32: (-2**31, 2**31 - 1), INT64: (-2**63, 2**63 - 1)}


@dataclass(frozen=True)
class OptionSpec:
    """How one option is spelled, parsed, printed and explained."""

    kind: str
    help: str
    hint: str = ""
    choices: Optional[Callable[[], Sequence[str]]] = None
    commands: tuple[str, ...] = OPTION_COMMANDS
    #: Part of the engine's 21-line option dump (and of the CLI flags).
    in_dump: bool = True
    #: Also a CLI flag (--name=value) although not in the dump.
    flag: bool = False
    #: value -> one line of help, for options with a fixed set of values.
    choice_help: Optional[Mapping[str, str]] = None
    #: command -> what the option does for that command, where ``help`` would mislead.
    command_help: Optional[Mapping[str, str]] = None
    #: Given again on one line, its values add up (-whatif a=1 -whatif b=2).
    repeatable: bool = False
    name: str = ""

    def help_for(self, command: str) -> str:
        """The option's help as it applies to ``command``."""
        return (self.command_help or {}).get(command, self.help)

    @property
    def is_flag(self) -> bool:
        """Whether the command line has a --name flag that sets its starting value."""
        return self.in_dump or self.flag

    @property
    def repl_name(self) -> str:
        return "-" + self.name

    @property
    def cli_name(self) -> str:
        return "--" + self.name


def _opt(default: Any, kind: str, help: str, hint: str = "", **kw: Any) -> Any:
    spec = OptionSpec(kind, help, hint, **kw)
    if isinstance(default, (list, set, frozenset, tuple)) and kind != OUTPUT:
        return field(default=default, metadata={"spec": spec})
    return field(default=default, metadata={"spec": spec})


def _min(stat_name: str) -> Any:
    return _opt(0, INT64, "Hide nodes whose %s is below N." % stat_name, "N")


def _regexes(default: tuple[str, ...], help: str) -> Any:
    return _opt(default, REGEX_LIST, help, "REGEX[,REGEX...]")


@dataclass(frozen=True)
class Options:
    """The options of one command. Immutable: parsing returns a new copy."""

    max_depth: int = _opt(10, INT32, "Show nodes at most N levels deep (the root is level 1).", "N")
    min_bytes: int = _opt(0, INT64, "Hide nodes whose total requested bytes is below N.", "N",
                          commands=OPTION_COMMANDS + ("memory",), command_help={
                              "memory": "Hide keys of the live set holding fewer than N "
                                        "bytes at the peak."})
    min_peak_bytes: int = _min("total peak bytes")
    min_residual_bytes: int = _min("total residual bytes")
    min_output_bytes: int = _min("total output bytes")
    min_micros: int = _min("total execution time (microseconds)")
    min_accelerator_micros: int = _min("total accelerator time (microseconds)")
    min_cpu_micros: int = _min("total cpu time (microseconds)")
    min_params: int = _min("number of parameters")
    min_float_ops: int = _min("number of float operations")
    min_occurrence: int = _min("run count (op view: number of graph nodes)")
    step: int = _opt(-1, INT64, "Show statistics of step N; -1 averages over each node's steps.", "N",
                     commands=OPTION_COMMANDS + INTERVAL_COMMANDS
                     + (CRITPATH, COLLECTIVES_COMMAND, "memory"),
                     command_help={
                         "collectives": "Show only the collectives and straggler of step N; "
                                        "-1 shows every step.",
                         "steps": "Show only step N; -1 shows every step and their average.",
                         "memory": "The peak of step N and what is alive at it; -1: the "
                                   "peak of the whole profile.",
                         "kernels": "Count only the kernels of step N; -1 counts every step.",
                         CRITPATH: "The path of step N (its ProfilerStep#N or step marker); "
                                   "-1: every step's.",
                         "advise": "Accepted and ignored, as by the original: advise reads "
                                   "every step."})
    order_by: str = _opt("name", CHOICE, "Sort each node's children by this key.",
                         "KEY", choices=lambda: tuple(metrics.ORDER_KEYS))
    account_type_regexes: tuple[str, ...] = _regexes(
        (".*",), "Account only nodes with an op type matching one of these.")
    start_name_regexes: tuple[str, ...] = _regexes(
        (".*",), "Start the display at nodes whose name matches one of these.")
    trim_name_regexes: tuple[str, ...] = _regexes(
        (), "Do not descend below nodes whose name matches one of these.")
    show_name_regexes: tuple[str, ...] = _opt(
        (".*",), REGEX_LIST, "Show only nodes whose name matches one of these.",
        "REGEX[,REGEX...]", commands=OPTION_COMMANDS + ("kernels",),
        command_help={"kernels": "Show only kernels whose name matches one of these."})
    hide_name_regexes: tuple[str, ...] = _opt(
        (), REGEX_LIST, "Hide nodes whose name matches one of these.", "REGEX[,REGEX...]",
        commands=OPTION_COMMANDS + ("kernels",),
        command_help={"kernels": "Hide kernels whose name matches one of these."})
    account_displayed_op_only: bool = _opt(
        False, BOOL, "Totals count only the displayed nodes.", "[true|false]")
    select: frozenset[str] = _opt(
        frozenset({"micros"}), CHOICE_SET, "Attributes to show, comma separated.",
        "ATTR[,ATTR...]", choices=lambda: tuple(metrics.ATTRIBUTES))
    output: Output = _opt(
        Output(), OUTPUT, "Where the result goes: TYPE[:outfile=PATH,...].",
        "TYPE[:KEY=VALUE,...]", choices=lambda: tuple(OUTPUT_KINDS),
        commands=OPTION_COMMANDS + INTERVAL_COMMANDS + (CRITPATH, COLLECTIVES_COMMAND,
                                                        "memory"),
        command_help={
            "steps": "Where the result goes: stdout, file, json or none, or timeline (the "
                     "steps' categories as tracks beside the trace).",
            "kernels": "Where the result goes: stdout, file, json or none.",
            "collectives": "Where the result goes: stdout, file, json or none, or timeline "
                           "(the ranks on one time axis, each instance's arrivals linked).",
            CRITPATH: "Where the result goes: stdout, file, json or none, or timeline (the "
                      "windows' events with the path marked args.critical and flow arrows "
                      "along its edges).",
            "memory": "Where the result goes: stdout, file, json or none; timeline (the "
                      "level as counter tracks beside the steps) or pprof (the blocks "
                      "alive at the peak by call stack)."})
    checkers: tuple[str, ...] = _opt(
        (), NAME_LIST, "Advisor checkers to run, comma separated (default: all).",
        "NAME[,NAME...]", choices=lambda: CHECKER_NAMES,
        commands=("advise",), in_dump=False)
    base: str = _opt(
        "", PROFILE, "Compare the view with this loaded profile (none: no comparison).",
        "NAME|none", commands=STEPS_MULTI_COMMANDS + (CRITPATH,), in_dump=False, flag=True,
        command_help={
            "steps": "Compare each category's per-step average with this loaded profile's "
                     "(none: no comparison).",
            CRITPATH: "Compare each window's path (length, bounds, the events' time on it) "
                      "with the same window's path in this loaded profile (none: no "
                      "comparison)."})
    base_step: Optional[int] = _opt(
        None, OPTIONAL_STEP, "The -base profile's step (same: the same as -step).", "N|same",
        commands=MULTI_COMMANDS, in_dump=False, flag=True)
    code_match: str = _opt(
        "line", CHOICE, "How -base matches code view nodes.", "line|function",
        choices=lambda: tuple(CODE_MATCHES), choice_help=CODE_MATCHES,
        commands=MULTI_COMMANDS, in_dump=False, flag=True)
    profiles: tuple[str, ...] = _opt(
        (), PROFILE_LIST, "Run the view over these loaded profiles and combine them "
        "(names or regexes, comma separated, or all; none: only the current one).",
        "NAME[,NAME...]|all|none",
        commands=STEPS_MULTI_COMMANDS + (COLLECTIVES_COMMAND,), in_dump=False, flag=True,
        command_help={
            "steps": "Show these loaded profiles as a ranks x steps table with the straggler "
                     "of each step (names or regexes, comma separated, or all; none: only "
                     "the current one).",
            "collectives": "Align the collectives of these loaded profiles (names or "
                           "regexes, comma separated, or all; none or not given: every "
                           "loaded profile)."})
    aggregate: str = _opt(
        "sum", CHOICE, "How -profiles combines each node's values.", "sum|mean|max|min",
        choices=lambda: tuple(AGGREGATES), choice_help=AGGREGATES,
        commands=MULTI_COMMANDS, in_dump=False, flag=True)
    device: str = _opt(
        "", DEVICE, "Show only this device (a name the steps table shows, e.g. gpu:0 or "
        "mtia:0, or /device:GPU:0; all: every device).", "NAME|all",
        commands=INTERVAL_COMMANDS + ("memory", "set"),
        in_dump=False)
    by_profile: bool = _opt(
        False, BOOL, "With -profiles: show each profile's values beside the combined one.",
        "[true|false]", commands=MULTI_COMMANDS, in_dump=False, flag=True)
    by: str = _opt(
        "op", CHOICE, "What memory groups the blocks alive at the peak by.",
        "|".join(MEMORY_KEYS), choices=lambda: tuple(MEMORY_KEYS), choice_help=MEMORY_KEYS,
        commands=("memory", "set"), in_dump=False)
    region: str = _opt(
        "", REGEX, "Find a path in every instance of the annotations (or ops) this names "
        "instead of in each step, numbered in order (none: the steps).", "REGEX|none",
        commands=(CRITPATH, "set"), in_dump=False)
    host_gaps: bool = _opt(
        False, BOOL, "Weigh the host time between a thread's top-level ops (HTA counts it as "
        "nothing).", "[true|false]", commands=(CRITPATH, "set"), in_dump=False)
    precision: str = _opt(
        "ns", CHOICE, "The event times the path is built from: the trace's own, or rounded "
        "inward to whole µs as Holistic Trace Analysis rounds them.", "ns|us",
        choices=lambda: tuple(PRECISIONS), choice_help=PRECISIONS, commands=(CRITPATH, "set"),
        in_dump=False)
    whatif: tuple[str, ...] = _opt(
        (), WHATIF, "Scale the time of matching work by FACTOR and find the new path and "
        "the estimated window time: a name regex, cat:REGEX (the trace's category) or "
        "bound:REGEX (a bound category); repeat it, or separate rules with ';' (none: "
        "no what-if).", "REGEX=FACTOR", commands=(CRITPATH, "set"), in_dump=False,
        repeatable=True)

    def replace(self, **changes: Any) -> "Options":
        """A copy with some fields changed (values are not re-validated)."""
        return dataclasses.replace(self, **changes)


def _build_specs() -> dict[str, OptionSpec]:
    specs = {}
    for f in dataclasses.fields(Options):
        spec = dataclasses.replace(f.metadata["spec"], name=f.name)
        specs[f.name] = spec
    return specs


#: name -> spec, in declaration (= option dump) order.
OPTION_SPECS: dict[str, OptionSpec] = _build_specs()
DEFAULTS = Options()


# --------------------------------------------------------------------------
# Values: parse one option's text, format one option's value.
# --------------------------------------------------------------------------

def strip_quotes(text: str) -> str:
    """Drop all leading and trailing ' and " characters (the engine's StripQuote)."""
    return text.strip("'\"")


def split_list(text: str) -> list[str]:
    """Comma list as the engine reads it: quotes stripped, empty items dropped."""
    return [item for item in strip_quotes(text).split(",") if item]


def parse_value(spec: OptionSpec, text: str) -> Any:
    """Parse the text of one option value; raise OptionError if it is invalid."""
    kind = spec.kind
    if kind in (INT32, INT64):
        lo, hi = _LIMITS[kind]
        if not _INT_RE.match(text) or not lo <= int(text) <= hi:
            raise OptionError("%s takes an integer, got '%s'" % (spec.repl_name, text))
        return int(text)
    if kind == CHOICE:
        valid = spec.choices() if spec.choices else ()
        if text not in valid:
            raise OptionError(_bad_choice(spec, text, valid))
        return text
    if kind == CHOICE_SET:
        valid = spec.choices() if spec.choices else ()
        items = split_list(text)
        for item in sorted(set(items)):
            if item not in valid:
                raise OptionError(_bad_choice(spec, item, valid))
        return frozenset(items)
    if kind == NAME_LIST:
        valid = spec.choices() if spec.choices else ()
        items = split_list(text)
        for item in items:
            if item not in valid:
                raise OptionError(_bad_choice(spec, item, valid))
        return tuple(dict.fromkeys(items))
    if kind == REGEX_LIST:
        items = split_list(text)
        for item in items:
            regex.check(item, spec.name)
        return tuple(items)
    if kind == BOOL:
        value = parse_bool_word(text)
        if value is None:
            raise OptionError("%s takes true or false, got '%s'" % (spec.repl_name, text))
        return value
    if kind == OUTPUT:
        return parse_output(text)
    if kind == PROFILE:
        name = strip_quotes(text)
        check_profile_name(name, spec.repl_name, allow_none=True)
        return "" if name == "none" else name
    if kind == PROFILE_LIST:
        items = split_list(text)
        if items == ["none"]:
            return ()
        for item in items:
            if item != "all":
                regex.check(item, spec.name)
        return tuple(dict.fromkeys(items))
    if kind == DEVICE:
        name = strip_quotes(text)
        if not name or any(c.isspace() for c in name):
            raise OptionError("%s takes a device name such as gpu:0, got '%s'"
                              % (spec.repl_name, text))
        return "" if name == "all" else name
    if kind == REGEX:
        pattern = strip_quotes(text)
        if pattern == "none":
            return ""
        regex.check(pattern, spec.name)
        return pattern
    if kind == WHATIF:
        rules = [r for r in strip_quotes(text).split(";") if r]
        if rules == ["none"]:
            return ()
        for rule in rules:
            check_whatif(rule, spec.repl_name)
        return tuple(rules)
    if kind == OPTIONAL_STEP:
        if text == "same":
            return None
        if not _INT_RE.match(text) or not _LIMITS[INT64][0] <= int(text) <= _LIMITS[INT64][1]:
            raise OptionError("%s takes an integer, got '%s'" % (spec.repl_name, text))
        return int(text)
    raise AssertionError(kind)


def format_value(spec: OptionSpec, value: Any) -> str:
    """The engine's option-dump text of a value (the inverse of parse_value)."""
    kind = spec.kind
    if kind in (INT32, INT64):
        return "%d" % value
    if kind == BOOL:
        return "true" if value else "false"
    if kind == CHOICE_SET:
        return ",".join(sorted(value))
    if kind in (REGEX_LIST, NAME_LIST):
        return ",".join(value)
    if kind == PROFILE_LIST:
        return ",".join(value) or "none"
    if kind == OUTPUT:
        return value.format()
    if kind == PROFILE:
        return value or "none"
    if kind == DEVICE:
        return value or "all"
    if kind == OPTIONAL_STEP:
        return "same" if value is None else "%d" % value
    if kind == WHATIF:
        return ";".join(value) or "none"
    if kind == REGEX:
        return value or "none"
    return str(value)


def check_whatif(rule: str, what: str = "-whatif") -> None:
    """OptionError unless ``rule`` is REGEX=FACTOR (FACTOR a number >= 0, REGEX valid RE2,
    optionally after cat: or bound:)."""
    pattern, sep, number = rule.rpartition("=")
    if not sep or not pattern:
        raise OptionError("%s takes REGEX=FACTOR (e.g. 'aten::mm=0.5' or 'cat:kernel=0.5'), "
                          "got '%s'" % (what, rule))
    try:
        factor = float(number)
    except ValueError:
        factor = -1.0
    if not 0 <= factor < float("inf"):
        raise OptionError("%s %s: the factor must be a number, 0 or more (0.5: twice as "
                          "fast), got '%s'" % (what, rule, number))
    prefix, colon, rest = pattern.partition(":")
    regex.check(rest if colon and prefix in ("cat", "bound") else pattern, what.lstrip("-"))


_PROFILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*\Z")


def check_profile_name(name: str, what: str, allow_none: bool = False) -> None:
    """OptionError unless ``name`` can name a loaded profile (letters, digits, _ . + -).

    "all" is never a name (it means every profile); "none" only where it
    means no profile (``allow_none``).
    """
    if allow_none and name == "none":
        return
    if not _PROFILE_NAME.match(name) or name in ("all", "none"):
        raise OptionError("%s: '%s' cannot name a profile (use letters, digits, _ . + -; "
                          "not all or none)" % (what, name))


def _bad_choice(spec: OptionSpec, got: str, valid: Sequence[str]) -> str:
    hint = difflib.get_close_matches(got, valid, n=1)
    maybe = " (did you mean %s?)" % hint[0] if hint else ""
    return "%s: unknown value '%s'%s; valid: %s" % (
        spec.repl_name, got, maybe, ", ".join(valid))


# --------------------------------------------------------------------------
# Token lists: `-name value ...` after a command word.
# --------------------------------------------------------------------------

def lookup(token: str, command: str) -> OptionSpec:
    """The spec for an option token such as ``-max_depth``, or OptionError."""
    name = token[1:] if token.startswith("-") else None
    spec = OPTION_SPECS.get(name) if name else None
    if spec is None or command not in spec.commands:
        names = [s.repl_name for s in OPTION_SPECS.values() if command in s.commands]
        hint = difflib.get_close_matches(token, names, n=1)
        maybe = " (did you mean %s?)" % hint[0] if hint else ""
        if spec is not None:
            raise OptionError("'%s' does not apply to %s" % (token, command))
        if not token.startswith("-"):
            raise OptionError("expected an option such as -max_depth, got '%s'%s"
                              % (token, maybe))
        raise OptionError("unknown option '%s'%s; see 'help %s'" % (token, maybe, command))
    return spec


def parse_tokens(tokens: Sequence[str], base: Options, command: str) -> Options:
    """Apply ``-name value`` tokens to ``base`` and return the new Options.

    ``base`` is never modified. A bare ``-account_displayed_op_only`` (last,
    or followed by another option) means true, as in the engine. Any
    mistake raises OptionError.
    """
    changes: dict[str, Any] = {}
    i = 0
    n = len(tokens)
    while i < n:
        spec = lookup(tokens[i], command)
        if spec.kind == BOOL and (i + 1 == n or tokens[i + 1].startswith("-")):
            changes[spec.name] = True
            i += 1
            continue
        if i + 1 >= n:
            raise OptionError("%s needs a value (%s)" % (spec.repl_name, spec.hint))
        value = parse_value(spec, tokens[i + 1])
        if spec.repeatable and spec.name in changes:
            value = changes[spec.name] + value
        changes[spec.name] = value
        i += 2
    return dataclasses.replace(base, **changes) if changes else base


def from_mapping(values: dict[str, str], base: Options = DEFAULTS) -> Options:
    """Options from ``name -> text`` pairs (CLI flags), validated like tokens."""
    changes = {name: parse_value(OPTION_SPECS[name], text) for name, text in values.items()}
    return dataclasses.replace(base, **changes)


def format_dump(opts: Options) -> str:
    """The engine's option dump: one ``%-28s%s`` line per option, in table order."""
    lines = []
    for name, spec in OPTION_SPECS.items():
        if spec.in_dump:
            lines.append("%-28s%s" % (spec.repl_name, format_value(spec, getattr(opts, name))))
    return "\n".join(lines) + "\n"


def names_for(command: str) -> Iterable[OptionSpec]:
    """The option specs a command accepts, in table order."""
    return (s for s in OPTION_SPECS.values() if command in s.commands)
