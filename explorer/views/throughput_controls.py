"""The throughput view's side panel: op, largest size, y axis, the implementations and modes to
measure, run/cancel with progress, exports and a line of status. It shows
explorer.models.throughput.ThroughputModel's settings and sends every change back to it; the
buttons are the view's to connect.
"""
from __future__ import annotations

import pyqtgraph as pg
from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QFormLayout, QGroupBox,
                             QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QProgressBar,
                             QPushButton, QVBoxLayout, QWidget)

from kernels import backend as backends
from kernels.vector import sweep as vector_sweep
from kernels.vector.ops import OP_NAMES

from ..models.throughput import METRICS, ThroughputModel, op_tooltip
from .throughput_chart import IMPL_COLOURS

MODE_TIPS = {"kernel": "data already on the device: only the compute is timed",
             "pinned": "end to end: copy in from page-locked host memory, compute, copy back",
             "pageable": "end to end from ordinary (pageable) NumPy arrays, as a plain script "
                         "does"}
LINE_HINTS = {"kernel": "───", "pinned": "– – –", "pageable": "·······"}


def gpu_reason(backend, reason: str) -> str:
    """An implementation's reason in the words used elsewhere: on a machine with no usable GPU
    "the CPU backend is selected" is beside the point; say there is no GPU, and why."""
    if getattr(backend, "is_gpu", False) or not reason.startswith("needs the CUDA backend"):
        return reason
    status = backends.cuda_status()
    if status.usable:
        return "needs the GPU: switch to it with the toolbar's GPU button (Ctrl+Shift+G)"
    return f"there is no usable GPU here: {status.reason}"


class ThroughputControls(QWidget):
    def __init__(self, model: ThroughputModel, parent=None):
        super().__init__(parent)
        self.model = model
        self.setMaximumWidth(300)
        form = QFormLayout()
        self.op_combo = QComboBox()
        for name in OP_NAMES:
            self.op_combo.addItem(name)
            self.op_combo.setItemData(self.op_combo.count() - 1, op_tooltip(name),
                                      Qt.ItemDataRole.ToolTipRole)
        self.op_combo.setCurrentText(model.op)
        self.op_combo.setToolTip("The vector operation to measure (float32)")
        self.op_combo.currentTextChanged.connect(model.set_op)
        form.addRow("Op", self.op_combo)
        self.max_combo = QComboBox()
        self.max_combo.setToolTip("Largest vector length of the sweep; sizes that do not fit in "
                                  "free memory are skipped with the reason")
        self.max_combo.currentIndexChanged.connect(self._on_max_picked)
        form.addRow("Max N", self.max_combo)
        self.metric_combo = QComboBox()
        self.metric_combo.addItems(list(METRICS.values()))
        self.metric_combo.setToolTip("Y axis: bytes moved per second, or elements per second")
        self.metric_combo.currentIndexChanged.connect(lambda i: model.set_metric(list(METRICS)[i]))
        form.addRow("Y axis", self.metric_combo)

        impl_box = QGroupBox("Implementations")
        self.impl_list = QListWidget()
        self.impl_list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.impl_list.itemChanged.connect(self._on_impl_ticked)
        lay = QVBoxLayout(impl_box)
        lay.addWidget(self.impl_list)

        mode_box = QGroupBox("Modes")
        mlay = QVBoxLayout(mode_box)
        self.mode_checks = {}
        for mode in vector_sweep.MODES:
            # the line style names the mode on the chart (the key under it repeats it)
            cb = QCheckBox(f"{mode}   {LINE_HINTS.get(mode, '')}")
            cb.setToolTip(MODE_TIPS[mode])
            cb.setChecked(True)
            cb.toggled.connect(lambda on, m=mode: model.set_mode_checked(m, on))
            self.mode_checks[mode] = cb
            mlay.addWidget(cb)

        self.run_button = QPushButton("Run sweep")
        self.run_button.setToolTip("Measure every checked implementation × mode over the sizes (F5)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the sweep after the current point (Esc)")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        # a count only once a sweep runs: "0 / 100 points" read as a stalled run
        self.progress.setFormat("No sweep run yet (F5)")
        self.progress.setValue(0)
        self.csv_button = QPushButton("Export CSV…")
        self.csv_button.setToolTip("Save the table of the last sweep (Ctrl+E)")
        self.json_button = QPushButton("Export JSON…")
        self.json_button.setToolTip("Save every point with its phases and the reference "
                                    "bandwidths (Ctrl+Shift+E)")
        self.info = QLabel()
        self.info.setWordWrap(True)
        self.legend_check = QCheckBox("Legend on the chart")
        self.legend_check.setToolTip("Colour = implementation, line style = mode; click an entry "
                                     "to hide or show its curves")
        self.legend_check.setChecked(True)

        slay = QVBoxLayout(self)
        slay.setContentsMargins(0, 0, 0, 0)
        slay.addLayout(form)
        slay.addWidget(impl_box, 1)
        slay.addWidget(mode_box)
        slay.addWidget(self.legend_check)
        row = QHBoxLayout()
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        slay.addLayout(row)
        slay.addWidget(self.progress)
        row = QHBoxLayout()
        row.addWidget(self.csv_button)
        row.addWidget(self.json_button)
        slay.addLayout(row)
        slay.addWidget(self.info)

        model.subscribe(self._on_model)
        self.show_choices()

    # ---- input ----------------------------------------------------------------------------------
    def _on_max_picked(self, index: int):
        k = self.max_combo.itemData(index)
        if k is not None:
            self.model.set_max_exp(k)

    def _on_impl_ticked(self, item: QListWidgetItem):
        self.model.set_impl_checked(item.data(Qt.ItemDataRole.UserRole),
                                    item.checkState() == Qt.CheckState.Checked)

    # ---- following the model --------------------------------------------------------------------
    def _on_model(self, event: str, *args):
        m = self.model
        if event == "choices":
            self.show_choices()
        elif event == "settings":
            self.show_settings()
        elif event == "checked":
            self.show_checked()
        elif event == "unavailable":
            self.mark_unavailable(*args)
        elif event == "point":
            self.progress.setValue(m.progress)
        elif event in ("started", "finished"):
            if event == "started":
                self.progress.setFormat("%v / %m points")
                self.progress.setMaximum(max(m.total, 1))
                self.progress.setValue(0)
            self.run_button.setEnabled(not m.running)
            self.cancel_button.setEnabled(m.running)
            self.info.setText(m.info)

    def show_choices(self):
        """Implementations, modes and sizes that make sense for the model's backend."""
        m = self.model
        self.impl_list.blockSignals(True)
        self.impl_list.clear()
        ticked = set(m.checked_impls())
        for impl in m.impls:
            item = QListWidgetItem(impl.name)
            item.setData(Qt.ItemDataRole.UserRole, impl.name)
            if impl.reason:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled & ~Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Unchecked)
                item.setToolTip(f"{impl.description}\nunavailable: {gpu_reason(m.backend, impl.reason)}")
            else:
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if impl.name in ticked
                                   else Qt.CheckState.Unchecked)
                item.setToolTip(impl.description)
                item.setForeground(pg.mkColor(IMPL_COLOURS.get(impl.name, "#444")))
            self.impl_list.addItem(item)
        self.impl_list.blockSignals(False)
        modes = set(m.checked_modes())
        for mode, cb in self.mode_checks.items():
            usable = m.mode_usable(mode)
            cb.blockSignals(True)
            cb.setEnabled(usable)
            cb.setChecked(mode in modes)
            cb.blockSignals(False)
            cb.setToolTip(MODE_TIPS[mode] if usable else f"{MODE_TIPS[mode]} (needs the CUDA backend)")
        self.max_combo.blockSignals(True)
        self.max_combo.clear()
        for k, label in m.size_choices():
            self.max_combo.addItem(label, k)
        self.max_combo.blockSignals(False)
        self.show_settings()
        self.info.setText(m.info)

    def show_settings(self):
        m = self.model
        for combo, index in ((self.op_combo, self.op_combo.findText(m.op)),
                             (self.max_combo, self.max_combo.findData(m.max_exp)),
                             (self.metric_combo, list(METRICS).index(m.metric))):
            combo.blockSignals(True)
            combo.setCurrentIndex(index)
            combo.blockSignals(False)

    def show_checked(self):
        ticked, modes = set(self.model.checked_impls()), set(self.model.checked_modes())
        self.impl_list.blockSignals(True)
        for i in range(self.impl_list.count()):
            item = self.impl_list.item(i)
            if item.flags() & Qt.ItemFlag.ItemIsEnabled:
                on = item.data(Qt.ItemDataRole.UserRole) in ticked
                item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
        self.impl_list.blockSignals(False)
        for mode, cb in self.mode_checks.items():
            if cb.isEnabled():
                cb.blockSignals(True)
                cb.setChecked(mode in modes)
                cb.blockSignals(False)

    def mark_unavailable(self, name: str, reason: str):
        """An implementation failed to run mid-sweep: greyed out, the reason in its tooltip."""
        for i in range(self.impl_list.count()):
            item = self.impl_list.item(i)
            if item.data(Qt.ItemDataRole.UserRole) == name:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled & ~Qt.ItemFlag.ItemIsUserCheckable)
                item.setToolTip(f"unavailable: {reason}")
                item.setForeground(pg.mkColor("#999"))
