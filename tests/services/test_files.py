"""services/files.py: PNG/NPY/JSON writers, pictures from a renderer's strips, atomic replacement (a
failure or cancel leaves the earlier file whole and no temporary file), and check_writable."""
import json
import os
from dataclasses import replace

import numpy as np
import pytest
from PIL import Image

from services import files
from kernels import buffers
from kernels.mandelbrot import renderer as m

SEAHORSE = (-0.743643887037151, 0.131825904205330)


def request(cx=-0.5, cy=0.0, width=3.0, size=(16, 12), iters=50, **kw):
    return m.MandelbrotRequest(cx, cy, width, size, iters, **kw)


class _CancelAfter:
    def __init__(self, n):
        self.n = n

    def check(self):
        self.n -= 1
        if self.n < 0:
            raise RuntimeError("cancelled")


class _Strips:
    """Strips of a constant picture that fail after `fail_after` strips; records close()."""

    def __init__(self, w, h, rows, values, fail_after=None):
        self.w, self.h, self.rows, self.values, self.fail_after = w, h, rows, values, fail_after
        self.started = self.closed = False

    def __iter__(self):
        self.started = True
        for k, r0 in enumerate(range(0, self.h, self.rows)):
            if self.fail_after is not None and k >= self.fail_after:
                raise OSError("the disk went away half-way")
            n = min(self.rows, self.h - r0)
            yield r0, (np.full((n, self.w), 3.5) if self.values
                       else np.full((n, self.w, 4), 200, dtype=np.uint8))

    def close(self):
        self.closed = True


def only_file(folder):
    return sorted(os.listdir(folder))


@pytest.fixture
def renderer(cpu_backend):
    return m.Renderer(cpu_backend)


# ---------------------------------------------------------------- pictures from strips

def test_strips_to_png_and_npy_match_one_whole_render(renderer, cpu_backend, tmp_path):
    req = request(*SEAHORSE, 0.01, (37, 23), 150)
    shown = m.Renderer(cpu_backend).render(replace(req, want_values=True))
    seen = []
    files.write_strips(tmp_path / "m.png", 37, 23, renderer.strips(req, values=False, rows=5),
                       progress=seen.append)
    assert seen == sorted(seen) and len(seen) == 5 and seen[-1] == 1.0
    np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / "m.png")), shown.rgba)
    files.write_strips(tmp_path / "m.npy", 37, 23, renderer.strips(req, values=True, rows=7))
    vals = np.load(tmp_path / "m.npy")
    assert vals.shape == (23, 37) and vals.dtype == np.float64
    np.testing.assert_array_equal(vals, shown.values)
    assert only_file(tmp_path) == ["m.npy", "m.png"]


@pytest.mark.parametrize("name", ["m.png", "m.npy"])
def test_a_failure_half_way_leaves_the_earlier_file_whole(tmp_path, name):
    target = tmp_path / name
    target.write_bytes(b"the earlier picture")
    strips = _Strips(8, 10, 3, values=name.endswith(".npy"), fail_after=2)
    with pytest.raises(OSError, match="half-way"):
        files.write_strips(target, 8, 10, strips)
    assert target.read_bytes() == b"the earlier picture"
    assert only_file(tmp_path) == [name] and strips.closed


def test_cancel_leaves_no_file_and_frees_the_strips(renderer, tmp_path):
    target = tmp_path / "m.npy"
    with pytest.raises(RuntimeError, match="cancelled"):
        files.write_strips(target, 16, 40, renderer.strips(request(size=(16, 40)), values=True,
                                                             rows=4, cancel=_CancelAfter(3)))
    assert only_file(tmp_path) == []


def test_wrong_format_or_strips_are_refused(tmp_path):
    strips = _Strips(8, 10, 3, values=False)
    with pytest.raises(ValueError, match=r"\.png .* or \.npy"):
        files.write_strips(tmp_path / "m.jpg", 8, 10, strips)
    assert strips.closed and not strips.started
    with pytest.raises(ValueError, match="float64 strip"):          # RGBA strips into a .npy
        files.write_strips(tmp_path / "m.npy", 8, 10, _Strips(8, 10, 3, values=False))
    with pytest.raises(ValueError, match="covered 9 of 10 rows"):
        files.write_strips(tmp_path / "m.npy", 8, 10, iter([(0, np.zeros((9, 8)))]))
    assert only_file(tmp_path) == []


def test_a_png_larger_than_memory_is_refused_before_rendering(tmp_path, monkeypatch):
    monkeypatch.setattr(buffers, "host_available_bytes", lambda: 1000)
    strips = _Strips(40, 30, 10, values=False)
    with pytest.raises(ValueError, match=r"needs .* GiB of memory .* export \.npy"):
        files.write_strips(tmp_path / "big.png", 40, 30, strips)
    assert not strips.started and strips.closed and only_file(tmp_path) == []
    files.write_strips(tmp_path / "big.npy", 40, 30, _Strips(40, 30, 10, values=True))  # any size


# ---------------------------------------------------------------- whole arrays and JSON

def test_png_npy_json_round_trip_and_overwrite(tmp_path):
    rgba = np.random.default_rng(1).integers(0, 256, (5, 7, 4), dtype=np.uint8)
    files.write_png(tmp_path / "a.png", rgba)
    np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / "a.png")), rgba)
    files.write_npy(tmp_path / "a.npy", np.arange(6, dtype=np.int32).reshape(2, 3))
    v = np.load(tmp_path / "a.npy")
    assert v.dtype == np.float64 and v.tolist() == [[0, 1, 2], [3, 4, 5]]
    files.write_json(tmp_path / "a.json", {"x": 1})
    files.write_json(tmp_path / "a.json", {"x": 2})
    assert json.loads((tmp_path / "a.json").read_text()) == {"x": 2}
    assert only_file(tmp_path) == ["a.json", "a.npy", "a.png"]


def test_a_json_that_cannot_be_written_leaves_the_earlier_one(tmp_path):
    target = tmp_path / "r.json"
    files.write_json(target, {"ok": True})
    with pytest.raises(TypeError):
        files.write_json(target, {"bad": object()})   # fails part-way through json.dump
    assert json.loads(target.read_text()) == {"ok": True} and only_file(tmp_path) == ["r.json"]
    with pytest.raises(ValueError, match="uint8"):
        files.write_png(tmp_path / "x.png", np.zeros((2, 2, 4)))


def test_new_files_get_the_usual_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        files.write_json(tmp_path / "r.json", {})
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "r.json").st_mode & 0o777 == 0o644   # not a temp file's 0600
    os.chmod(tmp_path / "r.json", 0o600)
    files.write_json(tmp_path / "r.json", {"again": 1})
    assert os.stat(tmp_path / "r.json").st_mode & 0o777 == 0o600   # an overwrite keeps its mode


# ---------------------------------------------------------------- check_writable

def test_check_writable(tmp_path):
    files.check_writable(tmp_path / "new.png")
    files.check_writable("relative-name.png")       # the current folder
    with pytest.raises(ValueError, match="does not exist"):
        files.check_writable(tmp_path / "no" / "such" / "x.png")
    with pytest.raises(ValueError, match="is a folder"):
        files.check_writable(tmp_path)
    with pytest.raises(ValueError, match="empty"):
        files.check_writable("")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write anywhere")
def test_check_writable_read_only_folder(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(ValueError, match="no permission"):
            files.check_writable(ro / "x.png")
    finally:
        ro.chmod(0o700)
