"""Posters in bands (`--render … --gpus/--scheduler`, or any picture past POSTER_MIN_PIXELS): equal
to the picture rendered whole, resumable after an interruption, and on a two-worker CPU Dask
cluster a worker killed in the middle of a band loses nothing."""
import os
import signal
import sys

import numpy as np
import pytest

import main
from kernels.mandelbrot import tiles
from services import poster

BANDS = len(tiles.bands(70, tiles.band_rows(96, 70)))
PLACE = ["--center", "-0.7436438870,0.1318259043", "--width", "0.003", "--iters", "800"]
SIZE = "96x70"

distributed = pytest.importorskip("distributed", reason="the cluster extra (Dask) is not installed")


def render(tmp_path, name, *extra):
    out = tmp_path / name
    code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", SIZE, *PLACE,
                      "--out", str(out), *extra])
    return code, out


def read(path):
    if str(path).endswith(".npy"):
        return np.load(path)
    from PIL import Image
    return np.asarray(Image.open(path))


@pytest.mark.parametrize("ext", [".png", ".npy"])
def test_a_cluster_poster_equals_the_whole_picture(tmp_path, capsys, ext):
    code, whole = render(tmp_path, "whole" + ext)
    assert code == 0
    code, banded = render(tmp_path, "banded" + ext, "--scheduler", "local")
    err = capsys.readouterr()
    assert code == 0, err
    assert f"{BANDS} bands on a local Dask cluster (2 CPU workers)" in err.out
    assert np.array_equal(read(whole), read(banded))
    assert not os.path.exists(poster.parts_dir(banded)), "the parts folder stays after success"


def test_an_interrupted_poster_resumes_without_redoing_bands(tmp_path, capsys, monkeypatch,
                                                             stop_poster):
    code, whole = render(tmp_path, "whole.png")
    assert code == 0
    stop_poster(5)                     # as Ctrl+C would land after the fifth band
    out = tmp_path / "poster.png"
    monkeypatch.setattr(poster, "POSTER_MIN_PIXELS", 0)     # this small picture goes in bands
    assert main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", SIZE, *PLACE,
                      "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert f"5 of {BANDS} bands are kept" in err and "run the same command again" in err
    assert not out.exists()
    assert os.path.isdir(poster.parts_dir(out))

    rendered = []
    real_call = tiles.BandJob.render_into
    monkeypatch.setattr(tiles.BandJob, "render_into",
                        lambda self, w, out: rendered.append(self.row0) or real_call(self, w, out))
    stop_poster.release()
    assert main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", SIZE, *PLACE,
                      "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"5 of {BANDS} bands were already rendered" in err
    rows = tiles.band_rows(96, 70)
    assert sorted(rendered) == [r0 for r0, _ in tiles.bands(70, rows)][5:]
    assert np.array_equal(read(out), read(whole))


def test_parts_of_another_picture_are_not_mixed_in(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(poster, "POSTER_MIN_PIXELS", 0)
    out = tmp_path / "p.png"
    os.makedirs(poster.parts_dir(out))
    with open(os.path.join(poster.parts_dir(out), "plan.json"), "w") as fh:
        fh.write('{"version": 1, "view": "mandelbrot", "size": [1, 1]}')
    code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", SIZE, *PLACE,
                      "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "holds the bands of another picture" in err and "remove that folder" in err


def test_bad_spreading_options_one_line_before_work(tmp_path, capsys, monkeypatch):
    from kernels.spread import cluster
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 1)
    for extra, words in ((["--gpus", "0"], "--gpus chooses GPUs"),
                         (["--scheduler", "tcp://127.0.0.1:9"], "no Dask scheduler answered")):
        code, out = render(tmp_path, "x.png", *extra)
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and words in err, err
        assert not out.exists() and not os.path.exists(poster.parts_dir(out))
    code = main.main(["--bench", "--gpus", "all"])
    assert code == 2 and "--gpus does not apply with --bench" in capsys.readouterr().err


class KillOnce:
    """Kills the worker process that runs it the first time (a marker file remembers), then does
    the band's work wherever Dask runs it again."""

    def __init__(self, job, marker):
        self.job, self.marker = job, marker

    def __call__(self, worker):
        if not os.path.exists(self.marker):
            with open(self.marker, "w") as fh:
                fh.write(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return self.job(worker)


def test_a_killed_worker_loses_no_band(tmp_path, cpu_backend):
    import cloudpickle

    from kernels.mandelbrot.renderer import Renderer
    from kernels.mandelbrot.requests.request import MandelbrotRequest
    from kernels.mandelbrot.tiles import BandJob, bands
    from kernels.spread import open_pool
    cloudpickle.register_pickle_by_value(sys.modules[__name__])   # the workers cannot import tests
    req = MandelbrotRequest(-0.75, 0.1, 0.05, (80, 60), 600)
    whole = Renderer(cpu_backend).render(req).rgba
    cut = bands(60, 6)
    marker = str(tmp_path / "killed")
    jobs = [BandJob(req, r0, n) for r0, n in cut]
    jobs[4] = KillOnce(jobs[4], marker)
    out = np.empty_like(whole)
    with open_pool("cpu", scheduler="local") as pool:
        for i, arr in pool.ordered(jobs):
            r0, n = cut[i]
            out[r0:r0 + n] = arr
    assert os.path.exists(marker), "the worker was never killed"
    assert np.array_equal(out, whole)


@pytest.mark.parametrize("mapping, spread", [("histogram", "local pool"), ("log", "local pool"),
                                             ("histogram", "cluster")])
def test_a_poster_in_log_or_histogram_equals_the_one_piece_picture(tmp_path, capsys, monkeypatch,
                                                                    mapping, spread):
    """Coloured with the whole picture's statistics, not each band's own (item 4 of issue 24)."""
    from kernels.mandelbrot.renderer import Renderer
    from kernels.mandelbrot.requests.request import MandelbrotRequest
    from kernels.backend import resolve
    req = MandelbrotRequest(-0.7436438870, 0.1318259043, 0.003, (96, 70), 800, mapping=mapping)
    one_piece = Renderer(resolve("cpu")).render(req).rgba
    extra = ["--scheduler", "local"] if spread == "cluster" else []
    monkeypatch.setattr(poster, "POSTER_MIN_PIXELS", 0)
    code, out = render(tmp_path, "p.png", "--mapping", mapping, *extra)
    assert code == 0, capsys.readouterr().err
    assert np.array_equal(read(out), one_piece)
    assert not os.path.exists(poster.parts_dir(out))


class FakePool:
    """A cluster pool whose worker hands back `bad` for band 2."""
    last_origin = "tcp://10.0.0.7:40000"

    def __init__(self, bad):
        self.bad = bad

    def ordered(self, jobs, cancel=None):
        for i, job in enumerate(jobs):
            yield i, self.bad if i == 2 else np.zeros((job.rows, 96, 4), np.uint8)


@pytest.mark.parametrize("bad", [np.zeros((3, 3), np.uint8), np.zeros((4, 96, 4), np.float64),
                                 "rm -rf /", None])
def test_a_band_of_the_wrong_shape_or_type_is_refused(tmp_path, bad):
    p = poster.Poster("mandelbrot", _request(), str(tmp_path / "p.png"))
    p.open()
    with pytest.raises(poster.BadBand) as err:
        p.render(FakePool(bad), None)
    msg = str(err.value)
    assert "band 2 (rows" in msg and "tcp://10.0.0.7:40000" in msg and "\n" not in msg
    assert p.done == 2                          # the two good bands are kept, the bad one not
    assert not p.parts.pixels[p.cut[2][0]:].any()
    p.close()


def _request():
    from kernels.mandelbrot.requests.request import MandelbrotRequest
    return MandelbrotRequest(-0.75, 0.1, 0.05, (96, 70), 100)
