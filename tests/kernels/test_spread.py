"""kernels.spread: results come back in job order whatever order the workers finish in; a failing
job, a cancel or an early stop ends a run cleanly; bands put together equal the whole picture."""
import threading
import time

import numpy as np
import pytest

from kernels.backend import Backend
from kernels.mandelbrot.renderer import Renderer
from kernels.mandelbrot.requests.request import MandelbrotRequest
from kernels.mandelbrot.requests.request import DeepFrameRequest
from kernels.mandelbrot.tiles import MIN_BANDS, BandJob, FrameJob, band_rows, bands, picture_rows
from kernels.scheduler import Cancelled, CancelToken
from kernels.spread import GpuInfo, LocalPool, open_pool, parse_gpus

GPUS = [GpuInfo(0, "Test GPU A", 80.0), GpuInfo(1, "Test GPU B", 80.0)]


class Sleepy:
    """A job that takes `delay` seconds and returns its value (later jobs may finish first)."""

    def __init__(self, value, delay=0.0, fail=False):
        self.value, self.delay, self.fail = value, delay, fail

    def __call__(self, worker):
        deadline = time.monotonic() + self.delay
        while time.monotonic() < deadline:
            worker.check()
            time.sleep(0.005)
        if self.fail:
            raise ZeroDivisionError(f"job {self.value} failed")
        return self.value


def test_parse_gpus_names_what_there_is():
    assert parse_gpus("all", GPUS) == (0, 1)
    assert parse_gpus("1", GPUS) == (1,)
    assert parse_gpus(" 1,0,1 ", GPUS) == (1, 0)
    with pytest.raises(ValueError, match=r"GPU 3 does not exist; this machine has 2: 0: Test GPU A"):
        parse_gpus("0,3", GPUS)
    with pytest.raises(ValueError, match="numbers such as 0,1"):
        parse_gpus("first", GPUS)
    with pytest.raises(ValueError, match="no usable GPU"):
        parse_gpus("all", [])


def test_gpus_on_the_cpu_is_refused():
    with pytest.raises(ValueError, match="--gpus chooses GPUs"):
        open_pool("cpu", gpus="0")


def test_results_come_back_in_job_order(cpu_backend):
    # one CPU worker runs jobs in turn; order must hold even when the pool is a cluster, so the
    # pool is also asked with a window of 1 (each job waits for the one before)
    jobs = [Sleepy(i, delay=0.02 * (5 - i)) for i in range(6)]
    with LocalPool(cpu_backend) as pool:
        got = list(pool.ordered(jobs))
        assert got == [(i, i) for i in range(6)]
        assert list(pool.ordered(jobs[:3], window=1)) == [(0, 0), (1, 1), (2, 2)]


def test_several_workers_finish_out_of_order_but_deliver_in_order():
    # two workers on the "GPU" of a fake backend (no device is touched: the simulated flag skips
    # making contexts); job 0 is the slowest, so job 1.. finish first and must wait their turn
    be = Backend("cuda", simulated=True, device="test")
    with LocalPool(be, devices=(0, 1)) as pool:
        assert pool.workers == 2
        seen_threads = set()

        class Where(Sleepy):
            def __call__(self, worker):
                seen_threads.add(threading.current_thread().name)
                return super().__call__(worker)

        jobs = [Where(0, delay=0.3)] + [Where(i, delay=0.01) for i in range(1, 8)]
        assert [v for _, v in pool.ordered(jobs)] == list(range(8))
        assert len(seen_threads) == 2, seen_threads


def test_a_failing_job_ends_the_run_with_its_error(cpu_backend):
    jobs = [Sleepy(0), Sleepy(1, fail=True), Sleepy(2, delay=5.0)]
    with LocalPool(cpu_backend) as pool:
        got = []
        with pytest.raises(ZeroDivisionError, match="job 1 failed"):
            for _, v in pool.ordered(jobs):
                got.append(v)
        assert got == [0]
        # the pool is still usable after a failed run
        assert [v for _, v in pool.ordered([Sleepy(7)])] == [7]


def test_cancel_stops_a_run_within_a_fraction_of_a_second(cpu_backend):
    token = CancelToken()
    jobs = [Sleepy(i, delay=10.0) for i in range(3)]
    with LocalPool(cpu_backend) as pool:
        threading.Timer(0.2, token.cancel).start()
        t = time.monotonic()
        with pytest.raises(Cancelled):
            list(pool.ordered(jobs, cancel=token))
        assert time.monotonic() - t < 2.0


def test_band_rows_cut_at_least_min_bands():
    assert band_rows(16384, 16384) == 256
    assert len(bands(200, band_rows(300, 200))) >= MIN_BANDS
    cut = bands(103, 10)
    assert cut[-1] == (100, 3) and sum(n for _, n in cut) == 103


def test_light_and_deep_pictures_are_cut_alike():
    # light posters once took bands twice as tall; with bands queued ahead the shorter ones
    # balance two GPUs better (docs/notes/performance-history.md); pixels never depend on the cut
    # (below)
    light = MandelbrotRequest(-0.75, 0.1, 0.01, (16384, 16384), 1000)
    deep = DeepFrameRequest("-0.75", "0.1", "1e-20", (16384, 16384), 1000)
    assert picture_rows(light) == picture_rows(deep) == band_rows(16384, 16384) == 256
    small = MandelbrotRequest(-0.75, 0.1, 0.01, (300, 200), 100)
    assert len(bands(200, picture_rows(small))) >= MIN_BANDS


@pytest.mark.parametrize("values", [False, True])
def test_bands_equal_the_whole_picture_bit_for_bit(cpu_backend, values):
    req = MandelbrotRequest(-0.743643887037, 0.131825904205, 0.002, (157, 101), 1500,
                            want_values=values)
    frame = Renderer(cpu_backend).render(req)
    whole = frame.values if values else frame.rgba
    out = np.empty_like(whole)
    cut = bands(101, 7)
    with LocalPool(cpu_backend) as pool:
        for i, arr in pool.ordered([BandJob(req, r0, n, values=values) for r0, n in cut]):
            r0, n = cut[i]
            out[r0:r0 + n] = arr
    assert np.array_equal(out, whole)


def test_frame_jobs_are_the_frames(cpu_backend):
    reqs = [MandelbrotRequest(-0.5, 0.0, 3.0 / 2 ** k, (48, 32), 200) for k in range(3)]
    with LocalPool(cpu_backend) as pool:
        got = [a for _, a in pool.ordered([FrameJob(r) for r in reqs])]
    for r, a in zip(reqs, got):
        assert np.array_equal(a, Renderer(cpu_backend).render(r).rgba)
    assert not np.array_equal(got[0], got[2])


@pytest.mark.gpu
def test_gpu_bands_equal_the_gpu_whole_and_the_cpu(gpu_backend, cpu_backend, simulated):
    w, h = (13, 9) if simulated else (1000, 700)
    req = MandelbrotRequest(-0.75, 0.1, 0.05, (w, h), 120 if simulated else 2000)
    whole = Renderer(gpu_backend).render(req).rgba.copy()
    cut = bands(h, 4 if simulated else 64)
    out = np.empty_like(whole)
    with open_pool(gpu_backend, gpus="all") as pool:
        for i, arr in pool.ordered([BandJob(req, r0, n) for r0, n in cut]):
            r0, n = cut[i]
            out[r0:r0 + n] = arr
    assert np.array_equal(out, whole)
    assert np.array_equal(whole, Renderer(cpu_backend).render(req).rgba)
