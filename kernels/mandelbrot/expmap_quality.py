"""How close an assembled frame (expmap_assemble.py) is to the directly rendered one: SSIM on the
colours and the escape counts' agreement. NumPy only (scikit-image is not a dependency); the
tests and tools/keyframes_bench.py use both.

SSIM as Wang et al. (2004) define it, with their constants (K1 = 0.01, K2 = 0.03, L = 255) over
uniform 7×7 windows (scikit-image's default window), averaged over the three colour channels.
"""
from __future__ import annotations

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


def nearest_samples(em, lw: float, keyframes: dict, limit: int):
    """For every pixel of a frame 2^lw wide: the value of the keyframe sample nearest to it (in
    the pixel's sector) and how far that sample lies from the pixel's centre, in pixels; (values,
    distances), NaN where the sample's keyframe is not in `keyframes` ({k: packed samples});
    counts at or above the frame's `limit` are the limit, as the assembly takes them. Pixels
    whose nearest sample sits on them (distance ≪ 1) are where a keyframe and the direct frame
    sample one point."""
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
    for kk in np.unique(k):
        if int(kk) in keyframes:
            sel = k == kk
            values[sel] = keyframes[int(kk)][off[sel] + i[sel] * cols[sel] + j[sel]]
    return np.minimum(values, float(limit)), dist
