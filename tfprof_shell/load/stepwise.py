"""A model grown step by step, as TensorFlow's ``Profiler`` grows its engine.

The Python ``Profiler`` adds a GraphDef and an op log when it is made, then
for each ``add_step`` the (possibly grown) graph, the step's RunMetadata and
the op log again. :class:`StepwiseLog` keeps those additions in order and
replays them into a fresh :class:`~tfprof_shell.model.Model` when a view
asks (node statistics are cached, so a model is never changed after a view
read it). It also keeps what the engine's ``SerializeToString`` needs and the
model does not hold: every NodeDef attribute, the op log's CodeDefs with
their string ids.
"""

from __future__ import annotations

from typing import Any, Optional, Union

from ..model import Model, Source
from ..model.extras import ModelExtras
from .graph import add_graph, add_op_log
from .runmeta import add_run_metadata

_DROPPED = ("RecvTensor", "_SOURCE")

Entry = Union[tuple[str, Any], tuple[str, int, Any]]


class StepwiseLog:
    """GraphDefs, op logs and steps' StepStats in the order they were added."""

    def __init__(self) -> None:
        self._entries: list[Entry] = []
        self._last_graph: Optional[bytes] = None
        self._known: set[str] = set()
        self._covered: set[str] = set()
        self._cache: Optional[tuple[Model, ModelExtras]] = None

    def add_graph(self, graph: Any) -> None:
        """Add a GraphDef (nodes whose name is known are skipped, as in the engine)."""
        data = graph.SerializeToString()
        if data == self._last_graph:
            return  # the same graph again adds nothing
        self._last_graph = data
        self._entries.append(("graph", graph))
        self._known.update(nd.name for nd in graph.node)
        self._cache = None

    def add_op_log(self, op_log: Any) -> None:
        """Add an OpLogProto (types, float ops and code traces of known nodes)."""
        self._entries.append(("op_log", op_log))
        self._cache = None

    def add_step(self, step: int, run_meta: Any) -> Optional[float]:
        """Add one RunMetadata as step ``step``; the run coverage, or None if it has no step_stats.

        Coverage is the engine's: graph nodes seen in any step's records so
        far over all nodes (run-time-only ones included).
        """
        if not run_meta.HasField("step_stats"):
            return None
        stats = run_meta.step_stats
        for dev_stats in stats.dev_stats:
            for ns in dev_stats.node_stats:
                name = ns.node_name.split(":", 1)[0]
                if name in self._known:
                    self._covered.add(name)
                elif name not in _DROPPED and "MEMCPY" not in name:
                    self._known.add(name)
        self._entries.append(("step", int(step), stats))
        self._cache = None
        return self.coverage()

    def coverage(self) -> float:
        """Covered nodes over all nodes, as ``Profiler.add_step`` returns it."""
        return len(self._covered) / (len(self._known) + 1e-10)

    @property
    def steps(self) -> list[int]:
        """The step ids added, ascending, each once."""
        return sorted({e[1] for e in self._entries if e[0] == "step"})  # type: ignore[misc]

    def build(self, source: Source) -> tuple[Model, ModelExtras]:
        """The model and its extras after every addition so far (built once per change)."""
        if self._cache is not None:
            return self._cache
        model = Model(source)
        extras = ModelExtras()
        for entry in self._entries:
            kind = entry[0]
            if kind == "graph":
                graph = entry[1]
                for nd in graph.node:
                    if nd.name not in model.nodes:
                        extras.attrs.setdefault(nd.name, nd.attr)
                add_graph(model, graph)
            elif kind == "op_log":
                op_log = entry[1]
                for log_entry in op_log.log_entries:
                    if (log_entry.HasField("code_def") and log_entry.name in model.nodes
                            and log_entry.name not in extras.code_defs):
                        extras.code_defs[log_entry.name] = log_entry.code_def
                add_op_log(model, op_log, extras.id_to_string)
            else:
                add_run_metadata(model, entry[1], entry[2])  # type: ignore[misc]
        self._cache = (model, extras)
        return self._cache
