"""Arms ``tfprof record`` in each Python process started with this folder first on PYTHONPATH.

With ``TFPROF_RECORD`` set (and not ``off``) it only puts an import hook first
on ``sys.meta_path``; the hook looks at the name of each module imported for
the first time and does nothing else until a framework (``tensorflow``,
``keras``, ``torch``, ``jax``; ``torch._dynamo`` too) has finished importing.
Only then is ``tfprof_shell.record.hooks`` loaded (from the tfprof-shell this
file belongs to) to patch that framework's training entry points.
Then the ``sitecustomize`` this file hides, if any, runs as it would have.

Kept to ``os`` and ``sys``: a program that never imports a framework pays
for two environment look-ups and one small class.
"""

import os
import sys

_HERE = os.path.normcase(os.path.dirname(os.path.abspath(__file__)))
_PACKAGE = os.path.dirname(os.path.dirname(_HERE))
# `tfprof record --serve PORT` sets TFPROF_SERVE instead of TFPROF_RECORD: then
# record/serve.py takes the imports of TensorFlow and JAX, to start a profiler server.
_SERVE = bool(os.environ.get("TFPROF_SERVE"))
_RECORDED = ("tensorflow", "keras", "torch", "torch._dynamo", "jax")
_SERVED = ("tensorflow", "jax")
_WATCHED = _SERVED if _SERVE else _RECORDED
_HANDLER = "tfprof_shell.record.serve" if _SERVE else "tfprof_shell.record.hooks"
_OFF = ("", "off", "0", "false", "no")


class _ThenNotify(object):
    """The real loader of a watched module; tells the recorder once the module is ready."""

    def __init__(self, loader, name):
        self._loader = loader
        self._name = name

    def create_module(self, spec):
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        # The module keeps the real loader: nothing of ours shows on it afterwards.
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        _imported(self._name)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class TfprofRecordFinder(object):
    """Finds nothing itself: wraps the loader of a watched module found by the other finders."""

    def __init__(self):
        self.pending = set(_WATCHED)
        self._busy = set()

    def find_spec(self, name, path=None, target=None):
        if name not in self.pending or name in self._busy:
            return None
        import importlib.util

        self._busy.add(name)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self._busy.discard(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        spec.loader = _ThenNotify(spec.loader, name)
        return spec


def _imported(name):
    """``name`` finished importing: hand over to the recorder, never raising into the program."""
    _FINDER.pending.discard(name)
    try:
        hooks = sys.modules.get(_HANDLER)
        if hooks is None:
            if "tfprof_shell" not in sys.modules:
                _load_package()
            import importlib

            hooks = importlib.import_module(_HANDLER)
        hooks.imported(name)
    except Exception as exc:  # a broken install must not break the program
        _FINDER.pending.clear()
        sys.stderr.write("tfprof record: not recording in process %d: %s: %s\n"
                         % (os.getpid(), type(exc).__name__, exc))


def _load_package():
    """Import tfprof_shell from beside this file, whatever the program's sys.path holds."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "tfprof_shell", os.path.join(_PACKAGE, "__init__.py"),
        submodule_search_locations=[_PACKAGE])
    module = importlib.util.module_from_spec(spec)
    sys.modules["tfprof_shell"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["tfprof_shell"]
        raise


def _chain():
    """Run the sitecustomize this one hides, as site.py would have (its errors included)."""
    ours = sys.modules.get(__name__)
    sys.path[:] = [p for p in sys.path
                   if os.path.normcase(os.path.abspath(p or os.curdir)) != _HERE]
    sys.modules.pop(__name__, None)
    try:
        import sitecustomize  # noqa: F401 -- the next one on sys.path
    except ImportError as exc:
        if exc.name != "sitecustomize":
            raise
        if ours is not None:
            sys.modules[__name__] = ours


_FINDER = None
if (os.environ.get("TFPROF_RECORD", "").strip().lower() not in _OFF
        or _SERVE) and not any(
        type(f).__name__ == "TfprofRecordFinder" for f in sys.meta_path):
    _FINDER = TfprofRecordFinder()
    sys.meta_path.insert(0, _FINDER)
_chain()
