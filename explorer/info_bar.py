"""A dismissable bar of text under the toolbar, for a fact the user should keep seeing until they
have read it (why the app runs on the CPU): the status bar's message line is overwritten by the
next message within a second, and a tooltip is found only by those who already know it is there."""
from __future__ import annotations

from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QToolButton


class InfoBar(QFrame):
    """One line (wrapped when long) with a close button ×; hidden until `show_text`."""

    dismissed = pyqtSignal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("InfoBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        # a pale yellow note, readable on light and dark themes (the text colour is set too)
        self.setStyleSheet("#InfoBar { background: #fff4ce; border: 1px solid #e0c97f; }"
                           "#InfoBar QLabel { color: #3a2f00; }")
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.close_button = QToolButton()
        self.close_button.setText("×")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Dismiss")
        self.close_button.setAccessibleName("Dismiss")
        self.close_button.clicked.connect(self.dismiss)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 3, 3, 3)
        lay.addWidget(self.label, 1)
        lay.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    def show_text(self, text: str):
        self.label.setText(text)
        self.show()

    def text(self) -> str:
        return self.label.text()

    def dismiss(self):
        self.hide()
        self.dismissed.emit()
