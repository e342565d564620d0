"""`~` in an output name (issue 24): a quoted name or `--out=~/pic.png` reaches the app with the
tilde; check_export_path expands it, as the window's dialogs do, and `--render` writes there."""
import os

import pytest

import main
from services.files import check_export_path


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_check_export_path_expands_the_home_folder(home):
    assert check_export_path("~/pic.png") == str(home / "pic.png")
    assert check_export_path(str(home / "v.npy")) == str(home / "v.npy")
    with pytest.raises(ValueError, match=f"the folder {home / 'nowhere'} does not exist"):
        check_export_path("~/nowhere/pic.png")
    with pytest.raises(ValueError, match="must end in .png"):
        check_export_path("~/pic.jpg")


def test_render_writes_to_the_home_folder(home, capsys):
    code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "16x12",
                      "--iters", "20", "--out", "~/pic.png"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert (home / "pic.png").stat().st_size > 0 and not os.path.exists("~")
    assert out.out.startswith(f"wrote {home / 'pic.png'} ")
