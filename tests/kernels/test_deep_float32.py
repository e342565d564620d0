"""Deep perturbation with float32 deltas (perturbation_loop.CODE32): the same counts as float64
deltas where their range reaches, float64 where it does not, the tables rounded safely, the
deltas' rule with a simulated GeForce and H100, the CPU twin against the GPU (real or simulated),
and no float64 arithmetic per step in the GPU loop (PTX, where NVVM is at hand)."""
import re
import types
from decimal import Decimal

import numpy as np
import pytest

from kernels.backend import simulator_enabled
from kernels.mandelbrot.requests import number_type as nt
from kernels.mandelbrot.benches import locations as loc
from kernels.mandelbrot.requests.deep_request import DeepRequest, add_decimal

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.tables.flat_build import B_R, BW, BW32, Z_R0, ZW, flat_tables  # noqa: E402
from kernels.mandelbrot.loops.perturbation_loop import flat_tables32  # noqa: E402
from kernels.mandelbrot.deep.renderer import DeepRenderer  # noqa: E402

GEFORCE = nt.Rates(64.0, 1.0, "simulated GeForce")
H100 = nt.Rates(2.0, 1.0, "simulated H100")


def near_i(width):
    w = Decimal(width)
    return str(w * Decimal("0.1234567")), add_decimal(1, w * Decimal("-0.0765432"))


PLACES = [
    ("near i 1e-20", DeepRequest(*near_i("1e-20"), "1e-20", (48, 36), 300)),
    ("minibrot 4e-20", DeepRequest(loc.MINIBROT_139.center_re, loc.MINIBROT_139.center_im,
                                   "4e-20", (48, 36), 3000)),
]
# a place whose counts hang on tiny moves of c: float32 deltas change some, fewer than a move of
# a thousandth of a pixel does (the measure tests/kernels/test_float32.py holds float32 to)
SENSITIVE = DeepRequest(loc.KORMANYOS_VERY_DEEP.center_re, loc.KORMANYOS_VERY_DEEP.center_im,
                        "1e-28", (48, 36), 20000)


def _both(backend, req):
    r = DeepRenderer(backend)
    a = r.render_values(req)
    a = (a.values.copy(), a.stats, a.number_type)
    r.number_type = "float32"
    b = r.render_values(req)
    return a, (b.values.copy(), b.stats, b.number_type)


@pytest.mark.parametrize("name,req", PLACES, ids=[p[0] for p in PLACES])
def test_float32_deltas_count_as_float64_deltas(cpu_backend, name, req):
    (v64, s64, t64), (v32, s32, t32) = _both(cpu_backend, req)
    assert (t64, t32) == ("float64", "float32")
    assert s32["bla_steps"] > 0 and s32["perturbation_steps"] > 0
    same = np.floor(v32) == np.floor(v64)
    assert same.mean() >= 0.999, name
    assert not np.array_equal(v32, v64)          # float32 did run: the smooth values moved


def test_float32_deltas_depart_less_than_a_thousandth_of_a_pixel(cpu_backend):
    req = SENSITIVE
    (v64, _, _), (v32, _, t32) = _both(cpu_backend, req)
    assert t32 == "float32"
    d = Decimal(req.width) / req.size[0] / 1000
    moved = DeepRenderer(cpu_backend).render_values(DeepRequest(
        str(Decimal(req.center_re) + d), str(Decimal(req.center_im) - d), req.width, req.size,
        req.max_iter)).values
    departs = int((np.floor(v32) != np.floor(v64)).sum())
    assert 0 < departs < int((np.floor(moved) != np.floor(v64)).sum())


def test_float32_deltas_stop_where_their_range_ends(cpu_backend):
    req = DeepRequest(*near_i("1e-40"), "1e-40", (8, 6), 300)
    assert not nt.float32_deltas_reach(req.format, req.spacing_log2)
    (v64, _, _), (v32, _, t32) = _both(cpu_backend, req)
    assert t32 == "float64"
    np.testing.assert_array_equal(v32, v64)


def test_float32_tables_never_widen_a_radius(cpu_backend):
    r = DeepRenderer(cpu_backend)
    r.table_ahead = False       # keeps the table's entries (table_ahead.py keeps its layout only)
    r.render_values(SENSITIVE)
    orb, _ = r.orbit.arrays()
    _, tab, tabe, levels = r._table
    zo, bt = flat_tables(orb, tab, tabe, levels)
    zo32, bt32 = flat_tables32(orb, tab, tabe, levels)
    assert zo32.dtype == bt32.dtype == np.float32
    bt32 = bt32.reshape(-1, BW32)[:, :BW].reshape(-1)      # the loop's rows padded to 32 bytes
    assert zo32.shape == zo.shape and bt32.shape == bt.shape
    assert (zo32[Z_R0::ZW].astype(np.float64) <= zo[Z_R0::ZW]).all()
    assert (bt32[B_R::BW].astype(np.float64) <= bt[B_R::BW]).all()
    rows = bt32.reshape(-1, BW)
    assert (rows[~np.isfinite(rows).all(axis=1), B_R] == 0).all()


def test_deltas_rule_with_geforce_and_h100():
    fmt, spacing = "perturbation", -80.0
    assert nt.choose_deep(fmt, spacing, GEFORCE).number_type == "float32"
    assert nt.choose_deep(fmt, spacing, H100).number_type == "float64"
    assert nt.choose_deep(fmt, spacing, H100, "float32").number_type == "float32"
    deep = nt.choose_deep(fmt, -120.0, GEFORCE, "float32")
    assert deep.number_type == "float64" and "2^-100" in deep.reason
    assert nt.choose_deep("extended", -2000.0, GEFORCE).number_type == "float64"


@pytest.mark.gpu
def test_float32_deltas_gpu_match_cpu_twin(gpu_backend, cpu_backend, simulated):
    size = (8, 6) if simulated else (67, 45)
    for req in (DeepRequest(*near_i("1e-20"), "1e-20", size, 300),
                DeepRequest(loc.MINIBROT_139.center_re, loc.MINIBROT_139.center_im, "4e-20",
                            size, 3000)):
        g, c = DeepRenderer(gpu_backend), DeepRenderer(cpu_backend)
        g.number_type = c.number_type = "float32"
        rg, rc = g.render_values(req), c.render_values(req)
        assert rg.number_type == rc.number_type == "float32"
        np.testing.assert_array_equal(np.floor(rg.values), np.floor(rc.values))
        np.testing.assert_allclose(rg.values, rc.values, rtol=0, atol=1e-9)
        assert rg.stats == rc.stats


_F64 = re.compile(r"^\s*(?:@!?%p\d+\s+)?(?:add|sub|mul|fma|div|neg|abs|min|max|setp|rcp|sqrt)"
                  r"[a-z0-9.]*\.f64\b", re.M)


@pytest.mark.gpu
def test_float32_delta_loop_has_no_float64_arithmetic_per_step(monkeypatch, numba_cuda):
    """The loop's only float64 work is the smooth value at the end (a logarithm per pixel): a
    kernel running the loop compiles to as many float64 instructions as one running the smooth
    value alone."""
    if simulator_enabled():
        pytest.skip("the simulator compiles no PTX")
    cuda = numba_cuda
    from numba.cuda import dispatcher

    from kernels.mandelbrot.loops import perturbation_loop as pl
    from kernels.mandelbrot.loops.step_helpers import make_step_helpers
    from kernels.mandelbrot.loops.targets import GPU_ADD32, GPU_MUL32
    monkeypatch.setattr(dispatcher, "get_current_device",
                        lambda: types.SimpleNamespace(compute_capability=(9, 0)))
    smooth = make_step_helpers(GPU_MUL32, GPU_ADD32, cuda.jit(device=True),
                               *pl.LIMITS32[2:4])[0]
    walk = pl._walk_gpu32

    def walk_k(out, counts, cdr, cdi, zo, bt, levels, max_iter, inj):
        v, a, b, sk, rb, doubt = walk(cdr[0], cdi[0], zo, bt, levels, max_iter, 1.0, inj)
        out[0] = v
        counts[0] = a + b + sk + rb + doubt

    def smooth_k(out, r2, n):
        out[0] = smooth(r2[0], n)
    try:
        ptx_walk, _ = cuda.compile_ptx(
            walk_k, "float64[::1], int64[::1], float32[::1], float32[::1], float32[::1], "
                    "float32[::1], int64[:, ::1], int64, float64", cc=(9, 0))
    except Exception as exc:   # no NVVM: a machine without the CUDA toolkit
        pytest.skip(f"cannot compile PTX here: {type(exc).__name__}")
    ptx_smooth, _ = cuda.compile_ptx(smooth_k, "float64[::1], float32[::1], int64", cc=(9, 0))
    assert re.search(r"\bfma\.rn\.f32\b|\bmul\.rn\.f32\b", ptx_walk)
    assert len(_F64.findall(ptx_walk)) == len(_F64.findall(ptx_smooth)) > 0


def test_32_bit_loop_counts_as_the_64_bit_one(cpu_backend, monkeypatch):
    """make_walk's compact walk (the float32 loop's integers in 32 bits, an orbit row in one load
    carried to the next step, padded table rows) against its 64-bit walk with the same float32
    operations over the unpadded table: the same values and counts on every pixel, at a place
    with BLA steps and rebases."""
    from kernels.mandelbrot.loops import perturbation_loop as pl
    from kernels.mandelbrot.loops.perturbation_loop import delta_c_cpu, make_walk
    from kernels.mandelbrot.loops.targets import (CPU_ADD32, CPU_MUL32, CPU_SQRT32, LoopCode,
                                                 cpu_jit, cpu_loop_jit)
    old = make_walk(CPU_MUL32, CPU_ADD32, CPU_SQRT32, cpu_jit(), cpu_loop_jit(), pl.LIMITS32)[1]

    def rows_64(values, stats, row0, nrows, stride, d0r, d0i, step, cexp, half_w, half_h, zo,
                bt, levels, eps, max_iter, ctl):
        bt = bt.reshape(-1, BW32)[:, :BW].reshape(-1)      # make_walk's rows, unpadded
        for r in range(row0, row0 + nrows):
            stats[r] = 0
            for c in range(values.shape[1]):
                cdr, cdi = delta_c_cpu(r, c, d0r, d0i, step, cexp, half_w, half_h)
                v, a, b, sk, rb, shift = old(np.float32(cdr), np.float32(cdi), zo, bt, levels,
                                             eps, max_iter, 0)
                values[r, c] = v
                stats[r] += (a, b, sk, rb, 1 if shift > 0 else 0)

    req = DeepRequest(loc.MINIBROT_139.center_re, loc.MINIBROT_139.center_im, "4e-20", (24, 18),
                      3000)
    r = DeepRenderer(cpu_backend)
    r.number_type = "float32"
    new = r.render_values(req)
    monkeypatch.setattr(pl, "CODE32", LoopCode(rows_64, None, None))
    r = DeepRenderer(cpu_backend)
    r.number_type = "float32"
    got = r.render_values(req)
    assert (new.number_type, got.number_type) == ("float32", "float32")
    np.testing.assert_array_equal(new.values, got.values)
    assert new.stats == got.stats and new.stats["rebases"] > 0 and new.stats["bla_steps"] > 0
