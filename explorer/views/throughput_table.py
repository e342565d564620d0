"""The throughput view's table: one row per point of the sweep as it arrives, the model's
table_row text (explorer.models.throughput), with numbers right-aligned and the note in a tooltip."""
from __future__ import annotations

from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from ..models.throughput import COLUMNS, ThroughputModel, table_row


class ThroughputTable(QTableWidget):
    def __init__(self, model: ThroughputModel, parent=None):
        super().__init__(0, len(COLUMNS), parent)
        self.setHorizontalHeaderLabels(COLUMNS)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.verticalHeader().setVisible(False)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)
        self.verticalHeader().setDefaultSectionSize(20)
        model.subscribe(self._on_model)

    def _on_model(self, event: str, *args):
        if event == "started":
            self.setRowCount(0)
        elif event == "point":
            self.add_row(table_row(args[0]))

    def add_row(self, texts: list[str]):
        r = self.rowCount()
        self.insertRow(r)
        for c, text in enumerate(texts):
            item = QTableWidgetItem(text)
            if c == len(COLUMNS) - 1 and text:
                item.setToolTip(text)
            if 3 <= c < len(COLUMNS) - 1:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.setItem(r, c, item)
        self.scrollToBottom()

    def texts(self) -> list[list[str]]:
        """What the table shows, cell by cell."""
        return [[self.item(r, c).text() if self.item(r, c) else "" for c in range(self.columnCount())]
                for r in range(self.rowCount())]
