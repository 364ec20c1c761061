"""Drop-in stand-ins for TensorFlow 1's profiler API.

``profile``, ``advise``, ``ProfileOptionBuilder`` and ``Profiler`` stand in for
``tf.compat.v1.profiler``'s; ``ProfileContext`` for ``tf.contrib.tfprof``'s.

A script written against TensorFlow's profiler ports by changing its import::

    from tfprof_shell import compat as profiler
    opts = profiler.ProfileOptionBuilder.time_and_memory()
    node = profiler.profile(graph="graph.pb", run_meta="run_meta", cmd="scope", options=opts)

Options dictionaries have the same keys and meaning as TensorFlow's; note
that a key *missing* from a dictionary means what it means to TensorFlow
(for example no ``show_name_regexes`` shows only the root), not our shell's
default. Results are the engine's GraphNodeProto / MultiGraphNodeProto /
AdviceProto (wire-compatible with TensorFlow's). Mistakes raise
:class:`~tfprof_shell.errors.UserError` instead of printing and returning
an empty message.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from .api import Profile
from .errors import OptionError
from .option_builder import TRAINABLE_VARIABLES, ProfileOptionBuilder
from .option_dicts import options_from_dict
from .profiler import ALL_ADVICE, Profiler, report_banner, show_advice, show_view
from .profile_context import ProfileContext

__all__ = ["ALL_ADVICE", "TRAINABLE_VARIABLES", "ProfileContext", "ProfileOptionBuilder",
           "Profiler", "advise", "options_from_dict", "profile", "report_banner"]


def profile(graph: Any = None, run_meta: Any = None, op_log: Any = None, cmd: str = "scope",
            options: Optional[Mapping[str, Any]] = None, *,
            profile_path: Optional[str] = None) -> Any:
    """Profile one model with one command, as ``tf.compat.v1.profiler.profile`` does.

    ``graph``, ``run_meta`` and ``op_log`` may be file paths, messages
    (ours or TensorFlow's) or serialized bytes; ``graph`` may also be a
    ``tf.Graph``. ``profile_path`` loads a ProfileProto instead. The default
    options are ``trainable_variables_parameter()``. Returns the engine's
    GraphNodeProto (scope, graph) or MultiGraphNodeProto (op, code); stdout
    output is printed in TensorFlow's Options / Model Analysis Report frame.
    """
    if cmd not in ("scope", "graph", "op", "code"):
        raise OptionError("unknown cmd: %s (use scope, graph, op or code)" % cmd)
    if options is None:
        options = ProfileOptionBuilder.trainable_variables_parameter()
    if profile_path is not None:
        prof = Profile.load(profile_path=profile_path)
    else:
        prof = Profile.from_messages(graph, [run_meta] if run_meta is not None else [],
                                     op_log, add_trace=cmd == "code")
    return show_view(prof, cmd, options)


def advise(graph: Any = None, run_meta: Any = None,
           options: Optional[Mapping[str, Any]] = None, *,
           profile_path: Optional[str] = None) -> Any:
    """Run the advisor's checkers, as ``tf.compat.v1.profiler.advise`` does.

    ``options`` maps checker names to (ignored) option dicts; default: all.
    Prints the advice and returns it as an AdviceProto.
    """
    if profile_path is not None:
        prof = Profile.load(profile_path=profile_path)
    else:
        prof = Profile.from_messages(graph, [run_meta] if run_meta is not None else [],
                                     None, add_trace=True)
    return show_advice(prof, options)
