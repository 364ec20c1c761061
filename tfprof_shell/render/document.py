"""A command's JSON document: its text, and delivering it or the command's table by -output.

The commands that answer with a document beside their text table (steps, kernels,
memory, collectives, critpath) deliver through :func:`deliver_document`: the text
for stdout and ``file``, the document for ``json``, nothing for ``none``; the
result (what the Python API returns) is the document or what the caller names.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Sequence, Union

from ..options import Options
from .base import Rendered

#: A value, or a function that makes it (only the -output kind that needs it is made).
Lazy = Union[Any, Callable[[], Any]]


def dumps(doc: dict[str, Any]) -> str:
    """The JSON text of a document (two-space indent, newline at the end)."""
    return json.dumps(doc, indent=2, default=str) + "\n"


def _made(value: Lazy) -> Any:
    return value() if callable(value) else value


def deliver_document(text: Lazy, doc: Lazy, opts: Options, result: object = None,
                     notes: Sequence[str] = ()) -> Rendered:
    """Text, JSON or nothing, by -output. ``text`` and ``doc`` may be functions that
    make them; ``result`` defaults to the document."""
    out = opts.output
    notes = list(notes)
    if out.kind == "none":
        return Rendered(notes=notes, result=_made(doc) if result is None else result)
    if out.kind == "json":
        made = _made(doc)
        body = dumps(made)
        result = made if result is None else result
        if out.outfile:
            return Rendered(notes=notes, writes=[(out.outfile, body)], result=result)
        return Rendered(body, notes, result=result)
    result = _made(doc) if result is None else result
    if out.kind == "file":
        return Rendered(notes=notes, writes=[(out.outfile or "", _made(text))], result=result)
    return Rendered(_made(text), notes, result=result)
