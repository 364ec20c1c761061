"""The advisor's checkers, one module each (see base.Checker)."""

from .accelerator import CHECKER as ACCELERATOR_UTILIZATION
from .base import Checker, Findings
from .communication import CHECKER as COMMUNICATION
from .copies import CHECKER as COPIES
from .critpath import CHECKER as CRITICAL_PATH
from .expensive import CHECKER as EXPENSIVE_OPERATION
from .input_bound import CHECKER as INPUT_BOUND
from .memory import CHECKER as MEMORY
from .operation import CHECKER as OPERATION
from .starved import CHECKER as STARVED_DEVICE
from .straggler import CHECKER as STRAGGLER
from .sync_stall import CHECKER as SYNC_STALL

__all__ = ["ACCELERATOR_UTILIZATION", "COMMUNICATION", "COPIES", "CRITICAL_PATH",
           "EXPENSIVE_OPERATION", "INPUT_BOUND", "MEMORY", "OPERATION", "STARVED_DEVICE",
           "STRAGGLER", "SYNC_STALL", "Checker",
           "Findings"]
