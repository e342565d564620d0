"""services/parts.py: one parts folder for posters and movies. A run resumes only from a folder
whose plan is its own; another output's folder is refused."""
from __future__ import annotations

import os

from services.parts import PartsFolder


def test_a_folder_resumes_only_with_its_own_plan(tmp_path):
    one = PartsFolder(tmp_path / "out.parts", {"version": 1, "size": [8, 6]})
    assert not one.holds_other() and not one.resumable()       # nothing there yet
    one.make()
    one.write_plan()
    assert one.resumable() and not one.holds_other()
    other = PartsFolder(tmp_path / "out.parts", {"version": 1, "size": [9, 6]})
    assert other.holds_other() and not other.resumable()
    one.remove()
    assert not os.path.exists(one.folder)


def test_an_unreadable_plan_belongs_to_another_output_unless_a_fresh_start_rewrites_all(tmp_path):
    folder = tmp_path / "out.parts"
    folder.mkdir()
    (folder / "plan.json").write_text("{not json")
    assert PartsFolder(folder, {"version": 1}).holds_other()

    class Rewritten(PartsFolder):
        unreadable_is_other = False
    again = Rewritten(folder, {"version": 1})
    assert not again.holds_other() and not again.resumable()
