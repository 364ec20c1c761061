"""Completion for the shell, derived from the commands, options and attribute tables.

:class:`CompletionEngine` is pure: ``complete(text_before_cursor)`` returns
:class:`Candidate` values (replacement, how much to replace, description).
It completes command names; the options of the command being typed; the
values of an option (-order_by keys, -select attributes after a comma,
-output kinds and keys, true/false, recorded steps, checkers); and for the
regex options the names of the loaded profile, from a :class:`NameIndex`
built once on first use. :class:`ShellCompleter` adapts it to prompt_toolkit.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Optional, Sequence, Union

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from .. import options as O
from ..capture.flags import SHELL, flags_for
from ..commands import COMMANDS, Command
from ..errors import UserError
from ..help import choice_descriptions
from ..options import OPTION_SPECS, OptionSpec
from ..outputs import OUTPUT_KINDS
from ..model import Model
from .names import NameIndex, SortedNames, escape_name

if TYPE_CHECKING:
    from ..session import Session

#: At most this many names are offered at once (a scope may hold thousands).
NAME_LIMIT = 200
_QUOTES = "'\""


@dataclass(frozen=True)
class Candidate:
    """One completion: ``text`` replaces the last ``length`` characters typed."""

    text: str
    length: int
    display: str = ""
    meta: str = ""


class CompletionEngine:
    """Completions for a shell line; ``index`` builds the profile's NameIndex on demand."""

    def __init__(self, index: Callable[[], NameIndex],
                 steps: Union[Sequence[int], Callable[[], Sequence[int]]] = (),
                 profiles: Callable[[], Sequence[str]] = tuple, cache: bool = True,
                 devices: Callable[[], Sequence[str]] = tuple,
                 kernels: Callable[[], Sequence[str]] = tuple) -> None:
        self._index_factory = index
        self._index: Optional[NameIndex] = None
        self._cache = cache
        self._lock = threading.Lock()
        self._steps = steps if callable(steps) else tuple(steps)
        #: The loaded profiles' names (for use, unload, -base, -profiles).
        self.profiles = profiles
        #: The current profile's devices as the steps table names them (for -device).
        self.devices = devices
        #: The current profile's device event (kernel) names, sorted (for kernels' regexes).
        self.kernels = kernels

    @property
    def steps(self) -> Sequence[int]:
        """The recorded steps of the profile being completed for."""
        return self._steps() if callable(self._steps) else self._steps

    @property
    def index(self) -> NameIndex:
        """The name index, built on first use and kept."""
        with self._lock:
            if not self._cache:  # the factory keeps its own indexes
                return self._index_factory()
            if self._index is None:
                self._index = self._index_factory()
            return self._index

    def complete(self, text: str) -> list[Candidate]:
        """Every candidate for the word being typed at the end of ``text``.

        A candidate equal to what is already typed is left out (nothing to add).
        """
        return [c for c in self._complete(text) if c.text != text[len(text) - c.length:]]

    def _complete(self, text: str) -> list[Candidate]:
        pieces = text.split(" ")
        current = pieces[-1]
        words = [w for w in pieces[:-1] if w]
        if not words:
            return _matching(current, ((c.name, c.summary) for c in COMMANDS.values()))
        cmd = COMMANDS.get(words[0])
        if cmd is None:
            return []
        if cmd.kind == "help":
            return self._help_topics(current)
        if not cmd.takes_options:
            return self._arguments(cmd, len(words) - 1, current)
        pending, used = _scan(words[1:], cmd)
        if pending is None:
            return self._option_names(current, cmd, used)
        found = self._values(pending, current, cmd)
        if pending.kind == O.BOOL and current.startswith("-"):
            found += self._option_names(current, cmd, used)
        return found

    # -- option names -------------------------------------------------------

    def _option_names(self, current: str, cmd: Command, used: set[str]) -> list[Candidate]:
        specs = [s for s in O.names_for(cmd.name) if s.name not in used]
        typed = current if current.startswith("-") else "-" + current
        return [Candidate(s.repl_name, len(current), s.repl_name, s.help_for(cmd.name))
                for s in specs if s.repl_name.startswith(typed)]

    def _help_topics(self, current: str) -> list[Candidate]:
        found = _matching(current, ((c.name, c.summary) for c in COMMANDS.values()))
        if current.startswith("-") or current == "":
            found += _matching(current, ((s.repl_name, s.help) for s in OPTION_SPECS.values()))
        return found

    def _arguments(self, cmd: Command, position: int, current: str) -> list[Candidate]:
        if position >= len(cmd.args):
            if cmd.kind == "capture" and current.startswith("-"):
                return _matching(current, ((f.name, f.help) for f in flags_for(SHELL)))
            return []
        arg = cmd.args[position]
        if arg == "PROFILE":
            return _matching(current, ((n, "loaded profile") for n in self.profiles()))
        if arg == "PATH":
            return _matching(current, _paths(current))
        return []

    # -- option values ------------------------------------------------------

    def _values(self, spec: OptionSpec, current: str, cmd: Command) -> list[Candidate]:
        kind = spec.kind
        if kind in (O.CHOICE, O.BOOL):
            return _matching(current, choice_descriptions(spec))
        if kind in (O.CHOICE_SET, O.NAME_LIST):
            head, item = _split_item(current)
            taken = set(O.split_list(head))
            return _matching(item, [(v, d) for v, d in choice_descriptions(spec)
                                    if v not in taken])
        if kind == O.OUTPUT:
            return self._output_values(current)
        if kind == O.PROFILE:
            return _matching(current, [(n, "loaded profile") for n in self.profiles()]
                             + [("none", "no comparison")])
        if kind == O.PROFILE_LIST:
            head, item = _split_item(current)
            taken = set(O.split_list(head))
            return _matching(item, [(n, "loaded profile") for n in self.profiles()
                                    if n not in taken] + [("all", "every loaded profile")])
        if kind == O.REGEX_LIST:
            _head, item = _split_item(current)
            return self._names(spec, item, cmd)
        if kind == O.DEVICE:
            return _matching(current, [(d, "device with events") for d in self.devices()]
                             + [("all", "every device")])
        if spec.name in ("step", "base_step"):
            every = cmd.name in O.INTERVAL_COMMANDS
            steps = [("-1", "every step" if every else "average over the steps each node ran in")]
            steps += [(str(s), "recorded step") for s in self.steps]
            return _matching(current, steps)
        return []

    def _output_values(self, current: str) -> list[Candidate]:
        kind_name, colon, rest = current.partition(":")
        if not colon:
            found = []
            for value, meta in choice_descriptions(OPTION_SPECS["output"]):
                required = OUTPUT_KINDS[value].required
                text = value + (":%s=" % required[0] if required else "")
                if text.startswith(current):
                    found.append(Candidate(text, len(current), value, meta))
            return found
        kind = OUTPUT_KINDS.get(kind_name)
        if kind is None:
            return []
        item = rest.rsplit(",", 1)[-1]
        key, eq, value = item.partition("=")
        if not eq:
            given = {p.split("=", 1)[0] for p in rest.split(",")[:-1]}
            return _matching(item, [(k + "=", "required" if k in kind.required else "optional")
                                    for k in kind.keys if k not in given])
        if key in kind.bool_keys:
            return _matching(value, [("true", ""), ("false", "")])
        if key == "outfile":
            return _matching(value, _paths(value))
        return []

    def _names(self, spec: OptionSpec, item: str, cmd: Command) -> list[Candidate]:
        if item.startswith("^"):  # an anchored regex: complete the name after the anchor
            return [replace(c, text="^" + c.text, length=c.length + 1)
                    for c in self._names(spec, item[1:], cmd)]
        if cmd.name == "kernels":
            typed = _unescape(item)
            return [Candidate(escape_name(n), len(item), n, "kernel")
                    for n in self.kernels() if n.startswith(typed)][:NAME_LIMIT]
        index = self.index
        if spec.name == "account_type_regexes":
            return _from_sorted(index.account_types, item)
        if cmd.name == "op":
            return _from_sorted(index.op_types, item)
        if cmd.name == "code":
            return _from_sorted(index.code_labels, item)
        found = [Candidate(regex, len(item), display, meta)
                 for regex, display, meta in index.scoped(_unescape(item), NAME_LIMIT)]
        if cmd.name in ("set", "advise"):
            found += _from_sorted(index.op_types, item)
        return found


class ShellCompleter(Completer):
    """prompt_toolkit adapter around a :class:`CompletionEngine`."""

    def __init__(self, engine: CompletionEngine) -> None:
        self.engine = engine

    def get_completions(self, document: Document,
                        complete_event: CompleteEvent) -> Iterator[Completion]:
        try:
            found = self.engine.complete(document.text_before_cursor)
        except Exception:  # a completion bug must never break the prompt
            return
        for c in found:
            yield Completion(c.text, start_position=-c.length,
                             display=c.display or c.text, display_meta=c.meta)


def engine_for(session: Session) -> CompletionEngine:
    """A completion engine that follows the session's current profile.

    Each profile's name index is built on first use and kept while that
    profile stays loaded.
    """
    indexes: dict[str, tuple[Model, NameIndex]] = {}

    def index() -> NameIndex:
        name, model = session.current, session.model
        for gone in [n for n in indexes if n not in session.profiles]:
            del indexes[gone]
        kept = indexes.get(name)
        if kept is None or kept[0] is not model:
            kept = indexes[name] = (model, NameIndex.from_model(model))
        return kept[1]

    return CompletionEngine(index, lambda: session.model.steps, lambda: tuple(session.profiles),
                            cache=False, devices=lambda: _device_names(session.model),
                            kernels=lambda: _kernel_names(session.model))


def _kernel_names(model: Model) -> list[str]:
    """The model's device event names, sorted; none if its intervals cannot be read."""
    try:
        return sorted({e.name for e in model.intervals().devices})
    except UserError:
        return []


def _device_names(model: Model) -> list[str]:
    """The model's devices with events; none if its intervals cannot be read (the
    steps command then says why)."""
    try:
        return model.intervals().device_names()
    except UserError:
        return []


# --------------------------------------------------------------------------

def _scan(tokens: Sequence[str], cmd: Command) -> tuple[Optional[OptionSpec], set[str]]:
    """Walk complete option tokens the parser's way: (option awaiting a value, used)."""
    pending: Optional[OptionSpec] = None
    used: set[str] = set()
    for tok in tokens:
        if pending is not None:
            bare_bool = pending.kind == O.BOOL and tok.startswith("-")
            pending = None
            if not bare_bool:
                continue
        spec = OPTION_SPECS.get(tok[1:]) if tok.startswith("-") else None
        if spec is not None and cmd.name in spec.commands:
            used.add(spec.name)
            pending = spec
    return pending, used


def _split_item(current: str) -> tuple[str, str]:
    """``'a,b,c`` -> (``'a,b,``, ``c``): the list so far and the item being typed."""
    head, comma, item = current.rpartition(",")
    if comma:
        return head + comma, item
    stripped = item.lstrip(_QUOTES)
    return item[:len(item) - len(stripped)], stripped


def _matching(typed: str, choices: Iterable[tuple[str, str]]) -> list[Candidate]:
    return [Candidate(value, len(typed), value, meta)
            for value, meta in choices if value.startswith(typed)]


def _from_sorted(names: SortedNames, item: str) -> list[Candidate]:
    return [Candidate(escape_name(n), len(item), n, names.meta[n])
            for n in names.with_prefix(_unescape(item), NAME_LIMIT)]


def _unescape(text: str) -> str:
    """The text an escaped name stands for: backslashes dropped, ``\\xHH`` decoded."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            code = text[i + 2:i + 4]
            if text[i + 1] == "x" and len(code) == 2 and all(c in _HEX for c in code):
                out.append(chr(int(code, 16)))
                i += 4
                continue
            out.append(text[i + 1])
            i += 2
            continue
        if ch != "\\":
            out.append(ch)
        i += 1
    return "".join(out)


_HEX = set("0123456789abcdefABCDEF")


def _paths(typed: str) -> list[tuple[str, str]]:
    """Entries of the directory being typed in an outfile= value, matching its prefix."""
    directory, slash, partial = typed.rpartition("/")
    base = directory + slash
    listed = os.path.expanduser(base) if base else "."
    try:
        entries = sorted(e for e in os.listdir(listed) if e.startswith(partial)
                         and (partial.startswith(".") or not e.startswith(".")))
    except OSError:
        return []
    found = []
    for entry in entries[:NAME_LIMIT]:
        is_dir = os.path.isdir(os.path.join(listed, entry))
        found.append((base + entry + ("/" if is_dir else ""), "directory" if is_dir else "file"))
    return found
