"""The advisor: checkers that read a profile and give advice (`advise`).

The package is layered so that tables can be read without running anything:
``catalog`` (names and help, imports nothing), ``advice`` (the result),
``checkers`` (one module each) and ``runner`` (:func:`runner.advise`,
which runs them in catalog order). AcceleratorUtilizationChecker,
OperationChecker, ExpensiveOperationChecker: the engine prints its blocks in
protobuf-map order, which changes from run to run; we always print this
order. The engine's fourth checker, JobChecker, has no open-source
implementation.
"""

from .catalog import CHECKER_HELP, CHECKER_NAMES

# Advice (advice.py) is not re-exported: importing it loads protobuf, and the
# options table reads the catalog at every start-up.
__all__ = ["CHECKER_HELP", "CHECKER_NAMES"]
