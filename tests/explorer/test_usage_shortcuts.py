"""Every keyboard shortcut the window registers is in docs/USAGE.md's table, so the list cannot fall
behind a new view or key."""
import pathlib

from PyQt6.QtCore import QSettings
from PyQt6.QtGui import QAction, QKeySequence, QShortcut

from explorer.app import MainWindow

USAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "USAGE.md"


def test_usage_lists_every_shortcut(qtbot, tmp_path):
    w = MainWindow("cpu", settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                   synchronous=True)
    qtbot.addWidget(w)
    from explorer.views import VIEW_IDS
    for view_id in VIEW_IDS:            # every view's keys: each is built as it is first needed
        w.views[view_id]
    keys = set()
    for sc in w.findChildren(QShortcut):
        keys.add(sc.key().toString(QKeySequence.SequenceFormat.PortableText))
    for act in w.findChildren(QAction):
        keys.update(k.toString(QKeySequence.SequenceFormat.PortableText) for k in act.shortcuts())
    keys.discard("")
    assert {"F5", "Esc", "F9", "Ctrl+1", "Alt+1"} <= keys      # the search found the views' keys
    section = USAGE.read_text(encoding="utf-8").split("## In the window", 1)[1].split("\n## ", 1)[0]
    missing = sorted(k for k in keys if k not in section)
    assert missing == [], f"shortcuts missing from docs/USAGE.md's 'In the window': {missing}"
    w.close()
