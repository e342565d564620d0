"""Vector-op throughput: GB/s (or G elements/s) against N for every implementation × mode, with the
machine's copy bandwidths as ceilings and the size from which the GPU, copies included, beats
the CPU.

The sweep (kernels.vector.sweep.sweep) runs on the scheduler as a generator job; each point
arrives through on_progress and is drawn at once, so a long sweep is watchable and cancellable.
The state (settings, results, table rows, exports) is explorer.models.throughput.ThroughputModel;
this widget puts its side panel, chart and table together, submits the model's requests and
writes the model's exports.
"""
from __future__ import annotations

from dataclasses import replace

from PyQt6.QtCore import Qt
from PyQt6.QtGui import QKeySequence, QShortcut
from PyQt6.QtWidgets import QFileDialog, QHBoxLayout, QSplitter

from services.files import check_writable, write_json, write_text

from ..gui_quiet import GuiQuiet
from ..models.throughput import COLUMNS, VIEW_ID, ThroughputModel
from .base import BaseView
from .export_fields import remember_folder, start_path
from .throughput_chart import IMPL_COLOURS, REF_LINES, ThroughputChart
from .throughput_controls import ThroughputControls
from .throughput_table import ThroughputTable

__all__ = ["ThroughputView", "COLUMNS", "IMPL_COLOURS", "REF_LINES"]


class ThroughputView(BaseView):
    view_id = VIEW_ID

    def __init__(self, scheduler, backend, parent=None):
        super().__init__(scheduler, backend, parent)
        self._quiet = GuiQuiet(self)
        self.model = ThroughputModel(backend)
        self.controls = ThroughputControls(self.model)
        self.plot = ThroughputChart(self.model)
        self.table = ThroughputTable(self.model)
        self.model.subscribe(self._on_model)
        # the parts the window, scripts and tests reach through the view
        c = self.controls
        self.op_combo, self.max_combo, self.metric_combo = c.op_combo, c.max_combo, c.metric_combo
        self.impl_list, self.mode_checks, self.legend_check = c.impl_list, c.mode_checks, c.legend_check
        self.run_button, self.cancel_button, self.progress = c.run_button, c.cancel_button, c.progress
        self.csv_button, self.json_button, self.info = c.csv_button, c.json_button, c.info
        self.legend = self.plot.legend

        c.legend_check.toggled.connect(lambda on: self.legend.setVisible(on))
        c.run_button.clicked.connect(self.start_sweep)
        c.cancel_button.clicked.connect(self.cancel_sweep)
        c.csv_button.clicked.connect(self._ask_csv)
        c.json_button.clicked.connect(self._ask_json)

        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.plot)
        split.addWidget(self.table)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setSizes([440, 200])
        outer = QHBoxLayout(self)
        outer.addWidget(c)
        outer.addWidget(split, 1)

        for keys, slot in ((QKeySequence("F5"), self.start_sweep),
                           (QKeySequence("Escape"), self.cancel_sweep),
                           (QKeySequence("Ctrl+E"), self._ask_csv),
                           (QKeySequence("Ctrl+Shift+E"), self._ask_json)):
            sc = QShortcut(keys, self)
            sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            sc.activated.connect(slot)

    def _on_model(self, event: str, *args):
        if event == "status":
            self.status_message.emit(*args)
        elif event == "error":
            self.error_message.emit(args[0])
        elif event == "point" and not args[0].skipped and args[0].timings is not None:
            self.report_timings(args[0].timings)

    # ---- what the user picked -----------------------------------------------------------------
    def checked_impls(self) -> list[str]:
        return self.model.checked_impls()

    def checked_modes(self) -> list[str]:
        return self.model.checked_modes()

    def set_max_exponent(self, k: int):
        self.model.set_max_exp(k)

    def set_checked(self, impls=None, modes=None):
        """Check exactly these implementations / modes (tests and scripted use)."""
        self.model.set_checked(impls, modes)

    # ---- running a sweep ----------------------------------------------------------------------
    def backend_changed(self):
        """Offer what the new backend can run; sweeps start only on request (F5)."""
        if self.in_flight:
            self.cancel_sweep()
        self.model.set_backend(self.backend)

    def start_sweep(self):
        request = self.model.start()
        if request is not None:
            # this thread steps aside while a short CPU point runs (explorer/gui_quiet.py)
            self.submit(replace(request, settle=self._quiet))

    def cancel_sweep(self):
        if not self.in_flight:
            return
        self.cancel()
        self.model.cancelled()

    def on_progress(self, item):
        self.model.add(item)

    def on_result(self, summary):
        self.model.finish(summary)

    def on_failed(self, message, tb):
        self.model.fail(message)

    def on_cancelled(self):
        self.model.cancelled()

    # ---- the table and its exports ------------------------------------------------------------
    def table_rows(self) -> list[list[str]]:
        """What the table shows, cell by cell."""
        return self.table.texts()

    def export_csv(self, path: str):
        write_text(path, self.model.csv_text(), newline="")    # atomic: a failure keeps the old file
        self.status_message.emit(f"Saved {len(self.model.points)} row(s) to {path}{self._partial()}", 5000)

    def export_json(self, path: str):
        write_json(path, self.model.json_document(), indent=1)  # atomic: a failure keeps the old file
        self.status_message.emit(f"Saved {len(self.model.points)} point(s) to {path}{self._partial()}", 5000)

    def _partial(self) -> str:
        return f" — {self.model.completeness()}" if self.model.partial else ""

    def save_csv(self, path: str):
        """Export CSV as the dialog does: a path that cannot be written, or a failed write, is
        reported on error_message."""
        self._save(self.export_csv, path)

    def save_json(self, path: str):
        self._save(self.export_json, path)

    def _ask_csv(self):
        self._ask("Export the sweep as CSV", "throughput.csv", "CSV files (*.csv)", self.save_csv)

    def _ask_json(self):
        self._ask("Export the sweep as JSON", "throughput.json", "JSON files (*.json)",
                  self.save_json)

    def _ask(self, title: str, name: str, kinds: str, save):
        # in the folder last used (else Pictures or home), as every export dialog: never the
        # folder the app was started from
        path, _ = QFileDialog.getSaveFileName(self, title, start_path(name), kinds)
        if path:
            remember_folder(path)
            save(path)

    def _save(self, fn, path):
        try:
            check_writable(path)
            fn(path)
        except ValueError as exc:
            self.error_message.emit(str(exc))
        except OSError as exc:
            self.error_message.emit(f"Could not save {path}: {exc.strerror or exc}")
