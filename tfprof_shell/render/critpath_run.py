"""Running `critpath`: check the request, find the paths, render, against -base too.

Every mistake (an output it does not write, an unknown -base, a step or region
the profile lacks, a format without dependencies) is one RequestError line.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from ..errors import RequestError
from ..model import Model
from ..options import Options
from ..views.critpath import DEFINITIONS, critical_paths
from ..views.critpath_result import CritPathResult
from ..views.critpath_whatif import parse_rule
from .base import Rendered
from .critpath import critpath_document, critpath_text, critpath_trace, definitions
from .document import deliver_document
from .critpath_diff import diff_document, diff_text

_WRITTEN = ("stdout", "file", "json", "none", "timeline")


class CritPathReply:
    """What a `critpath` reply carries for the Python API: the paths, and the JSON
    document, built when first asked (a text command over many steps never pays
    for it)."""

    def __init__(self, paths: Any, build: Callable[[], dict]) -> None:
        self.paths = paths
        self._build = build
        self._doc: Optional[dict] = None

    def document(self) -> dict:
        """The ``-output json`` document."""
        if self._doc is None:
            self._doc = self._build()
        return self._doc


def _paths(model: Model, name: str, opts: Options, several: bool,
           graph_events: bool = False) -> CritPathResult:
    try:
        return critical_paths(model, opts.step, opts.region, opts.host_gaps,
                              [parse_rule(r) for r in opts.whatif], graph_events,
                              opts.precision)
    except RequestError as exc:
        if several:
            raise RequestError("profile %s: %s" % (name, exc.message)) from None
        raise


def _notes(result: CritPathResult, labels: bool) -> list[str]:
    """What the reader must know: the graphs' notes, and with ``labels`` (outputs
    without the text's header) the definitions other than HTA's."""
    notes = (["critpath: " + DEFINITIONS[d] for d in definitions(result) if d != "hta"]
             if labels else [])
    for p in result.paths:
        notes += ["%s: %s" % (p.window.name, n) for n in p.notes]
    notes += result.notes
    return list(dict.fromkeys(notes))


def run_critpath(models: Mapping[str, Model], current: str, opts: Options) -> Rendered:
    """`critpath` on the current profile, or against -base."""
    kind = opts.output.kind
    if kind not in _WRITTEN:
        raise RequestError("critpath cannot write -output %s; use stdout, file, json, none "
                           "or timeline" % kind)
    if opts.base:
        if opts.base not in models:
            raise RequestError("-base %s: no such profile; loaded: %s"
                               % (opts.base, ", ".join(models)))
        if kind == "timeline":
            raise RequestError("-output timeline shows one profile: drop -base, or 'use "
                               "NAME' to pick the profile")
        if opts.whatif:
            raise RequestError("-whatif and -base do not combine: give one of them")
        cur = _paths(models[current], current, opts, True)
        base = _paths(models[opts.base], opts.base, opts, True)
        reply = CritPathReply((cur, base), lambda: {
            "schema_version": 1, "mode": "critpath", "base": opts.base,
            "profiles": {current: critpath_document(cur), opts.base: critpath_document(base)},
            "diff": diff_document(current, opts.base, cur, base)})
        labels = kind not in ("stdout", "file")
        return deliver_document(lambda: diff_text(current, opts.base, cur, base),
                                reply.document, opts, reply,
                                _notes(cur, labels) + _notes(base, labels))
    result = _paths(models[current], current, opts, False, kind == "timeline")
    reply = CritPathReply(result, lambda: critpath_document(result))
    if kind == "timeline":
        from .timeline import notice
        path = opts.output.outfile or ""
        return Rendered(notice(path), _notes(result, True),
                        writes=[(path, critpath_trace(result))], result=reply)
    title = "Critical path of %s" % current if len(models) > 1 else "Critical path"
    return deliver_document(lambda: critpath_text(result, title), reply.document, opts,
                            reply, _notes(result, kind not in ("stdout", "file")))


