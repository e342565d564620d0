"""Exponential-map keyframes of a zoom movie: where they sit, how large they are, which ones each
frame needs. Pure Python (decimal, math): the command line and the window plan a keyframe movie
without loading a kernel; expmap_render.py draws the keyframes, expmap_assemble.py the frames.

A zoom about a fixed point p (zoom_path.ZoomPath between two keyframes: every frame's centre is
p + (c0 − p)·w/w0) shows p at the same place of the screen in every frame: frame f's pixel at
screen offset u (in widths, from the frame's centre) is c = p + w_f·(u − a) with a = (p − c0)/w0.
So every frame is a resampling of one picture in log-polar coordinates around p, log2|c − p| and
arg(c − p), cut into keyframes of one octave of radius each (KF's and zoomasm's method): keyframe
k holds the radii from r_k = 2^(L0 − k − 1) to 2·r_k, column j at radius r_k·2^((j + 0.5)/W),
row i at angle 2π(i + 0.5)/H (loop_args.PixelGrid's log-polar grid).

Resolution: a frame's largest radius on screen is ρmax·w_f (ρmax: p's farthest corner, in
widths). Where a keyframe's outer edge meets that corner its samples must be as fine as the
frame's pixels (w_f / Wpx): around, 2π·ρmax·w_f/H ≤ w_f/Wpx, so H = ⌈2π·ρmax·Wpx·s⌉; along the
radius, ρ·ln2/W ≤ the pixel at the same place, so W = ⌈ln2·ρmax·Wpx·s⌉ (s: `oversample`). Nearer
p a frame's pixels are finer than it needs, so every frame is at least as fine as a keyframe's
outer edge needs. A 1920×1080 frame zooming about its centre: ρmax = 0.57, H = 6,889, W = 760.

Keyframes run from keyframe 0 (outer edge: the shallowest frame's farthest corner) in to where
the deepest frame's pixels around p are a quarter of a pixel across (the disc inside is one
sample's value). A keyframe's iteration limit is that of the deepest frame it appears in (deeper
frames do not reach it), so no frame that uses it asks for more.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Context, Decimal

from .deep.request import log10_of, parse_decimal, parse_width

LOG2_10 = math.log2(10.0)
# the deepest frame's pixels at the disc inside the innermost keyframe: this fraction of a pixel
CENTRE_FRACTION = 0.25
# digits of a keyframe's inner radius 2^e as a decimal (only its exponent matters to the frames)
RADIUS_DIGITS = 40


@dataclass(frozen=True)
class ExpMap:
    """The keyframes of one zoom: `rows` H (angles), `cols` W (columns per octave), `count`
    keyframes, keyframe 0's outer radius 2^`outer_log2`, around p = (`centre_re`, `centre_im`)
    (decimal strings), which sits at `a` = (ax, ay) widths from every frame's centre; frames
    `size` pixels. limits[k]: keyframe k's iteration limit."""
    rows: int
    cols: int
    count: int
    outer_log2: int
    centre_re: str
    centre_im: str
    a: tuple[float, float]
    size: tuple[int, int]
    rho_max: float
    rho_min: float
    limits: tuple[int, ...]

    def inner_log2(self, k: int) -> int:
        """log2 of keyframe k's inner radius."""
        return self.outer_log2 - k - 1

    def radius(self, k: int) -> str:
        """Keyframe k's inner radius as a decimal string (a DeepRequest's `width` when polar)."""
        ctx = Context(prec=RADIUS_DIGITS, Emin=-10 ** 6, Emax=10 ** 6)
        return str(ctx.power(Decimal(2), self.inner_log2(k)))

    def needs(self, width_log2: float) -> tuple[int, int]:
        """(first, last) keyframes a frame 2^width_log2 wide samples: from the one under its
        farthest corner to the one under its pixel nearest p (a quarter pixel, at least)."""
        outer = width_log2 + math.log2(self.rho_max)
        pixel = width_log2 - math.log2(self.size[0])
        inner = max(pixel + math.log2(CENTRE_FRACTION),
                    width_log2 + math.log2(self.rho_min) if self.rho_min > 0 else -math.inf)
        first = max(0, math.floor(self.outer_log2 - outer) - 1)
        last = min(self.count - 1, math.ceil(self.outer_log2 - inner))
        return first, max(first, last)

    def plan(self) -> dict:
        """What the keyframes' values depend on (a parts folder's plan.json records it)."""
        return {"rows": self.rows, "cols": self.cols, "count": self.count,
                "outer_log2": self.outer_log2, "limits_sum": sum(self.limits),
                "limits_last": self.limits[-1] if self.limits else 0}


def width_log2(width) -> float:
    """log2 of a width given as zoom_path gives it (a decimal string), any exponent."""
    return log10_of(parse_width(width)) * LOG2_10


def fixed_point(path) -> tuple[Decimal, Decimal, Decimal, Decimal]:
    """(p_re, p_im, ax, ay) of a two-keyframe zoom_path.ZoomPath: the fixed point with every digit
    the deepest frame needs, and where it sits on screen (widths from the centre, ax to the right,
    ay up). ValueError for a pan (one width: no fixed point)."""
    k0, k1 = path.keyframes[0], path.keyframes[-1]
    if len(path.keyframes) != 2:
        raise ValueError("exponential-map keyframes need a zoom between two places")
    c0 = [parse_decimal(v, "centre") for v in (k0.center_re, k0.center_im)]
    c1 = [parse_decimal(v, "centre") for v in (k1.center_re, k1.center_im)]
    w0, w1 = parse_width(k0.width), parse_width(k1.width)
    if w0 == w1:
        raise ValueError("exponential-map keyframes need a zoom; these places have one width")
    digits = max(len(d.as_tuple().digits) for d in c0 + c1)
    prec = digits - min(w0.adjusted(), w1.adjusted()) + 40
    ctx = Context(prec=prec, Emin=-10 ** 6, Emax=10 ** 6)
    r = ctx.divide(w1, w0)
    one_r = ctx.subtract(Decimal(1), r)
    p = [ctx.divide(ctx.subtract(c1[j], ctx.multiply(c0[j], r)), one_r) for j in range(2)]
    a = [ctx.divide(ctx.subtract(p[j], c0[j]), w0) for j in range(2)]
    return p[0], p[1], a[0], a[1]


def expmap_of(path, size: tuple[int, int], oversample: float = 1.0, iterations=None) -> ExpMap:
    """The keyframes of a movie along `path` (zoom_path.ZoomPath) at frames of `size`.
    iterations(width_log2) -> the limit of a frame that wide (default: the path's own at the
    frames, interpolated); `oversample` multiplies both sides of every keyframe."""
    wpx, hpx = int(size[0]), int(size[1])
    p_re, p_im, ax, ay = fixed_point(path)
    a = (float(ax), float(ay))
    half = (0.5, 0.5 * hpx / wpx)
    rho_max = max(math.hypot(sx * half[0] - a[0], sy * half[1] - a[1])
                  for sx in (-1, 1) for sy in (-1, 1))
    inside = abs(a[0]) <= half[0] and abs(a[1]) <= half[1]
    rho_min = 0.0 if inside else math.hypot(max(0.0, abs(a[0]) - half[0]),
                                            max(0.0, abs(a[1]) - half[1]))
    rows = int(math.ceil(2 * math.pi * rho_max * wpx * oversample / 8.0)) * 8
    cols = int(math.ceil(math.log(2.0) * rho_max * wpx * oversample))
    lws = [width_log2(path.frame(f).width) for f in (0, path.frames - 1)]
    outer = math.ceil(max(lws) + math.log2(rho_max))
    innermost = min(lws) - math.log2(wpx) + math.log2(CENTRE_FRACTION)
    count = max(1, math.ceil(outer - innermost))
    p_digits = _centre_digits(min(lws) - math.log2(wpx))
    probe = ExpMap(rows, cols, count, outer, _round(p_re, p_digits), _round(p_im, p_digits), a,
                   (wpx, hpx), rho_max, rho_min, ())
    return ExpMap(**{**probe.__dict__, "limits": keyframe_limits(probe, path, iterations)})


def keyframe_limits(em: ExpMap, path, iterations=None) -> tuple[int, ...]:
    """Each keyframe's iteration limit: the largest of the frames that sample it (every frame
    visited: 36,000 take about a second), so no frame finds a keyframe's interior too shallow;
    keyframes no frame reaches take their neighbour's."""
    limits = [0] * em.count
    for f in range(path.frames):
        loc = path.frame(f)
        lw = width_log2(loc.width)
        first, last = em.needs(lw)
        limit = int(loc.iters) if iterations is None else int(iterations(lw))
        for k in range(first, last + 1):
            limits[k] = max(limits[k], limit)
    for k in range(1, em.count):
        limits[k] = limits[k] or limits[k - 1]
    for k in range(em.count - 2, -1, -1):
        limits[k] = limits[k] or limits[k + 1]
    return tuple(max(1, v) for v in limits)


def _centre_digits(deepest_pixel_log2: float) -> int:
    """Decimal places of p that place the deepest keyframe's samples (2^-48 of its pixels)."""
    return int(math.ceil((-deepest_pixel_log2 + 48) / LOG2_10)) + 2


def _round(d: Decimal, places: int) -> str:
    q = Decimal(1).scaleb(-places)
    return format(d.quantize(q, context=Context(prec=places + 10)), "f")
