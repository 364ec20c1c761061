"""The engine's text output, byte for byte: Doc block, legend and node lines.

Rows are formatted from a ViewResult only; which columns appear and in
which order follows the engine (tree views and list views order them
differently), declared once in :data:`TREE_COLUMNS` / :data:`LIST_COLUMNS`.
"""

from __future__ import annotations

from typing import Callable, Optional

from .. import metrics
from ..formats import FORMATTERS, format_memory, format_number, format_shape, format_time, percent
from ..model import stats as S
from ..views.base import DisplayNode, ViewResult
from .base import Rendered, SingleRenderer

VIEW_DOC = {
    "scope": "scope: The nodes in the model graph are organized by their names, "
             "which is hierarchical like filesystem.",
    # The engine prints the scope text for the graph view too.
    "graph": "scope: The nodes in the model graph are organized by their names, "
             "which is hierarchical like filesystem.",
    "code": "code: When python trace is available, the nodes are python lines and "
            "their are organized by the python call stack.",
    "op": "op: The nodes are operation kernel type, such as MatMul, Conv2D. Graph "
          "nodes belonging to the same type are aggregated together.",
}

MISSING_STREAM_WARNING = (
    "\n\nFound accelerator operation but misses accelerator stream stats!\n\n"
    "It's likely a gpu tracing issue rather than tf-profiler issue.\n"
    "If you found your operation missing accelerator time, consider to post to "
    "discuss@tensorflow.org!\n\n")

_TIMES = ("micros", "accelerator_micros", "cpu_micros")
_MEMORY = ("bytes", "peak_bytes", "residual_bytes", "output_bytes")
TREE_COLUMNS = ("params", "float_ops") + _MEMORY + _TIMES + (
    "device", "op_types", "occurrence", "input_shapes")
LIST_COLUMNS = _MEMORY + _TIMES + ("params", "float_ops", "device", "op_types",
                                   "occurrence", "input_shapes")


def columns(select: frozenset[str], list_view: bool) -> list[str]:
    """Displayed columns in engine order; micros brings all three time columns."""
    cols = []
    for name in LIST_COLUMNS if list_view else TREE_COLUMNS:
        if name in _TIMES and "micros" in select:
            cols.append(name)
        elif name in select:
            cols.append(name)
    return cols


def doc_block(result: ViewResult) -> str:
    """The prefix printed before the legend: warning, Doc block, 'Profile:'."""
    docs = "\n".join(metrics.doc_lines(result.options.select))
    warning = MISSING_STREAM_WARNING if result.missing_accelerator_stream else ""
    return "%s\nDoc:\n%s\n%s\n\nProfile:\n" % (warning, VIEW_DOC[result.view], docs)


def legend(result: ViewResult) -> str:
    list_view = result.view in ("op", "code")
    labels = [metrics.ATTRIBUTES[col].legend(list_view)
              for col in columns(result.options.select, list_view)]
    return "node name | %s\n" % " | ".join(labels)


def render_text(result: ViewResult) -> str:
    """The full text the engine prints for a view command (made once per result)."""
    text = result.rendered.get("text")
    if text is None:
        text = result.rendered["text"] = render_table(result, doc_block(result))
    return text


class TextRenderer(SingleRenderer):
    """`-output stdout`: the engine's text on stdout."""

    def render(self, result: ViewResult) -> Rendered:
        return Rendered(render_text(result), list(result.notes), result=result)


class FileRenderer(SingleRenderer):
    """`-output file:outfile=F`: the same text, written to F."""

    def render(self, result: ViewResult) -> Rendered:
        path = self.opts.output.outfile or ""
        return Rendered(notes=list(result.notes), writes=[(path, render_text(result))],
                        result=result)


class NoneRenderer(SingleRenderer):
    """`-output none`: nothing but the notes."""

    def render(self, result: ViewResult) -> Rendered:
        return Rendered(notes=list(result.notes), result=result)


def render_table(result: ViewResult, head: str = "") -> str:
    """``head``, the legend, then one line (or block) per displayed node.

    ``head`` is joined with the rows rather than added to their text: that
    would copy a large table once more.
    """
    parts = [head, legend(result)]
    if result.view == "op":
        root = result.root
        line = _op_line_formatter(result)
        parts.extend(line(row, root) for row in root.children)
    else:
        code = result.view == "code"
        cols = columns(result.options.select, code)
        pairs = _pair_columns(cols)
        if pairs is not None:  # only self/total columns: one tight loop
            _pair_lines(result.root, pairs, parts)
        elif not code and _with_params(cols) is not None:
            _pair_lines(result.root, _with_params(cols) or [], parts, shaped=True)
        else:
            items = [(_code_item if code else _tree_item)(col, result) for col in cols]
            for node in result.root.walk():
                values = [v for v in (item(node) for item in items) if v is not None]
                parts.append("%s%s (%s)\n" % ("  " * node.depth, node.name, ", ".join(values)))
    return "".join(parts)


def _pair_lines(root: DisplayNode, pairs: list[tuple[int, "_Formatted", str]],
                parts: list[str], shaped: bool = False) -> None:
    """Append the line of every displayed node below and at ``root`` (preorder).

    ``shaped``: the first pair is params, after a variable's shape (tree views).
    """
    _line_writer(tuple((i, unit, fmt.sparse) for i, fmt, unit in pairs), shaped)(
        root, parts.append, [fmt for _, fmt, _ in pairs])


#: (stats, units and sparseness, shaped) -> a compiled row loop (see _line_writer).
_WRITERS: dict[tuple[tuple[tuple[int, str, bool], ...], bool], Callable[..., None]] = {}

_WRITER_SOURCE = """
def write(root, append, fmts):
    (%(unpack)s) = fmts
%(sparse)s
    indents = {}
    shapes = {}
    stack = [root]
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        depth = node.depth
        indent = indents.get(depth)
        if indent is None:
            indent = indents[depth] = "  " * depth
        total = node.total
        shape = ""
%(shape)s
%(totals)s
        if node.account:
            own = node.self_stats
%(owns)s
            append(%(line)r %% (indent, node.name, shape, %(accounted)s))
        else:
            append(%(line_na)r %% (indent, node.name, shape, %(unaccounted)s))
        children = node.children
        if children:
            extend(reversed(children))
"""

_SHAPE_SOURCE = """
        g = node.graph_node
        if g is not None and g.shape:
            key = tuple(g.shape)
            shape = shapes.get(key)
            if shape is None:
                shape = shapes[key] = format_shape(g.shape) + ", "
"""

#: The text of a sparse column's value (``values[stat]``) as ``name``: looked up
#: with get, formatted by a direct call on a miss (cheaper than __missing__ when
#: most values are new).
_SPARSE_SOURCE = """
%(pad)s%(name)s = g%(j)d(%(values)s[%(stat)d])
%(pad)sif %(name)s is None:
%(pad)s    %(name)s = f%(j)d[%(values)s[%(stat)d]] = fmt%(j)d(%(values)s[%(stat)d])
"""


def _line_writer(pairs: tuple[tuple[int, str, bool], ...], shaped: bool) -> Callable[..., None]:
    """``write(root, append, formatters)``: appends each row's line in preorder.

    The loop is compiled once per column set, with the statistics' indices
    and the line format as constants: a table of 100k rows spends most of
    its time in this loop, and one %-format of all values per row is the
    cheapest way to make a line in Python. A sparse column (most values
    distinct, e.g. bytes) formats its values before the line.
    """
    key = (pairs, shaped)
    writer = _WRITERS.get(key)
    if writer is None:
        units = [unit.replace("%", "%%") for _, unit, _ in pairs]

        def value(j: int, stat: int, sparse: bool, values: str) -> str:
            return ("%s%d" % (values[0], j)) if sparse else "f%d[%s[%d]]" % (j, values, stat)

        def sparse_source(values: str, pad: str) -> str:
            return "".join(_SPARSE_SOURCE % {"pad": pad, "name": "%s%d" % (values[0], j), "j": j,
                                             "values": values, "stat": stat}
                           for j, (stat, _, sparse) in enumerate(pairs) if sparse)

        source = _WRITER_SOURCE % {
            "unpack": "".join("f%d, " % j for j in range(len(pairs))),
            "sparse": "".join("    g%d, fmt%d = f%d.get, f%d.fmt\n" % (j, j, j, j)
                              for j, (_, _, sparse) in enumerate(pairs) if sparse),
            "shape": _SHAPE_SOURCE if shaped else "",
            "totals": sparse_source("total", " " * 8),
            "owns": sparse_source("own", " " * 12),
            "line": "%s%s (%s" + ", ".join("%s/%s" + u for u in units) + ")\n",
            "line_na": "%s%s (%s" + ", ".join("--/%s" + u for u in units) + ")\n",
            "accounted": ", ".join("%s, %s" % (value(j, i, sparse, "own"),
                                               value(j, i, sparse, "total"))
                                   for j, (i, _, sparse) in enumerate(pairs)),
            "unaccounted": ", ".join(value(j, i, sparse, "total")
                                     for j, (i, _, sparse) in enumerate(pairs)),
        }
        namespace: dict = {"format_shape": format_shape}
        exec(compile(source, "<text rows %r>" % (key,), "exec"), namespace)
        writer = _WRITERS[key] = namespace["write"]
    return writer


def _with_params(cols: list[str]) -> Optional[list[tuple[int, "_Formatted", str]]]:
    """_pair_columns for tree view columns where ``params`` is one of them, else None."""
    if "params" not in cols:
        return None
    return _pair_columns([c for c in cols if c != "params"], with_params=True)


class _Formatted(dict):
    """value -> its text, formatted once: a table repeats the same values a lot."""

    def __init__(self, fmt: Callable[[int], str]) -> None:
        super().__init__()
        self.fmt = fmt
        #: Most values of the column are distinct (memory sizes): see _line_writer.
        self.sparse = fmt is format_memory

    def __missing__(self, value: int) -> str:
        text = self[value] = self.fmt(value)
        return text


def _pair_columns(cols: list[str], with_params: bool = False
                  ) -> Optional[list[tuple[int, _Formatted, str]]]:
    """(stat, formatter, unit) of each column if all are plain self/total pairs, else None.

    ``params`` is not plain in tree views (a variable's shape comes first);
    ``with_params`` puts its pair first (see _pair_lines).
    """
    out = []
    shared: dict[Callable[[int], str], _Formatted] = {}  # one cache per formatter
    if with_params:
        out.append((S.PARAMS, _shared(shared, format_number), " params"))
    for col in cols:
        if col == "float_ops":
            out.append((S.FLOPS, _shared(shared, format_number), " flops"))
            continue
        attr = metrics.ATTRIBUTES[col]
        if col in ("params", "occurrence") or attr.stat is None:
            return None
        out.append((attr.stat, _shared(shared, FORMATTERS[attr.unit]), ""))
    return out


def _shared(shared: dict[Callable[[int], str], _Formatted],
            fmt: Callable[[int], str]) -> _Formatted:
    cache = shared.get(fmt)
    if cache is None:
        cache = shared[fmt] = _Formatted(fmt)
    return cache


#: One column of a tree or code line: its text for a node, or None to leave it out.
Item = Callable[[DisplayNode], Optional[str]]


def _pair_item(stat: int, fmt: Callable[[int], str], unit: str = "") -> Item:
    """``self/total`` of a statistic; ``--`` for the self part of an unaccounted node."""
    def item(node: DisplayNode) -> str:
        own = fmt(node.self_stats[stat]) if node.account else "--"
        return "%s/%s%s" % (own, fmt(node.total[stat]), unit)
    return item


def _stat_item(col: str) -> Optional[Item]:
    """The item of a numeric column (scope, graph, code), or None for other columns."""
    if col == "params":
        return _pair_item(S.PARAMS, format_number, " params")
    if col == "float_ops":
        return _pair_item(S.FLOPS, format_number, " flops")
    attr = metrics.ATTRIBUTES[col]
    if attr.stat is not None and col != "occurrence":
        return _pair_item(attr.stat, FORMATTERS[attr.unit])
    return None


def _input_shapes(shapes: dict[int, list[int]]) -> list[str]:
    return ["%d:%s" % (i, format_shape(s) if s else "unknown") for i, s in shapes.items()]


def _tree_item(col: str, result: ViewResult) -> Item:
    """A scope or graph view column."""
    stat = _stat_item(col)
    if col == "params":
        assert stat is not None

        def params(node: DisplayNode) -> str:
            g = node.graph_node
            pair = stat(node)
            return "%s, %s" % (format_shape(g.shape), pair) if g is not None and g.shape else pair
        return params
    if stat is not None:
        return stat
    if col == "device":
        def device(node: DisplayNode) -> Optional[str]:
            g = node.graph_node
            return g.canonical_device if g is not None and g.canonical_device else None
        return device
    if col == "op_types":
        def op_types(node: DisplayNode) -> str:
            g = node.graph_node
            return "|".join(sorted(g.op_types)) if g is not None else ""
        return op_types
    if col == "occurrence":
        runs = _pair_item(S.RUN_COUNT, format_number)

        def occurrence(node: DisplayNode) -> str:
            defined = ("1/" if node.account else "--/") + format_number(node.total[S.DEFS])
            return runs(node) + "|" + defined
        return occurrence
    if col == "input_shapes":
        model_nodes = result.model.nodes

        def input_shapes(node: DisplayNode) -> str:
            g = node.graph_node
            shapes = g.input_shapes(model_nodes) if g is not None else {}
            return "|".join(_input_shapes(shapes))
        return input_shapes
    return lambda node: None


def _devices(node: DisplayNode) -> list[str]:
    return sorted({g.canonical_device for g in node.graph_nodes})


def _op_types(node: DisplayNode) -> str:
    types: set[str] = set()
    for g in node.graph_nodes:
        types |= g.op_types
    return "|".join(sorted(types))


def _code_item(col: str, result: ViewResult) -> Item:
    """A code view column."""
    stat = _stat_item(col)
    if stat is not None:
        return stat
    if col == "device":
        def devices(node: DisplayNode) -> Optional[str]:
            names = _devices(node)
            return "|".join(names) if names else None
        return devices
    if col == "op_types":
        return _op_types
    text = "%s N/A in code view" % col
    return lambda node: text


def _op_line_formatter(result: ViewResult) -> Callable[[DisplayNode, DisplayNode], str]:
    cols = columns(result.options.select, True)
    step = result.options.step
    model_nodes = result.model.nodes

    def line(node: DisplayNode, root: DisplayNode) -> str:
        items = []
        for col in cols:
            attr = metrics.ATTRIBUTES[col]
            if col in _MEMORY:
                stat = attr.stat
                own, tot, whole = node.self_stats[stat], node.total[stat], root.total[stat]
                shares = (percent(tot, whole), percent(own, whole)) if own > 0 else (0.0, 0.0)
                items.append("%30s" % ("%s (%.2f%%, %.2f%%)" % ((format_memory(own),) + shares)))
            elif col in _TIMES or col in ("params", "float_ops"):
                stat = attr.stat
                own, tot, whole = node.self_stats[stat], node.total[stat], root.total[stat]
                shares = (percent(tot, whole), percent(own, whole)) if tot > 0 else (0.0, 0.0)
                if col in _TIMES:
                    value = format_time(own)
                else:
                    value = format_number(own) + (" params" if col == "params" else " float_ops")
                items.append("%30s" % ("%s (%.2f%%, %.2f%%)" % ((value,) + shares)))
            elif col == "device":
                items.append("|".join(_devices(node)))
            elif col == "op_types":
                items.append(_op_types(node))
            elif col == "occurrence":
                runs = sum(g.stats(step)[S.RUN_COUNT] for g in node.graph_nodes)
                items.append("%10s" % ("%d|%d" % (runs, len(node.graph_nodes))))
        text = "%-25s%s\n" % (node.name, ", ".join(items))
        if "input_shapes" in cols and node.graph_nodes:
            text = "%s\n%s\n\n" % (text, _signature_block(node, step, model_nodes))
        return text

    return line


def _signature_block(node: DisplayNode, step: int, model_nodes: dict) -> str:
    """One line per distinct input signature: runs, definitions, time."""
    groups: dict[str, list[int]] = {}
    for g in node.graph_nodes:
        sig = "input_type: " + ",\t".join(_input_shapes(g.input_shapes(model_nodes)))
        stats = g.stats(step)
        acc = groups.setdefault(sig, [0, 0, 0])
        acc[0] += 1
        acc[1] += stats[S.RUN_COUNT]
        acc[2] += stats[S.EXEC]
    ordered = sorted(sorted(groups.items()), key=lambda kv: -kv[1][1])
    return "\n".join("%s\t(run*%d|defined*%d)\texec_time: %s"
                     % (sig, runs, defined, format_time(micros))
                     for sig, (defined, runs, micros) in ordered)
