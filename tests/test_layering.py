"""The package's import graph is one-way: no cycles, and every import points
down the layers below (imports inside functions and under TYPE_CHECKING
count too: a deferred import that dodges a cycle is still a cycle).

    front    cli, shell/*, __main__, record/*, docgen (the guide's generated reference page),
             progress_bar (the terminal's bar for long loads),
             compat and profile_context (TensorFlow's API; ProfileContext patches
             Session.run through record's patch),
             ui.launch (`tfprof ui`), capture.cli and capture.top (`tfprof capture`,
             `tfprof top`)
    api      api, profiler, the package root, ui/* (the web UI's server, a door on the
             session that the API starts too), shell.completer and shell.names (the
             completion engine the shell and the web UI share)
    session  session
    render   render/*, plan
    advisor  advisor/* (runner, checkers, advice)
    combine  combine/* (diff and aggregate of several profiles' views)
    views    views/*
    engine   engine/*
    load     load/*, capture/* (the client that fetches a capture's files)
    model    model/*
    tables   errors, options, metrics, outputs, commands, help, formats, regex,
             option_dicts, option_builder, deep, version, model.stats, advisor.catalog, proto/*,
             record.layout (a recording folder's layout: the recorder writes it,
             the loader reads it), capture.flags (the live-capture flags table)

A module may import its own layer or any layer below it.
"""

from __future__ import annotations

import ast
import os
from typing import Optional

import pytest

PACKAGE = "tfprof_shell"
ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), PACKAGE)

#: Layers from the bottom; a module's layer is that of its longest listed prefix.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("tables", ("errors", "options", "metrics", "outputs", "commands", "help", "formats",
                "regex", "option_dicts", "option_builder", "deep", "version", "model.stats",
                "advisor.catalog", "proto", "record.layout", "capture.flags")),
    ("model", ("model",)),
    ("load", ("load", "capture")),
    ("engine", ("engine",)),
    ("views", ("views",)),
    ("combine", ("combine",)),
    ("advisor", ("advisor",)),
    ("render", ("render", "plan")),
    ("session", ("session",)),
    ("api", ("api", "profiler", "", "ui", "shell.completer", "shell.names")),
    ("front", ("cli", "shell", "__main__", "record", "docgen", "compat", "profile_context",
               "progress_bar", "ui.launch", "capture.cli", "capture.top")),
]


def _modules() -> dict[str, str]:
    mods = {}
    for directory, _, files in os.walk(ROOT):
        for name in files:
            if name.endswith(".py") and not name.endswith("_pb2.py"):
                path = os.path.join(directory, name)
                rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3].replace(os.sep, ".")
                mods[rel[: -len(".__init__")] if rel.endswith(".__init__") else rel] = path
    return mods


def _imports(mods: dict[str, str]) -> dict[str, set[str]]:
    """module -> package modules it imports anywhere in its body."""
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        is_pkg = path.endswith("__init__.py")
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = mod.split(".")
                if node.level:
                    base = base if is_pkg else base[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    full = ".".join(base + ([node.module] if node.module else []))
                else:
                    full = node.module or ""
                subs = [full + "." + a.name for a in node.names if full + "." + a.name in mods]
                targets = subs + ([full] if len(subs) < len(node.names) else [])
            else:
                continue
            for target in targets:
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != mod and target.startswith(PACKAGE):
                    edges[mod].add(target)
    return edges


def layer_of(module: str) -> Optional[int]:
    """The layer index of a package module, by its longest listed prefix."""
    rel = module[len(PACKAGE) + 1:] if module != PACKAGE else ""
    best: Optional[tuple[int, int]] = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if rel == prefix or (prefix and rel.startswith(prefix + ".")):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), index)
    return None if best is None else best[1]


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return _imports(_modules())


def test_the_package_has_no_import_cycles(graph):
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_deferred_cycle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(edges) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_every_module_has_a_layer(graph):
    assert [m for m in graph if layer_of(m) is None] == []


def test_imports_point_down_the_layers(graph):
    upward = []
    for mod, targets in sorted(graph.items()):
        for target in sorted(targets):
            if layer_of(target) > layer_of(mod):  # type: ignore[operator]
                upward.append("%s (%s) -> %s (%s)" % (
                    mod, LAYERS[layer_of(mod)][0], target,  # type: ignore[index]
                    LAYERS[layer_of(target)][0]))  # type: ignore[index]
    assert upward == []


def test_nothing_below_the_session_imports_prompt_toolkit():
    session_layer = [name for name, _ in LAYERS].index("session")
    offenders = []
    for mod, path in _modules().items():
        if layer_of(mod) > session_layer:  # type: ignore[operator]
            continue
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.split(".")[0] == "prompt_toolkit" for n in names):
                offenders.append(mod)
    assert offenders == []


def test_the_recorder_imports_only_tables_from_outside_itself(graph):
    """record/ runs inside the user's program: it must not pull in the engine or renderers."""
    tables = [name for name, _ in LAYERS].index("tables")
    reached = {target for mod, targets in graph.items()
               if mod.startswith(PACKAGE + ".record")
               for target in targets
               if not target.startswith(PACKAGE + ".record") and layer_of(target) != tables}
    assert reached == set()
