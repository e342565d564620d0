"""float32 beside float64 on the CPU: the float32 counts against float64's and against brute force
(arbitrary precision) where number_type.py says float32 is exact enough, the rule itself with a
simulated GeForce (float64 at 1/64) and H100 (1/2), the renderer switch and the bench pair.

"Exact enough" is measured against the picture's own sensitivity: float32 may change a pixel's
count only where moving the pixel by a thousandth of its width changes it too, so the float32
picture departs on fewer pixels than the exact one moved by 1e-3 pixel."""
from dataclasses import replace

import numpy as np
import pytest

from kernels.backend import Backend
from kernels.mandelbrot.loops import escape as mk
from kernels.mandelbrot import jobs
from kernels.mandelbrot.requests import number_type as nt
from kernels.mandelbrot import renderer as m
from kernels.mandelbrot.requests.request import DeepFrameRequest, ProgressiveRequest

GEFORCE = nt.Rates(64.0, 1.0, "simulated GeForce")
H100 = nt.Rates(2.0, 1.0, "simulated H100")
WIDE = [(-0.5, 0.0, 3.0, (48, 36), 200), (-0.1, 0.9, 0.01, (48, 36), 300)]


def _counts(backend, req, number_type):
    r = m.Renderer(backend, number_type=number_type)
    frame = r.render(replace(req, want_values=True, number_type=number_type))
    return m.iteration_counts(frame.values, req.max_iter)


def _brute(req, shift=0.0):
    """Escape counts in 160-bit arithmetic at each pixel's centre moved by `shift` pixels."""
    gmpy2 = pytest.importorskip("gmpy2")
    ctx = gmpy2.get_context()
    ctx.precision = 160
    w, h = req.size
    step = gmpy2.mpfr(req.width) / w
    out = np.zeros((h, w), np.int64)
    for r in range(h):
        for c in range(w):
            cx = gmpy2.mpfr(req.center_re) + (c + 0.5 - w / 2 + shift) * step
            cy = gmpy2.mpfr(req.center_im) - (r + 0.5 - h / 2 + shift) * step
            x = y = gmpy2.mpfr(0)
            n = req.max_iter
            for k in range(1, req.max_iter + 1):
                x, y = x * x - y * y + cx, 2 * x * y + cy
                if x * x + y * y > 65536:
                    n = k
                    break
            out[r, c] = n
    return out


@pytest.mark.parametrize("place", WIDE)
def test_float32_agrees_with_float64_and_brute_force_where_the_rule_says_so(cpu_backend, place):
    req = m.MandelbrotRequest(*place)
    assert nt.float32_state(req.center_re, req.center_im, req.width, req.size[0])[0] == "ok"
    c64, c32 = _counts(cpu_backend, req, "float64"), _counts(cpu_backend, req, "float32")
    exact, moved = _brute(req), _brute(req, 1e-3)
    np.testing.assert_array_equal(c64, exact)         # the brute force is the float64 picture
    sensitive = int((moved != exact).sum())
    assert sensitive > 0                               # the frame has band edges to cross
    assert int((c32 != exact).sum()) < sensitive
    assert (c32 == c64).mean() > 0.98


def test_float32_departs_where_the_rule_says_it_runs_out(cpu_backend):
    req = m.MandelbrotRequest(-0.743643887037151, 0.131825904205330, 1e-4, (48, 36), 400)
    assert nt.float32_state(req.center_re, req.center_im, req.width, 48)[0] != "ok"
    c64, c32 = _counts(cpu_backend, req, "float64"), _counts(cpu_backend, req, "float32")
    moved = _counts(cpu_backend, replace(req, center_re=req.center_re + 1e-3 * req.pixel_size,
                                         center_im=req.center_im - 1e-3 * req.pixel_size),
                    "float64")
    assert int((c32 != c64).sum()) > int((moved != c64).sum())


def test_pixel_axes_round_the_float64_coordinates_once():
    req = m.MandelbrotRequest(-0.75, 0.1, 0.3, (7, 5), 10)
    args = m.PixelGrid.of(req).args(2, 10)
    xs, ys = mk.pixel_axes(args, 3, 7)
    assert xs.dtype == ys.dtype == np.float32 and xs.shape == (7,) and ys.shape == (3,)
    for col in range(7):
        assert xs[col] == np.float32(req.pixel_to_complex(2, col)[0])
    for row in range(3):
        assert ys[row] == np.float32(req.pixel_to_complex(2 + row, 0)[1])


def test_float32_cpu_band_kernel_matches_the_one_point_function(cpu_backend):
    req = m.MandelbrotRequest(-0.1, 0.9, 0.05, (9, 5), 120, want_values=True,
                              number_type="float32")
    frame = m.Renderer(cpu_backend, number_type="float32").render(req)
    xs, ys = mk.pixel_axes(m.PixelGrid.of(req).args(0, 120), 5, 9)
    for r in range(5):
        for c in range(9):
            assert frame.values[r, c] == mk.value_kernel("float32")(xs[c], ys[r], 120)
    assert frame.meta["number_type"] == "float32"


# ---------------------------------------------------------------- the rule

def test_same_frame_float32_on_geforce_float64_on_h100():
    place = (-0.75, 0.1, 3.0, 1920)
    g = nt.choose(*place, GEFORCE)
    h = nt.choose(*place, H100)
    assert g.number_type == "float32" and not g.forced and "1/64" in g.reason
    assert h.number_type == "float64" and "1/2" in h.reason


def test_too_deep_for_float32_is_float64_even_on_geforce():
    w32, w64 = nt.run_out_widths(-0.75, 0.1, 1920)
    assert w64 < w32
    above, below = nt.choose(-0.75, 0.1, w32 * 1.01, 1920, GEFORCE), \
        nt.choose(-0.75, 0.1, w32 * 0.99, 1920, GEFORCE)
    assert above.number_type == "float32"
    assert below.number_type == "float64" and f"{w32:.3g}" in below.reason
    assert nt.float32_state(-0.75, 0.1, w32 * 0.99, 1920)[0] == "warn"
    assert nt.float32_state(-0.75, 0.1, w32 / 100, 1920)[0] == "limit"


def test_forced_types_win_and_say_so():
    deep = (-0.75, 0.1, 1e-6, 1920)
    f = nt.choose(*deep, H100, "float32")
    assert f.number_type == "float32" and f.forced and "run out" in f.reason
    assert nt.choose(-0.75, 0.1, 3.0, 1920, GEFORCE, "float64").number_type == "float64"
    with pytest.raises(ValueError, match="auto, float32, float64"):
        nt.choose(*deep, H100, "half")


def test_device_rates_nominal_and_measured(monkeypatch):
    h100 = Backend("cuda", device="NVIDIA H100 80GB HBM3")
    rtx = Backend("cuda", device="NVIDIA GeForce RTX 4070")
    assert nt.device_rates(h100).f64_fraction == 0.5
    assert nt.device_rates(rtx).f64_fraction == 1 / 64
    assert nt.device_rates(Backend("cpu")).f64_fraction == 1.0
    monkeypatch.setattr(nt, "RATES_SOURCE", lambda be: (60.0, 30.0) if be is h100 else None)
    assert nt.device_rates(h100) == nt.Rates(60.0, 30.0, "measured")
    assert nt.device_rates(rtx).source.startswith("nominal")

    def broken(be):
        raise RuntimeError("no roof")
    monkeypatch.setattr(nt, "RATES_SOURCE", broken)
    assert nt.device_rates(h100).f64_fraction == 0.5


def test_resolve_sets_plain_and_deep_requests():
    rtx = Backend("cuda", device="NVIDIA GeForce RTX 3080")
    req = m.MandelbrotRequest(-0.5, 0.0, 3.0, (640, 480), 100)
    got, choice = nt.resolve(req, rtx)
    assert got.number_type == "float32" and choice.number_type == "float32"
    assert jobs.renderer_kind(got) == jobs.FLOAT32 and jobs.renderer_kind(req) == jobs.FLOAT64
    assert nt.resolve(req, Backend("cpu"))[0].number_type == "float64"
    reach = DeepFrameRequest("-0.75", "0.1", "1e-20", (64, 48), 1000)
    beyond = DeepFrameRequest("-0.75", "0.1", "1e-30", (64, 48), 1000)   # spacing < 2^-100
    assert nt.resolve(reach, rtx)[0].number_type == "float32"
    assert nt.resolve(beyond, rtx, "float32")[0].number_type == "float64"
    assert jobs.renderer_kind(nt.resolve(reach, rtx)[0]) == jobs.DEEP
    both = ProgressiveRequest(full=req, coarse=req)
    assert nt.resolve(both, rtx) == (both, None)
    with pytest.raises(ValueError, match="float64 or float32"):
        replace(req, number_type="float16").validate()
    with pytest.raises(ValueError, match="float64 or float32"):
        replace(reach, number_type="half").validate()


def test_bench_pair_reports_both_types_and_the_ratio(cpu_backend, monkeypatch):
    from kernels.mandelbrot import bench as mb
    monkeypatch.setattr(mb, "FULL_HD", (32, 18))
    monkeypatch.setattr(mb, "FLOAT32_FRAMES", (("whole set", mb.FULL, 64),))
    monkeypatch.setattr(mb, "FLOAT32_DEEP", ("1e-25", 2000, (16, 9)))
    rows = mb._float32_pairs(cpu_backend, 2)
    variants = [r["variant"] for r in rows]
    assert variants[:2] == ["whole set: float64", "whole set: float32"]
    if len(rows) > 2:       # the deep pair (with gmpy2)
        assert variants[2:] == ["deep 1e-25: float64", "deep 1e-25: float32"]
        assert [r["metrics"]["deltas"] for r in rows[2:]] == ["float64", "float32"]
        assert rows[3]["metrics"]["float32/float64"] > 0
    r64, r32 = (r["metrics"] for r in rows[:2])
    assert r64["G iter/s"] > 0 and r32["G iter/s"] > 0
    assert r32["float32/float64"] == pytest.approx(r32["G iter/s"] / r64["G iter/s"])
    assert r32["float32 here"] == "ok"


def test_the_rates_come_from_the_roofs_measured_on_this_device(monkeypatch, tmp_path):
    """With no source set, the choice reads the roofs kept for the device (as the roofline panel
    and the bench keep them), and falls back to the nominal ratio where none are kept."""
    from kernels import roofs
    from kernels.roofs import store
    monkeypatch.setattr(nt, "RATES_SOURCE", None)
    monkeypatch.setenv("GPU_EXPLORER_CACHE_DIR", str(tmp_path))
    cpu = Backend("cpu")
    assert nt.device_rates(cpu).source != "measured"
    gpu = Backend("cuda", device="NVIDIA GeForce RTX 4090")
    kept = roofs.Roofs(backend="cpu", device="this CPU", bandwidth_Bps=1e10, f32_flops=64e9,
                       f64_flops=1e9, int32_ops=1e9, measured_at="now", key=roofs.device_key(cpu))
    assert store.save(kept) is None
    # a CPU's measured peaks are its SIMD units': the scalar escape loops keep the nominal 1:1
    assert nt.device_rates(cpu).source != "measured"
    monkeypatch.setattr(roofs, "kept_rates", lambda be: (64e9, 2e9) if be is gpu else None)
    got = nt.device_rates(gpu)
    assert got.source == "measured" and got.f64_fraction == pytest.approx(1 / 32)


def test_float32_step_grouping_setting_is_parsed_or_refused():
    from kernels.mandelbrot.benches import launch_settings as u
    from kernels.mandelbrot.loops.escape_warp import BLOCK_STEPS, BLOCKS_PER_LOOK
    assert u.parse("16,2") == (16, 2) and u.parse(" 8, 1") == (8, 1)
    for bad in ("", None, "16", "0,1", "65,1", "8,0", "8,17", "a,b", "8,2,1"):
        assert u.parse(bad) is None, bad
    assert u.parse(f"{BLOCK_STEPS},{BLOCKS_PER_LOOK}") == (BLOCK_STEPS, BLOCKS_PER_LOOK)
