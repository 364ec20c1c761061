"""The node model: graph nodes, per-step execution records, the loaded profile."""

from .model import Model, Source
from .node import ExecMemory, ExecSource, ExecStep, Frame, GraphNode, LazyExecs, ScopeNode

__all__ = ["ExecMemory", "ExecSource", "ExecStep", "Frame", "GraphNode", "LazyExecs", "Model",
           "ScopeNode", "Source"]
