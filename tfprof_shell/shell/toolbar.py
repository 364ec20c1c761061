"""The bottom toolbar: what is loaded, the options `set` changed, and the keys."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import TYPE_CHECKING

from ..options import DEFAULTS, OPTION_SPECS, Options, format_value

if TYPE_CHECKING:
    from ..session import Session


def changed_options(opts: Options) -> list[str]:
    """``-name value`` for each option that differs from the defaults, in table order."""
    found = []
    for name, spec in OPTION_SPECS.items():
        value = getattr(opts, name)
        if value != getattr(DEFAULTS, name):
            found.append("%s %s" % (spec.repl_name, format_value(spec, value)))
    return found


@lru_cache(maxsize=8)
def short_path(path: str) -> str:
    """``model/profile`` for a file, ``run1`` for a directory: enough to recognise it."""
    norm = os.path.normpath(path)
    if os.path.isdir(norm):
        return os.path.basename(norm)
    parent = os.path.basename(os.path.dirname(os.path.abspath(norm)))
    return "%s/%s" % (parent, os.path.basename(norm)) if parent else os.path.basename(norm)


def toolbar_text(session: Session, pager_on: bool, ui_url: str = "") -> str:
    """One line: profile, node count and steps; sticky options; the web UI's URL; key hints."""
    model = session.model
    paths = model.source.paths
    where = short_path(paths[0]) if paths else "?"
    steps = ",".join(str(s) for s in model.steps) or "none"
    parts = ["%s: %d nodes, steps %s" % (where, len(model.nodes), steps)]
    if session.label:
        parts[0] = "%s (%d profiles) %s" % (session.label, len(session.profiles), parts[0])
    sticky = changed_options(session.options)
    parts.append("set: " + " ".join(sticky) if sticky else "set: defaults")
    if ui_url:
        parts.append("ui " + ui_url)
    parts.append("pager %s [F3]" % ("on" if pager_on else "off"))
    parts.append("Tab complete  help  Ctrl-D quit")
    return " | ".join(parts)
