"""The Python API: load a profile once, run commands on it, get structured results.

    from tfprof_shell import Profile
    prof = Profile.load(profile_path="sample_profiles/tiny_mlp/profile")
    res = prof.run("scope -max_depth 2 -select micros,params")
    res.data["root"]["total"]["micros"]      # the JSON document of `-output json`
    prof.profile("op", {"select": ["micros"], "show_name_regexes": [".*"]}, as_proto=True)

Results carry the same document as ``-output json`` (see docs/api.md), the text
when asked, and the engine's result message (:meth:`Result.proto`).
Mistakes raise :class:`~tfprof_shell.errors.UserError`; nothing is printed.
"""

from __future__ import annotations

import gc
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Optional, Sequence, Union

from . import commands
from .combine.result import MultiResult
from .errors import CommandError, LoadError, UsageError
from .load import Inputs, split_paths
from .load.jobs import jobs_of
from .model import Model, Source
from .option_dicts import options_from_dict
from .options import DEFAULTS, Options, format_dump, parse_tokens
from .outputs import Output
from .plan import is_per_step
from .render.json_out import render_json, to_document
from .render.multi import render_multi_json, render_multi_text, to_multi_document
from .render.proto_out import empty_proto, to_proto
from .render.text import render_text
from .session import Session
from .views.base import ViewResult

VIEWS = ("scope", "graph", "op", "code")
_NO_OUTPUT = Output("none")
OptionsLike = Union[None, Options, Mapping[str, Any], str]


@dataclass
class Result:
    """What one command gave: the JSON document, text, stderr notes and files written.

    ``data`` is the ``-output json`` document for view commands, steps, kernels and
    collectives, and ``{"schema_version": 1, "checkers": {...}}`` for advise; None
    for commands without a result (set, help, a per-step graph timeline).
    """

    data: Optional[dict[str, Any]]
    text: str = ""
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    view: str = ""
    #: The underlying ViewResult or Advice.
    value: Any = field(default=None, repr=False)

    def __getitem__(self, key: str) -> Any:
        if self.data is None:
            raise KeyError(key)
        return self.data[key]

    def proto(self) -> Any:
        """The engine's result: GraphNodeProto, MultiGraphNodeProto or AdviceProto."""
        if self.view == "advise":
            return self.value.to_proto()
        if isinstance(self.value, ViewResult):
            return to_proto(self.value)
        return empty_proto(self.view)


class Profile:
    """A loaded profile plus default options; every call runs on a copy of them."""

    def __init__(self, model: Model, options: Options = DEFAULTS, name: str = "profile") -> None:
        self._attach(Session(model, options, name))

    def _attach(self, session: Session) -> None:
        self.session = session
        self._ui: Any = None
        self.session.serve_ui = self.ui

    @classmethod
    def load(cls, profile_path: Optional[str] = None, graph_path: Optional[str] = None,
             run_meta_paths: Union[str, Sequence[str]] = (), op_log_path: Optional[str] = None,
             checkpoint_path: Optional[str] = None, options: Options = DEFAULTS) -> "Profile":
        """Load from files, as the command line's flags do (run_meta_paths: list or comma list).

        A folder holding several jobs (PyTorch workers, XProf hosts, processes
        of a ``tfprof record`` folder) loads one profile per job, the first
        one current, as the command line does.
        """
        if isinstance(run_meta_paths, str):
            run_meta_paths = split_paths(run_meta_paths)
        inputs = Inputs(profile_path=_path(profile_path), graph_path=_path(graph_path),
                        run_meta_paths=tuple(_path(p) for p in run_meta_paths),
                        op_log_path=_path(op_log_path), checkpoint_path=_path(checkpoint_path))
        if inputs.is_empty():
            raise UsageError("Profile.load: give profile_path, or graph_path and run_meta_paths")
        jobs, _ = jobs_of(inputs)
        with _collector_paused():
            session, _ = Session.open(jobs, options)
        profile = cls.__new__(cls)
        profile._attach(session)
        return profile

    # -- several profiles ------------------------------------------------------

    @property
    def names(self) -> list[str]:
        """The loaded profiles' names, in load order (``-base``/``-profiles`` take them)."""
        return list(self.session.profiles)

    @property
    def current(self) -> str:
        """The profile views run on (see :meth:`use`)."""
        return self.session.current

    def add(self, name: str, path: str) -> list[str]:
        """Load ``path`` (anything --profile_path takes) as profile ``name``.

        A folder holding several jobs loads one profile per job, named
        ``name.JOB``. Returns the loader's notes.
        """
        with _collector_paused():
            return self.session.load(name, os.fspath(path)).notes

    def use(self, name: str) -> None:
        """Make profile ``name`` the one views run on."""
        self.session.use(name)

    @classmethod
    def from_messages(cls, graph: Any = None, run_metas: Sequence[Any] = (), op_log: Any = None,
                      add_trace: bool = True, options: Options = DEFAULTS) -> "Profile":
        """Build from a GraphDef, RunMetadata list (step i) and OpLogProto in memory.

        Each may be a message (ours or TensorFlow's), serialized bytes or a
        path; ``graph`` may be a ``tf.Graph``, whose flops, trainable
        variables and (with ``add_trace``) code traces are logged as
        TensorFlow's profiler does.
        """
        from .load.graph import add_messages
        from .proto import framework_pb2, tfprof_log_pb2
        if graph is not None and hasattr(graph, "as_graph_def"):
            graph, op_log = _from_tf_graph(graph, run_metas, op_log, add_trace)
        graph_msg = _message(graph, framework_pb2.GraphDef, "graph", text_too=True)
        op_log_msg = _message(op_log, tfprof_log_pb2.OpLogProto, "op_log")
        metas = [_message(rm, framework_pb2.RunMetadata, "run_meta", text_too=True)
                 for rm in run_metas]
        model = Model(Source("python"))
        add_messages(model, graph_msg if graph_msg is not None else framework_pb2.GraphDef(),
                     op_log_msg, [(step, rm.step_stats) for step, rm in enumerate(metas)
                                  if rm is not None and rm.HasField("step_stats")])
        return cls(model, options)

    # -- facts -----------------------------------------------------------------

    @property
    def model(self) -> Model:
        return self.session.model

    @property
    def steps(self) -> list[int]:
        """The recorded steps, ascending."""
        return list(self.session.model.steps)

    @property
    def options(self) -> Options:
        """The default options (change them with ``run("set ...")``)."""
        return self.session.options

    # -- the web UI -------------------------------------------------------------

    def ui(self, port: int = 0, host: str = "127.0.0.1") -> str:
        """Serve this profile to a web browser (in a background thread); its URL.

        Needs ``pip install 'tfprof-shell[ui]'``. In Jupyter the page is also
        shown as a link under the cell. A second call returns the same URL.
        """
        if self._ui is None:
            from .ui import require_server
            require_server()
            from .ui.server import start_server
            self._ui = start_server(self.session, host, port)
            _show_link(self._ui.url)
        return self._ui.url

    # -- commands --------------------------------------------------------------

    def run(self, line: str, text: bool = False) -> Result:
        """Run one shell line (``"op -select micros -order_by micros"``).

        ``text=True`` also renders the view as the shell prints it.
        """
        words = commands.split_line(line)
        if not words:
            return Result(None, text=format_dump(self.session.options))
        request = commands.parse_words(words, self.session.options)
        kind = request.command.kind
        if kind == commands.VIEW:
            return self._view(request.command.name, request.options, text)
        reply = self.session.execute_words(words)
        if kind == "advise":
            return _advice_result(reply)
        if kind in ("steps", "kernels", "collectives"):  # their -output json document
            return Result(reply.result, reply.text, list(reply.notes), list(reply.files), kind,
                          reply.result)
        if kind == "critpath":  # its -output json document, built now
            return Result(reply.result.document(), reply.text, list(reply.notes),
                          list(reply.files), kind, reply.result.paths)
        return Result(None, reply.text, list(reply.notes), list(reply.files), kind)

    def profile(self, view: str, options: OptionsLike = None, *, text: bool = False,
                as_proto: bool = False) -> Any:
        """Run ``view`` with ``options``; a Result, or the engine's message if ``as_proto``.

        ``options``: None (the defaults), an :class:`Options`, a
        ``ProfileOptionBuilder`` dictionary (TensorFlow's meaning, missing
        keys included) or shell tokens such as ``"-max_depth 3"``.
        """
        if view not in VIEWS:
            raise CommandError("unknown view '%s'; views: %s" % (view, ", ".join(VIEWS)))
        notes: list[str] = []
        if options is None:
            opts = self.session.options
        elif isinstance(options, Options):
            opts = options
        elif isinstance(options, str):
            opts = parse_tokens(commands.split_line(options), self.session.options, view)
        else:
            opts, notes = options_from_dict(options)
        result = self._view(view, opts, text)
        result.notes[:0] = notes
        return result.proto() if as_proto else result

    def advise(self, checkers: Union[None, Sequence[str], Mapping[str, Any]] = None, *,
               as_proto: bool = False) -> Any:
        """Run the advisor (all checkers, or those named); a Result or an AdviceProto."""
        words = ["advise"]
        if checkers:
            words += ["-checkers", ",".join(checkers)]
        result = _advice_result(self.session.execute_words(words))
        return result.proto() if as_proto else result

    def _view(self, view: str, opts: Options, text: bool) -> Result:
        session = self.session
        output = opts.output
        if output.kind in ("stdout", "none") or (output.kind == "json" and not output.outfile):
            # Printed output: the caller gets the document, and the text only if asked.
            reply = session.run_view(view, opts.replace(output=_NO_OUTPUT))
            value = reply.result
            shown = ""
            if isinstance(value, MultiResult):
                if text:
                    shown = (render_multi_json(value) if output.kind == "json"
                             else render_multi_text(value))
                return Result(to_multi_document(value), shown, list(reply.notes), [], view,
                              value)
            assert isinstance(value, ViewResult)
            if text:
                shown = render_json(value) if output.kind == "json" else render_text(value)
            return Result(to_document(value), shown, list(reply.notes), [], view, value)
        reply = session.run_view(view, opts)
        if isinstance(reply.result, MultiResult):
            return Result(to_multi_document(reply.result), reply.text, list(reply.notes),
                          list(reply.files), view, reply.result)
        vr = reply.result if isinstance(reply.result, ViewResult) else None
        if is_per_step(session.model, view, opts):
            vr = None  # several runs: the engine returns an empty result
        shown = render_text(vr) if text and vr is not None else reply.text
        data = to_document(vr) if vr is not None else None
        return Result(data, shown, list(reply.notes), list(reply.files), view, vr)


def _show_link(url: str) -> None:
    """Under IPython, display the URL as a link (the UI refuses to be framed)."""
    import sys
    if "IPython" not in sys.modules:
        return
    try:
        from IPython.display import HTML, display  # type: ignore
        from html import escape
        display(HTML('<a href="%s" target="_blank" rel="noopener">Open the tfprof web UI</a>'
                     % escape(url)))
    except Exception:  # a display nicety; the URL is returned anyway
        pass


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a profile loads, as the CLI does.

    A model is hundreds of thousands of long-lived objects; collections
    during the load walk them again and again and can double its time.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _advice_result(reply: Any) -> Result:
    advice = reply.result
    data = None
    if advice is not None:
        data = {"schema_version": 1, "checkers": {k: list(v) for k, v in advice.checkers.items()}}
    return Result(data, reply.text, list(reply.notes), list(reply.files), "advise", advice)


def _path(value: Any) -> Any:
    return os.fspath(value) if value is not None else None


def _message(value: Any, cls: Any, what: str, text_too: bool = False) -> Any:
    """A message of our type ``cls`` from a message, bytes or a path; None stays None."""
    if value is None:
        return None
    if isinstance(value, (str, os.PathLike)):
        from .load import graph as g
        reader = {"graph": g.read_graph, "run_meta": g.read_run_metadata,
                  "op_log": g.read_op_log}[what]
        return reader(os.fspath(value))
    if hasattr(value, "SerializeToString"):
        value = value.SerializeToString()
    if not isinstance(value, (bytes, bytearray)):
        raise LoadError("%s: expected a path, bytes or a protobuf message, got %s"
                        % (what, type(value).__name__))
    from .load.files import parse_binary, parse_text
    msg = parse_binary(cls, bytes(value))
    if msg is None and text_too:
        msg, _ = parse_text(cls, bytes(value))
    if msg is None:
        raise LoadError("%s: the bytes are not a %s" % (what, cls.DESCRIPTOR.name))
    return msg


def _from_tf_graph(graph: Any, run_metas: Sequence[Any], op_log: Any,
                   add_trace: bool) -> tuple[bytes, Any]:
    """A tf.Graph's GraphDef bytes and its op log, made by TensorFlow's own logger."""
    from tensorflow.core.profiler import tfprof_log_pb2 as tf_log  # type: ignore
    from tensorflow.core.protobuf import config_pb2 as tf_config  # type: ignore
    from tensorflow.python.profiler import tfprof_logger  # type: ignore

    from .proto import framework_pb2, tfprof_log_pb2

    def as_tf(value: Any, ours: Any, theirs: Any, what: str) -> Any:
        if value is None:
            return None
        msg = theirs()
        msg.ParseFromString(_message(value, ours, what).SerializeToString())
        return msg

    tf_op_log = as_tf(op_log, tfprof_log_pb2.OpLogProto, tf_log.OpLogProto, "op_log")
    tf_run_meta = (as_tf(run_metas[0], framework_pb2.RunMetadata, tf_config.RunMetadata,
                         "run_meta") if run_metas else None)
    merged = tfprof_logger.merge_default_with_oplog(graph, tf_op_log, tf_run_meta,
                                                    add_trace=add_trace)
    return graph.as_graph_def(add_shapes=True).SerializeToString(), merged.SerializeToString()
