"""THE commands table: every word that can start a line, with its help.

Parsing (:func:`parse_line`), `help`, completion and the one-shot CLI all
read :data:`COMMANDS`. Handlers live in session.py, keyed by
:attr:`Command.kind`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Sequence

from .errors import CommandError
from .options import Options, parse_tokens

VIEW = "view"


@dataclass(frozen=True)
class Command:
    """One command: its name, what kind of handler runs it, and its help."""

    name: str
    kind: str
    summary: str
    details: str = ""
    takes_options: bool = True
    #: Plain arguments, for usage and completion: PROFILE (a loaded profile's
    #: name), NAME (a new name) or PATH.
    args: tuple[str, ...] = ()
    #: Flags may follow the plain arguments (capture's --duration ...).
    more_args: bool = False


COMMANDS: dict[str, Command] = {c.name: c for c in (
    Command("scope", VIEW, "Nodes organized by their name scopes (a/b/c under a/b).",
            "Each node's statistics include those of the nodes below it."),
    Command("graph", VIEW, "Nodes organized by graph edges: each node's inputs are its children.",
            "A node that feeds several others is shown once, under the first consumer."),
    Command("op", VIEW, "One row per op type, with cumulative totals.",
            "Each row's first percentage is the share of this row and all rows below "
            "it; the second is this row's own share."),
    Command("code", VIEW, "Nodes organized by the Python call stacks that created them.",
            "Needs code traces: a profile recorded with them, or --op_log_path "
            "written with add_trace=True."),
    Command("steps", "steps", "Where each step's time goes: device busy, compute, copies, "
            "communication, idle; host input, launches, syncs.",
            "One row per step and device, then the average. Each device row's compute, "
            "communication, memory, other and idle add up to its span; idle splits into "
            "host wait (the host had not started the launch yet) and queued. The host "
            "table splits the step's wall time the same way. -step N shows one step, "
            "-device NAME one device, -profiles all a ranks x steps table with the "
            "slowest rank of each step, -base NAME compares each category. '--' marks "
            "what the profile's format does not record. See docs/steps.md."),
    Command("collectives", "collectives", "Collective calls matched across ranks: each "
            "one's arrival skew, last rank and waits; each step's straggler and what "
            "delayed it.",
            "Runs over every loaded profile (-profiles chooses some): the ranks of one "
            "job, e.g. a folder of PyTorch rank traces. Calls match by (process group, "
            "Seq), else by their order in each group, else by their order in each step; "
            "op and size must agree. The straggler of a step is the rank with the largest "
            "own lateness; its cause is the region it spent more wall time in than the "
            "other ranks before arriving. -step N shows one step; -output json or "
            "timeline. See docs/collectives.md."),
    Command("kernels", "kernels", "One row per device kernel name: count, total, mean, "
            "min, max and share of device time.",
            "Memory copies and sets are rows too. -step N counts one step, -device NAME "
            "one device; -show_name_regexes and -hide_name_regexes choose names."),
    Command("critpath", "critpath", "What bounds each step: its critical path through the "
            "dependency graph of host ops, launches, kernels and syncs.",
            "HTA's definition by default (Holistic Trace Analysis, at the trace's ns "
            "precision); one path per step (-step N: one), or per instance of -region REGEX. "
            "Shows each path's length, what bounds it (cpu_bound, gpu_compute_bound, ...) and "
            "where its time goes; -host_gaps weighs host time between ops, -whatif "
            "'REGEX=FACTOR' finds the path if that work took FACTOR times as long, -base NAME "
            "compares with another profile. TF2/JAX GPU profiles give an approximate path, "
            "TensorFlow 1 graphs the longest dataflow chain. See docs/critpath.md."),
    Command("memory", "memory", "Memory over time per device: the peak, what is alive at "
            "it, growth over the steps.",
            "A sparkline of each device's level with the step starts; the peak (when first "
            "reached, how often, in which step; reserved, fragmentation and capacity where "
            "the format records them); the blocks alive at the peak, matched over the whole "
            "profile and grouped by -by op|scope|code|shape|region|category; each step's "
            "highest and final level, the growth per step and the leak suspects. -step N "
            "looks at step N's peak, -device NAME at one device; -base NAME compares the "
            "peaks and live sets, -profiles ranks several profiles. See docs/memory.md."),
    Command("advise", "advise", "Run the advisor's checkers and print their advice.",
            "Checkers: AcceleratorUtilizationChecker, OperationChecker, "
            "ExpensiveOperationChecker. The original's JobChecker has no open-source "
            "implementation and is not available. Choose some with -checkers."),
    Command("set", "set", "Change the session's default options: set -max_depth 3 ...",
            "Options typed on a view command apply to that command only; "
            "set keeps them for the following commands. An empty line shows them."),
    Command("profiles", "profiles", "List the loaded profiles; * marks the current one.",
            "Views run on the current profile; -base NAME compares it with another, "
            "-profiles combines several.", takes_options=False),
    Command("use", "use", "Make a loaded profile the current one: use NAME.",
            takes_options=False, args=("PROFILE",)),
    Command("load", "load", "Load another profile: load NAME PATH.",
            "PATH is anything --profile_path accepts; a folder holding several jobs "
            "loads one profile per job, named NAME.JOB.", takes_options=False,
            args=("NAME", "PATH")),
    Command("capture", "capture", "Capture a running job's profile and load it: "
            "capture NAME ADDRESS [--duration 2 ...].",
            "ADDRESS is the host:port of its profiler service (TensorFlow 2: "
            "tf.profiler.experimental.server.start; JAX: jax.profiler.start_server); "
            "several, comma separated, load one profile per host (NAME.HOST). "
            "Ctrl-C ends the capture early and keeps what was traced.",
            takes_options=False, args=("NAME", "ADDRESS"), more_args=True),
    Command("unload", "unload", "Forget a loaded profile: unload NAME.",
            takes_options=False, args=("PROFILE",)),
    Command("ui", "ui", "Serve this session to a web browser and print its URL.",
            "The page runs the same lines on the same profiles and options; it "
            "stays up until the shell ends. From the command line: tfprof ui.",
            takes_options=False),
    Command("help", "help", "Show help: help, help COMMAND, help -OPTION.",
            takes_options=False),
    Command("quit", "quit", "Leave the shell (also: exit, Ctrl-D).", takes_options=False),
    Command("exit", "quit", "Leave the shell (also: quit, Ctrl-D).", takes_options=False),
)}


@dataclass(frozen=True)
class Request:
    """A parsed line: the command, its options, and any plain arguments (help)."""

    command: Command
    options: Options
    args: tuple[str, ...] = ()
    #: Flags may follow the plain arguments (capture's --duration ...).
    more_args: bool = False


def split_line(line: str) -> list[str]:
    """Split a line the engine's way: on single spaces, empty pieces dropped."""
    return [w for w in line.split(" ") if w]


def lookup_command(word: str) -> Command:
    """The command named ``word``, or CommandError with a suggestion."""
    cmd = COMMANDS.get(word)
    if cmd is None:
        hint = difflib.get_close_matches(word, list(COMMANDS), n=1)
        maybe = " (did you mean %s?)" % hint[0] if hint else ""
        raise CommandError("unknown command '%s'%s; commands: %s"
                           % (word, maybe, ", ".join(COMMANDS)))
    return cmd


def parse_words(words: Sequence[str], base: Options) -> Request:
    """Parse a command and its option tokens against ``base`` (left unchanged)."""
    if not words:
        raise CommandError("empty command")
    cmd = lookup_command(words[0])
    if not cmd.takes_options:
        args = tuple(words[1:])
        if cmd.args and (len(args) < len(cmd.args) if cmd.more_args
                         else len(args) != len(cmd.args)):
            raise CommandError("usage: %s %s%s" % (cmd.name, " ".join(cmd.args),
                                                   " [--flag value ...]" if cmd.more_args
                                                   else ""))
        if cmd.kind == "profiles" and args:
            raise CommandError("profiles takes no arguments")
        return Request(cmd, base, args)
    return Request(cmd, parse_tokens(words[1:], base, cmd.name))
