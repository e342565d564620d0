"""Exponential-map keyframes on the CPU twin (issue 37): the log-polar grid the deep loops take,
keyframes against plain escape counts at their own points, frames assembled from them against
the frames rendered directly, and the layout's sizes and needs."""
import dataclasses
import math

import numpy as np
import pytest

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.keyframes.expmap import expmap_of, width_log2
from kernels.mandelbrot.keyframes.expmap_assemble import Assembler
from kernels.mandelbrot.keyframes.expmap_quality import counts_within, nearest_samples, ssim
from kernels.mandelbrot.keyframes.expmap_render import KeyframeRenderer, keyframe_request, pinned_orbit
from kernels.mandelbrot.keyframes.zoom_path import zoom_in

SIZE = (64, 36)


def escape(c: complex, limit: int) -> float:
    """The whole escape count as escape.py counts it (|z|^2 > 1e6 = BAILOUT2?), plain Python."""
    from kernels.mandelbrot.loops.escape import BAILOUT2
    z = 0j
    for n in range(1, limit + 1):
        z = z * z + c
        if z.real * z.real + z.imag * z.imag > BAILOUT2:
            return n - 1
    return limit


@pytest.fixture(scope="module")
def movie(tmp_path_factory):
    from kernels.backend import resolve
    path = zoom_in("-0.7436438870371587", "0.1318259042053119", "1e-9", None, 48)
    em = expmap_of(path, SIZE)
    renderer = KeyframeRenderer(resolve("cpu"))
    with pinned_orbit(em):
        keys = {k: renderer.render(em, k) for k in range(em.count - 1, -1, -1)}
    return path, em, keys


def test_the_layout_covers_every_frame_at_its_pixels():
    from kernels.mandelbrot.keyframes.expmap import _exit
    path = zoom_in("-0.75", "0.1", "1e-6", None, 60)
    em = expmap_of(path, (1920, 1080))
    half = (0.5, 1080 / 1920 / 2)
    # each sector as fine, around and along the radius, as the screen edge it faces needs
    for s, (cols, row0, rows, off) in enumerate(em.sectors):
        ta, tb = 2 * math.pi * s / len(em.sectors), 2 * math.pi * (s + 1) / len(em.sectors)
        need = max(_exit(em.a, half, ta + (tb - ta) * q / 200) for q in range(201))
        assert math.log(2) * need * 1920 <= cols < math.log(2) * need * 1920 * 1.01 + 1
        step = math.log(2) / cols
        assert (row0 + 0.5) * step < ta and (row0 + rows - 0.5) * step > tb    # a row beyond
    assert em.sectors[-1][3] + em.sectors[-1][0] * em.sectors[-1][2] == em.samples
    # the sectors toward the nearer edges are coarser than the farthest corner's
    assert min(c for c, *_ in em.sectors) < max(c for c, *_ in em.sectors) * 0.8
    # from the whole set's corner to a quarter of the deepest frame's pixel
    assert 2.0 ** em.outer_log2 >= em.rho_max * 3
    assert em.inner_log2(em.count - 1) <= math.log2(1e-6 / 1920 / 4)
    first, last = em.needs(width_log2("1e-6"))
    assert last == em.count - 1 and first > 0
    # limits never fall short of a frame that samples the keyframe
    for f in range(0, 60, 7):
        loc = path.frame(f)
        a, b = em.needs(width_log2(loc.width))
        assert all(em.limits[k] >= loc.iters for k in range(a, b + 1))


def test_the_loops_take_a_log_polar_grid():
    from kernels.mandelbrot.loops.perturbation_loop import delta_c_cpu
    W, row0, R, cexp = 30.0, 17, 0.75, -3
    for row, col in ((0, 0), (17, 5), (271, 29)):
        got = complex(*delta_c_cpu(row, col, 0.125, -0.25, R, cexp, -W, -row0))
        rho = R * 2 ** ((col + 0.5) / W)
        th = (row + row0 + 0.5) * math.log(2) / W
        want = (complex(0.125, -0.25) + rho * complex(math.cos(th), math.sin(th))) * 2.0 ** cexp
        assert got == pytest.approx(want, rel=1e-14)


def test_keyframes_hold_the_escape_counts_of_their_points(movie):
    path, em, keys = movie
    rng = np.random.default_rng(5)
    p = complex(float(em.centre_re), float(em.centre_im))
    for k in (0, 3, em.count // 2):
        lr, th = em.places(k)
        agree = 0
        for n in rng.integers(em.samples, size=40):
            c = p + 2.0 ** lr[n] * complex(math.cos(th[n]), math.sin(th[n]))
            agree += abs(math.floor(keys[k][n]) - escape(c, em.limits[k])) <= 1
        assert agree >= 39, (k, agree)


def synthetic(em):
    """Keyframes of a known smooth function of log radius and angle: value = F(log2 ρ, θ)."""
    return {k: F(*em.places(k)) for k in range(em.count)}


def F(lr, th):
    return 50.0 + 2.0 * lr + 3.0 * np.cos(th)


def pixel_places(em, lw):
    wpx, hpx = em.size
    x = (np.arange(wpx) + 0.5 - 0.5 * wpx) / wpx - em.a[0]
    y = (0.5 * hpx - np.arange(hpx) - 0.5) / wpx - em.a[1]
    u = x[None, :] + 1j * y[:, None]
    return lw + np.log2(np.abs(u)), np.angle(u)


def assembled_synthetic(backend, em, lw, limit=1000):
    asm = Assembler(backend, em, em.count)
    for k, v in synthetic(em).items():
        asm.load(k, v)
    first, last = em.needs(lw)
    out = asm.values(lw, limit, first, last)
    return out if isinstance(out, np.ndarray) else out.copy_to_host()


@pytest.mark.parametrize("centre", [("-0.75", "0.1"), ("0.3", "-0.5")])
def test_assembly_samples_each_pixel_at_its_log_radius_and_angle(cpu_backend, centre):
    path = zoom_in(*centre, "1e-5", None, 30)
    em = expmap_of(path, SIZE)
    for f in (0, 15, 29):
        lw = width_log2(path.frame(f).width)
        got = assembled_synthetic(cpu_backend, em, lw)
        lr, th = pixel_places(em, lw)
        # bilinear on a function linear in log radius, smooth in angle: exact to O(1/rows²)
        inner = lr > em.inner_log2(em.count - 1) + 2.0 / min(c for c, *_ in em.sectors)
        assert np.abs(got - F(lr, th))[inner].max() < 0.01, f


def test_inside_samples_make_the_pixel_inside_and_stay_out_of_the_mean(cpu_backend):
    path = zoom_in("-0.75", "0.1", "1e-5", None, 30)
    em = expmap_of(path, SIZE)
    asm = Assembler(cpu_backend, em, em.count)
    for k in range(em.count):
        th = em.places(k)[1]
        v = np.where(np.sin(th) > 0, 10_000.0, 7.5)    # the upper half plane: inside
        asm.load(k, v)
    lw = width_log2(path.frame(10).width)
    out = asm.values(lw, 5000, *em.needs(lw))
    _, th = pixel_places(em, lw)
    # never a mean with an inside count: outside means of 7.5 alone
    assert np.all((out == 5000.0) | (np.abs(out - 7.5) < 1e-12))
    far = np.abs(np.sin(th)) > 0.2
    assert (out[far & (th > 0)] == 5000.0).all()
    assert np.allclose(out[far & (th < 0)], 7.5, rtol=0, atol=1e-12)


def test_assembled_frames_look_like_the_rendered_ones(movie):
    from kernels.backend import resolve
    from kernels.mandelbrot.jobs import make_renderer
    from services.movie import frame_request
    path, em, keys = movie
    be = resolve("cpu")
    asm = Assembler(be, em, em.count)
    for k, v in keys.items():
        asm.load(k, v)
    # 64×36 frames of the seahorse valley are mostly detail below a pixel: bounds for this size
    for f, least in ((0, 0.8), (47, 0.55)):
        loc = path.frame(f)
        lw = width_log2(loc.width)
        first, last = em.needs(lw)
        req = dataclasses.replace(frame_request(path, f, None, SIZE, (("mapping", "sqrt"),)),
                                  want_values=True)
        direct = make_renderer(req, be).render(req)
        got = asm.frame(req, lw, loc.iters, first, last)
        assert got.shape == (SIZE[1], SIZE[0], 4)
        assert ssim(got, direct.rgba) >= least, f
        # where a keyframe sample sits on the pixel, the counts agree
        near, dist = nearest_samples(em, lw, keys, loc.iters)
        on = dist < 0.01
        assert counts_within(near, direct.values, 1, on) >= 0.75, f
    # a keyframe missing from the slots is refused, not read as garbage
    asm.drop(em.count - 1)
    with pytest.raises(RuntimeError):
        asm.values(lw, loc.iters, first, last)


def test_keyframe_request_is_a_log_polar_deep_request(movie):
    _, em, _ = movie
    req = keyframe_request(em, 2, 3).validate()
    cols, row0, rows, _ = em.sectors[3]
    assert (req.polar, req.polar_row0, req.size) == (cols, row0, (cols, rows))
    with pytest.raises(ValueError):
        dataclasses.replace(req, within=(rows * 2, 0)).validate()


def test_deep_keyframes_hold_the_counts_of_their_points_own_orbits(cpu_backend):
    """A keyframe at 1e-35 against one-pixel deep frames centred exactly on its samples, each
    with a reference orbit of its own point (MPFR's count there): no shared orbit between them."""
    import gmpy2

    from kernels.mandelbrot.deep.renderer import DeepRenderer
    from kernels.mandelbrot.requests.deep_request import DeepRequest
    path = zoom_in("-0.7436438870371587", "0.1318259042053119", "1e-35", None, 20)
    em = expmap_of(path, (16, 10))
    k = em.count - 8
    with pinned_orbit(em):
        values = KeyframeRenderer(cpu_backend).render(em, k)
    own = DeepRenderer(cpu_backend)         # no store: each pixel's own orbit
    own.precision_headroom = 0
    rng = np.random.default_rng(11)
    digits = len(em.centre_re) + 20
    agree = 0
    with gmpy2.context(gmpy2.get_context(), precision=4 * digits):
        p = (gmpy2.mpfr(em.centre_re), gmpy2.mpfr(em.centre_im))
        for _ in range(12):
            n = int(rng.integers(em.samples))
            cols, row0, _, off = [x for x in em.sectors if x[3] <= n][-1]
            i, j = divmod(n - off, cols)
            rho = gmpy2.mpfr(2) ** em.inner_log2(k) * gmpy2.exp2(gmpy2.mpfr(j + 0.5) / cols)
            th = (row0 + i + 0.5) * gmpy2.log(2) / cols
            req = DeepRequest(format(p[0] + rho * gmpy2.cos(th), f".{digits}f"),
                              format(p[1] + rho * gmpy2.sin(th), f".{digits}f"),
                              em.radius(k), (1, 1), int(em.limits[k]))
            v = own.render_values(req).values[0, 0]
            own.orbit = None                    # the next point computes its own
            agree += abs(math.floor(v) - math.floor(values[n])) <= 1
    assert agree >= 11, agree


def test_keyframes_share_a_table_over_many_octaves(movie, cpu_backend):
    """Keyframes round their table's bound to 64 bits (expmap_render.TABLE_SLACK_BITS), frames
    to 4: twelve consecutive keyframes take one or two builds, not three or four."""
    _, em, _ = movie
    r = KeyframeRenderer(cpu_backend)
    with pinned_orbit(em):
        builds = sum(not r.deep.render_values(keyframe_request(em, k, 0)).table_reused
                     for k in range(em.count - 12, em.count))
    assert builds <= 2, builds


def test_assembled_pixels_agree_with_direct_frames_at_their_samples_points(movie):
    """Pixels of an assembled frame against one-pixel deep frames centred exactly on the keyframe
    sample each pixel is given (expmap_quality.direct_at_samples): the two methods where both
    sample one point agree within ±1, whatever the fractal does between pixels."""
    from kernels.backend import resolve
    from kernels.mandelbrot.reference.reference_store import shared_store
    from kernels.mandelbrot.deep.renderer import DeepRenderer
    from kernels.mandelbrot.keyframes.expmap_quality import direct_at_samples, sample_point
    path, em, keys = movie
    deep = DeepRenderer(resolve("cpu"))
    deep.references = shared_store()
    loc = path.frame(47)
    lw = width_log2(loc.width)
    near, dist, (ks, ms) = nearest_samples(em, lw, keys, loc.iters, which=True)
    rng = np.random.default_rng(7)
    pix = rng.choice(near.size, size=24, replace=False)
    picks = [(ks.flat[p], ms.flat[p], near.flat[p], loc.iters) for p in pix]
    assert all(np.isfinite(p[2]) for p in picks)
    with pinned_orbit(em):
        assert direct_at_samples(em, picks, deep) >= 0.95
        # a count moved by two is found out: the check can fail
        wrong = [(k, m, v + 2.0 if v < loc.iters - 3 else v - 3.0, lim) for k, m, v, lim in picks]
        assert direct_at_samples(em, wrong, deep) <= 0.1
    # the sample's point lies at its log radius from the fixed point, as the manifest says
    import gmpy2
    k, m = int(ks.flat[pix[0]]), int(ms.flat[pix[0]])
    cols, _, _, off = [x for x in em.sectors if x[3] <= m][-1]
    re, im = sample_point(em, k, m)
    with gmpy2.context(precision=400):
        d = gmpy2.hypot(gmpy2.mpfr(re) - gmpy2.mpfr(em.centre_re),
                        gmpy2.mpfr(im) - gmpy2.mpfr(em.centre_im))
        assert abs(float(gmpy2.log2(d)) - (em.inner_log2(k) + ((m - off) % cols + 0.5) / cols)) < 1e-9
