"""A deep picture on the command line says what its reference orbit is (bits, points, period,
engine) and whence (computed, or served by the disk cache); a sound cache file under another
centre's name is set aside with a note, as docs/USAGE.md's "Caches" promises."""
import logging
import os
import shutil

import pytest

import main
from kernels.mandelbrot.benches import locations as loc
from kernels.mandelbrot.reference import reference_store

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

CENTRE = (loc.KORMANYOS_VERY_DEEP.center_re[:62], loc.KORMANYOS_VERY_DEEP.center_im[:62])
OTHER = (CENTRE[0][:-1] + "7", CENTRE[1])


def render(tmp_path, centre, capsys):
    code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "24x16",
                      "--center", ",".join(centre), "--width", "1e-50", "--iters", "2000",
                      "--out", str(tmp_path / "x.png")])
    err = capsys.readouterr().err
    assert code == 0, err
    return [ln for ln in err.splitlines() if "reference orbit:" in ln]


@pytest.fixture
def disk_cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("GPU_EXPLORER_CACHE_DIR", str(folder))
    monkeypatch.setattr(reference_store, "_shared", None)     # a store on this folder
    monkeypatch.setattr(reference_store, "SAVE_MS", 0.0)      # every orbit is kept
    yield folder / "references"
    reference_store._shared = None


def test_a_deep_render_says_what_its_reference_orbit_is(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(reference_store, "_shared", None)
    (line,) = render(tmp_path, CENTRE, capsys)
    assert " bits, " in line and " points, " in line and "engine " in line
    assert "computed" in line


def test_the_disk_cache_serves_a_second_run_and_sets_a_foreign_file_aside(
        tmp_path, capsys, disk_cache, caplog):
    (first,) = render(tmp_path, CENTRE, capsys)
    assert "computed" in first
    reference_store._shared = None                  # a second process, as it were
    (second,) = render(tmp_path, CENTRE, capsys)
    assert "from the disk cache" in second
    # another centre's file replaced by this one's: sound, but not that centre's orbit
    (mine,) = os.listdir(disk_cache)
    render(tmp_path, OTHER, capsys)
    (theirs,) = set(os.listdir(disk_cache)) - {mine}
    shutil.copyfile(disk_cache / mine, disk_cache / theirs)
    reference_store._shared = None
    with caplog.at_level(logging.WARNING):
        (third,) = render(tmp_path, OTHER, capsys)
    assert "computed" in third
    assert any("holds the orbit of another centre" in r.getMessage() for r in caplog.records)


def test_a_deep_movie_notes_its_one_reference_orbit(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(reference_store, "_shared", None)
    code = main.main(["--movie", str(tmp_path / "f%05d.png"), "--backend", "cpu", "--size",
                      "16x12", "--seconds", "0.5", "--fps", "4", "--center", ",".join(CENTRE),
                      "--width", "1e-40", "--iters", "1000"])
    err = capsys.readouterr().err
    assert code == 0, err
    (line,) = [ln for ln in err.splitlines() if "reference orbit:" in ln]
    assert " bits, " in line and "engine " in line and "computed" in line
