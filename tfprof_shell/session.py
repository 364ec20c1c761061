"""A Session: one loaded model, the sticky options, and the views built so far.

``Session.execute(line)`` parses a line and runs it, returning a
:class:`Reply` (text for stdout, notes for stderr, files written). It never
prints; the CLI and the shell decide where the reply goes. Only `set`
changes :attr:`Session.options`; a failed command changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from . import commands
from .errors import RequestError
from .model import Model
from .options import DEFAULTS, Options, format_dump
from .deep import call_deep


@dataclass
class Reply:
    """What a command produced: stdout text, stderr notes, files written."""

    text: str = ""
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    quit: bool = False
    #: The structured result (a ViewResult or Advice), for the API and JSON.
    result: object = None


class Session:
    """The loaded model plus the session's default options and cached views."""

    def __init__(self, model: Model, options: Options = DEFAULTS) -> None:
        self.model = model
        self.options = options
        self._views: dict[str, object] = {}

    # -- views ---------------------------------------------------------------

    def view(self, name: str):
        """The view ``name``, built on first use and kept for the session."""
        view = self._views.get(name)
        if view is None:
            from .views import VIEWS
            view = call_deep(VIEWS[name], self.model)
            self._views[name] = view
        return view

    # -- commands ------------------------------------------------------------

    def execute(self, line: str) -> Reply:
        """Parse and run one line; an empty line shows the current options."""
        words = commands.split_line(line)
        if not words:
            return Reply(text=format_dump(self.options))
        return self.execute_words(words)

    def execute_words(self, words: Sequence[str]) -> Reply:
        """Run an already split command line (raises UserError on mistakes)."""
        request = commands.parse_words(words, self.options)
        kind = request.command.kind
        if kind == commands.VIEW:
            return self.run_view(request.command.name, request.options)
        if kind == "set":
            self.options = request.options
            return Reply()
        if kind == "advise":
            from .advisor import run_advice
            return run_advice(self, request.options)
        if kind == "help":
            from .help import help_text
            return Reply(text=help_text(request.args))
        if kind == "quit":
            return Reply(quit=True)
        raise AssertionError(kind)

    def run_view(self, view: str, opts: Options) -> Reply:
        """Run one view command with ``opts`` and deliver it to its output."""
        from .render import deliver, check_request
        from .render.timeline import deliver_timeline_steps, timeline_plan
        self.check_step(opts.step)
        check_request(self.model, view, opts)
        plan = timeline_plan(self.model, view, opts)
        if plan is not None:  # one timeline per recorded step (or all merged)
            return deliver_timeline_steps(lambda o: self.show(view, o), opts, plan)
        result = self.show(view, opts)
        return deliver(result)

    def show(self, view: str, opts: Options):
        """The ViewResult of ``view`` for ``opts`` (no output, no checks)."""
        from .render.text import MISSING_STREAM_WARNING
        try:
            result = call_deep(self.view(view).show, opts)
        except KeyboardInterrupt:
            # The abandoned worker may still be mutating this view's nodes.
            self._views.pop(view, None)
            raise
        if self.model.miss_accelerator_stream:
            result.warning = MISSING_STREAM_WARNING
        return result

    def check_step(self, step: int) -> None:
        """RequestError unless ``step`` is -1 (average) or a recorded step."""
        if step >= 0 and step not in self.model.steps:
            steps = " ".join(str(s) for s in self.model.steps) or "none"
            raise RequestError("-step %d not found; available steps: %s" % (step, steps))
