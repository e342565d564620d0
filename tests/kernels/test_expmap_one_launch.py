"""A keyframe's sectors drawn as one frame (expmap_render.LAUNCH "one", deep/sectors.py: one
orbit and table, on a GPU one first pass over every sector and one redo) against the sectors
drawn one by one ("sectors"): the same bits and the same counts, on the CPU twin and on the GPU
(numba's simulator with tiny sizes under NUMBA_ENABLE_CUDASIM=1); a cancel midway leaves the
renderer drawing the same bits after; the sector kernels' PTX rounds as the frame kernels' does."""
import numpy as np
import pytest

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.backend import BackendUnavailable, resolve
from kernels.mandelbrot.deep.sectors import start_sectors
from kernels.mandelbrot.keyframes.expmap import expmap_of
from kernels.mandelbrot.keyframes.expmap_render import LAUNCH, KeyframeRenderer, keyframe_request, \
    pinned_orbit
from kernels.mandelbrot.keyframes.zoom_path import zoom_in

BACKENDS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def _backend(name):
    try:
        return resolve(name)
    except BackendUnavailable as exc:
        pytest.skip(f"no {name} backend here: {exc}")


def _movie(small):
    path = zoom_in("-0.7436438870371587", "0.1318259042053119", "1e-300", None, 30)
    return expmap_of(path, (8, 6) if small else (192, 108))


@pytest.mark.parametrize("name", BACKENDS)
def test_one_launch_keyframes_are_the_sector_by_sector_bits(name, simulated, monkeypatch):
    be = _backend(name)
    runs = []
    if be.is_gpu:       # each run: one first-pass launch (one band here) and one redo launch
        from kernels.mandelbrot.deep.gpu_pixels import GpuPixels
        real = GpuPixels.run

        def run(self, pool, shape, *args, kernels=None):
            runs.append((shape, kernels is not None))
            return real(self, pool, shape, *args, kernels=kernels)
        monkeypatch.setattr(GpuPixels, "run", run)
    small = simulated or not be.is_gpu
    em = _movie(small)
    # a shallow keyframe whose table (64 bits of slack) leaves pixels to the redo pass: 70 at 8x6
    # (a few: the simulator iterates each in Python), 60 at the GPU's 192x108 (70 has none there);
    # then a perturbation-format keyframe and the deepest, extended one
    picks = (70 if small else 60, em.count // 2, em.count - 1)
    assert LAUNCH == "one" and len(KeyframeRenderer(be).deeps) == 1
    one = KeyframeRenderer(be, launch="one")
    sectors = KeyframeRenderer(be, streams=1, launch="sectors")
    for r in (one, sectors):     # compiled first: a warm-up draws a frame of its own
        r.deep.warmup(("perturbation", "extended"))
    redone = 0
    with pinned_orbit(em):
        for k in picks:
            runs.clear()
            a = one.render(em, k)
            assert runs == ([((1, em.samples), True)] if be.is_gpu else []), k
            b = sectors.render(em, k)
            assert len(runs) == (1 + len(em.sectors) if be.is_gpu else 0), k
            assert a.shape == (em.samples,) and np.array_equal(a, b), k
            # the counts too: steps, BLA steps and iterations, rebases, redone and marked pixels
            assert one.last_stats == sectors.last_stats and one.last_stats, k
            redone += one.last_stats["redone_pixels"]
    assert redone > 0       # the redo pass had doubtful pixels to draw
    assert one.pixels == sectors.pixels == len(picks) * em.samples


class Stop(Exception):
    pass


class CancelAfter:
    def __init__(self, n):
        self.n = n

    def check(self):
        self.n -= 1
        if self.n < 0:
            raise Stop


@pytest.mark.parametrize("name", BACKENDS)
def test_a_cancel_midway_stops_the_keyframe_and_the_next_is_the_same_bits(name, simulated,
                                                                         monkeypatch):
    be = _backend(name)
    if be.is_gpu:       # bands of a few pixels, each followed by a cancel check
        from kernels.mandelbrot.deep import gpu_pixels
        monkeypatch.setattr(gpu_pixels, "GPU_BAND_PIXELS", 8 if simulated else 4096)
        monkeypatch.setattr(gpu_pixels, "QUICK_FRAME_S", 0.0)
    em = _movie(simulated or not be.is_gpu)
    k = em.count // 2
    with pinned_orbit(em):
        want = KeyframeRenderer(be, streams=1, launch="sectors").render(em, k)
        for launch in ("one", "sectors"):
            r = KeyframeRenderer(be, streams=1, launch=launch)
            cancel = CancelAfter(2)
            with pytest.raises(Stop):
                r.render(em, k, cancel=cancel)
            assert cancel.n < 0
            assert r.pixels == 0
            assert np.array_equal(r.render(em, k), want), launch
            assert np.array_equal(r.render(em, k, cancel=CancelAfter(10 ** 6)), want), launch


def test_sectors_of_other_pictures_are_not_one_frame(cpu_backend):
    import dataclasses
    em = _movie(True)
    r = KeyframeRenderer(cpu_backend)
    reqs = [keyframe_request(em, 3, s) for s in range(len(em.sectors))]
    reqs[2] = dataclasses.replace(reqs[2], max_iter=reqs[2].max_iter + 1)
    assert start_sectors(r.deep, reqs) is None


def _kernel_args(module):
    """Arguments of the loop's frame and sector kernels (tiny arrays: only their types count)."""
    from kernels.mandelbrot.tables.bla import build_table
    from kernels.mandelbrot.tables.flat_build import flat_tables
    orbit = np.zeros((8, 4))
    orbit[:, 2] = 0.5
    oexp = np.zeros(8, np.int32)
    tab, tabe, levels = build_table(orbit, oexp, (0.5, -20))
    ints = np.zeros(3, np.int64)
    loop = ((orbit, oexp, tab, tabe, levels, 0, 1e-12, 30) if module == "extended_loop" else
            flat_tables(orbit, tab, tabe, levels) + (levels, 1e-12, 30))
    head = (np.zeros((2, 3)), ints, 0, 0, 0, True, 0.0, 0.0, 0.5, -30)
    frame = head + (2.0, 1.5) + loop + (ints, ints, ints)
    sectors = head + (ints, ints, np.zeros(2), np.zeros(2)) + loop + (ints, ints, ints)
    return frame, sectors


@pytest.mark.parametrize("module", ["perturbation_loop", "extended_loop"])
def test_the_sector_kernels_compile_with_no_arithmetic_the_frame_kernels_lack(monkeypatch,
                                                                             numba_cuda, module):
    """PTX for sm_90 (the toolkit leg): the sector kernel compiles, and its doubles are rounded
    as the frame kernel's are: no more plain (contractible) multiplies or adds."""
    import importlib
    import re

    from numba import typeof
    from ptx_compile import compile_ptx  # tests/kernels/ptx_compile.py
    mod = importlib.import_module(f"kernels.mandelbrot.loops.{module}")
    first, _ = mod.CODE.gpu_sectors
    frame_args, sector_args = _kernel_args(module)
    got = compile_ptx(monkeypatch, numba_cuda, first.py_func,
                      tuple(typeof(a) for a in sector_args))
    plain = compile_ptx(monkeypatch, numba_cuda, mod.CODE.gpu_first.py_func,
                        tuple(typeof(a) for a in frame_args))
    contractible = re.compile(r"^\s*(mul|add|sub)\.f64\b", re.M)
    assert len(contractible.findall(got)) == len(contractible.findall(plain))
    assert re.search(r"\bmul\.rn\.f64\b", got) and re.search(r"\bdiv\.rn\.f64\b", got)
