"""Resume state is checked, not trusted: a movie's parts without a plan or with a plan whose cut does
not fit the movie are set aside (said in a note) and made afresh; two runs on one output -> the
second refuses; a poster's done.json that is not a list of its bands is set aside; and a movie
whose encoder fails ends its process with the failure's status."""
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from faultkit import run_python

import main
from services import movie_parts, movie_writer, poster

av = pytest.importorskip("av", reason="the movie extra (PyAV) is not installed")

PLACE = ["--center", "-0.7436438870,0.1318259043", "--width", "1e-3", "--iters", "200"]
FPS, SECONDS = 4, 2          # 8 frames


def movie(out, *extra):
    return main.main(["--movie", str(out), "--backend", "cpu", "--size", "32x18", "--fps",
                      str(FPS), "--seconds", str(SECONDS), *PLACE, *extra])


@pytest.fixture
def short_segments(monkeypatch):
    """Segments of two frames: an 8-frame movie has four."""
    monkeypatch.setattr(movie_parts, "SEGMENT_SECONDS", 0.5)
    monkeypatch.setattr(movie_writer, "default_lanes", lambda kind, size: 1)


def frames_of(path):
    from services import video
    return video.probe_frames(str(path))


def test_parts_without_a_plan_are_set_aside_not_resumed(tmp_path, capsys, short_segments):
    out = tmp_path / "m.mp4"
    other = tmp_path / "other.mp4"
    assert movie(other, "--zoom", "out") == 0
    parts = movie_parts.parts_dir(str(out))
    os.makedirs(parts)
    # a segment of another movie, as two runs at once left it: no plan beside it
    with open(os.path.join(parts, "segment-00000.mp4"), "wb") as fh:
        fh.write(other.read_bytes())
    capsys.readouterr()
    assert movie(out) == 0
    err = capsys.readouterr().err
    assert "resuming" not in err and "set aside" in err and "no plan" in err
    assert frames_of(out) == (8, FPS)
    assert os.path.isdir(parts + ".set-aside") and not os.path.exists(parts)


@pytest.mark.parametrize("segments", [[[0, 1000000]], [[0, 2], [2, -1]], [[0, 2], [2, 2]],
                                      {"0": [0, 8]}, "all", None, [[0, 2], [2, 2], [4, 2], [6, 5]]])
def test_a_plan_whose_cut_does_not_fit_is_set_aside(tmp_path, capsys, monkeypatch, short_segments,
                                                    segments):
    out = tmp_path / "m.mp4"
    real_done = movie_writer.MovieWriter.segment_done

    def stop_after_first(self, i):
        real_done(self, i)
        raise KeyboardInterrupt
    monkeypatch.setattr(movie_writer.MovieWriter, "segment_done", stop_after_first)
    assert movie(out) == 130
    monkeypatch.setattr(movie_writer.MovieWriter, "segment_done", real_done)
    plan_file = movie_parts.plan_path(str(out))
    plan = json.load(open(plan_file))
    plan["segments"] = segments
    with open(plan_file, "w") as fh:
        json.dump(plan, fh)
    capsys.readouterr()
    assert movie(out) == 0
    err = capsys.readouterr().err
    assert "resuming" not in err and "does not fit this movie" in err, err
    assert frames_of(out) == (8, FPS)


def test_a_second_run_on_one_output_refuses(tmp_path, capsys):
    out = tmp_path / "m.mp4"
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / ".m.mp4.lock").write_text(f"{holder.pid}\n")
        assert movie(out) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert f"another run (process {holder.pid}) is making {out}" in err
        assert not os.path.exists(movie_parts.parts_dir(str(out)))
    finally:
        holder.kill()
        holder.wait()
    # its process gone, the lock is stale: the next run takes it over and removes it at the end
    assert movie(out) == 0
    assert not (tmp_path / ".m.mp4.lock").exists() and frames_of(out)[0] == 8


@pytest.mark.parametrize("what", ["folder", "pipe"])
def test_something_else_where_the_lock_file_goes_is_named_before_any_work(tmp_path, capsys, what):
    """A folder (or a named pipe, which would wait for a writer) at `.NAME.lock`: the message
    names that path and what is there, not the parts folder, and nothing is made."""
    out = tmp_path / "m.mp4"
    lock = tmp_path / ".m.mp4.lock"
    lock.mkdir() if what == "folder" else os.mkfifo(lock)
    assert movie(out) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(lock) in err and what in err, err
    assert ".parts" not in err and not os.path.exists(movie_parts.parts_dir(str(out)))
    assert sorted(os.listdir(tmp_path)) == [".m.mp4.lock"]


def test_a_movie_name_near_the_limit_is_written_and_one_past_it_refused_first(tmp_path, capsys):
    """The parts folder (NAME.parts) and the lock (.NAME.lock) must fit the file system's 255
    bytes too: a name that leaves them room is made whole; one that does not is refused before
    any work, exit status 2, with the longest name that fits."""
    ok = tmp_path / ("m" * 245 + ".mp4")                  # 249 bytes: NAME.parts is 255
    assert movie(ok) == 0, capsys.readouterr().err
    assert frames_of(ok)[0] == 8 and sorted(os.listdir(tmp_path)) == [ok.name]
    capsys.readouterr()
    long = tmp_path / ("n" * 246 + ".mp4")
    assert movie(long) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "too long" in err and "at most 249 bytes" in err, err
    assert sorted(os.listdir(tmp_path)) == [ok.name]


def test_the_writer_holds_the_lock_while_it_works(tmp_path):
    from services.movie import MovieSpec, prepare
    spec = MovieSpec(out=str(tmp_path / "m.mp4"), size=(32, 18), fps=4, seconds=2.0)
    writer = movie_writer.MovieWriter(prepare(spec, open_encoder=False))
    lock = tmp_path / ".m.mp4.lock"
    assert lock.read_text().split()[0] == str(os.getpid())
    r = run_python(f"""
from services.movie import MovieSpec, prepare
from services.movie_writer import MovieWriter
from services.movie_parts import MovieBusy
try:
    MovieWriter(prepare(MovieSpec(out={spec.out!r}, size=(32, 18), fps=4, seconds=2.0),
                        open_encoder=False))
except MovieBusy as exc:
    print("refused:", exc)
""")
    assert f"refused: another run (process {os.getpid()})" in r.stdout, r.stderr
    writer.abort()
    assert not lock.exists()


# ---- a poster's done.json ----------------------------------------------------------------------
SIZE = "96x70"


def poster_render(out):
    return main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", SIZE, *PLACE,
                      "--out", str(out)])


@pytest.mark.parametrize("done", [[1, 2], {"bands": ["1", "2"]}, {"bands": None}, None,
                                  {"bands": [99999]}, {"bands": [-1]}, {"bands": [True]},
                                  "not json"])
def test_a_poster_done_list_that_does_not_fit_is_set_aside(tmp_path, capsys, monkeypatch, done,
                                                            stop_poster):
    whole = tmp_path / "whole.png"
    assert poster_render(whole) == 0
    monkeypatch.setattr(poster, "POSTER_MIN_PIXELS", 0)
    stop_poster(2)
    out = tmp_path / "p.png"
    assert poster_render(out) == 130
    stop_poster.release()
    done_file = os.path.join(poster.parts_dir(out), "done.json")
    with open(done_file, "w") as fh:
        fh.write(done if isinstance(done, str) else json.dumps(done))
    capsys.readouterr()
    assert poster_render(out) == 0
    err = capsys.readouterr().err
    assert "does not fit this picture" in err and "rendered afresh" in err and "Traceback" not in err
    assert "already rendered" not in err
    from PIL import Image
    assert np.array_equal(np.asarray(Image.open(out)), np.asarray(Image.open(whole)))


# ---- a movie whose encoder fails ends -----------------------------------------------------------
FAILING = """
import errno, sys, threading, time
from services import movie_parts, movie_writer, video
movie_parts.SEGMENT_SECONDS = 0.5
where = sys.argv[1]
if where == "encode":
    real_add = video.SegmentEncoder.add
    count = [0]
    def add(self, rgba):
        count[0] += 1
        if count[0] == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_add(self, rgba)
    video.SegmentEncoder.add = add
else:       # the output, joined while the segments encode
    def append(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")
    video.JoinedVideo.append = append
import main
code = main.main(sys.argv[2:])
t0 = time.perf_counter()
left = [t.name for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive()
        and (t.name.startswith(("movie-lane", "movie-join", "render", "pool")) or not t.daemon)]
print("left:", left, flush=True)
sys.exit(code)
"""


@pytest.mark.parametrize("where", ["encode", "join"])
def test_a_movie_whose_disk_fills_exits_with_its_status(tmp_path, where):
    out = tmp_path / "m.mp4"
    t0 = time.perf_counter()
    r = run_python(FAILING, args=[where, "--movie", str(out), "--backend", "cpu", "--size",
                                  "32x18", "--fps", "8", "--seconds", "2", *PLACE], timeout=300)
    assert r.returncode == 1, r.stderr[-3000:]
    assert "the disk is full" in r.stderr and "Traceback" not in r.stderr
    assert "left: []" in r.stdout, r.stdout
    assert time.perf_counter() - t0 < 120
    assert not (tmp_path / ".m.mp4.lock").exists()
    # no partial output, beside it or in the parts folder; the finished segments stay
    assert not out.exists() and not [p for p in tmp_path.rglob("*.tmp")]
    assert (tmp_path / "m.mp4.parts" / "plan.json").exists()
