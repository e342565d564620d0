"""Faults of the file writers (services/files.py): a .npy that does not fit on the disk is a message,
never a SIGBUS; links are written through and devices refused; every writer keeps the earlier
file whole when its write fails (the .kfr save included)."""
import os
import stat
import subprocess

import numpy as np
import pytest
from faultkit import run_python

import services.files as files

EARLIER = b"the earlier file, whole"


def leftovers(folder):
    return sorted(p for p in os.listdir(folder) if p.endswith(".tmp"))


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB file system (tmpfs; needs root), removed afterwards."""
    where = tmp_path / "small"
    where.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)],
                       capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    yield where
    subprocess.run(["umount", str(where)], check=True)


def strips(w, h, rows=100):
    for r0 in range(0, h, rows):
        yield r0, np.full((min(rows, h - r0), w), 1.5)


# ---- a .npy larger than the free space -----------------------------------------------------------
def test_a_npy_that_does_not_fit_is_refused_before_any_byte(small_disk):
    with pytest.raises(OSError) as got:
        files.write_strips(small_disk / "pic.npy", 1000, 1000, strips(1000, 1000))
    assert got.value.errno == 28 and "needs 7.6 MiB" in str(got.value)
    assert os.listdir(small_disk) == []


def test_a_disk_that_fills_between_strips_is_an_error_not_a_sigbus(small_disk, monkeypatch):
    monkeypatch.setattr(files, "free_bytes", lambda folder: 1 << 40)   # the probe was wrong
    (small_disk / "pic.npy").write_bytes(EARLIER)
    with pytest.raises(OSError) as got:
        files.write_strips(small_disk / "pic.npy", 1000, 1000, strips(1000, 1000))
    assert got.value.errno == 28
    assert os.listdir(small_disk) == ["pic.npy"]
    assert (small_disk / "pic.npy").read_bytes() == EARLIER


def test_npy_size_is_exact(tmp_path):
    files.write_strips(tmp_path / "a.npy", 30, 7, strips(30, 7, rows=3))
    assert os.path.getsize(tmp_path / "a.npy") == files.npy_bytes((7, 30))
    assert np.array_equal(np.load(tmp_path / "a.npy"), np.full((7, 30), 1.5))


CLI_FILLS = """
import sys, services.files as f, cli.render as r
f.free_bytes = lambda folder: 1 << 40          # both probes miss the disk filling up
r.disk_problem = lambda *a: None
import main
sys.exit(main.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("code", ["import main, sys; sys.exit(main.main(sys.argv[1:]))", CLI_FILLS])
def test_render_npy_to_a_full_disk_says_so_and_exits(small_disk, code):
    out = small_disk / "pic.npy"
    r = run_python(code, args=["--render", "mandelbrot", "--size", "1000x1000", "--iters", "20",
                               "--backend", "cpu", "--out", str(out)], timeout=300)
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
    assert "main.py:" in r.stderr and "Traceback" not in r.stderr
    assert "free" in r.stderr or "No space" in r.stderr
    assert os.listdir(small_disk) == []


@pytest.fixture
def view(small_mandelbrot_view):
    return small_mandelbrot_view(80, 60)


def test_window_npy_export_to_a_full_disk_says_so_and_lives(qtbot, view, small_disk):
    with qtbot.waitSignal(view.export_failed, timeout=60000) as sig:
        assert view.start_export(str(small_disk / "pic.npy"), 1000, 1000, show_progress=False)
    assert "free" in sig.args[0]
    assert os.listdir(small_disk) == [] and not view.exporting


# ---- links and devices ---------------------------------------------------------------------------
def test_a_link_is_written_through_to_its_target(tmp_path):
    target = tmp_path / "real" / "pic.png"
    target.parent.mkdir()
    target.write_bytes(EARLIER)
    link = tmp_path / "pic.png"
    link.symlink_to(target)
    files.write_png(link, np.zeros((2, 3, 4), np.uint8))
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes().startswith(b"\x89PNG")
    assert leftovers(tmp_path) == [] and leftovers(target.parent) == []


def test_a_link_to_a_new_file_makes_the_target(tmp_path):
    link = tmp_path / "t.json"
    link.symlink_to(tmp_path / "made.json")
    files.write_json(link, {"a": 1})
    assert link.is_symlink() and (tmp_path / "made.json").read_text() == '{\n  "a": 1\n}\n'


def devices(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    found = [str(fifo)]
    if os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode):
        found.append("/dev/full")
    return found


def test_a_device_or_pipe_is_refused_and_kept(tmp_path):
    for path in devices(tmp_path):
        mode = os.stat(path).st_mode
        with pytest.raises(ValueError, match="not a regular file"):
            files.check_writable(path)
        for write in (lambda: files.write_json(path, {}), lambda: files.write_text(path, "x"),
                      lambda: files.write_npy(path, np.zeros(3)),
                      lambda: files.write_bytes(path, b"x")):
            with pytest.raises(OSError, match="not a regular file"):
                write()
        assert os.stat(path).st_mode == mode
    assert leftovers(tmp_path) == []


def test_a_link_to_a_device_is_refused(tmp_path):
    (tmp_path / "out.npy").symlink_to(devices(tmp_path)[0])
    with pytest.raises(ValueError, match="not a regular file"):
        files.check_writable(tmp_path / "out.npy")
    with pytest.raises(OSError, match="not a regular file"):
        files.write_strips(tmp_path / "out.npy", 2, 2, strips(2, 2))
    assert stat.S_ISFIFO(os.stat(tmp_path / "pipe").st_mode)


def test_render_out_through_a_link(tmp_path):
    target = tmp_path / "target.png"
    target.write_bytes(EARLIER)
    (tmp_path / "pic.png").symlink_to(target)
    r = run_python("import main, sys; sys.exit(main.main(sys.argv[1:]))",
                   args=["--render", "mandelbrot", "--size", "16x12", "--iters", "20",
                         "--backend", "cpu", "--out", str(tmp_path / "pic.png")])
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "pic.png").is_symlink() and target.read_bytes().startswith(b"\x89PNG")


def test_bench_json_to_a_device_is_refused_before_work(tmp_path):
    fifo = devices(tmp_path)[0]
    r = run_python("import main, sys; sys.exit(main.main(sys.argv[1:]))",
                   args=["--bench", "--json", fifo])
    assert r.returncode == 2 and "not a regular file" in r.stderr, r.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


# ---- a failed write keeps the earlier file --------------------------------------------------------
FSIZE_CHILD = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)      # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
from services import files
try:
    files.write_text(sys.argv[1], "Re: 0\\r\\n" * 500)
except OSError as exc:
    print("failed:", exc.strerror)
"""


def test_a_write_past_the_file_size_limit_keeps_the_earlier_kfr(tmp_path):
    kfr = tmp_path / "place.kfr"
    kfr.write_bytes(b"Re: -0.75\r\nIm: 0\r\nZoom: 1\r\nIterations: 200\r\n")
    before = kfr.read_bytes()
    r = run_python(FSIZE_CHILD, args=[str(kfr)])
    assert "failed: File too large" in r.stdout, r.stderr
    assert kfr.read_bytes() == before and leftovers(tmp_path) == []


def test_the_window_kfr_save_failing_midway_keeps_the_earlier_file(qtbot, view, tmp_path,
                                                                   monkeypatch):
    kfr = tmp_path / "place.kfr"
    kfr.write_bytes(EARLIER)
    real_open = open

    class Breaks:
        def __init__(self, fh):
            self.fh = fh

        def write(self, text):
            self.fh.write(text[:10])
            raise OSError(27, "File too large")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

    monkeypatch.setattr("builtins.open", lambda p, *a, **k: Breaks(real_open(p, *a, **k))
                        if str(p).endswith(".tmp") else real_open(p, *a, **k))
    with qtbot.waitSignal(view.status_message) as sig:
        assert not view.places.save_kfr(str(kfr))
    assert "File too large" in sig.args[0]
    assert kfr.read_bytes() == EARLIER and leftovers(tmp_path) == []


# ---- names near the file system's limit (issue 35) -----------------------------------------------
def render(out):
    import main
    return main.main(["--render", "mandelbrot", "--size", "16x12", "--iters", "20", "--backend",
                      "cpu", "--out", str(out)])


def test_a_name_of_250_characters_is_written(tmp_path, capsys):
    """The temporary name beside it (`.NAME.xxxxxxxx.tmp`) is shortened to fit the file system's
    255 bytes; the file gets its own name."""
    out = tmp_path / ("a" * 246 + ".png")
    assert render(out) == 0, capsys.readouterr().err
    assert out.read_bytes().startswith(b"\x89PNG") and leftovers(tmp_path) == []
    files.write_text(tmp_path / ("é" * 125 + ".kfr"), "Re: 0\n")      # 254 bytes in UTF-8
    assert (tmp_path / ("é" * 125 + ".kfr")).read_text() == "Re: 0\n"
    assert leftovers(tmp_path) == []


def test_a_name_longer_than_the_file_system_takes_is_refused_before_the_render(tmp_path, capsys,
                                                                                monkeypatch):
    import cli.render

    def no_render(*a, **k):
        raise AssertionError("the render started before the name was checked")
    monkeypatch.setattr(cli.render, "view_renderer", no_render)
    out = tmp_path / ("b" * 296 + ".png")
    assert render(out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "too long" in err and "255" in err, err
    assert os.listdir(tmp_path) == []


def test_a_poster_name_without_room_for_its_parts_folder_is_refused_first(tmp_path, capsys,
                                                                          monkeypatch):
    """A poster keeps NAME.parts beside its output: a name of 250 bytes leaves it no room, said
    before the pool opens (it failed afterwards, exit 1)."""
    import kernels.spread

    def no_pool(*a, **k):
        raise AssertionError("the pool opened before the name was checked")
    monkeypatch.setattr(kernels.spread, "open_pool", no_pool)
    import main
    out = tmp_path / ("p" * 246 + ".npy")
    code = main.main(["--render", "mandelbrot", "--size", "16x12", "--iters", "20", "--backend",
                      "cpu", "--scheduler", "local", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "at most 249 bytes" in err, err
    assert os.listdir(tmp_path) == []
