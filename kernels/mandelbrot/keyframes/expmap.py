"""Exponential-map keyframes of a zoom movie: where they sit, how large they are, which ones each
frame needs. Pure Python (decimal, math): the command line and the window plan a keyframe movie
without loading a kernel; expmap_render.py draws the keyframes, expmap_assemble.py the frames.

A zoom about a fixed point p (zoom_path.ZoomPath between two keyframes: every frame's centre is
p + (c0 − p)·w/w0) shows p at the same place of the screen in every frame: frame f's pixel at
screen offset u (in widths, from the frame's centre) is c = p + w_f·(u − a) with a = (p − c0)/w0.
So every frame is a resampling of one picture in log-polar coordinates around p, log2|c − p| and
arg(c − p), cut into keyframes of one octave of radius each (KF's and zoomasm's method): keyframe
k holds the radii from r_k = 2^(L0 − k − 1) to 2·r_k.

Resolution: a frame's pixels are w_f/Wpx across. The direction θ from p is on screen out to
ρ(θ)·w_f (ρ(θ): where the ray from p leaves the screen, in widths), so a sample at radius r in
that direction serves frames down to w_f = r/ρ(θ), whose pixels there are r/(ρ(θ)·Wpx): the
samples' spacing, along the radius r·ln2/W and around r·dθ, must be that fine. A keyframe is cut
into SECTORS equal sectors of angle, each with its own W = ⌈ln2·ρ_s·Wpx·s⌉ columns per octave
(ρ_s: the largest ρ(θ) in it; s: `oversample`) and rows as fine around (dθ = ln2/W), one row
beyond each edge (loop_args.PixelGrid's log-polar grid; a sector is a band of its circle): a
sector toward a near edge is coarser than one toward the farthest corner. Its samples are packed
one sector after another in one array per keyframe (`sectors`: columns, first row, rows, offset).

Keyframes run from keyframe 0 (outer edge: the shallowest frame's farthest corner) in to where
the deepest frame's pixels around p are a quarter of a pixel across (the disc inside is one
sample's value). A keyframe's iteration limit is that of the deepest frame it appears in (deeper
frames do not reach it), so no frame that uses it asks for more.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Context, Decimal

from ..requests.deep_request import log10_of, parse_decimal, parse_width

LOG2_10 = math.log2(10.0)
LN2 = math.log(2.0)
TWO_PI = 2.0 * math.pi
# equal sectors of angle a keyframe is cut into, each as fine as its own farthest screen edge
# needs (docs/PERFORMANCE.md: what they save against one resolution all round)
SECTORS = 8
# the deepest frame's pixels at the disc inside the innermost keyframe: this fraction of a pixel
CENTRE_FRACTION = 0.25
# digits of a keyframe's inner radius 2^e as a decimal (only its exponent matters to the frames)
RADIUS_DIGITS = 40


@dataclass(frozen=True)
class ExpMap:
    """The keyframes of one zoom: `sectors` ((columns per octave, first row, rows, offset) of
    each), `count` keyframes, keyframe 0's outer radius 2^`outer_log2`, around p = (`centre_re`,
    `centre_im`) (decimal strings), which sits at `a` = (ax, ay) widths from every frame's
    centre; frames `size` pixels. limits[k]: keyframe k's iteration limit."""
    sectors: tuple
    count: int
    outer_log2: int
    centre_re: str
    centre_im: str
    a: tuple[float, float]
    size: tuple[int, int]
    rho_max: float
    rho_min: float
    limits: tuple[int, ...]

    @property
    def samples(self) -> int:
        """Samples of one keyframe (its packed array's length)."""
        c, _, n, off = self.sectors[-1]
        return off + c * n

    def places(self, k: int):
        """(log2 radius, angle) of every sample of keyframe k, packed as its values are."""
        import numpy as np
        lr, th = np.empty(self.samples), np.empty(self.samples)
        for c, r0, n, off in self.sectors:
            i, j = np.divmod(np.arange(n * c), c)
            lr[off:off + n * c] = self.inner_log2(k) + (j + 0.5) / c
            th[off:off + n * c] = (r0 + i + 0.5) * LN2 / c
        return lr, th

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
        return {"sectors": [list(x) for x in self.sectors], "count": self.count,
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
    sectors = sector_layout(a, half, wpx * oversample)
    lws = [width_log2(path.frame(f).width) for f in (0, path.frames - 1)]
    outer = math.ceil(max(lws) + math.log2(rho_max))
    innermost = min(lws) - math.log2(wpx) + math.log2(CENTRE_FRACTION)
    count = max(1, math.ceil(outer - innermost))
    p_digits = _centre_digits(min(lws) - math.log2(wpx))
    probe = ExpMap(sectors, count, outer, _round(p_re, p_digits), _round(p_im, p_digits), a,
                   (wpx, hpx), rho_max, rho_min, ())
    return ExpMap(**{**probe.__dict__, "limits": keyframe_limits(probe, path, iterations)})


def sector_layout(a, half, pixels: float, sectors: int | None = None) -> tuple:
    """((columns per octave, first row, rows, offset), ...) of SECTORS equal sectors of angle
    around a screen point `a` (widths) on a screen `half` (half width, half height) across, at
    `pixels` samples a width (the module docstring says why)."""
    n = sectors or SECTORS
    out, offset = [], 0
    corners = [math.atan2(sy * half[1] - a[1], sx * half[0] - a[0]) % TWO_PI
               for sx in (-1, 1) for sy in (-1, 1)]
    for s in range(n):
        ta, tb = TWO_PI * s / n, TWO_PI * (s + 1) / n
        # along an edge the exit grows toward the corners: the largest at an end or a corner
        rho = max(_exit(a, half, t) for t in [ta, tb] + [c for c in corners if ta < c < tb])
        cols = max(1, math.ceil(LN2 * rho * pixels))
        row0 = math.floor(ta * cols / LN2) - 1
        rows = math.ceil(tb * cols / LN2) + 1 - row0
        out.append((cols, row0, rows, offset))
        offset += cols * rows
    return tuple(out)


def _exit(a, half, theta: float) -> float:
    """How far the ray from `a` at angle `theta` runs before it leaves the screen (0: never on
    it), in widths."""
    d = (math.cos(theta), math.sin(theta))
    near, far = 0.0, math.inf
    for x, dx, h in ((a[0], d[0], half[0]), (a[1], d[1], half[1])):
        if abs(dx) < 1e-15:
            if abs(x) > h:
                return 0.0
            continue
        t1, t2 = sorted(((-h - x) / dx, (h - x) / dx))
        near, far = max(near, t1), min(far, t2)
    return far if far > near else 0.0


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
