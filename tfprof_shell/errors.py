"""The project's user-error types: one line of text and an exit status.

Anything a user can get wrong (a bad file, a bad option, a request a view
cannot satisfy) raises a subclass of :class:`UserError`. The CLI prints its
message on one stderr line and exits with :attr:`UserError.exit_code`; the
shell prints it and shows the prompt again. Any other exception is a bug.
"""

from __future__ import annotations

import os
import traceback
from typing import TextIO

#: Exit status for a problem with the data: unreadable input, a request the
#: loaded profile cannot answer, an output that cannot be written.
EXIT_DATA = 1
#: Exit status for a usage mistake: unknown command, option or value.
EXIT_USAGE = 2
#: Exit status after a bug (any exception that is not a UserError).
EXIT_INTERNAL = 1


class UserError(Exception):
    """A mistake in the user's input, reported as one line."""

    exit_code: int = EXIT_DATA

    def __init__(self, message: str) -> None:
        super().__init__(message.replace("\n", " ").strip())

    @property
    def message(self) -> str:
        return str(self)


class LoadError(UserError):
    """An input file is missing, unreadable or of the wrong kind."""

    exit_code = EXIT_DATA


class UsageError(UserError):
    """A command line that cannot be parsed: unknown command, option or value."""

    exit_code = EXIT_USAGE


class OptionError(UsageError):
    """An option name or value is not valid."""


class CommandError(UsageError):
    """The first word of a line is not a command."""


class RequestError(UserError):
    """A well-formed request the loaded profile or chosen view cannot answer."""

    exit_code = EXIT_DATA


class OutputError(UserError):
    """An output file cannot be written."""

    exit_code = EXIT_DATA


def internal_error_line(exc: BaseException) -> str:
    """The one line that reports a bug (an exception that is not a UserError)."""
    text = str(exc).replace("\n", " ")
    return ("tfprof: internal error: %s%s (please report it; TFPROF_DEBUG=1 shows the "
            "traceback)" % (type(exc).__name__, ": " + text if text else ""))


def print_debug_traceback(exc: BaseException, stream: TextIO) -> None:
    """Print ``exc``'s traceback on ``stream`` when the environment sets TFPROF_DEBUG."""
    if os.environ.get("TFPROF_DEBUG"):
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=stream)
