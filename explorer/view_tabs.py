"""The window's views, each built when it is first needed: the view the window opens on at once,
the others when their tab is chosen, when something asks for them (`views[id]`), or one by one
once the app has been idle a while after it was shown. A first result waits for no other view's
construction, which shares the GIL with the worker loading the kernels (docs/PERFORMANCE.md,
"Start-up")."""
from __future__ import annotations

from typing import Callable

from PyQt6.QtCore import QTimer
from PyQt6.QtWidgets import QTabWidget, QWidget

IDLE_START_MS = 1000     # after the window is shown, before the other views are built unasked
IDLE_TICK_MS = 100       # between the checks for an idle worker, and between two views built


class Views(dict):
    """The views built so far, by id; `views[id]` builds one not built yet (`get` does not)."""

    def __init__(self, ids, build: Callable[[str], QWidget]):
        super().__init__()
        self._ids = tuple(ids)
        self._build = build

    def __missing__(self, view_id):
        if view_id not in self._ids:
            raise KeyError(view_id)
        return self._build(view_id)

    def pending(self) -> list[str]:
        return [v for v in self._ids if v not in self]


class ViewTabs:
    """`tabs` holds a tab per id in `titles` (ordered); `make(view_id)` constructs a view,
    `built(view_id, view)` hears of each one built; `busy()` says whether the worker is."""

    def __init__(self, tabs: QTabWidget, titles: dict, make, built, busy, first: str):
        self.tabs, self.titles = tabs, dict(titles)
        self._make, self._built, self._busy = make, built, busy
        self.ids = list(self.titles)
        self.views = Views(self.ids, self._build)
        for view_id in self.ids:
            self.tabs.addTab(QWidget(), self.titles[view_id])     # a stand-in until built
        self._build(first)
        self.tabs.setCurrentIndex(self.ids.index(first))
        self._timer = QTimer(singleShot=True)
        self._timer.timeout.connect(self._build_when_idle)

    def _build(self, view_id: str):
        view = self._make(view_id)
        dict.__setitem__(self.views, view_id, view)
        i = self.ids.index(view_id)
        current = self.tabs.currentIndex()
        stand_in = self.tabs.widget(i)
        blocked = self.tabs.blockSignals(True)      # the same tab stays chosen: no change to tell
        try:
            self.tabs.removeTab(i)
            self.tabs.insertTab(i, view, self.titles[view_id])
            if current >= 0:
                self.tabs.setCurrentIndex(current)
        finally:
            self.tabs.blockSignals(blocked)
        if stand_in is not None:
            stand_in.deleteLater()
        self._built(view_id, view)
        return view

    def view_at(self, index: int):
        """The view of tab `index`, built now if it was not (None for no tab)."""
        return self.views[self.ids[index]] if 0 <= index < len(self.ids) else None

    def shown(self) -> None:
        """The window is on screen: the other views follow once the worker has been idle."""
        if self.views.pending():
            self._timer.start(IDLE_START_MS)

    def stop(self) -> None:
        self._timer.stop()

    def _build_when_idle(self):
        pending = self.views.pending()
        if not pending:
            return
        if not self._busy():
            self._build(pending[0])
        if self.views.pending():
            self._timer.start(IDLE_TICK_MS)
