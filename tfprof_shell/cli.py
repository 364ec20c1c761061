"""The `tfprof` command: flags -> profiles and starting options -> one-shot or shell.

``tfprof --profile_path=P op -select micros`` runs one command and exits;
without a command it opens the interactive shell. ``--profile NAME=PATH``
(repeatable) and ``--base_profile_path=PATH`` load more profiles into the
same session. Every option of the options table is also a flag
(``--max_depth=3``) that sets the starting value. Exit status: 0 ok, 1 bad
input data or unanswerable request, 2 usage mistake; a user error is one
line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from dataclasses import dataclass
from typing import Optional, Sequence, TextIO

from .errors import (EXIT_INTERNAL, OptionError, UsageError, UserError, internal_error_line,
                     print_debug_traceback)
from .help import GUIDE, inputs_text
from .load import Inputs, split_paths
from .load.progress import Fanout, Progress
from .options import OPTION_SPECS, Options, check_profile_name, from_mapping
from .progress_bar import terminal_progress
from .version import __version__

PROG = "tfprof"
#: The name --base_profile_path loads its profile under.
BASE_NAME = "base"


_DESCRIPTION = ("Profile analysis shell for TensorFlow, JAX and PyTorch "
                "profiles (a pure-Python tfprof).\n\n"
                "With a COMMAND it runs that command and exits; without one it "
                "opens the tfprof> shell\n(type help there). "
                "tfprof record [OPTIONS] -- PROGRAM records a TensorFlow program\n"
                "(tfprof record --help). tfprof capture HOST:PORT profiles a running job\n"
                "and tfprof top HOST:PORT shows it live (tfprof capture --help).\n\n"
                "What it reads:\n")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, no usage dump
        raise UsageError(message)

    def format_help(self) -> str:
        # The inputs table is made only for --help (its table code costs every start-up).
        self.description = _DESCRIPTION + inputs_text()
        return super().format_help()


def build_parser() -> argparse.ArgumentParser:
    """Input flags, then one flag per row of the options table."""
    p = _Parser(prog=PROG, add_help=False, allow_abbrev=False,
                formatter_class=argparse.RawDescriptionHelpFormatter,
                description=_DESCRIPTION,
                epilog=GUIDE,
                usage="%(prog)s --profile_path=FILE [COMMAND [-option value ...]]")
    io = p.add_argument_group("inputs")
    io.add_argument("--profile_path", help="ProfileProto written by Profiler.serialize_to_string(); "
                                           "or an .xplane.pb file (TensorFlow 2, JAX/XLA), run or "
                                           "log directory; or Chrome-trace .json[.gz] files, "
                                           "comma separated: TensorFlow timelines (one per "
                                           "step) or PyTorch traces (steps from their "
                                           "ProfilerStep#N); or a `tfprof record` folder. "
                                           "A folder holding several jobs "
                                           "(PyTorch workers, XProf hosts) loads one profile each.")
    io.add_argument("--graph_path", help="GraphDef (binary or text).")
    io.add_argument("--run_meta_path", default="",
                    help="RunMetadata files, comma separated; the i-th file is step i.")
    io.add_argument("--op_log_path", help="OpLogProto (flops, extra types, code traces).")
    io.add_argument("--checkpoint_path", help="Checkpoint for -select tensor_value (needs TensorFlow).")
    io.add_argument("--run", help="With a TF2 log directory as --profile_path: the profile run "
                                  "to load (default: the newest).")
    io.add_argument("--host", default="", help="With .xplane.pb profiles: load only these "
                                               "hosts, comma separated (default: all).")
    many = p.add_argument_group("several profiles")
    many.add_argument("--profile", action="append", default=[], metavar="NAME=PATH",
                      help="Also load PATH (anything --profile_path takes) as profile NAME; "
                           "repeatable.")
    many.add_argument("--base_profile_path", metavar="PATH",
                      help="Load PATH as profile 'base' and compare every view with it "
                           "(-base base).")
    many.add_argument("--jobs", type=int, metavar="N", default=0,
                      help="Processes that load several profiles at once (default: one per "
                           "CPU; 1 loads them one by one in this process).")
    many.add_argument("--dask_scheduler", metavar="ADDRESS",
                      help="Load profiles on this Dask cluster (tcp://host:8786; needs "
                           "pip install 'tfprof-shell[dask]').")
    sh = p.add_argument_group("shell")
    sh.add_argument("--history_file", help="Where the shell keeps its history.")
    sh.add_argument("-h", "--help", action="store_true", help="Show this help and exit.")
    sh.add_argument("--version", action="store_true", help="Show the version and exit.")
    opts = p.add_argument_group("starting options (same as the shell's -options)")
    for spec in OPTION_SPECS.values():
        if spec.is_flag:
            opts.add_argument(spec.cli_name, dest="opt_" + spec.name, metavar=spec.hint or "VALUE",
                              help=spec.help)
    p.add_argument("words", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return p


@dataclass
class Invocation:
    """A parsed command line: what to load, the starting options, the command words."""

    inputs: Inputs
    options: Options
    words: list[str]
    #: (name, path) of each --profile, in order.
    named: list[tuple[str, str]]
    base_path: Optional[str]
    ns: argparse.Namespace


def parse_argv(argv: Sequence[str]) -> tuple[Inputs, Options, list[str], argparse.Namespace]:
    """Split argv into inputs, starting options and the command words."""
    inv = parse_invocation(argv)
    return inv.inputs, inv.options, inv.words, inv.ns


def parse_invocation(argv: Sequence[str]) -> Invocation:
    """Parse argv: flags (``--name=value`` or ``--name value``) up to the command words."""
    parser = build_parser()
    takes_value = {s for a in parser._actions if a.nargs != 0 and a.option_strings
                   for s in a.option_strings}
    flags: list[str] = []
    words: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not (arg.startswith("--") or (arg == "-h" and not words)):
            words = list(argv[i:])
            break
        flags.append(arg)
        if arg in takes_value and i + 1 < len(argv):
            flags.append(argv[i + 1])
            i += 1
        i += 1
    ns = parser.parse_args(flags)
    values = {name[4:]: value for name, value in vars(ns).items()
              if name.startswith("opt_") and value is not None}
    options = from_mapping(values)
    if ns.base_profile_path:
        options = options.replace(base=BASE_NAME)
    if ns.jobs < 0:
        raise UsageError("--jobs takes a number of processes (0: one per CPU), got %d" % ns.jobs)
    inputs = Inputs(profile_path=ns.profile_path, graph_path=ns.graph_path,
                    run_meta_paths=split_paths(ns.run_meta_path or ""),
                    op_log_path=ns.op_log_path, checkpoint_path=ns.checkpoint_path,
                    run=ns.run, hosts=split_paths(ns.host or ""))
    named = []
    for entry in ns.profile:
        name, eq, path = entry.partition("=")
        if not eq or not path:
            raise UsageError("--profile takes NAME=PATH, got '%s'" % entry)
        check_profile_name(name, "--profile")
        named.append((name, path))
    return Invocation(inputs, options, words, named, ns.base_profile_path, ns)


def main(argv: Optional[Sequence[str]] = None, stdin: TextIO = sys.stdin,
         stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr, exits: bool = False) -> int:
    """Run the command line; returns the exit status.

    ``exits``: the process ends right after; the garbage collector, paused
    while loading, stays off (re-enabled, its first collection would walk
    the whole model only to be thrown away).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _run(argv, stdin, stdout, stderr, exits)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug, in any subcommand: one line, as the shell reports it
        print_debug_traceback(exc, stderr)
        stderr.write(internal_error_line(exc) + "\n")
        return EXIT_INTERNAL


def _run(argv: list[str], stdin: TextIO, stdout: TextIO, stderr: TextIO, exits: bool) -> int:
    """:func:`main` without its guard against bugs: a subcommand, or the views."""
    if argv[:1] == ["record"]:  # `tfprof record ...` runs a program with the recorder armed
        from .record.launcher import main as record_main
        return record_main(argv[1:], stdout=stdout, stderr=stderr)
    if argv[:1] == ["capture"]:  # `tfprof capture ADDRESS ...` captures from a running job
        from .capture.cli import main as capture_main
        return capture_main(argv[1:], lambda args: main(args, stdin, stdout, stderr, exits),
                            stdout=stdout, stderr=stderr)
    if argv[:1] == ["top"]:  # `tfprof top ADDRESS ...` redraws a view of a running job
        from .capture.top import main as top_main
        return top_main(argv[1:], lambda flags: parse_invocation(flags).options,
                        stdin=stdin, stdout=stdout, stderr=stderr)
    if argv[:1] == ["ui"]:  # `tfprof ui ...` serves the profiles to a web browser
        return _ui(argv[1:], stdout, stderr)
    # The model is hundreds of thousands of long-lived objects: cyclic GC passes
    # over them while loading cost more than the loading itself.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        inv = parse_invocation(argv)
        ns, words = inv.ns, inv.words
        if ns.help:
            stdout.write(build_parser().format_help())
            return 0
        if ns.version:
            stdout.write("tfprof-shell %s\n" % __version__)
            return 0
        if inv.inputs.is_empty() and not inv.named:
            if words and words[0] == "help":
                from .help import help_text
                stdout.write(help_text(words[1:]))
                return 0
            raise UsageError("no input: give --profile_path=FILE "
                             "(or --graph_path=FILE --run_meta_path=F0,F1,...); see --help")
        if words[:1] == ["ui"]:  # `tfprof INPUTS ui`: the same as `tfprof ui INPUTS`
            at = len(argv) - len(words)
            return _ui(argv[:at] + argv[at + 1:], stdout, stderr)
        progress = terminal_progress(stderr)
        session = open_session(inv, stderr, progress)
        session.load_progress = progress
        if words:
            return _one_shot(session, words, stdout, stderr)
        gc.freeze()
        if gc_was_enabled:
            gc.enable()
        from .shell import run_shell
        return run_shell(session, history_file=ns.history_file,
                         stdin=stdin, stdout=stdout, stderr=stderr)
    except UserError as exc:
        stderr.write("tfprof: %s\n" % exc.message)
        return exc.exit_code
    except KeyboardInterrupt:
        stderr.write("tfprof: interrupted\n")
        return 130
    finally:
        if gc_was_enabled and not exits:
            gc.enable()


def plan_jobs(inv: Invocation) -> tuple[list, list[str]]:
    """The profiles the command line names (load.jobs.Job each) and notes on how they
    were found; UsageError for a --base_profile_path of several jobs or two same names."""
    from .load.jobs import jobs_of

    jobs, notes = [], []
    if not inv.inputs.is_empty():
        found, found_notes = jobs_of(inv.inputs)
        jobs += found
        notes += found_notes
    for name, path in inv.named:
        found, found_notes = jobs_of(Inputs(profile_path=path), name)
        jobs += found
        notes += found_notes
    if inv.base_path:
        found, found_notes = jobs_of(Inputs(profile_path=inv.base_path), BASE_NAME)
        if len(found) > 1:
            raise UsageError("--base_profile_path %s holds %d jobs: name the one to compare "
                             "with, e.g. --profile %s=PATH -base %s"
                             % (inv.base_path, len(found), found[0].name, found[0].name))
        jobs += found
        notes += found_notes
    seen: set[str] = set()
    for job in jobs:
        if job.name in seen:
            raise UsageError("two profiles are named %s: name them with --profile NAME=PATH"
                             % job.name)
        seen.add(job.name)
    return jobs, notes


def open_session(inv: Invocation, stderr: TextIO, progress: Optional[Progress] = None):
    """Load every profile the command line names into a new Session.

    Loader notes go to stderr, prefixed by the profile's name when there are
    several; ``progress`` hears how far loading got. The starting -base and
    -profiles must name loaded profiles.
    """
    from .plan import select_profiles
    from .session import Session

    jobs, notes = plan_jobs(inv)
    session, load_notes = Session.open(jobs, inv.options, inv.ns.jobs, inv.ns.dask_scheduler,
                                       progress)
    for note in notes + load_notes:
        stderr.write("tfprof: %s\n" % note)
    if inv.options.base and inv.options.base not in session.profiles:
        raise OptionError("-base %s: no such profile; loaded: %s"
                          % (inv.options.base, ", ".join(session.profiles)))
    if inv.options.profiles:
        select_profiles({n: v.model for n, v in session.profiles.items()}, inv.options.profiles)
    return session


def check_inputs(inv: Invocation) -> None:
    """Raise the loader's error for an input file that does not exist, before any load."""
    from .load.jobs import check_found
    check_found(plan_jobs(inv)[0])


def _ui(argv: list[str], stdout: TextIO, stderr: TextIO) -> int:
    """`tfprof ui [INPUTS] [--port N] [--host ADDR] [--no-browser]` (see ui/launch.py)."""
    from .ui import launch
    try:
        flags, rest = launch.parse_flags(argv)
        if flags.help:
            stdout.write(launch.USAGE)
            return 0
        inv = parse_invocation(rest)
        if inv.words:
            raise UsageError("ui takes no command (got '%s'); type commands in the page"
                             % " ".join(inv.words))
        if inv.inputs.is_empty() and not inv.named:
            raise UsageError("ui: no input: give --profile_path=FILE (see tfprof ui --help)")
        from .ui import require_server
        require_server()
        check_inputs(inv)
        progress = terminal_progress(stderr)
        return launch.serve(lambda page: open_session(inv, stderr, Fanout(progress, page)),
                            flags, stdout, stderr)
    except UserError as exc:
        stderr.write("tfprof: %s\n" % exc.message)
        return exc.exit_code


def _one_shot(session, words: list[str], stdout: TextIO, stderr: TextIO) -> int:
    reply = session.execute_words(words)
    for note in reply.notes:
        stderr.write(note + "\n")
    stdout.write(reply.text)
    stdout.flush()
    return 0


def entry_point() -> None:
    """Console-script entry: exit with main()'s status.

    Once the output is flushed the process ends at once: tearing down a large
    model object by object at interpreter shutdown costs a noticeable part of
    a second and serves nobody.
    """
    status = main(exits=True)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing left to say
            pass
    os._exit(status)
