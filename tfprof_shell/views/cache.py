"""One loaded profile and the views built from it so far."""

from __future__ import annotations

import gc
from typing import Any, Callable, Optional, TypeVar

from ..deep import call_deep
from ..model import Model
from ..options import Options
from . import VIEWS
from .base import ViewResult

T = TypeVar("T")
#: A command or view build that made this many objects sets them aside from
#: the garbage collector (gc.freeze).
_FREEZE_ALLOCATIONS = 10_000


def _without_gc(fn: Callable[..., T], *args: Any) -> T:
    """``call_deep(fn, *args)`` with the cyclic garbage collector paused.

    A view command allocates an object or more per row and frees them at
    once; collections triggered on the way would only walk the model again
    and again (nothing here makes reference cycles).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return call_deep(fn, *args)
    finally:
        if enabled:
            if gc.get_count()[0] >= _FREEZE_ALLOCATIONS:
                # Otherwise the first allocation after this would walk all the
                # objects just made (a view's rows), and later ones again as they
                # age: set them aside as the views themselves are.
                gc.freeze()
            gc.enable()


def without_gc(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` with the cyclic garbage collector paused (see _without_gc):
    for commands outside the view cache that allocate a lot at once (steps)."""
    return _without_gc(fn, *args)


class ProfileViews:
    """A model plus its views, each built on first use and kept.

    ``show`` runs one view command and returns what it displays; nothing
    is checked or written here (see plan and render).
    """

    def __init__(self, model: Model) -> None:
        self.model = model
        self._views: dict[str, Any] = {}
        #: (view, result) of the last displayed command: a repeat with equal
        #: options gets the same result (views derive results from the options
        #: alone; a run of that view with other options forgets it).
        self._last: Optional[tuple[str, ViewResult]] = None

    def remember(self, view: str, result: ViewResult) -> None:
        """Keep ``result`` (just shown by ``view``) for a repeat of its command.

        Only displayed commands call this; the advisor's and the comparisons'
        own runs are not kept (nor freed by the next command).
        """
        self._last = (view, result)

    def view(self, name: str) -> Any:
        """The view ``name`` (a key of VIEWS), built on first use."""
        view = self._views.get(name)
        if view is None:
            # A large view lives as long as the session: _without_gc freezes it
            # out of later collections' sight.
            view = _without_gc(VIEWS[name], self.model)
            self._views[name] = view
        return view

    def show(self, view: str, opts: Options) -> ViewResult:
        """The ViewResult of ``view`` for ``opts`` (the remembered one if it is for equal opts)."""
        last = self._last
        if last is not None and last[0] == view:
            if last[1].options == opts:
                return last[1]
            self._last = None  # this view's nodes are about to change
        try:
            return _without_gc(self.view(view).show, opts)
        except KeyboardInterrupt:
            # The abandoned worker may still be mutating this view's nodes.
            self._views.pop(view, None)
            raise
