"""Runs the page's shell lines on the session: the web UI's only way to the engine.

Every answer comes from a literal shell line, parsed by commands.parse_words
against the session's options and run by the session, exactly as the shell
does; views come back as columns (columns.py) instead of text. The browser
may not load or unload files, write files, or quit: such lines are refused
with one line, and a refused or failed line leaves the session unchanged.
One lock serialises the session, which is not thread-safe.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Optional

from .. import commands, metrics
from ..combine.result import MultiResult
from ..errors import UsageError
from ..model import stats as S
from ..options import DEFAULTS, OPTION_SPECS, Options, format_dump, format_value
from ..outputs import Output
from ..render.json_out import numeric_attributes
from ..render.multi import render_multi_text
from ..render.profiles import total_micros
from ..render.text import render_text
from ..views.base import ViewResult
from .columns import multi_columns, row_details, row_starts, view_columns

if TYPE_CHECKING:
    from ..session import Session

#: Commands the browser may run (load/unload name files; quit and ui make no sense there).
ALLOWED_KINDS = frozenset({commands.VIEW, "advise", "set", "help", "profiles", "use", "steps",
                           "kernels"})
_NONE = Output("none")
_STDOUT = Output()


def changed_tokens(opts: Options, base: Options = DEFAULTS) -> list[str]:
    """``-name value`` tokens for each option of ``opts`` that differs from ``base``."""
    out = []
    for name, spec in OPTION_SPECS.items():
        value = getattr(opts, name)
        if value != getattr(base, name):
            out += [spec.repl_name, format_value(spec, value)]
    return out


def vocabulary(model: Any) -> str:
    """Whose names the page shows for the root and devices: "engine" (TensorFlow 1's
    ``_TFProfRoot``, ``/job:localhost/.../device:GPU:0``) on TensorFlow 1 profiles and
    timelines, "framework" (a total, ``gpu:0``) on PyTorch traces and XSpace files."""
    kind = model.source.kind
    if kind == "xplane":
        return "framework"
    if kind == "chrome_trace":  # a PyTorch trace, or a TF1 timeline (TensorFlow op types)
        for node in model.nodes.values():
            if node.op.startswith("aten::"):
                return "framework"
    return "engine"


class LineRunner:
    """The session seen through shell lines, for the web server (thread-safe)."""

    def __init__(self, session: "Session") -> None:
        self.session = session
        self.lock = threading.RLock()
        self._results: "OrderedDict[tuple, Any]" = OrderedDict()
        self._engine: Any = None
        #: The Timeline page's prepared lanes by line (see timeline.py).
        self.timelines: "OrderedDict[tuple, Any]" = OrderedDict()
        self._present_of: Optional[tuple[tuple, list[str]]] = None

    # -- lines ---------------------------------------------------------------

    def check(self, line: str) -> commands.Request:
        """Parse ``line`` against the session's options; UsageError if the browser may not run it."""
        words = commands.split_line(line)
        if not words:
            raise UsageError("empty command; try: scope -max_depth 3")
        request = commands.parse_words(words, self.session.options)
        kind = request.command.kind
        if kind not in ALLOWED_KINDS:
            raise UsageError("%s: not available in the web UI; use the shell"
                             % request.command.name)
        if kind != "set" and request.options.output != self.session.options.output:
            raise UsageError("-output: the web UI shows results itself (the Timeline page "
                             "downloads Chrome traces); other outputs work in the shell")
        if kind == "set" and request.options.output != self.session.options.output:
            raise UsageError("set -output: not available in the web UI; use the shell")
        return request

    def run(self, line: str, text: bool = False, document: bool = False,
            starts: bool = False) -> dict[str, Any]:
        """Run one line: columns for a view, the shell's text for the rest.

        ``text``: a view's answer also carries the text the shell prints.
        ``document``: a `steps` or `kernels` answer carries the document `-output json`
        prints (``"kind": "document"``) instead of the text.
        ``starts``: a single profile's view also carries each row's first start
        (columns.row_starts), for time-ordered flame graphs.
        """
        with self.lock:
            request = self.check(line)
            kind = request.command.kind
            if kind == commands.VIEW:
                value, notes = self._view(line, request)
                answer = (multi_columns(value) if isinstance(value, MultiResult)
                          else view_columns(value))
                if isinstance(value, ViewResult) and value.view == "op":
                    answer["more"] = self._op_rows_below(request, value)
                if starts and isinstance(value, ViewResult):
                    answer["start"] = row_starts(value)
                if text:
                    answer["text"] = (render_multi_text(value) if isinstance(value, MultiResult)
                                      else render_text(value))
            elif document and kind in ("steps", "kernels"):
                reply = self.session.execute_words(commands.split_line(line) +
                                                   ["-output", "none"])
                notes = list(reply.notes)
                answer = {"kind": "document", "document": reply.result}
            elif kind == "advise":
                reply = self.session.run_advise(request.options.replace(output=_STDOUT))
                notes = list(reply.notes)
                answer = {"kind": "advise", "text": reply.text,
                          "checkers": {k: list(v) for k, v in reply.result.checkers.items()}}
            else:
                reply = self.session.execute_words(commands.split_line(line))
                notes = list(reply.notes)
                answer = {"kind": "text", "text": reply.text}
            notes += self._later_notes()
            answer.update(line=line, command=request.command.name, notes=notes)
            return answer

    def _view(self, line: str, request: commands.Request) -> tuple[Any, list[str]]:
        """The result of a view line (kept for details), and its notes."""
        key = (line, self.session.current, self.session.options)
        kept = self._results.get(key)
        if kept is not None:
            self._results.move_to_end(key)
            return kept
        opts = request.options.replace(output=_NONE)
        reply = self.session.run_view(request.command.name, opts)
        value = reply.result
        if not isinstance(value, (ViewResult, MultiResult)):
            raise UsageError("%s: this line gives no view to show" % line)
        kept = (value, list(reply.notes))
        self._results[key] = kept
        while len(self._results) > 4:
            self._results.popitem(last=False)
        return kept

    def _op_rows_below(self, request: commands.Request, shown: ViewResult) -> dict[str, Any]:
        """The op types an op view leaves out below its last row (-max_depth): how many,
        and their summed own values (the rows -max_depth would add)."""
        opts = request.options
        if opts.account_displayed_op_only:
            return {"rows": 0, "total": {}}
        everything = self.session.run_view("op", opts.replace(
            output=_NONE, max_depth=(1 << 31) - 1)).result
        rows = everything.root.children
        cut = rows[len(shown.root.children):]
        attrs = numeric_attributes(opts.select)
        return {"rows": len(cut),
                "total": {a: sum(n.self_stats[metrics.ATTRIBUTES[a].stat] for n in cut)
                          for a in attrs}}

    def _later_notes(self) -> list[str]:
        notes = []
        for name, views in self.session.profiles.items():
            prefix = "%s: " % name if len(self.session.profiles) > 1 else ""
            notes += [prefix + n for n in views.model.take_notes()]
        return notes

    def details(self, line: str, row: int) -> dict[str, Any]:
        """Every attribute of row ``row`` of a view line's result."""
        with self.lock:
            request = self.check(line)
            if request.command.kind != commands.VIEW:
                raise UsageError("details: %s is not a view" % request.command.name)
            value, _ = self._view(line, request)
            try:
                return row_details(value, row)
            except IndexError:
                raise UsageError("details: no row %d in this view" % row) from None

    def view_result(self, line: str) -> Any:
        """The ViewResult or MultiResult of a view line (for timelines)."""
        with self.lock:
            request = self.check(line)
            if request.command.kind != commands.VIEW:
                raise UsageError("%s is not a view" % request.command.name)
            return self._view(line, request)[0]

    # -- what the page shows around the lines ---------------------------------

    def complete(self, text: str) -> list[dict[str, Any]]:
        """The shell completer's candidates for ``text`` (the line up to the cursor)."""
        from ..shell.completer import engine_for
        with self.lock:
            if self._engine is None:
                self._engine = engine_for(self.session)
            found = self._engine.complete(text)
        return [{"text": c.text, "length": c.length, "display": c.display or c.text,
                 "meta": c.meta} for c in found[:200]]

    def state(self) -> dict[str, Any]:
        """Profiles, the sticky options (as tokens and as the dump), commands, options table."""
        with self.lock:
            s = self.session
            return {
                "profiles": self._profiles(),
                "current": s.current,
                "options": changed_tokens(s.options),
                "present": self._present(),
                "dump": format_dump(s.options),
                "commands": [{"name": c.name, "summary": c.summary}
                             for c in commands.COMMANDS.values()
                             if c.kind in ALLOWED_KINDS],
            }

    def _present(self) -> list[str]:
        """The attributes the current profile has any value of (a -min_* option on the
        others cannot act); computed once per profile."""
        model = self.session.model
        key = (self.session.current, id(model))
        if self._present_of is None or self._present_of[0] != key:
            sums = [0] * S.N_SELF
            for node in model.nodes.values():
                for k, v in enumerate(node.stats(-1)):
                    if v:
                        sums[k] = 1
            names = [name for name, a in metrics.ATTRIBUTES.items()
                     if a.stat is not None and a.stat < S.N_SELF and sums[a.stat]]
            self._present_of = (key, names)
        return self._present_of[1]

    def _profiles(self) -> list[dict[str, Any]]:
        out = []
        for name, views in self.session.profiles.items():
            model = views.model
            out.append({"name": name, "current": name == self.session.current,
                        "kind": model.source.kind, "paths": list(model.source.paths),
                        "vocabulary": vocabulary(model),
                        "steps": list(model.steps), "nodes": len(model.nodes),
                        "micros": total_micros(model)})
        return out
