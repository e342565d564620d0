"""`--movie OUT --keyframes` (issue 37) on the CPU twin at tiny sizes: the frames come from the
keyframes (close to the rendered ones), an interrupted movie resumes at keyframe and at frame
level into the same frames as an uninterrupted one, --keyframes-out leaves every keyframe with its
manifest, and a per-frame movie's parts are never resumed as a keyframe movie's."""
from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

pytest.importorskip("gmpy2", reason="keyframes are drawn by the deep renderer")

import main
from kernels.mandelbrot.keyframes import expmap_render
from services import movie_keyframes, movie_parts, movie_writer

CENTRE = ("-0.7436438870371587", "0.1318259042053119")
PLACE = ["--center", ",".join(CENTRE), "--width", "1e-7"]
SIZE = "64x36"
FPS, SECONDS = 4, 2          # 8 frames


def movie(out, *extra):
    return main.main(["--movie", str(out), "--backend", "cpu", "--size", SIZE, "--fps", str(FPS),
                      "--seconds", str(SECONDS), *PLACE, "--keyframes", *extra])


def read_png(path):
    Image = pytest.importorskip("PIL.Image", reason="reading PNG frames back needs Pillow")
    return np.asarray(Image.open(path))


def frames(pattern, n=8):
    return [read_png(str(pattern) % k) for k in range(n)]


@pytest.fixture(autouse=True)
def from_keyframes_only(monkeypatch):
    """Every frame from keyframes (at 64×36 float64 draws the whole zoom, which a movie draws
    directly): these tests are about the keyframes; the direct frames have their own."""
    monkeypatch.setattr(movie_keyframes, "DIRECT_MIN_LOG2", math.inf)


@pytest.fixture
def short(monkeypatch):
    """One lane, small batches: the 8 frames come in several batches, keyframes dropped between."""
    monkeypatch.setattr(movie_parts, "SEGMENT_SECONDS", 0.5)
    monkeypatch.setattr(movie_writer, "default_lanes", lambda kind, size: 1)
    monkeypatch.setattr(movie_keyframes, "BATCH_FRAMES", 3)
    monkeypatch.setattr(movie_keyframes, "CHUNK_FRAMES", 2)


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    """The uninterrupted movie's frames."""
    mp = pytest.MonkeyPatch()
    mp.setattr(movie_parts, "SEGMENT_SECONDS", 0.5)
    mp.setattr(movie_writer, "default_lanes", lambda kind, size: 1)
    mp.setattr(movie_keyframes, "BATCH_FRAMES", 3)
    mp.setattr(movie_keyframes, "CHUNK_FRAMES", 2)
    mp.setattr(movie_keyframes, "DIRECT_MIN_LOG2", math.inf)
    pattern = tmp_path_factory.mktemp("whole") / "f%02d.png"
    try:
        assert movie(pattern) == 0
    finally:
        mp.undo()
    return frames(pattern)


def test_keyframe_frames_look_like_the_rendered_frames(tmp_path, whole, capsys):
    from kernels.mandelbrot.keyframes.expmap_quality import ssim
    direct = tmp_path / "d%02d.png"
    assert main.main(["--movie", str(direct), "--backend", "cpu", "--size", SIZE, "--fps",
                      str(FPS), "--seconds", str(SECONDS), *PLACE]) == 0
    out = capsys.readouterr().out
    scores = [ssim(a, b) for a, b in zip(whole, frames(direct))]
    # 64×36 of the seahorse valley: much of it is detail below a pixel, resampled differently
    assert min(scores) > 0.35 and np.mean(scores) > 0.6, scores
    assert "keyframes" not in out


def test_an_interrupted_keyframe_movie_resumes_into_the_same_frames(tmp_path, monkeypatch,
                                                                    short, whole, capsys):
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
    err = capsys.readouterr().err
    assert "3 of 8 frames are written" in err and "keyframes" in err
    kept = movie_keyframes.keyframes_dir(str(pattern))
    assert any(n.endswith(".npy") for n in os.listdir(kept))
    monkeypatch.setattr(movie_writer._PngSink, "add", real_add)
    drawn = []
    real_start = expmap_render.KeyframeJob.start
    monkeypatch.setattr(expmap_render.KeyframeJob, "start",
                        lambda self, w: drawn.append(self.k) or real_start(self, w))
    assert movie(pattern) == 0
    out = capsys.readouterr().out
    read_back = int(out.split(" read back")[0].rsplit(" ", 1)[1])
    assert read_back > 0                        # keyframe level: what was on disk is not redrawn
    for a, b in zip(frames(pattern), whole):
        assert np.array_equal(a, b)
    assert not os.path.exists(kept)             # the movie's own keyframes go when it is done


def test_a_movie_stopped_among_its_keyframes_resumes_from_them(tmp_path, monkeypatch, short,
                                                               whole, capsys):
    pattern = tmp_path / "f%02d.png"
    real_start = expmap_render.KeyframeJob.start
    drawn = []

    def draw_then_stop(self, w):
        if len(drawn) == 5:
            raise KeyboardInterrupt
        drawn.append(self.k)
        return real_start(self, w)
    monkeypatch.setattr(expmap_render.KeyframeJob, "start", draw_then_stop)
    assert movie(pattern) == 130
    capsys.readouterr()
    first = set(drawn)
    drawn.clear()
    monkeypatch.setattr(expmap_render.KeyframeJob, "start",
                        lambda self, w: drawn.append(self.k) or real_start(self, w))
    assert movie(pattern) == 0
    assert first and not first & set(drawn)     # none of the first run's keyframes drawn again
    for a, b in zip(frames(pattern), whole):
        assert np.array_equal(a, b)


def test_keyframes_out_keeps_every_keyframe_with_its_manifest(tmp_path, capsys):
    from kernels.backend import resolve
    from kernels.mandelbrot.keyframes.expmap_render import KeyframeRenderer, pinned_orbit
    keys = tmp_path / "keys"
    assert movie(tmp_path / "f%02d.png", "--keyframes-out", str(keys)) == 0
    manifest = json.loads((keys / "keyframes.json").read_text())
    n, sectors = manifest["count"], manifest["sectors"]
    files = sorted(p for p in os.listdir(keys) if p.endswith(".npy"))
    assert files == [f"{k:05d}.npy" for k in range(n)]
    v = np.load(keys / files[n // 2])
    cols, _, rows, off = sectors[-1]
    assert v.shape == (off + cols * rows,) and v.dtype == np.float64
    # the file is the keyframe as drawn (same place, same counts)
    spec = movie_keyframes.keyframe_map
    from services.movie import MovieSpec, prepare
    m = prepare(MovieSpec(out=str(tmp_path / "g%02d.png"), size=(64, 36), fps=FPS,
                          seconds=SECONDS, center=",".join(CENTRE), width="1e-7",
                          keyframes=True))
    em = spec(m)
    with pinned_orbit(em):
        again = KeyframeRenderer(resolve("cpu")).render(em, n // 2)
    assert np.array_equal(again, v)


def test_a_per_frame_movies_parts_are_not_resumed_by_keyframes(tmp_path, capsys, monkeypatch,
                                                              short):
    out = tmp_path / "m.mp4"
    pytest.importorskip("av", reason="video needs PyAV")

    def stop(self, rgba):
        raise KeyboardInterrupt
    monkeypatch.setattr("services.video.SegmentEncoder.add", stop)
    assert main.main(["--movie", str(out), "--backend", "cpu", "--size", SIZE, "--fps", str(FPS),
                      "--seconds", str(SECONDS), *PLACE]) == 130
    capsys.readouterr()
    assert movie(out) == 2
    assert "another movie" in capsys.readouterr().err


def test_oversample_without_keyframes_is_refused(tmp_path, capsys):
    assert main.main(["--movie", str(tmp_path / "a.mp4"), "--oversample", "2", *PLACE]) == 2
    assert "--oversample applies only with --keyframes" in capsys.readouterr().err


def test_an_interrupted_keyframe_video_resumes_and_cleans_up(tmp_path, monkeypatch, short,
                                                            capsys):
    pytest.importorskip("av", reason="video needs PyAV")
    from services import video
    out = tmp_path / "k.mp4"
    real_add = video.SegmentEncoder.add
    calls = []

    def add_then_stop(self, rgba):
        real_add(self, rgba)
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt
    monkeypatch.setattr(video.SegmentEncoder, "add", add_then_stop)
    assert movie(out) == 130
    parts = movie_parts.parts_dir(str(out))
    assert os.path.isdir(os.path.join(parts, movie_keyframes.KEYFRAMES_FOLDER))
    monkeypatch.setattr(video.SegmentEncoder, "add", real_add)
    capsys.readouterr()
    assert movie(out) == 0
    assert "resuming" in capsys.readouterr().err
    assert video.probe_frames(str(out)) == (8, FPS)
    assert not os.path.exists(parts)            # the parts and their keyframes are gone


def test_lent_frames_and_keyframes_come_back_and_change_no_frame(tmp_path, monkeypatch, short,
                                                                whole):
    """Frames and keyframes travel in lent arrays given back by the encoder lane and once no
    batch needs a keyframe (kernels/lent_arrays.py): reused, and every frame as without lending."""
    from kernels import lent_arrays
    from kernels.mandelbrot.keyframes import expmap_render
    lender = lent_arrays.Lender()
    for module in (movie_keyframes, movie_writer, expmap_render):
        monkeypatch.setattr(module, "LENT", lender)
    given = []
    real_give = lender.give
    monkeypatch.setattr(lender, "give", lambda a: given.append(a.shape) or real_give(a))
    pattern = tmp_path / "f%02d.png"
    assert movie(pattern) == 0
    assert lender.reused > 0
    assert (36, 64, 4) in given                         # a frame, from the lane
    assert any(len(s) == 1 for s in given)              # a keyframe, once no batch needed it
    for a, b in zip(frames(pattern), whole):
        assert np.array_equal(a, b)


def test_frames_float64_draws_are_drawn_directly_and_the_rest_from_keyframes(tmp_path, monkeypatch,
                                                                             capsys):
    """The zoom's first frames, which float64 draws at the movie's size, are drawn as a per-frame
    movie draws them (the same pixels), the deeper ones from keyframes, in one movie."""
    monkeypatch.setattr(movie_keyframes, "DIRECT_MIN_LOG2", -60.0)
    monkeypatch.setattr(movie_writer, "default_lanes", lambda kind, size: 1)
    place = ["--center", ",".join(CENTRE), "--width", "1e-16"]
    common = ["--backend", "cpu", "--size", SIZE, "--fps", "2", "--seconds", "3", *place]
    mixed, direct = tmp_path / "m%02d.png", tmp_path / "d%02d.png"
    assert main.main(["--movie", str(mixed), *common, "--keyframes"]) == 0
    out = capsys.readouterr().out
    made = int(out.split(" of them drawn directly")[0].rsplit("; ", 1)[1])
    assert 0 < made < 6
    assert main.main(["--movie", str(direct), *common]) == 0
    a, b = frames(mixed, 6), frames(direct, 6)
    assert all(np.array_equal(a[k], b[k]) for k in range(made))
    assert not np.array_equal(a[5], b[5])          # the deepest: resampled from keyframes
