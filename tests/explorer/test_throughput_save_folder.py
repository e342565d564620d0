"""The throughput view's CSV and JSON save dialogs start where the other export dialogs do
(issue 24): the folder last used in this session, else Pictures, else home; never the folder the
app was started from (they opened in the repository)."""
import os

import pytest
from PyQt6.QtWidgets import QFileDialog

from explorer.views import export_fields
from explorer.views.throughput import ThroughputView


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_PICTURES_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))     # no user-dirs.dirs
    monkeypatch.setattr(export_fields, "_last_folder", None)
    return home


@pytest.fixture
def view(qtbot, scheduler, cpu_backend):
    v = ThroughputView(scheduler, cpu_backend)
    qtbot.addWidget(v)
    yield v
    v.shutdown()


@pytest.fixture
def asked(monkeypatch):
    """Every save dialog's starting path; the dialog answers with `answer[0]` (cancelled: "")."""
    calls, answer = [], [""]

    def fake(parent, title, start, kinds):
        calls.append(start)
        return answer[0], kinds
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake))
    return calls, answer


def test_the_dialogs_start_at_home_not_in_the_working_folder(view, home, asked):
    calls, _ = asked
    view._ask_csv()
    view._ask_json()
    assert calls == [str(home / "throughput.csv"), str(home / "throughput.json")]
    assert not any(os.path.dirname(c) == os.getcwd() for c in calls)


def test_the_dialogs_start_in_pictures_when_there_is_one(view, home, asked):
    (home / "Pictures").mkdir()
    calls, _ = asked
    view._ask_json()
    assert calls == [str(home / "Pictures" / "throughput.json")]


def test_a_saved_sweep_is_remembered_for_the_next_dialog(view, home, tmp_path, asked):
    calls, answer = asked
    folder = tmp_path / "results"
    folder.mkdir()
    answer[0] = str(folder / "sweep.csv")
    view._ask_csv()
    assert (folder / "sweep.csv").exists()
    answer[0] = ""
    view._ask_json()
    assert calls[-1] == str(folder / "throughput.json")
    assert export_fields.start_folder() == str(folder)          # the other dialogs follow too
