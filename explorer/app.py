"""The main window: a tab per view, the CPU/GPU toggle, the timing dock and the status bar."""
from __future__ import annotations

import logging
import os
import signal
import sys

from PyQt6.QtCore import QSettings, Qt, QTimer
from PyQt6.QtGui import QAction, QActionGroup, QGuiApplication, QKeySequence
from PyQt6.QtWidgets import (QApplication, QLabel, QMainWindow, QMessageBox, QProgressBar, QTabWidget,
                             QToolBar, QToolButton, QVBoxLayout, QWidget)

from kernels import backend as backends
from kernels.extras import app_version

from . import kept_places, persisted
from .info_bar import InfoBar
from .roofline_panel import RooflineDock
from .scheduler_qt import QtScheduler
from .timing_panel import TimingDock
from .view_tabs import ViewTabs
from .views import VIEW_IDS, VIEWS
from .views.base import BaseView

log = logging.getLogger("gpu_explorer")
ORG, APP = "GPU Explorer", "GPU Explorer"
SIGINT_TICK_MS = 200        # how often Python gets a turn to see Ctrl+C while Qt's loop runs


class MainWindow(QMainWindow):
    def __init__(self, backend_choice: str = "auto", view: str | None = None, settings: QSettings | None = None,
                 *, synchronous: bool = False, notes=(), compile_ahead: bool = False):
        """`compile_ahead`: once the Mandelbrot view's own kernels are ready, compile the
        deep-zoom kernels in the background (the app does; tests and tools ask for it)."""
        super().__init__()
        self.setWindowTitle("GPU Explorer")
        # what went wrong reading files or the environment: shown in the status bar once built
        self.startup_notes: list[str] = list(notes)
        self.settings, problems = persisted.open_settings(
            settings if settings is not None else QSettings(ORG, APP))
        self.startup_notes += problems
        self.cuda_status = backends.cuda_status()
        self._cpu_reason_shown = False
        self.gpu_backend = None
        if self.cuda_status.usable:
            try:
                self.gpu_backend = backends.resolve("cuda")
            except backends.BackendUnavailable:
                self.gpu_backend = None
        self.backend = backends.resolve(backend_choice)

        # all compute goes through this one scheduler (one worker thread); synchronous in tests
        self.scheduler = QtScheduler(self, synchronous=synchronous)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        # under the toolbar, above the views: why the app runs on the CPU, until dismissed
        self.info_bar = InfoBar()
        central = QWidget()
        lay = QVBoxLayout(central)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.info_bar)
        views_area = _ViewsArea(self.tabs)
        lay.addWidget(views_area, 1)
        # a result or error stays on show until dismissed or replaced (the status bar's line
        # gives way to the next frame's progress within a second)
        self.notice_bar = views_area.notice_bar
        self.setCentralWidget(central)
        # the view the window opens on is built now, the others when first needed (view_tabs.py);
        # a bad saved choice is dropped with a note
        self._first_view = view or persisted.read_choice(
            self.settings, "view", VIEW_IDS, self.startup_notes) or VIEW_IDS[0]
        self._compile_ahead = compile_ahead
        self._classes = {view_id: klass for view_id, _, klass in VIEWS}
        self._started = False           # later views' notes are shown as they come
        self.view_tabs = ViewTabs(self.tabs, {v: _no_mnemonic(t) for v, t, _ in VIEWS},
                                  self._make_view, self._view_built,
                                  lambda: not self.scheduler.idle(), self._first_view)
        self.views: dict[str, BaseView] = self.view_tabs.views
        self.tabs.currentChanged.connect(self._on_tab_changed)

        self.timing = TimingDock(self)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.timing)
        # a tab behind the timing panel: its roofs are measured when it is first shown
        self.roofline = RooflineDock(self.scheduler, {"cpu": backends.resolve("cpu"),
                                                      "cuda": self.gpu_backend}, self)
        self.tabifyDockWidget(self.timing, self.roofline)
        self.timing.raise_()

        self._build_actions()
        self._build_status_bar()

        # every saved value is checked: a wrong type is dropped with a note, never raised
        notes = self.startup_notes
        geo = persisted.read_bytes(self.settings, "geometry", notes)
        if geo is None or not self.restoreGeometry(geo):
            self.resize(1400, 860)
        state = persisted.read_bytes(self.settings, "windowState", notes)
        if state is None or not self.restoreState(state):
            # docks take their size once the window is laid out, hence after the first show
            QTimer.singleShot(0, lambda: self.resizeDocks([self.timing], [400], Qt.Orientation.Horizontal))
        problem = persisted.write_problem(self.settings, probe=True)
        if problem:
            notes.append(problem)
        self._update_backend_ui()
        self.add_notes(notes)
        self._started = True
        # last: a window that failed half-way must not get the scheduler's events
        self.scheduler.busy_changed.connect(self._on_busy)

    def _make_view(self, view_id: str) -> BaseView:
        early = {"warm_early": view_id == self._first_view} if view_id == "mandelbrot" else {}
        v = self._classes[view_id](self.scheduler, self.backend, **early)
        v.timings_ready.connect(self._on_timings)
        v.status_message.connect(self.show_status)
        v.error_message.connect(self.show_error)
        v.notice.connect(self.show_notice)
        if view_id == "mandelbrot":     # before any event loop turn: no warm-up has ended
            v.model.compile_ahead = self._compile_ahead
        return v

    def _view_built(self, view_id: str, v: BaseView) -> None:
        """Put the view back where it was left (before it is first shown) and say its notes."""
        notes = list(getattr(v, "load_notes", ()))
        kept_places.restore(self.settings, {view_id: v}, notes)
        if self._started:
            self.add_notes(notes)
        else:
            self.startup_notes += notes

    def showEvent(self, ev):
        super().showEvent(ev)
        self.view_tabs.shown()

    # ---- construction ------------------------------------------------------------------------
    def _build_actions(self):
        tb = QToolBar("Backend")
        tb.setObjectName("BackendToolbar")
        tb.setMovable(False)
        self.addToolBar(tb)
        tb.addWidget(QLabel(" Compute on: "))
        group = QActionGroup(self)
        group.setExclusive(True)
        self.act_cpu = QAction("CPU", self, checkable=True)
        self.act_cpu.setShortcut(QKeySequence("Ctrl+Shift+C"))
        self.act_cpu.setToolTip("Render on the CPU (numba, all cores)  [Ctrl+Shift+C]")
        self.act_gpu = QAction("GPU", self, checkable=True)
        for a in (self.act_cpu, self.act_gpu):
            group.addAction(a)
            tb.addAction(a)
        self.act_cpu.triggered.connect(lambda: self.set_backend("cpu"))
        self.act_gpu.triggered.connect(lambda: self.set_backend("cuda"))

        menu = self.menuBar()
        m_file = menu.addMenu("&File")
        # the same dialog as the Mandelbrot panel's Export PNG… button (Ctrl+E in that view)
        # the key is shown, not bound here: Ctrl+E belongs to the view on screen (the throughput
        # view's Ctrl+E saves its CSV), and a second binding would make it ambiguous
        self.act_picture = m_file.addAction("Export &picture…\tCtrl+E")
        self.act_picture.triggered.connect(self._export_picture)
        self.act_movie = m_file.addAction("Export zoom &movie…")
        self.act_movie.triggered.connect(self._export_movie)
        m_file.addSeparator()
        act_quit = m_file.addAction("&Quit")
        act_quit.setShortcut(QKeySequence.StandardKey.Quit)
        act_quit.triggered.connect(self.close)
        m_view = menu.addMenu("&View")
        for i, (view_id, title, _) in enumerate(VIEWS):
            a = m_view.addAction(_no_mnemonic(title))
            a.setShortcut(QKeySequence(f"Ctrl+{i + 1}"))
            a.triggered.connect(lambda _=False, k=i: self.tabs.setCurrentIndex(k))
        m_view.addSeparator()
        toggle = self.timing.toggleViewAction()
        toggle.setText("Timing panel")
        toggle.setShortcut(QKeySequence("F9"))
        m_view.addAction(toggle)
        roof_toggle = self.roofline.toggleViewAction()
        roof_toggle.setText("Roofline panel")
        m_view.addAction(roof_toggle)
        m_compute = menu.addMenu("&Compute")
        m_compute.addAction(self.act_cpu)
        m_compute.addAction(self.act_gpu)
        m_help = menu.addMenu("&Help")
        act_keys = m_help.addAction("&Keys and guide", lambda: self.show_help("keys"))
        act_keys.setShortcut(QKeySequence("F1"))
        m_help.addAction("&Getting started", lambda: self.show_help("guide"))
        m_help.addSeparator()
        m_help.addAction("About GPU Explorer", self._about)
        # without a GPU the GPU action is disabled and its key would do nothing: this one says why
        self.act_gpu_why = QAction("Why there is no GPU", self)
        self.act_gpu_why.triggered.connect(self._say_no_gpu)
        self.addAction(self.act_gpu_why)

    def _build_status_bar(self):
        sb = self.statusBar()
        # start-up notes (a file set aside, a bad entry skipped) stay visible here: the status
        # bar's message line is overwritten by the next message within a second
        # a button: a click lists every note (a tooltip alone is found only by those who know)
        self.notes_label = QToolButton()
        self.notes_label.setAutoRaise(True)
        self.notes_label.setAccessibleName("Start-up notes")
        self.notes_label.clicked.connect(self.show_notes)
        self.notes_label.hide()
        sb.addPermanentWidget(self.notes_label)
        self.backend_label = QLabel()
        self.busy_bar = QProgressBar()
        self.busy_bar.setRange(0, 0)
        self.busy_bar.setMaximumWidth(90)
        self.busy_bar.setMaximumHeight(14)
        self.busy_bar.setToolTip("The compute scheduler is busy")
        self.busy_bar.hide()
        sb.addPermanentWidget(self.busy_bar)
        sb.addPermanentWidget(self.backend_label)

    def add_notes(self, notes):
        """Things the user should know that stopped nothing: logged, shown once in the message
        line (after the window's own start-up messages) and kept in the notes label's tooltip."""
        new = [n for n in notes if n]
        if not new:
            return
        for note in new:
            log.warning("%s", note)
        self._notes = getattr(self, "_notes", []) + new
        count = len(self._notes)
        self.notes_label.setText(f" ⚠ {count} note{'s' if count > 1 else ''} ")
        self.notes_label.setToolTip("\n".join(self._notes) + "\n\n(click to list them)")
        self.notes_label.show()
        text = "  •  ".join(new)
        self.show_status(text, 20000)
        QTimer.singleShot(0, lambda: self.show_status(text, 20000))

    def notes(self) -> list[str]:
        return list(getattr(self, "_notes", []))

    def show_notes(self):
        """Every note so far, in the info bar under the toolbar (one per line, until dismissed)."""
        notes = self.notes()
        if notes:
            title = f"{len(notes)} note{'s' if len(notes) > 1 else ''} from this session:"
            self.info_bar.show_text("\n".join([title] + [f"• {n}" for n in notes]))

    # ---- backend ---------------------------------------------------------------------------------
    def _update_backend_ui(self):
        gpu_ok = self.gpu_backend is not None
        self.act_gpu.setEnabled(gpu_ok)
        # one of the two carries Ctrl+Shift+G: the switch, or the reason there is none
        key = QKeySequence("Ctrl+Shift+G")
        self.act_gpu.setShortcut(key if gpu_ok else QKeySequence())
        self.act_gpu_why.setShortcut(QKeySequence() if gpu_ok else key)
        if gpu_ok:
            self.act_gpu.setToolTip(f"Render on the GPU: {self.gpu_backend.device}  [Ctrl+Shift+G]")
        else:
            self.act_gpu.setToolTip(f"GPU unavailable: {self.cuda_status.reason}")
        (self.act_gpu if self.backend.is_gpu else self.act_cpu).setChecked(True)
        where = (f"GPU: {self.backend.device}" if self.backend.is_gpu else "CPU")
        self.backend_label.setText(f" {where}{'' if gpu_ok else ' (GPU unavailable)'} ")
        if not gpu_ok:
            self.backend_label.setToolTip(f"Running on the CPU because {self.cuda_status.reason}")
            if not self._cpu_reason_shown:      # once: after a dismissal it stays dismissed
                self._cpu_reason_shown = True
                self.info_bar.show_text(f"Running on the CPU: {self.cuda_status.reason}")
        else:
            self.backend_label.setToolTip(where)

    def _say_no_gpu(self):
        self.show_notice(f"No GPU to switch to: {self.cuda_status.reason}")

    def show_help(self, page: str = "keys"):
        from .help import HelpDialog
        self.help_dialog = HelpDialog(self, page)     # kept: tests and scripts look at it
        self.help_dialog.show()

    def set_backend(self, name: str):
        if name == "cuda":
            if self.gpu_backend is None:
                self.show_error(f"GPU unavailable: {self.cuda_status.reason}")
                self._update_backend_ui()
                return
            new = self.gpu_backend
        else:
            new = backends.resolve("cpu")
        if new == self.backend:
            return
        self.backend = new
        self._update_backend_ui()
        self.show_status(f"Switched to {'the GPU' if new.is_gpu else 'the CPU'}", 3000)
        # the one path: each view updates its controls now and renders when it is on screen
        for v in self.views.values():
            v.set_backend(new)

    # ---- slots ---------------------------------------------------------------------------------------
    def current_view(self) -> BaseView:
        return self.view_tabs.view_at(self.tabs.currentIndex())

    def _on_tab_changed(self, idx: int):
        view = self.view_tabs.view_at(idx)      # built now if it was not
        if view is not None:
            self.settings.setValue("view", view.view_id)

    def _on_timings(self, t):
        # the panel keeps one history per view
        source = getattr(self.sender(), "view_id", None)
        self.timing.panel.add(t, source)
        self.roofline.panel.add(t, source)

    def _on_busy(self, busy: bool):
        self.busy_bar.setVisible(busy)

    def show_status(self, text: str, ms: int = 0):
        self.statusBar().showMessage(text, ms)

    def show_error(self, text: str):
        log.warning("%s", text)
        self.statusBar().showMessage(f"Error: {text}", 15000)
        self.show_notice(f"Error: {text}")

    def show_notice(self, text: str):
        """A result or error, kept on show over the views until dismissed or replaced."""
        self.notice_bar.show_text(text)
        self.notice_bar.parentWidget().place_notice()

    def _export_picture(self):
        view = self.views["mandelbrot"]
        self.tabs.setCurrentWidget(view)
        view.export_dialog()

    def _export_movie(self):
        from .views.mandelbrot_movie import export_zoom_movie   # loads PyAV's check: on demand
        export_zoom_movie(self)

    def about_text(self) -> str:
        if self.backend.is_gpu:
            where = f"Computing on the GPU: {self.backend.device}"
        elif self.gpu_backend is not None:
            where = f"Computing on the CPU (the GPU, {self.gpu_backend.device}, is there too)"
        else:
            where = f"Computing on the CPU: {self.cuda_status.reason}"
        return (f"GPU Explorer {app_version()}\n\nGPU Explorer makes GPU computing visible: every "
                "view renders on an NVIDIA GPU through numba.cuda or on the CPU, and the timing "
                f"panel shows where each frame's time went.\n\n{where}")

    def _about(self):
        QMessageBox.about(self, "About GPU Explorer", self.about_text())

    def closeEvent(self, ev):
        self.view_tabs.stop()
        view = self.current_view()
        if view is not None:       # the tab as well: a start on the saved view needs it
            self.settings.setValue("view", view.view_id)
        self.settings.setValue("geometry", self.saveGeometry())
        kept_places.save(self.settings, self.views)
        self.settings.setValue("windowState", self.saveState())
        problem = persisted.write_problem(self.settings)
        if problem:
            log.warning("%s", problem)
        for v in self.views.values():
            v.shutdown()
        # returns within ~0.1 s: a compile in flight is abandoned (daemon thread), not waited for
        self.scheduler.shutdown(0.1)
        super().closeEvent(ev)


class _ViewsArea(QWidget):
    """The tabs, and the notice bar floating over the top of the views, under the tab bar. Not
    in the layout: there, showing or closing it resized the picture, which cost a new frame
    (seconds for a deep one)."""

    def __init__(self, tabs: QTabWidget):
        super().__init__()
        self.tabs = tabs
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(tabs)
        self.notice_bar = InfoBar(self)
        self.notice_bar.setAccessibleName("Last result or error")

    def place_notice(self):
        """Across the views, just under the tab bar, as tall as its text wrapped at that width."""
        bar = self.notice_bar
        if bar.isHidden():
            return
        w = self.width()
        h = bar.heightForWidth(w)
        bar.setGeometry(0, self.tabs.tabBar().height(), w,
                        h if h > 0 else bar.minimumSizeHint().height())
        bar.raise_()

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self.place_notice()


def _no_mnemonic(title: str) -> str:
    """A tab or menu title shown as written: Qt reads '&' as a keyboard mnemonic marker."""
    return title.replace("&", "&&")


def run(backend_choice: str = "auto", view: str | None = None, argv=None, *,
        settings: QSettings | None = None, after_show=None, notes=()) -> int:
    """Open the window and run the event loop; `after_show(window)` is a hook for scripts/tests,
    `notes` lines for the status bar (e.g. from checking the environment)."""
    from .errors import format_exception, install_excepthook
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    app = QApplication.instance() or QApplication(list(argv or sys.argv[:1]))
    app.setOrganizationName(ORG)
    app.setApplicationName(APP)
    before = set(QtScheduler.instances)
    try:
        win = MainWindow(backend_choice, view, settings=settings, notes=notes, compile_ahead=True)
    except Exception as exc:  # the window cannot be built: say why, in one line and a dialog
        summary, details = format_exception(type(exc), exc, exc.__traceback__)
        log.error("the window could not be built\n%s", details)
        print(f"GPU Explorer cannot start: {summary}", file=sys.stderr)
        # the half-built window's scheduler only (a test process may hold others)
        ended = all([s.shutdown(0.1) for s in set(QtScheduler.instances) - before])  # noqa: C419
        if QGuiApplication.platformName() != "offscreen":   # nobody would read it offscreen
            QMessageBox.critical(None, "GPU Explorer cannot start", f"The window could not be "
                                 f"opened.\n\n{summary}\n\nThe log has the details.")
        return _exit(1, ended)
    # a quit that skips closeEvent (e.g. the session ending) must still stop the scheduler
    app.aboutToQuit.connect(win.scheduler.shutdown)
    install_excepthook(lambda: win)
    win.show()
    if after_show is not None:
        after_show(win)
    with close_on_sigint(app, win):
        code = app.exec()
    return _exit(code, win.scheduler.core.join(0.05))


def _exit(code: int, thread_ended: bool) -> int:
    if not thread_ended:
        # closed during a first start: the abandoned thread is inside a JIT compile that holds
        # numba's compiler lock, and a normal interpreter exit would wait seconds for it. The
        # settings are written already (closeEvent); nothing else is pending.
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


class close_on_sigint:
    """Ctrl+C in the terminal (or SIGTERM) closes the window as its close button would (settings saved,
    work cancelled), instead of a traceback from whatever Python code happened to run. Python
    runs signal handlers only between its own bytecodes, so a timer gives it a turn every
    SIGINT_TICK_MS while Qt's loop waits; a second Ctrl+C quits the event loop outright."""

    SIGNALS = ("SIGINT", "SIGTERM")     # SIGTERM: kill, systemd, a closing terminal session

    def __init__(self, app: QApplication, win: QMainWindow):
        self.app, self.win = app, win
        self.presses = 0
        self._old = {}
        self._tick = QTimer()
        self._tick.setInterval(SIGINT_TICK_MS)
        self._tick.timeout.connect(lambda: None)

    def _handler(self, signum, frame):
        self.presses += 1
        if self.presses == 1:
            log.info("%s: closing the window", "interrupted (Ctrl+C)" if signum == signal.SIGINT
                     else "terminated (SIGTERM)")
            QTimer.singleShot(0, self.win.close)
        else:
            QTimer.singleShot(0, self.app.quit)

    def __enter__(self):
        for name in self.SIGNALS:
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            try:
                self._old[sig] = signal.signal(sig, self._handler)
            except ValueError:      # not the main thread: leave signals alone
                return self
        self._tick.start()
        return self

    def __exit__(self, *exc):
        self._tick.stop()
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old = {}
        return False
