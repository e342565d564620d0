"""How close an assembled frame (expmap_assemble.py) is to the directly rendered one: SSIM on the
colours and the escape counts' agreement. NumPy only (scikit-image is not a dependency); the
tests and tools/keyframes_bench.py use both.

SSIM as Wang et al. (2004) define it, with their constants (K1 = 0.01, K2 = 0.03, L = 255) over
uniform 7×7 windows (scikit-image's default window), averaged over the three colour channels.
"""
from __future__ import annotations

import math

import numpy as np

WINDOW = 7
K1, K2, RANGE = 0.01, 0.03, 255.0


def _box(a: np.ndarray, n: int) -> np.ndarray:
    """Means of every n×n window lying wholly inside `a` (valid positions only)."""
    c = np.cumsum(np.cumsum(np.pad(a, ((1, 0), (1, 0))), axis=0), axis=1)
    return (c[n:, n:] - c[:-n, n:] - c[n:, :-n] + c[:-n, :-n]) / float(n * n)


def ssim_channel(x: np.ndarray, y: np.ndarray, n: int = WINDOW) -> float:
    x, y = x.astype(np.float64), y.astype(np.float64)
    mx, my = _box(x, n), _box(y, n)
    cov = n * n / (n * n - 1.0)     # sample (co)variances, as scikit-image takes them
    vx = (_box(x * x, n) - mx * mx) * cov
    vy = (_box(y * y, n) - my * my) * cov
    vxy = (_box(x * y, n) - mx * my) * cov
    c1, c2 = (K1 * RANGE) ** 2, (K2 * RANGE) ** 2
    s = ((2 * mx * my + c1) * (2 * vxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
    return float(s.mean())


def ssim(a: np.ndarray, b: np.ndarray) -> float:
    """SSIM of two RGBA (or RGB) uint8 pictures (H, W, 3 or 4), the mean over R, G and B."""
    if a.shape != b.shape:
        raise ValueError(f"pictures of different shapes: {a.shape} and {b.shape}")
    return float(np.mean([ssim_channel(a[..., c], b[..., c]) for c in range(3)]))


def counts_within(a: np.ndarray, b: np.ndarray, tolerance: int = 1, mask=None) -> float:
    """The fraction of pixels whose escape counts (the whole part of the smooth counts) differ by
    at most `tolerance`, over `mask` (all pixels when None)."""
    d = np.abs(np.floor(a) - np.floor(b)) <= tolerance
    if mask is not None:
        d = d[mask]
    return float(d.mean()) if d.size else 1.0


def nearest_samples(em, lw: float, keyframes: dict, limit: int, which: bool = False):
    """For every pixel of a frame 2^lw wide: the value of the keyframe sample nearest to it (in
    the pixel's sector) and how far that sample lies from the pixel's centre, in pixels; (values,
    distances), NaN where the sample's keyframe is not in `keyframes` ({k: packed samples});
    counts at or above the frame's `limit` are the limit, as the assembly takes them. Pixels
    whose nearest sample sits on them (distance ≪ 1) are where a keyframe and the direct frame
    sample one point. `which`: also each pixel's sample as (keyframe, index in its packed
    samples), for sample_point."""
    wpx, hpx = em.size
    x = (np.arange(wpx) + 0.5 - 0.5 * wpx) / wpx - em.a[0]
    y = (0.5 * hpx - np.arange(hpx) - 0.5) / wpx - em.a[1]
    u = x[None, :] + 1j * y[:, None]
    m = np.maximum(np.abs(u), 1e-300)
    theta = np.mod(np.angle(u), 2 * np.pi)
    sec = np.array(em.sectors, dtype=np.int64)
    sc = np.minimum(len(sec) - 1, (theta * len(sec) / (2 * np.pi)).astype(np.int64))
    cols, row0, rows, off = (sec[sc, c] for c in range(4))
    g = np.clip(np.rint((em.outer_log2 - lw - np.log2(m)) * cols - 0.5), 0,
                em.count * cols - 1).astype(np.int64)
    i = np.clip(np.rint(theta * cols / np.log(2) - 0.5 - row0), 0, rows - 1).astype(np.int64)
    k, j = g // cols, cols - 1 - g % cols
    lr = em.inner_log2(0) + 1 - (g + 0.5) / cols - lw       # the sample's log2 radius, widths
    us = np.exp2(lr) * np.exp(1j * (row0 + i + 0.5) * np.log(2) / cols)
    dist = np.abs(us - u) * wpx
    values = np.full((hpx, wpx), np.nan)
    index = off + i * cols + j
    for kk in np.unique(k):
        if int(kk) in keyframes:
            sel = k == kk
            values[sel] = keyframes[int(kk)][index[sel]]
    if which:
        return np.minimum(values, float(limit)), dist, (k, index)
    return np.minimum(values, float(limit)), dist


def sample_point(em, k: int, m: int) -> tuple[str, str]:
    """Where sample m of keyframe k lies (its packed index, ExpMap.sectors), as decimal strings
    of c precise enough for a one-pixel deep frame centred exactly there (MPFR, the keyframes
    manifest's formula)."""
    import gmpy2
    cols, row0, _, off = [x for x in em.sectors if x[3] <= m][-1]
    i, j = divmod(int(m) - off, cols)
    digits = len(em.centre_re) + 40
    with gmpy2.context(gmpy2.get_context(), precision=int(digits * 3.33) + 64):
        rho = gmpy2.mpfr(2) ** em.inner_log2(k) * gmpy2.exp2(gmpy2.mpfr(j + 0.5) / cols)
        th = (row0 + i + 0.5) * gmpy2.log(2) / cols
        return (format(gmpy2.mpfr(em.centre_re) + rho * gmpy2.cos(th), f".{digits}f"),
                format(gmpy2.mpfr(em.centre_im) + rho * gmpy2.sin(th), f".{digits}f"))


def direct_at_samples(em, picks, deep) -> float:
    """The fraction of `picks` [(keyframe k, sample index m, the count taken from it, limit)]
    whose count a one-pixel deep frame centred exactly on the sample's point gives within ±1
    (`deep` a DeepRenderer; as wide as the keyframe's radius): the keyframes against direct
    rendering where both sample one point."""
    from ..requests.deep_request import DeepRequest
    if not picks:
        return 1.0
    agree = 0
    for k, m, value, limit in picks:
        re, im = sample_point(em, int(k), int(m))
        v = deep.render_values(DeepRequest(re, im, em.radius(int(k)), (1, 1),
                                           int(limit))).values[0, 0]
        agree += abs(math.floor(min(v, limit)) - math.floor(min(value, limit))) <= 1
    return agree / len(picks)
