"""A view over several profiles (combine.result.MultiResult) as text or JSON.

Text, one line per node, indented like the engine's trees. A diff shows
for each selected attribute ``new vs base, delta, ratio``; a node only in
the current profile is marked ``+`` (ratio "new"), one only in the base
``-`` ("gone"), and "--" stands for the missing side. An aggregate shows
the combined values, then with ``-by_profile`` each profile's own, and
``[in K of N]`` when only some profiles have the node. `-output
file:outfile=F` writes the text to F; `json[:outfile=F]` gives the
document described in docs/comparing.md.
"""

from __future__ import annotations

import json
from typing import Any, Optional, Sequence

from .. import metrics
from ..combine.result import DIFF, GONE, NEW, CombinedNode, MultiResult
from ..formats import FORMATTERS
from .base import Rendered
from .json_out import SCHEMA_VERSION, UNIT_NAMES, numeric_attributes


def render_multi(result: MultiResult) -> Rendered:
    """Text, a text file, JSON (stdout or file) or nothing, by the `-output` kind."""
    output = result.options.output
    notes = list(result.notes)
    if output.kind == "json":
        text = render_multi_json(result)
        if output.outfile:
            return Rendered(notes=notes, writes=[(output.outfile, text)], result=result)
        return Rendered(text, notes, result=result)
    if output.kind == "none":
        return Rendered(notes=notes, result=result)
    text = render_multi_text(result)
    if output.kind == "file":
        return Rendered(notes=notes, writes=[(output.outfile or "", text)], result=result)
    return Rendered(text, notes, result=result)


# -- text ------------------------------------------------------------------------

def text_attributes(select: frozenset[str]) -> list[str]:
    """The selected numeric attributes, in table order (micros is the total time only)."""
    return [name for name, attr in metrics.ATTRIBUTES.items()
            if attr.stat is not None and name in select]


def render_multi_text(result: MultiResult) -> str:
    """The header, the legend and one line per node."""
    attrs = text_attributes(result.options.select)
    if result.mode == DIFF:
        line = _diff_line(attrs)
    else:
        line = _aggregate_line(attrs, result)
    parts = [_header(result), _legend(result, attrs)]
    parts.extend("%s%s\n" % ("  " * node.depth, line(node)) for node in result.root.walk())
    return "".join(parts)


def _step(step: int) -> str:
    return "average over steps" if step < 0 else "step %d" % step


def _header(result: MultiResult) -> str:
    order = result.options.order_by
    if result.mode == DIFF:
        current, base = result.sides
        how = "name" if order == "name" else "|delta %s|, largest first" % order
        return ("Diff of the %s view: %s (%s) against %s (%s); rows by %s.\n"
                % (result.view, current.name, _step(current.step), base.name,
                   _step(base.step), how))
    names = ", ".join(s.name for s in result.sides)
    how = "name" if order == "name" else "%s %s, largest first" % (result.aggregate, order)
    return ("%s of the %s view over %d profiles: %s (%s); rows by %s.\n"
            % (result.aggregate.capitalize(), result.view, len(result.sides), names,
               _step(result.sides[0].step), how))


def _legend(result: MultiResult, attrs: Sequence[str]) -> str:
    labels = [metrics.ATTRIBUTES[a].number_label() for a in attrs]
    if result.mode == DIFF:
        current, base = result.sides
        cols = ["%s: %s vs %s, delta, ratio" % (label, current.name, base.name)
                for label in labels]
        return "node name | %s\n" % " | ".join(cols)
    text = "node name | %s (%s)" % (", ".join(labels), result.aggregate)
    if result.options.by_profile:
        text += " | " + " | ".join(s.name for s in result.sides)
    return text + "\n"


def _formatters(attrs: Sequence[str]) -> list[tuple[int, Any]]:
    out = []
    for name in attrs:
        attr = metrics.ATTRIBUTES[name]
        assert attr.stat is not None
        out.append((attr.stat, FORMATTERS[attr.unit]))
    return out


def _signed(value: int, fmt: Any) -> str:
    if value == 0:
        return fmt(0)
    return ("+" if value > 0 else "-") + fmt(abs(value))


def _diff_line(attrs: Sequence[str]):
    fmts = _formatters(attrs)

    def line(node: CombinedNode) -> str:
        cells = []
        for stat, fmt in fmts:
            new, base = node.value[stat], node.base[stat]
            if node.status == NEW:
                cells.append("%s vs --, %s, new" % (fmt(new), _signed(new, fmt)))
            elif node.status == GONE:
                cells.append("-- vs %s, %s, gone" % (fmt(base), _signed(-base, fmt)))
            else:
                ratio = "%.2fx" % (new / base) if base else "n/a"
                cells.append("%s vs %s, %s, %s" % (fmt(new), fmt(base),
                                                    _signed(new - base, fmt), ratio))
        return "%s%s (%s)" % (node.status, node.name, "; ".join(cells))

    return line


def _aggregate_line(attrs: Sequence[str], result: MultiResult):
    fmts = _formatters(attrs)
    names = [s.name for s in result.sides]
    by_profile = result.options.by_profile
    n = len(names)

    def values(value: Optional[tuple[int, ...]]) -> str:
        if value is None:
            return "--"
        return ", ".join(fmt(value[stat]) for stat, fmt in fmts)

    def line(node: CombinedNode) -> str:
        text = values(node.value)
        if by_profile:
            text += "".join(" | %s" % values(v) for v in node.by_profile)
        present = sum(v is not None for v in node.by_profile)
        seen = " [in %d of %d]" % (present, n) if present < n else ""
        return "%s (%s)%s" % (node.name, text, seen)

    return line


# -- JSON ------------------------------------------------------------------------

def to_multi_document(result: MultiResult) -> dict[str, Any]:
    """The JSON document of a diff or an aggregate (plain dicts and lists)."""
    opts = result.options
    attrs = numeric_attributes(opts.select)
    stats = [(a, metrics.ATTRIBUTES[a].stat) for a in attrs]
    units = {a: UNIT_NAMES[metrics.ATTRIBUTES[a].unit] for a in attrs}

    def values(value: tuple[int, ...]) -> dict[str, int]:
        return {a: value[s] for a, s in stats}  # type: ignore[index]

    doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "mode": result.mode,
                           "view": result.view, "step": result.sides[0].step,
                           "select": sorted(opts.select), "order_by": opts.order_by,
                           "units": units}
    names = [s.name for s in result.sides]
    if result.mode == DIFF:
        current, base = result.sides
        doc["base_step"] = base.step
        doc["current"] = {"name": current.name, "source": current.source}
        doc["base"] = {"name": base.name, "source": base.source}
    else:
        doc["profiles"] = names
        doc["aggregate"] = result.aggregate

    def node_doc(node: CombinedNode) -> dict[str, Any]:
        out: dict[str, Any] = {"name": node.name, "depth": node.depth,
                               "total": values(node.value)}
        if result.mode == DIFF:
            out["status"] = node.status
            out["base_total"] = values(node.base)
            out["delta_total"] = values(node.delta)
        else:
            out["profiles_with_node"] = sum(v is not None for v in node.by_profile)
            if opts.by_profile:
                out["by_profile"] = {name: values(v) if v is not None else None
                                     for name, v in zip(names, node.by_profile)}
        out["children"] = []
        return out

    root = node_doc(result.root)
    stack = [(result.root, root)]
    while stack:
        node, out = stack.pop()
        for child in node.children:
            child_out = node_doc(child)
            out["children"].append(child_out)
            stack.append((child, child_out))
    doc["root"] = root
    return doc



def render_multi_json(result: MultiResult) -> str:
    """The document as one line of JSON text plus a newline."""
    return json.dumps(to_multi_document(result), separators=(",", ":"),
                      ensure_ascii=True) + "\n"
