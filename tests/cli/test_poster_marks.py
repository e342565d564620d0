"""A poster's finished bands listed from a thread of its own (services/poster_marks.py): a band is
never listed before its pixels are synced to disk, a killed poster resumes from what was listed,
every band handed over is listed before the render returns (several in one round when they come
faster than the disk), and a writer that fails is said in one line, not a thread's traceback."""
import errno
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import main
from kernels.mandelbrot import tiles
from services import poster, poster_marks

PLACE = ["--center", "-0.7436438870,0.1318259043", "--width", "0.003", "--iters", "800"]
SIZE = "96x70"
BANDS = len(tiles.bands(70, tiles.band_rows(96, 70)))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def render(out, *extra) -> int:
    return main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", SIZE, *PLACE,
                      "--out", str(out), *extra])


@pytest.fixture
def whole(tmp_path):
    """The picture's values rendered in one piece."""
    out = tmp_path / "whole.npy"
    assert render(out) == 0
    return np.load(out)


def listed(out) -> list:
    with open(os.path.join(poster.parts_dir(out), "done.json")) as fh:
        return json.load(fh)["bands"]


def band_rows(i):
    r0, n = tiles.bands(70, tiles.band_rows(96, 70))[i]
    return slice(r0, r0 + n)


def test_a_band_is_listed_only_after_a_sync_that_began_once_it_was_written(tmp_path, whole,
                                                                           monkeypatch):
    events, lock = [], threading.Lock()

    def log(*what):
        with lock:
            events.append(what)
    real_render = tiles.BandJob.render_into
    real_sync = poster.Parts.sync_pixels
    real_json = poster.write_json

    def render_into(self, worker, out):
        got = real_render(self, worker, out)
        log("written", self.row0)
        return got

    def sync(self):
        log("sync-start")
        real_sync(self)
        log("sync-end")

    def write_json(path, doc, **kw):
        real_json(path, doc, **kw)
        if str(path).endswith("done.json"):
            log("listed", tuple(doc["bands"]))
    monkeypatch.setattr(tiles.BandJob, "render_into", render_into)
    monkeypatch.setattr(poster.Parts, "sync_pixels", sync)
    monkeypatch.setattr(poster, "write_json", write_json)
    monkeypatch.setattr(poster, "POSTER_MIN_PIXELS", 0)
    out = tmp_path / "p.npy"
    assert render(out) == 0
    assert np.array_equal(np.load(out), whole)
    cut = tiles.bands(70, tiles.band_rows(96, 70))
    lists = [k for k, e in enumerate(events) if e[0] == "listed" and e[1]]   # not open()'s []
    assert lists and set(events[lists[-1]][1]) == set(range(BANDS))
    for k in lists:
        began = max(j for j in range(k) if events[j] == ("sync-start",))
        assert ("sync-end",) in events[began:k], "listed before its sync ended"
        for band in events[k][1]:
            wrote = events.index(("written", cut[band][0]))
            assert wrote < began, f"band {band} listed by a sync that began before it was written"


def test_a_failed_sync_lists_nothing_after_it_and_says_so_in_one_line(tmp_path, whole, capsys,
                                                                     monkeypatch):
    """The second round's sync fails as a full disk would: the command ends with one line, the
    first round's bands are listed with their pixels on disk, the rest render again."""
    real_sync = poster.Parts.sync_pixels
    real_render = tiles.BandJob.render_into
    calls = [0]

    def sync(self):
        calls[0] += 1
        if calls[0] == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_sync(self)

    def render_into(self, worker, out):
        time.sleep(0.01)        # the bands come one by one: the first round cannot list them all
        return real_render(self, worker, out)
    monkeypatch.setattr(poster.Parts, "sync_pixels", sync)
    monkeypatch.setattr(tiles.BandJob, "render_into", render_into)
    monkeypatch.setattr(poster, "POSTER_MIN_PIXELS", 0)
    out = tmp_path / "p.npy"
    assert render(out) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "the list of finished bands in" in err and "(No space left on device)" in err
    assert "run the same command again" in err
    kept = listed(out)
    assert kept and len(kept) < BANDS
    assert f"the {len(kept)} finished band" in err
    pixels = np.load(os.path.join(poster.parts_dir(out), "pixels.npy"))
    for i in kept:
        assert np.array_equal(pixels[band_rows(i)], whole[band_rows(i)])
    monkeypatch.setattr(poster.Parts, "sync_pixels", real_sync)
    monkeypatch.setattr(tiles.BandJob, "render_into", real_render)
    assert render(out) == 0
    assert f"{len(kept)} of {BANDS} bands were already rendered" in capsys.readouterr().err
    assert np.array_equal(np.load(out), whole)


KILLABLE = """
import sys, time
from kernels.mandelbrot import tiles
from services import poster
poster.POSTER_MIN_PIXELS = 0
real = tiles.BandJob.render_into
def slow(self, worker, out):
    time.sleep(0.15)            # long enough to be killed in the middle
    return real(self, worker, out)
tiles.BandJob.render_into = slow
import main
sys.exit(main.main(sys.argv[1:]))
"""


def test_a_killed_poster_lists_only_bands_on_disk_and_resumes(tmp_path, whole, capsys,
                                                              monkeypatch):
    out = tmp_path / "p.npy"
    args = ["--render", "mandelbrot", "--backend", "cpu", "--size", SIZE, *PLACE, "--out", str(out)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT,
                                                                   os.environ.get("PYTHONPATH")])))
    child = subprocess.Popen([sys.executable, "-c", KILLABLE, *args], cwd=ROOT, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    done_file = os.path.join(poster.parts_dir(out), "done.json")
    t0 = time.monotonic()
    try:
        while time.monotonic() - t0 < 120:
            try:
                if len(listed(out)) >= 3:
                    break
            except (OSError, ValueError, KeyError):     # not there yet, or being replaced
                pass
            assert child.poll() is None, child.stderr.read()
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait(30)
    kept = listed(out)
    assert 3 <= len(kept) < BANDS and os.path.exists(done_file) and not out.exists()
    pixels = np.load(os.path.join(poster.parts_dir(out), "pixels.npy"))
    for i in kept:
        assert np.array_equal(pixels[band_rows(i)], whole[band_rows(i)])
    monkeypatch.setattr(poster, "POSTER_MIN_PIXELS", 0)
    assert render(out) == 0
    assert f"{len(kept)} of {BANDS} bands were already rendered" in capsys.readouterr().err
    assert np.array_equal(np.load(out), whole)
    assert not os.path.exists(poster.parts_dir(out))


def test_every_band_is_listed_before_render_returns_in_rounds_of_several(tmp_path, whole,
                                                                         monkeypatch, cpu_backend):
    from kernels.spread import LocalPool
    from kernels.mandelbrot.requests.request import MandelbrotRequest
    real_many = poster.Parts.mark_many
    rounds = []

    def slow_many(self, bands):
        time.sleep(0.05)            # a slow disk: bands come in faster than it lists them
        rounds.append([i for i, _ in bands])
        real_many(self, bands)
    monkeypatch.setattr(poster.Parts, "mark_many", slow_many)
    req = MandelbrotRequest(-0.7436438870, 0.1318259043, 0.003, (96, 70), 800)
    p = poster.Poster("mandelbrot", req, str(tmp_path / "p.npy"))
    p.open()
    seen = []
    with LocalPool(cpu_backend) as pool:
        p.render(pool, None, seen.append)
    assert p.done == BANDS and sorted(listed(p.out)) == list(range(BANDS))
    assert sorted(i for r in rounds for i in r) == list(range(BANDS))
    assert len(rounds) < BANDS, "no round listed more than one band"
    assert seen == sorted(seen) and seen[-1] == 1.0, "the progress went back or stopped short"
    p.write()
    assert np.array_equal(np.load(p.out), whole)


class Failing:
    """A parts folder whose listing fails with `exc`."""
    folder = "/somewhere/p.npy.parts"

    def __init__(self, exc):
        self.exc, self.calls = exc, []

    def mark_many(self, bands):
        self.calls.append(bands)
        raise self.exc


@pytest.mark.parametrize("exc, words", [
    (OSError(errno.EIO, "Input/output error"), "(Input/output error)"),
    (ValueError("a bad record\n  and its second line"), "(a bad record)"),
    (RuntimeError(), "(RuntimeError)")])
def test_a_writer_failure_is_raised_on_the_render_thread_in_words(exc, words):
    marks = poster_marks.BandMarks(Failing(exc))
    marks.add(0)
    with pytest.raises(poster_marks.MarksFailed) as got:
        marks.wait()
    msg = str(got.value)
    assert isinstance(got.value, OSError) and "\n" not in msg
    assert msg == f"the list of finished bands in /somewhere/p.npy.parts could not be updated {words}"
    with pytest.raises(poster_marks.MarksFailed):
        marks.add(1)                # the render stops at its next band
    marks.close()                   # said once already: closing does not raise it again
    assert not marks._thread.is_alive()


def test_closing_lists_what_was_handed_over_and_nothing_after():
    class Slow:
        folder = "f"

        def __init__(self):
            self.listed = []

        def mark_many(self, bands):
            time.sleep(0.05)
            self.listed += [i for i, _ in bands]
    parts = Slow()
    marks = poster_marks.BandMarks(parts)
    for i in range(5):
        marks.add(i, {"marked_pixels": i})
    marks.close()
    assert parts.listed == [0, 1, 2, 3, 4] and not marks._thread.is_alive()
    marks.add(5)                    # a render thread that outlived its command's close
    assert parts.listed == [0, 1, 2, 3, 4]
