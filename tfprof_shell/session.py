"""A Session: named profiles, the current one, the sticky options, one pass per command.

``Session.execute(line)`` runs a line as parse → plan → build → render →
sink, each step once and in that order, and returns a
:class:`~tfprof_shell.render.base.Reply` (text for stdout, notes for stderr,
files written). It never prints; the CLI and the shell decide where the
reply goes. Only `set`, `use`, `load` and `unload` change the session; a
failed command changes nothing.

Views run on the current profile. ``-base NAME`` compares it with another
profile and ``-profiles LIST`` combines several (see combine/): each
profile's view is built on its own, then they are merged and rendered once.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from . import commands
from .combine.merge import merge, missing, union_keys
from .combine.result import DIFF, MultiResult, Side, combine
from .combine.rows import ROOT_KEY, side_rows
from .errors import OptionError, RequestError, UsageError
from .help import help_text
from .load import Inputs
from .load.jobs import Job, jobs_of
from .load.parallel import LoadedJob, load_many
from .load.progress import Progress, reporting
from .model import Model
from .options import DEFAULTS, Options, check_profile_name, format_dump
from .plan import MultiPlan, full_options, plan_multi, plan_view, select_profiles
from .render import renderer_for
from .render.base import Reply
from .render.multi import render_multi
from .render.profiles import ProfileRow, render_profiles
from .render.sinks import deliver
from .render.critpath_run import run_critpath
from .render.collectives import run_collectives
from .render.memory_run import run_memory
from .render.steps_run import run_kernels, run_steps
from .views.base import ViewResult
from .views.cache import ProfileViews, without_gc


class _AdviceSubject:
    """The current profile as the advisor reads it, with every loaded profile as
    ``peers`` (the straggler checker compares them)."""

    def __init__(self, views: ProfileViews, peers: dict[str, Model]) -> None:
        self.views = views
        self.peers = peers

    @property
    def model(self) -> Model:
        return self.views.model

    def show(self, view: str, opts: Options) -> ViewResult:
        return self.views.show(view, opts)


class Session:
    """Loaded profiles by name, the current one, the default options and their views.

    ``workers`` and ``scheduler`` say how `load` reads several profiles at
    once (see load.parallel.load_many).
    """

    def __init__(self, model: Model, options: Options = DEFAULTS, name: str = "profile",
                 workers: int = 0, scheduler: Optional[str] = None) -> None:
        self.profiles: dict[str, ProfileViews] = {}
        self.current = name
        self.options = options
        self.workers = workers
        self.scheduler = scheduler
        self.add(name, model)
        #: Starts the web UI on this session and returns its URL: set by a door
        #: that can keep a server running (the interactive shell, the API).
        self.serve_ui: Optional[Callable[[], str]] = None
        self._handlers: dict[str, Callable[[commands.Request], Reply]] = {
            commands.VIEW: lambda r: self.run_view(r.command.name, r.options),
            "advise": lambda r: self.run_advise(r.options),
            "steps": lambda r: deliver(without_gc(run_steps, self._models(), self.current,
                                                  r.options)),
            "kernels": lambda r: deliver(without_gc(run_kernels, self.model, r.options)),
            "critpath": lambda r: deliver(without_gc(run_critpath, self._models(),
                                                     self.current, r.options)),
            "collectives": lambda r: deliver(without_gc(run_collectives, self._models(),
                                                        r.options)),
            "memory": lambda r: deliver(without_gc(run_memory, self._models(), self.current,
                                                   r.options)),
            "set": self._set,
            "help": lambda r: Reply(text=help_text(r.args)),
            "quit": lambda r: Reply(quit=True),
            "profiles": lambda r: deliver(render_profiles(self._profile_rows())),
            "use": lambda r: self.use(r.args[0]),
            "load": lambda r: self.load(r.args[0], r.args[1]),
            "unload": lambda r: self.unload(r.args[0]),
            "capture": lambda r: self.capture(r.args[0], r.args[1:]),
            "ui": self._ui,
        }
        #: Where long commands (capture) report progress; None: silently.
        self.progress: Optional[Callable[[str], None]] = None
        #: Where `load` and `capture` report how far loading got; None: silently.
        self.load_progress: Optional[Progress] = None

    @classmethod
    def open(cls, jobs: Sequence[Job], options: Options = DEFAULTS, workers: int = 0,
             scheduler: Optional[str] = None,
             progress: Optional[Progress] = None) -> tuple["Session", list[str]]:
        """A session of every job loaded (the first one current), and the loaders' notes.

        Notes are prefixed with their profile's name when there are several;
        ``workers``, ``scheduler`` and ``progress`` as for load.parallel.load_many.
        """
        if not jobs:
            raise UsageError("no input: give --profile_path=FILE or --graph_path=FILE")
        loaded = load_many([(j.name, j.inputs) for j in jobs], workers, scheduler, progress)
        first = loaded[0]
        session = cls(first.model, options, first.name, workers=workers, scheduler=scheduler)
        for job in loaded[1:]:
            session.add(job.name, job.model)
        return session, _job_notes(loaded, named=len(loaded) > 1)

    # -- profiles --------------------------------------------------------------

    @property
    def profile(self) -> ProfileViews:
        """The current profile and its views."""
        return self.profiles[self.current]

    @property
    def model(self) -> Model:
        """The model of the current profile."""
        return self.profile.model

    @property
    def label(self) -> str:
        """The current profile's name when several are loaded (for the prompt), else ""."""
        return self.current if len(self.profiles) > 1 else ""

    def add(self, name: str, model: Model) -> None:
        """Load ``model`` as profile ``name`` (OptionError if the name is taken or invalid)."""
        check_profile_name(name, "profile name")
        if name in self.profiles:
            raise OptionError("a profile named %s is already loaded (unload it first)" % name)
        self.profiles[name] = ProfileViews(model)

    def use(self, name: str) -> Reply:
        """Make ``name`` the current profile."""
        self._known(name, "use")
        self.current = name
        return Reply()

    def load(self, name: str, path: str) -> Reply:
        """`load NAME PATH`: one profile, or NAME.JOB for each job of a folder."""
        check_profile_name(name, "load")
        jobs, notes = jobs_of(Inputs(profile_path=path), name)
        taken = [j.name for j in jobs if j.name in self.profiles]
        if taken:
            raise OptionError("a profile named %s is already loaded (unload it first)"
                              % taken[0])
        for job in jobs:
            check_profile_name(job.name, "load")
        loaded = load_many([(j.name, j.inputs) for j in jobs], self.workers, self.scheduler,
                           self.load_progress)
        for job in loaded:
            self.profiles[job.name] = ProfileViews(job.model)
        notes += _job_notes(loaded, named=True)
        names = ", ".join(j.name for j in loaded)
        notes.append("loaded %s; 'use NAME' makes one current" % names)
        return Reply(notes=[said(note) for note in notes])

    def capture(self, name: str, args: Sequence[str]) -> Reply:
        """`capture NAME ADDRESS [flags]`: capture from a running job, load it as NAME."""
        from .capture.flags import SHELL, parse
        from .capture.grab import capture

        check_profile_name(name, "capture")
        taken = [n for n in self.profiles if n == name or n.startswith(name + ".")]
        if taken:
            raise OptionError("a profile named %s is already loaded (unload it first)" % taken[0])
        parsed = parse(args, SHELL, takes_session_flags=False)
        if parsed.words:
            raise UsageError("capture: unexpected %r (usage: capture NAME ADDRESS[,ADDRESS...] "
                             "[--duration S ...])" % parsed.words[0])
        done = capture(parsed.addresses, parsed.settings, self.progress)
        reply = self.load(name, done.run_dir)
        written = ["captured %s into %s" % (", ".join(f.target.given for f in done.files),
                                            done.run_dir)]
        reply.notes[:0] = [said(note) for note in done.notes + written]
        return reply

    def unload(self, name: str) -> Reply:
        """Forget profile ``name``; the first remaining one becomes current if it was."""
        self._known(name, "unload")
        if len(self.profiles) == 1:
            raise UsageError("unload: %s is the only profile loaded" % name)
        notes = []
        del self.profiles[name]
        if self.current == name:
            self.current = next(iter(self.profiles))
            notes.append("current profile: %s" % self.current)
        if self.options.base == name:
            self.options = self.options.replace(base="")
            notes.append("-base %s was set: it is now none" % name)
        return Reply(notes=notes)

    def _known(self, name: str, what: str) -> None:
        if name not in self.profiles:
            raise OptionError("%s %s: no such profile; loaded: %s"
                              % (what, name, ", ".join(self.profiles)))

    def _models(self) -> dict[str, Model]:
        return {name: views.model for name, views in self.profiles.items()}

    def _profile_rows(self) -> list[ProfileRow]:
        return [ProfileRow(name, name == self.current, views.model)
                for name, views in self.profiles.items()]

    # -- commands ------------------------------------------------------------

    def show(self, view: str, opts: Options) -> ViewResult:
        """The ViewResult of ``view`` on the current profile (no checks, no output)."""
        return self.profile.show(view, opts)

    def execute(self, line: str) -> Reply:
        """Parse and run one line; an empty line shows the current options."""
        words = commands.split_line(line)
        if not words:
            return Reply(text=format_dump(self.options))
        return self.execute_words(words)

    def execute_words(self, words: Sequence[str]) -> Reply:
        """Run an already split command line (raises UserError on mistakes).

        Notes a profile made while the command ran (it was read again) follow
        the command's own.
        """
        request = commands.parse_words(words, self.options)
        # A profile read again in full by the command says how far it got there too.
        with reporting(self.load_progress):
            try:
                reply = self._handlers[request.command.kind](request)
            finally:
                if self.load_progress is not None:
                    self.load_progress.end()
        reply.notes.extend(self.later_notes())
        return reply

    def later_notes(self) -> list[str]:
        """What the profiles noted since the last call (one was read again), as
        ``tfprof:`` lines, each prefixed with its profile's name when several are loaded."""
        notes = []
        for name, views in self.profiles.items():
            prefix = "%s: " % name if len(self.profiles) > 1 else ""
            notes += [said(prefix + note) for note in views.model.take_notes()]
        return notes

    def run_view(self, view: str, opts: Options) -> Reply:
        """Plan, build, render and deliver one view command."""
        models = {name: views.model for name, views in self.profiles.items()}
        multi = plan_multi(models, self.current, view, opts)
        if multi is not None:
            return deliver(render_multi(self._build_multi(multi)))
        plan = plan_view(self.model, view, opts)
        renderer = renderer_for(opts)
        for run_opts in plan.runs:
            result = self.profile.show(view, run_opts)
            self.profile.remember(view, result)
            renderer.add(result)
        return deliver(renderer.finish())

    def _build_multi(self, plan: MultiPlan) -> MultiResult:
        """Each profile's view, united: hidden nodes get their full values (see merge)."""
        view, opts = plan.view, plan.options
        shown, notes = [], []
        for name, side_opts in plan.sides:
            result = self.profiles[name].show(view, side_opts)
            shown.append(side_rows(result, opts.code_match))
            notes += [n for n in ("%s: %s" % (name, note) for note in result.notes)
                      if n not in notes]
        if plan.mode == DIFF:
            self._check_matchable(plan, shown)
        union = union_keys(shown)
        full = [side_rows(self.profiles[name].show(view, full_options(side_opts)),
                          opts.code_match) if missing(union, rows) else None
                for (name, side_opts), rows in zip(plan.sides, shown)]
        sides = tuple(Side(name, self.profiles[name].model.source.describe(), side_opts.step)
                      for name, side_opts in plan.sides)
        root = combine(merge(shown, full), plan.mode, opts)
        return MultiResult(view, opts, plan.mode, sides, root, notes)

    def _check_matchable(self, plan: MultiPlan, shown: list) -> None:
        current, base = (set(rows) - {ROOT_KEY} for rows in shown)
        if current and base and not current & base:
            (a, _), (b, _) = plan.sides
            kinds = [self.profiles[n].model.source.kind for n in (a, b)]
            raise RequestError("cannot compare %s (%s) with %s (%s): no node of the %s view "
                               "is in both" % (a, kinds[0], b, kinds[1], plan.view))

    def run_advise(self, opts: Options) -> Reply:
        """Run the checkers chosen by ``opts.checkers`` and deliver the advice."""
        # here: the checkers are imported only by the command that runs them (start-up time)
        from .advisor.runner import advise
        from .render.advice import render_advice
        subject = _AdviceSubject(self.profile, self._models())
        advice, notes = advise(subject, opts.checkers)
        return deliver(render_advice(advice, notes, opts))

    def _ui(self, request: commands.Request) -> Reply:
        if request.args:
            raise UsageError("ui takes no arguments (tfprof ui --port N chooses the port)")
        if self.serve_ui is None:
            raise UsageError("ui: serve a browser with `tfprof ui INPUTS`, or type ui "
                             "in the interactive shell")
        return Reply(notes=["web UI: %s" % self.serve_ui()])

    def _set(self, request: commands.Request) -> Reply:
        opts = request.options
        if opts.base:
            self._known(opts.base, "-base")
        if opts.profiles:
            select_profiles({n: v.model for n, v in self.profiles.items()}, opts.profiles)
        self.options = opts
        return Reply()


def said(note: str) -> str:
    """A note of this tool's own, as its stderr lines read (``tfprof: NOTE``)."""
    return "tfprof: " + note


def _job_notes(loaded: Sequence[LoadedJob], named: bool) -> list[str]:
    """The loaders' notes of each job, prefixed with its name when ``named``."""
    return ["%s%s" % ("%s: " % job.name if named else "", note)
            for job in loaded for note in job.notes]
