"""What every checker is: a name and a check function over a :class:`Subject`.

A check function reads the subject's model (and, through ``subject.show``,
its views) and returns :class:`Findings`: the report strings, in the
engine's order, plus the diagnostics the engine prints on stderr while
checking. Checkers know nothing of sessions or output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

from ...model import Model
from ...model.intervals import short_device
from ...options import Options
from ...views.base import ViewResult
from ..catalog import CHECKER_HELP


class Subject(Protocol):
    """What a checker reads: one loaded profile and a way to run its views."""

    @property
    def model(self) -> Model: ...

    def show(self, view: str, opts: Options) -> ViewResult:
        """The result of ``view`` with ``opts`` (no output is written)."""
        ...


@dataclass
class Findings:
    """One checker's output: report strings and stderr notes (lines without newline)."""

    reports: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Checker:
    """A checker of the advisor: its AdviceProto name and check function."""

    name: str
    check: Callable[[Subject], Findings]

    @property
    def help(self) -> str:
        """The checker's one-line help, from the catalog."""
        return CHECKER_HELP[self.name]

    def run(self, subject: Subject) -> Findings:
        """Check the subject's profile."""
        return self.check(subject)


def on_accelerator(device: str) -> bool:
    """The engine's test for a node placed on an accelerator (a GPU), and a PyTorch
    op's placement on any other accelerator (``device:mtia:0``)."""
    return "gpu" in device or short_device(device) != device
