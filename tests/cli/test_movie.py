"""Zoom movies (`main.py --movie`): frame k equals `--render` of its location, a video decodes to
its frames at its rate, an interrupted movie resumes without redoing finished segments, a full
disk keeps what is finished, bad input is refused in one line before any work, and a two-worker
CPU Dask cluster makes the same movie."""
from __future__ import annotations

import errno
import os

import numpy as np
import pytest

import main
from kernels.mandelbrot import tiles
from kernels.mandelbrot.keyframes.zoom_path import zoom_in, zoom_out
from services import movie_parts, movie_writer, video

av = pytest.importorskip("av", reason="the movie extra (PyAV) is not installed")

CENTRE = ("-0.7436438870", "0.1318259043")
PLACE = ["--center", ",".join(CENTRE), "--width", "1e-4"]
SIZE = "64x36"
FPS, SECONDS = 4, 2          # 8 frames


def movie(out, *extra):
    return main.main(["--movie", str(out), "--backend", "cpu", "--size", SIZE, "--fps", str(FPS),
                      "--seconds", str(SECONDS), *PLACE, *extra])


def read_png(path):
    from PIL import Image
    return np.asarray(Image.open(path))


@pytest.fixture
def short_segments(monkeypatch):
    """Segments of two frames: an 8-frame movie has four."""
    monkeypatch.setattr(movie_parts, "SEGMENT_SECONDS", 0.5)
    monkeypatch.setattr(movie_writer, "default_lanes", lambda kind, size: 1)


@pytest.mark.parametrize("zoom", ["in", "out"])
def test_frame_k_of_a_png_movie_is_the_render_of_its_location(tmp_path, capsys, zoom):
    pattern = tmp_path / "frames" / "f%03d.png"
    pattern.parent.mkdir()
    assert movie(pattern, "--zoom", zoom, "--palette", "viridis") == 0
    frames = FPS * SECONDS
    course = (zoom_in if zoom == "in" else zoom_out)(*CENTRE, "1e-4", None, frames)
    for k in (0, 3, frames - 1):
        loc = course.frame(k)
        one = tmp_path / f"render{k}.png"
        assert main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", SIZE,
                          "--center", f"{loc.center_re},{loc.center_im}", "--width", loc.width,
                          "--iters", str(loc.iters), "--palette", "viridis", "--mapping", "sqrt",
                          "--out", str(one)]) == 0
        assert np.array_equal(read_png(str(pattern) % k), read_png(one)), f"frame {k}"
    # the frames really move: the first and the last differ
    assert not np.array_equal(read_png(str(pattern) % 0), read_png(str(pattern) % (frames - 1)))


def test_a_video_decodes_to_all_its_frames_at_its_rate(tmp_path, capsys, short_segments):
    out = tmp_path / "zoom.mp4"
    assert movie(out) == 0
    printed = capsys.readouterr().out
    assert "wrote" in printed and "bound by" in printed
    frames, rate = video.probe_frames(str(out))
    assert (frames, rate) == (FPS * SECONDS, FPS)
    assert not os.path.exists(movie_parts.parts_dir(str(out))), "the parts go once the movie is in"
    with av.open(str(out)) as f:
        pts = [p.pts for p in f.demux(f.streams.video[0]) if p.size]
        tb = f.streams.video[0].time_base
    # one frame every 1/FPS s, from 0, no gap where two segments meet
    assert sorted(float(p * tb) for p in pts) == [k / FPS for k in range(FPS * SECONDS)]


@pytest.mark.parametrize("lanes", [1, 3])
def test_the_frames_of_a_video_follow_the_zoom(tmp_path, monkeypatch, short_segments, lanes):
    """The decoded video is close to the PNG frames (lossy, so not equal), frame by frame: the
    segments, encoded by one lane or by three at once, were put together in the right order."""
    monkeypatch.setattr(movie_writer, "default_lanes", lambda kind, size: lanes)
    pattern = tmp_path / "f%02d.png"
    assert movie(pattern) == 0
    out = tmp_path / "zoom.mkv"
    assert movie(out) == 0
    with av.open(str(out)) as f:
        decoded = [fr.to_ndarray(format="rgb24").astype(float) for fr in f.decode(video=0)]
    pngs = [read_png(str(pattern) % k)[..., :3].astype(float) for k in range(len(decoded))]
    for k, got in enumerate(decoded):
        errs = [np.abs(got - p).mean() for p in pngs]
        assert int(np.argmin(errs)) == k


def test_an_interrupted_movie_resumes_without_redoing_finished_segments(
        tmp_path, capsys, monkeypatch, short_segments):
    out = tmp_path / "zoom.mp4"
    real_done = movie_writer.MovieWriter.segment_done

    def stop_after_first(self, i):
        real_done(self, i)
        raise KeyboardInterrupt           # as Ctrl+C would land once segment 0 is on disk
    monkeypatch.setattr(movie_writer.MovieWriter, "segment_done", stop_after_first)
    assert movie(out) == 130
    err = capsys.readouterr().err
    assert "2 of 8 frames are kept in 1 finished segments" in err
    assert "run the same command again" in err
    parts = movie_parts.parts_dir(str(out))
    first = os.path.join(parts, "segment-00000.mp4")
    assert os.path.exists(first) and not out.exists()
    assert sorted(os.listdir(parts)) == ["plan.json", "segment-00000.mp4"], "no half segment left"
    before = os.stat(first)

    monkeypatch.setattr(movie_writer.MovieWriter, "segment_done", real_done)
    opened, rendered, seen = [], [], {}
    real_init = video.SegmentEncoder.__init__
    monkeypatch.setattr(video.SegmentEncoder, "__init__",
                        lambda self, path, *a, **k: opened.append(os.path.basename(path))
                        or real_init(self, path, *a, **k))
    real_call = tiles.FrameJob.__call__
    monkeypatch.setattr(tiles.FrameJob, "__call__",
                        lambda self, w: rendered.append(self.request) or real_call(self, w))
    real_append = video.JoinedVideo.append       # segments are joined as they finish
    monkeypatch.setattr(video.JoinedVideo, "append",
                        lambda self, path, *a: seen.setdefault("stat", os.stat(first))
                        and real_append(self, path, *a))
    assert movie(out) == 0
    err = capsys.readouterr().err
    assert "resuming" in err and "1 segments (2 of 8 frames) were already finished" in err
    assert opened == ["segment-00001.mp4", "segment-00002.mp4", "segment-00003.mp4"]
    assert len(rendered) == 6
    after = seen["stat"]
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert video.probe_frames(str(out)) == (8, FPS)


def test_a_full_disk_keeps_the_finished_segments_and_says_so(
        tmp_path, capsys, monkeypatch, short_segments):
    out = tmp_path / "zoom.mp4"
    real_add = video.SegmentEncoder.add
    calls = []

    def add_until_full(self, rgba):
        calls.append(1)
        if len(calls) == 5:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_add(self, rgba)
    monkeypatch.setattr(video.SegmentEncoder, "add", add_until_full)
    assert movie(out) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("main.py: error: the disk is full")
    assert "4 of 8 frames are kept in 2 finished segments" in err[0]
    assert "run the same command again" in err[0]
    parts = movie_parts.parts_dir(str(out))
    assert sorted(os.listdir(parts)) == ["plan.json", "segment-00000.mp4", "segment-00001.mp4"]
    monkeypatch.setattr(video.SegmentEncoder, "add", real_add)
    assert movie(out) == 0
    assert video.probe_frames(str(out)) == (8, FPS)


def test_a_png_sequence_resumes_frame_by_frame(tmp_path, capsys, monkeypatch, short_segments):
    pattern = tmp_path / "f%02d.png"
    real_add = movie_writer._PngSink.add
    calls = []

    def add_then_stop(self, rgba):
        real_add(self, rgba)
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
    monkeypatch.setattr(movie_writer._PngSink, "add", add_then_stop)
    assert movie(pattern) == 130
    assert "3 of 8 frames are written" in capsys.readouterr().err
    monkeypatch.setattr(movie_writer._PngSink, "add", real_add)
    rendered = []
    real_call = tiles.FrameJob.__call__
    monkeypatch.setattr(tiles.FrameJob, "__call__",
                        lambda self, w: rendered.append(1) or real_call(self, w))
    assert movie(pattern) == 0
    assert "3 frames (3 of 8 frames) were already finished" in capsys.readouterr().err
    assert len(rendered) == 5
    assert all(os.path.exists(str(pattern) % k) for k in range(8))


def _no_work(monkeypatch):
    def refuse(self, worker):
        raise AssertionError("a frame was rendered")
    monkeypatch.setattr(tiles.FrameJob, "__call__", refuse)


@pytest.mark.parametrize("extra, code, words", [
    (["--codec", "vp9"], 2, "--codec 'vp9' is unknown; choose one of: h264"),
    (["--size", "65x36"], 2, "even width and height"),
    (["--fps", "0"], 2, "--fps must be a whole number from 1 to 240"),
    (["--seconds", "0.1"], 2, "a movie has from 2 to"),
    (["--width", "-1"], 2, "--width must be"),
    (["--out", "x.png"], 2, "--out does not apply with --movie"),
    (["--render", "mandelbrot"], 2, "--movie and --render cannot be combined"),
])
def test_bad_options_are_refused_in_one_line_before_any_work(tmp_path, capsys, monkeypatch,
                                                             extra, code, words):
    _no_work(monkeypatch)
    out = tmp_path / "zoom.mp4"
    try:
        got = movie(out, *extra)
    except SystemExit as exc:      # argparse's own checks (--fps) exit from the parser
        got = exc.code
    err = capsys.readouterr().err.strip().splitlines()
    assert got == code and len(err) == 1 and words in err[0], err
    assert not os.path.exists(movie_parts.parts_dir(str(out)))


def test_an_output_that_cannot_be_written_is_refused_first(tmp_path, capsys, monkeypatch):
    _no_work(monkeypatch)
    assert movie(tmp_path / "no-such-folder" / "zoom.mp4") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not exist" in err[0]
    assert movie(tmp_path / "zoom.avi") == 2
    assert "must end in .mp4, .mkv, .mov" in capsys.readouterr().err
    assert movie(tmp_path / "frame.png") == 2
    assert "needs one number pattern" in capsys.readouterr().err
    # PNG frames: a new folder of them is made, one level only (a typo higher up is named)
    assert movie(tmp_path / "a" / "b" / "f%05d.png") == 2
    assert "does not exist" in capsys.readouterr().err and not (tmp_path / "a").exists()
    from services.movie import check_output
    assert check_output(str(tmp_path / "frames" / "f%05d.png")) == "png"
    assert (tmp_path / "frames").is_dir()


def test_nvenc_without_an_encoder_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    _no_work(monkeypatch)
    try:
        video.check_codec("h264_nvenc", 64, 36, FPS)
    except video.CodecUnavailable:
        pass
    else:
        pytest.skip("this machine's GPU has NVENC: nothing to refuse")
    assert movie(tmp_path / "zoom.mp4", "--codec", "h264_nvenc") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("main.py: error: --codec h264_nvenc (h264_nvenc) "
                                               "cannot encode here")


def test_another_movies_parts_are_refused_unless_restarted(tmp_path, capsys, monkeypatch,
                                                           short_segments):
    out = tmp_path / "zoom.mp4"
    parts = movie_parts.parts_dir(str(out))
    os.makedirs(parts)
    with open(os.path.join(parts, "plan.json"), "w") as fh:
        fh.write('{"version": 1, "movie": {"fps": 25}}')
    assert movie(out) == 2
    err = capsys.readouterr().err
    assert "holds the parts of another movie" in err and "--restart" in err
    assert movie(out, "--restart") == 0
    assert video.probe_frames(str(out)) == (8, FPS)


def test_a_two_worker_cpu_dask_cluster_makes_the_same_frames(tmp_path, capsys):
    pytest.importorskip("distributed", reason="the cluster extra (Dask) is not installed")
    here = tmp_path / "here"
    there = tmp_path / "there"
    here.mkdir()
    there.mkdir()
    assert movie(here / "f%02d.png") == 0
    assert movie(there / "f%02d.png", "--scheduler", "local") == 0
    assert "Dask cluster" in capsys.readouterr().out
    for k in range(FPS * SECONDS):
        assert np.array_equal(read_png(str(here / "f%02d.png") % k),
                              read_png(str(there / "f%02d.png") % k))
    out = tmp_path / "zoom.mp4"
    assert movie(out, "--scheduler", "local") == 0
    assert video.probe_frames(str(out)) == (8, FPS)


def test_ctrl_c_stops_a_movie_soon_and_keeps_its_finished_segments(tmp_path):
    """A real Ctrl+C in a real process: exit status 130 with one line, the finished segments on
    disk, no half-written file left."""
    import signal
    import subprocess
    import sys
    import textwrap
    out = tmp_path / "zoom.mp4"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = textwrap.dedent(f"""
        import sys
        import services.movie_parts as p
        import services.movie_writer as m
        p.SEGMENT_SECONDS = 0.25
        done = m.MovieWriter.segment_done
        def say(self, i):
            done(self, i)
            print("segment done", flush=True)
        m.MovieWriter.segment_done = say
        import main
        sys.exit(main.main(["--movie", {str(out)!r}, "--backend", "cpu", "--size", "64x36",
                            "--fps", "20", "--seconds", "600", *{PLACE!r}]))
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root,
                                                                     os.environ.get("PYTHONPATH")])))
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=root, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        for _ in range(3):                  # a few segments are on disk
            assert "segment done" in proc.stdout.readline()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("main.py: interrupted: ")
    assert "finished segments" in lines[0] and "run the same command again" in lines[0]
    parts = movie_parts.parts_dir(str(out))
    names = os.listdir(parts)
    assert "segment-00000.mp4" in names and not [n for n in names if n.endswith(".tmp")]
    assert not out.exists()


@pytest.mark.gpu
def test_a_gpu_movie_frame_is_the_gpu_render_of_its_location(tmp_path, gpu_backend, simulated):
    size = "16x10" if simulated else "320x180"
    frames = 2 if simulated else 3      # the first place and a zoomed one; ~8 s a frame there
    pattern = tmp_path / "g%02d.png"
    args = ["--backend", "cuda", "--size", size, "--center", ",".join(CENTRE), "--width", "1e-3",
            "--iters", "64"]
    assert main.main(["--movie", str(pattern), "--fps", str(frames), "--seconds", "1", *args[:4],
                      *args[4:]]) == 0
    assert sorted(n for n in os.listdir(tmp_path) if n.endswith(".png")) == [
        f"g{k:02d}.png" for k in range(frames)]
    course = zoom_in(*CENTRE, "1e-3", 64, frames)
    for k in range(frames):
        loc = course.frame(k)
        one = tmp_path / f"r{k}.png"
        assert main.main(["--render", "mandelbrot", "--backend", "cuda", "--size", size,
                          "--center", f"{loc.center_re},{loc.center_im}", "--width", loc.width,
                          "--iters", str(loc.iters), "--mapping", "sqrt", "--out", str(one)]) == 0
        assert np.array_equal(read_png(str(pattern) % k), read_png(one)), f"frame {k}"


def test_deep_frames_of_a_movie_are_the_render_of_their_location(tmp_path, short_segments):
    """The last four frames of a zoom to 1e-17 are deep (perturbation; one lane renders them
    in a row, so its renderer may reuse a reference orbit): each is `--render` of its place, but
    for the pixels where the approximation falls otherwise (see below)."""
    pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")
    centre = ("-0.743643887037158704752191506114774", "0.131825904205311970493132056385139")
    pattern = tmp_path / "d%02d.png"
    assert main.main(["--movie", str(pattern), "--backend", "cpu", "--size", SIZE, "--fps", "8",
                      "--seconds", "2", "--center", ",".join(centre), "--width", "1e-17",
                      "--iters", "20000"]) == 0
    course = zoom_in(*centre, "1e-17", 20000, 16)
    from services.requests import mandelbrot_request
    from kernels.mandelbrot.requests.request import DeepFrameRequest
    deep = [k for k in range(16) if isinstance(
        mandelbrot_request(course.frame(k).options(), 64, 36, False), DeepFrameRequest)]
    assert deep == [12, 13, 14, 15]
    for k in deep:
        loc = course.frame(k)
        one = tmp_path / f"r{k}.png"
        assert main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", SIZE,
                          "--center", f"{loc.center_re},{loc.center_im}", "--width", loc.width,
                          "--iters", str(loc.iters), "--mapping", "sqrt", "--out", str(one)]) == 0
        got, want = read_png(str(pattern) % k), read_png(one)
        assert len(np.unique(got.reshape(-1, 4), axis=0)) > 100, f"frame {k} is not coloured"
        # Not bit for bit: a movie's deep frame may take the previous frame's reference orbit
        # (another reference point than --render's own), and the bilinear approximation's error
        # (default radius 2^-32) falls on other pixels then. Measured here against plain
        # perturbation, a fresh render of these frames has 47-78 of 2,304 pixels off by more than
        # one iteration; the movie's and --render's frames agree on 94.8-100 % of their pixels.
        assert np.all(got == want, axis=2).mean() >= 0.9, f"frame {k}"


@pytest.mark.parametrize("mapping", ["log", "histogram"])
def test_a_movie_refuses_a_mapping_of_each_frames_own_statistics(tmp_path, capsys, mapping):
    """Issue 24: one mapping across frames. log and histogram would colour each frame by its own
    statistics (one count, another colour in the next frame): refused in one line, before work."""
    out = tmp_path / "m%02d.png"
    code = main.main(["--movie", str(out), "--backend", "cpu", "--size", SIZE, "--fps", "4",
                      "--seconds", "1", "--mapping", mapping])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert f"--mapping {mapping}: a movie colours every frame with one mapping" in err
    assert not list(tmp_path.iterdir())


def test_a_movie_colours_every_frame_with_one_mapping(tmp_path):
    """Where the zoom turns deep the frames keep the float64 frames' mapping (sqrt by default,
    --mapping sqrt likewise), so the colours do not jump there; --render of a deep place alone
    uses log, and so differs from the movie's frame unless given the movie's --mapping. (Before
    issue 24 a movie in --mapping log was made, each frame by its own statistics; it is refused
    now: test above.)"""
    pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")
    centre = ("-0.743643887037158704752191506114774", "0.131825904205311970493132056385139")
    for mapping in (None, "sqrt"):
        pattern = tmp_path / (mapping or "default") / "d%02d.png"
        pattern.parent.mkdir()
        extra = ["--mapping", mapping] if mapping else []
        assert main.main(["--movie", str(pattern), "--backend", "cpu", "--size", SIZE, "--fps",
                          "8", "--seconds", "2", "--center", ",".join(centre), "--width", "1e-17",
                          "--iters", "20000", *extra]) == 0
        loc = zoom_in(*centre, "1e-17", 20000, 16).frame(15)         # deep
        base = ["--render", "mandelbrot", "--backend", "cpu", "--size", SIZE, "--center",
                f"{loc.center_re},{loc.center_im}", "--width", loc.width, "--iters", str(loc.iters)]
        plain, chosen = tmp_path / "plain.png", tmp_path / "chosen.png"
        assert main.main([*base, "--out", str(plain)]) == 0
        assert main.main([*base, "--mapping", mapping or "sqrt", "--out", str(chosen)]) == 0
        frame = read_png(str(pattern) % 15)
        assert len(np.unique(frame.reshape(-1, 4), axis=0)) > 100     # escaped, coloured pixels

        def agree(other):      # deep frames: see test_deep_frames_of_a_movie_… for why not all
            return np.all(frame == read_png(other), axis=2).mean()
        assert agree(chosen) >= 0.9
        assert agree(plain) < 0.5
