"""Run the advisor's checkers on a subject, in catalog order.

``advise`` uses each checker's own fixed options; of the user's options
only ``-checkers`` (which checkers run) and ``-output json[:outfile=F]``
(the advice as JSON, see render.advice) have an effect.
"""

from __future__ import annotations

from .advice import Advice
from .catalog import CHECKER_NAMES, ENGINE_CHECKERS
from .checkers import (ACCELERATOR_UTILIZATION, COMMUNICATION, COPIES, CRITICAL_PATH,
                       EXPENSIVE_OPERATION, INPUT_BOUND, MEMORY, OPERATION, STARVED_DEVICE,
                       STRAGGLER, SYNC_STALL)
from .checkers.base import Checker, Findings, Subject

#: Checker name -> checker, in catalog (display and run) order.
CHECKERS: dict[str, Checker] = {c.name: c for c in sorted(
    (ACCELERATOR_UTILIZATION, OPERATION, EXPENSIVE_OPERATION, INPUT_BOUND, STARVED_DEVICE,
     COMMUNICATION, COPIES, SYNC_STALL, STRAGGLER, CRITICAL_PATH, MEMORY),
    key=lambda c: CHECKER_NAMES.index(c.name))}
#: Inputs the original engine reads: there `advise` alone runs only its checkers,
#: so the output stays the engine's.
ENGINE_SOURCES = ("profile", "graph")


def advise(subject: Subject, names: tuple[str, ...] = ()) -> tuple[Advice, list[str]]:
    """Run the named checkers (all when empty) in catalog order.

    Returns the advice and the stderr notes the checkers produced. Names
    must be in the catalog (the option parser checks them). Without names, the
    engine's inputs get the engine's checkers; other inputs get every checker,
    the step checkers only where they found something.
    """
    engine_only = subject.model.source.kind in ENGINE_SOURCES
    wanted = set(names) if names else set(ENGINE_CHECKERS if engine_only else CHECKERS)
    advice = Advice()
    notes: list[str] = []
    for name, checker in CHECKERS.items():
        if name not in wanted:
            continue
        findings: Findings = checker.run(subject)
        if not names and name not in ENGINE_CHECKERS and not findings.reports:
            continue  # a step checker run by default shows only what it found
        advice.checkers[name] = findings.reports
        notes.extend(findings.notes)
    return advice, notes


__all__ = ["CHECKERS", "Checker", "Findings", "Subject", "advise"]
