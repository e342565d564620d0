"""A movie's warm-up (services/movie_warm.py): every worker makes and warms the renderers the
frames will ask for (each encoder lane's deep renderer included) before the first frame, so no
frame compiles or warms up on its worker while the other GPUs' workers wait for the GIL; and the
warm-up runs beside the reference orbit's computation."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from kernels.mandelbrot.deep.renderer import DeepRenderer
from kernels.mandelbrot.renderer import Renderer
from kernels.spread import LocalPool
from services.movie import MovieFrameJob, MovieSpec, prepare
from services.movie_warm import Warming, warm_job

CENTRE = "-0.743643887037158704752191506114774,0.131825904205311970493132056385139"


def _movie(tmp_path, width="1e-17"):
    spec = MovieSpec(out=str(tmp_path / "m.mp4"), size=(32, 18), fps=8, seconds=2, center=CENTRE,
                     width=width, iters="20000")
    return prepare(spec, open_encoder=False)


def test_warm_job_readies_every_lanes_renderer_so_frames_warm_nothing(tmp_path, cpu_backend,
                                                                      monkeypatch):
    pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")
    movie = _movie(tmp_path)
    lanes = 3
    with LocalPool(cpu_backend) as pool:
        (kinds,) = pool.broadcast(warm_job(movie, lanes))
        assert kinds == ("float64", "deep perturbation")
        warmups = []
        for cls in (DeepRenderer, Renderer):
            real = cls.warmup

            def counting(self, *a, _real=real, _cls=cls.__name__, **kw):
                ms = _real(self, *a, **kw)
                if ms:                  # a warm-up that did work (0 ms: already warm)
                    warmups.append(_cls)
                return ms
            monkeypatch.setattr(cls, "warmup", counting)
        # the first float64 frame and the last (deep) frame of each lane
        last = movie.frames - 1
        jobs = [MovieFrameJob(movie.path, 0, movie.palette, movie.spec.size, movie.spec.colouring, 0)]
        jobs += [MovieFrameJob(movie.path, last, movie.palette, movie.spec.size,
                               movie.spec.colouring, lane) for lane in range(lanes)]
        frames = [rgba for _, (rgba, _) in pool.ordered(jobs)]
    assert warmups == [], f"frames warmed up again on their worker: {warmups}"
    assert all(f.shape == (18, 32, 4) for f in frames)
    assert len(np.unique(frames[-1].reshape(-1, 4), axis=0)) > 20, "the deep frame is not coloured"
    np.testing.assert_array_equal(frames[1], frames[2])     # the lanes' renderers agree


def test_warming_runs_beside_the_callers_work_and_raises_its_error(cpu_backend):
    started, release = threading.Event(), threading.Event()

    def job(worker):
        started.set()
        assert release.wait(5.0)
        return "warm"

    with LocalPool(cpu_backend) as pool:
        warming = Warming(pool, job).start()
        assert started.wait(5.0), "the warm-up did not start at once"
        release.set()                   # the caller's own work (the reference) went on meanwhile
        warming.wait()
        assert warming.result == ["warm"]

        def broken(worker):
            raise RuntimeError("no GPU today")
        with pytest.raises(RuntimeError, match="no GPU today"):
            Warming(pool, broken).start().wait()


def test_a_pool_without_broadcast_is_left_alone():
    class Cluster:
        workers = 2
    w = Warming(Cluster(), lambda worker: 1).start()
    w.wait()
    assert w.result is None
