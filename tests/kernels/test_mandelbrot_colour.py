"""Colouring escape values (kernels/mandelbrot/colouring/colour.py): the three mappings against NumPy
references on the CPU, the statistics the mappings rest on, and (marked gpu) the device kernels
against the CPU twin.

What must hold at 10^5–10^7 iterations: "log" and "histogram" colour a frame by where each value
sits among the frame's own values, so adding a large count to every pixel (a deeper frame of the
same shape) leaves the picture as it was; "histogram" spreads the escaped pixels evenly over the
palette."""
from types import SimpleNamespace

import numpy as np
import pytest

from kernels import palettes
from kernels.mandelbrot.colouring import colour as mc
from kernels.mandelbrot.colouring.colourer import Colourer
from kernels.timing import JobTimer

INTERIOR = (1, 2, 3, 255)


def spec(mapping, palette="inferno", density=1.0, offset=0.0):
    return SimpleNamespace(palette=palette, density=density, offset=offset, interior=INTERIOR,
                           mapping=mapping)


def colour(backend, values, sp, max_iter):
    c = Colourer(backend)
    timer = JobTimer(backend, None, "test")
    if backend.is_gpu:
        from numba import cuda
        dv = cuda.to_device(np.ascontiguousarray(values))
        out = cuda.device_array(values.shape, np.uint32)
        c.colour(dv, out, sp, max_iter, timer)
        host = out.copy_to_host()
    else:
        host = np.empty(values.shape, np.uint32)
        c.colour(np.ascontiguousarray(values), host, sp, max_iter, timer)
    timer.finish()
    return host.view(np.uint8).reshape(values.shape + (4,))


def lut_index(rgba, palette="inferno"):
    """The palette entry each pixel shows (palettes may repeat a colour: first match)."""
    lut = palettes.lut(palette)
    packed = mc.pack_rgba(lut)
    inv = {}
    for i, p in enumerate(packed):
        inv.setdefault(int(p), i)
    flat = rgba.reshape(-1, 4).copy().view(np.uint32).reshape(-1)
    return np.array([inv.get(int(p), -1) for p in flat]).reshape(rgba.shape[:2])


def expected_phase(values, max_iter, mapping, density=1.0, offset=0.0):
    """The NumPy reference of each mapping's phase s (NaN inside)."""
    v = np.asarray(values, dtype=np.float64)
    out = np.full(v.shape, np.nan)
    esc = v < max_iter
    if mapping == "sqrt":
        out[esc] = offset + density * mc.SQRT_SCALE * np.sqrt(v[esc])
    elif mapping == "log":
        out[esc] = offset + density * mc.LOG_SCALE * np.log1p(v[esc] - v[esc].min())
    else:
        e = v[esc]
        t = np.log1p(e - e.min())
        t = t / t.max() * mc.HIST_BINS if t.max() > 0 else np.zeros_like(t)
        b = np.clip(t.astype(int), 0, mc.HIST_BINS - 1)
        hist = np.bincount(b, minlength=mc.HIST_BINS)
        cdf = np.concatenate([[0], np.cumsum(hist)]) / len(e)
        f = np.clip(t - b, 0, 1)
        out[esc] = offset + density * mc.HIST_PASSES * (cdf[b] + f * (cdf[b + 1] - cdf[b]))
    return out


def expected_index(phase, last=1023):
    phase = np.nan_to_num(phase)
    p = np.mod(phase, 2.0)
    p = np.where(p > 1.0, 2.0 - p, p)
    return np.clip((p * last + 0.5).astype(int), 0, last)


def deep_like_values(rng, shape=(24, 40), base=0.0, max_iter=10_000_000):
    """Smooth counts spread over a few thousand iterations above `base`, some pixels inside."""
    v = base + rng.gamma(2.0, 300.0, size=shape)
    v[rng.random(shape) < 0.1] = max_iter
    return v


@pytest.mark.parametrize("mapping", mc.MAPPINGS)
def test_cpu_mappings_match_numpy_reference(cpu_backend, mapping):
    rng = np.random.default_rng(1)
    vals = deep_like_values(rng, base=50.0)
    rgba = colour(cpu_backend, vals, spec(mapping, density=1.7, offset=0.3), 10_000_000)
    inside = vals >= 10_000_000
    assert (rgba[inside] == INTERIOR).all()
    want = expected_index(expected_phase(vals, 10_000_000, mapping, 1.7, 0.3))[~inside]
    assert_colours(rgba[~inside], want)


def assert_colours(rgba, want, palette="inferno"):
    """rgba shows palette entry `want` on >= 99% of the pixels and a neighbouring entry elsewhere
    (a value within rounding of an entry's edge may land on either side)."""
    lut = palettes.lut(palette)
    exact = np.all(rgba == lut[want], axis=-1)
    near = exact | np.all(rgba == lut[np.clip(want - 1, 0, 1023)], axis=-1) \
        | np.all(rgba == lut[np.clip(want + 1, 0, 1023)], axis=-1)
    assert near.all() and exact.mean() >= 0.99


@pytest.mark.parametrize("mapping", ["log", "histogram"])
def test_deep_counts_get_the_same_colours_as_shallow_ones(cpu_backend, mapping):
    """A frame at ~10^6 iterations colours like the same frame at ~10^2: the mapping is relative
    to the frame's smallest escaped value, so deep frames are not one flat colour."""
    rng = np.random.default_rng(2)
    shallow = deep_like_values(rng, base=20.0)
    deep = np.where(shallow >= 10_000_000, shallow, shallow + 1_000_000.0)
    a = lut_index(colour(cpu_backend, shallow, spec(mapping), 10_000_000))
    b = lut_index(colour(cpu_backend, deep, spec(mapping), 10_000_000))
    assert (np.abs(a - b) <= 1).all()
    outside = shallow < 10_000_000
    assert len(np.unique(b[outside])) > 100     # many colours, not one


def test_sqrt_mapping_washes_out_at_deep_counts(cpu_backend):
    """Why deep frames need log or histogram: under sqrt the same deep frame spans a sliver of the
    palette."""
    rng = np.random.default_rng(3)
    deep = deep_like_values(rng, base=1_000_000.0)
    idx = lut_index(colour(cpu_backend, deep, spec("sqrt"), 10_000_000))[deep < 10_000_000]
    assert idx.max() - idx.min() < 400


def test_histogram_spreads_pixels_evenly_over_one_pass(cpu_backend):
    rng = np.random.default_rng(4)
    vals = rng.exponential(200.0, size=(64, 64)) + 1000.0     # heavily skewed counts
    idx = lut_index(colour(cpu_backend, vals, spec("histogram"), 10_000_000))
    quarters = np.histogram(idx, bins=4, range=(0, 1024))[0] / idx.size
    assert np.all(np.abs(quarters - 0.25) < 0.03), quarters


def test_statistics_on_the_cpu(cpu_backend):
    vals = np.array([[5.0, 100.0, 7.5], [100.0, 3.25, 99.0]])
    stats = np.zeros(mc.N_STATS)
    mc.stats_cpu(vals, 100, stats)
    assert list(stats) == [3.25, 99.0, 4.0]
    hist = np.zeros(mc.HIST_BINS, np.int64)
    mc.histogram_cpu(vals, 100, stats, hist)
    assert hist.sum() == 4 and hist[0] == 1 and hist[-1] == 1
    cdf = np.zeros(mc.HIST_BINS + 1)
    mc.cdf_cpu(hist, cdf)
    assert cdf[0] == 0.0 and cdf[-1] == 1.0 and np.all(np.diff(cdf) >= 0)


def test_all_inside_and_single_value_frames(cpu_backend):
    for vals in (np.full((3, 5), 500.0), np.full((3, 5), 42.5)):
        for m in mc.MAPPINGS:
            rgba = colour(cpu_backend, vals, spec(m), 500)
            assert rgba.shape == (3, 5, 4)
            assert len(np.unique(rgba.reshape(-1, 4), axis=0)) == 1


def test_unknown_mapping_names_the_choices():
    with pytest.raises(ValueError, match="sqrt, log, histogram"):
        mc.mapping_index("gamma")


# ---------------------------------------------------------------- the device kernels

@pytest.mark.gpu
@pytest.mark.parametrize("mapping", mc.MAPPINGS)
def test_gpu_colouring_matches_cpu_twin(gpu_backend, cpu_backend, simulated, mapping):
    rng = np.random.default_rng(5)
    shape = (9, 13) if simulated else (257, 129)          # sizes off the block edges
    vals = deep_like_values(rng, shape=shape, base=123_456.0)
    sp = spec(mapping, palette="viridis", density=2.5, offset=0.4)
    g = colour(gpu_backend, vals, sp, 10_000_000)
    c = colour(cpu_backend, vals, sp, 10_000_000)
    same = np.all(g == c, axis=-1)
    assert same.mean() >= (1.0 if simulated else 0.999)
    gi, ci = lut_index(g, "viridis"), lut_index(c, "viridis")
    assert np.abs(gi - ci).max() <= 1      # at most neighbouring palette entries


@pytest.mark.gpu
def test_gpu_statistics_match_cpu(gpu_backend, simulated):
    from numba import cuda
    rng = np.random.default_rng(6)
    vals = deep_like_values(rng, shape=(7, 11) if simulated else (300, 500), base=10.0)
    stats = np.zeros(mc.N_STATS)
    mc.stats_cpu(vals, 10_000_000, stats)
    hist = np.zeros(mc.HIST_BINS, np.int64)
    mc.histogram_cpu(vals, 10_000_000, stats, hist)
    c = Colourer(gpu_backend)
    timer = JobTimer(gpu_backend, None, "test")
    dv = cuda.to_device(vals)
    c.colour(dv, cuda.device_array(vals.shape, np.uint32), spec("histogram"), 10_000_000, timer)
    timer.finish()
    np.testing.assert_array_equal(c.pool.device("stats", (mc.N_STATS,), np.float64).copy_to_host(), stats)
    gh = c.pool.device("hist", (mc.HIST_BINS,), np.int64).copy_to_host()
    assert gh.sum() == hist.sum() and np.abs(gh - hist).sum() <= 2   # a log's last bit at a bin edge
