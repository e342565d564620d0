"""Why a keyframe pixel costs more GPU time than a rectangle pixel (issue 37), measured without a
GPU: the CPU twin's per-pixel counts and an instrumented copy of the extended loop's first pass
(kernels/mandelbrot/deep/extended_loop.py, `walk`, the Mandelbrot's, extended=True) that records,
for every turn of a pixel's loop, the reference index m it reads, the kind of step (perturbation
or BLA, floatexp or double) and the table rows its BLA test reads. Its counts are checked against
the renderer's own layers for the same pixels (every pixel the first pass settles: value, steps,
BLA steps and rebases equal; `mismatch` says how many differ, 0 expected).

Cases: a keyframe of the zoom tools/keyframe_profile.py times (the 10-minute 1080p60 zoom to
1e-1000 at Kormanyos's location), each sector sampled by a band of --rows rows at its middle at
full resolution (a band is a log-polar request of the same columns from a later first row: the
same samples, the same pixel spacing); and rectangles 1920 wide, --rows rows from the middle:
"bench" (the deep bench's 1e-1000 frame at the location's centre, 1,000,000 iterations, its own
orbit; --bench 1e-300:100000 for its 1e-300 frame) and "frame" (the movie's own frame whose
farthest corner is the keyframe's outer edge, drawn around the movie's pinned orbit, as the
per-frame method draws it).

For each case and pixel → lane mapping (--orders):
  rows   the kernels' own (passes_gpu.make_first: pixel i = row·cols + col, a warp's 32 lanes
         take 32 consecutive indices, the persistent threads' refills included, since a warp's
         lanes reconverge after the pixel loop and take their next pixels together)
  tWxH   a warp on a tile of W columns × H rows (W·H = 32)
the per-warp statistics of a lockstep model of the first pass (every lane of a warp runs turn t
of its pixel's loop at the same time; a lane whose pixel ended idles until the warp's longest):
  lane eff.     Σ turns / (32 · Σ max turns): busy lanes of the warp's turns
  kinds/turn    distinct branches a warp's turn runs (perturbation or BLA × double or floatexp)
  probes/turn   the longest BLA climb among the lanes (table rows each reads one after another)
  orbit lines   distinct 128-byte lines of the orbit the lanes read per turn (Z_m after the step)
  table rows    distinct table rows the lanes' BLA tests read per turn (all levels)
  same m        turns at which every busy lane reads the same m
and per pixel: loop turns, perturbation and BLA steps, floatexp share, the span of m it reads
(the part of the orbit and table a keyframe touches: its working set), rebases, redone share.

`--launches` models the launches instead (suspect: the 8 sectors, each a first-pass kernel and a
redo kernel) over whole frames at full resolution (slow on a small CPU: the 98 % keyframe and both
rectangles take ~4 min on 2 busy cores): each launch's chunks of 32 indices list-scheduled over
the GPU's resident warps (--sms × --warps-per-sm) in index order, a chunk costing its longest
pixel's first-pass turns; each redo kernel's chunks likewise (a redone pixel's later passes: the
layers' steps less its first pass's); costs in warp turns (latency: a warp advances a turn a
step). Then the same launches on --streams streams, round robin (streams_makespan): how much of
the sectors' tails and redo kernels the next sectors' first passes can fill
(docs/notes/keyframe-pixel-cost.md has the numbers and how they compare with the GPU's times).

    PYTHONPATH=. .venv/bin/python tools/keyframe_divergence.py [--at 0.98 | --keyframe K]
        [--rows 32] [--cases keyframe,frame,bench] [--orders rows,t8x4,t4x8,t1x32]
        [--bench 1e-1000:1000000] [--launches [--streams 1,2,3,4,8]] [--json FILE]
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import time

import numpy as np
from numba import njit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from kernels.mandelbrot.deep.extended_loop import DOWN, UP_EXP, offset_cpu  # noqa: E402
from kernels.mandelbrot.deep.floatexp import make_floatexp  # noqa: E402
from kernels.mandelbrot.deep.guard import ERR_TOL2, G_HI, G_LO, LAST_SHIFT, ROUND_INJ  # noqa: E402
from kernels.mandelbrot.deep.layout import (  # noqa: E402
    E_A, E_B, E_R, T_AD, T_ADI, T_ADR, T_AI, T_AM, T_AR, T_BI, T_BR, T_RD, T_RM)
from kernels.mandelbrot.deep.reference import EZERO  # noqa: E402
from kernels.mandelbrot.deep.step_helpers import make_step_helpers  # noqa: E402
from kernels.mandelbrot.escape import BAILOUT2  # noqa: E402
from kernels.mandelbrot.deep.targets import CPU_ADD, CPU_MUL, cpu_jit  # noqa: E402

_fe_norm, _fe_add, _fe_mul, _fe_to_double, _fe_norm2_lt = make_floatexp(CPU_MUL, CPU_ADD, cpu_jit())
_smooth, _closer_to_zero = make_step_helpers(CPU_MUL, CPU_ADD, cpu_jit())

# kind bits of a turn
K_BLA, K_FE, K_REBASE = 1, 2, 4
# H200: 132 SMs; the extended first-pass kernel capped at 64 registers holds 8 blocks of 128
# threads (32 warps) per SM (gpu_pixels.THREADS, targets.MAX_REGISTERS)
SMS, WARPS_PER_SM = 132, 32


@njit(cache=True)
def traced_walk(cnr, cni, cne, cdr, cdi, orbit, oexp, tab, tabe, levels, kmin, max_iter, eps,
                shift, tm, ta, tk, tp, cap):
    """extended_loop.make_pixel's `walk` (extended=True, Mandelbrot), its operations in the same
    order, recording turn t's m before (tm) and after (ta) the step, its kind bits (tk) and the
    table rows its BLA test read (tp) while t < cap. Returns the walk's (value, steps, bla,
    skipped, rebases, doubtful) and (turns, floatexp turns, lowest m, highest m)."""
    last = orbit.shape[0] - 1
    nlev = levels.shape[0]
    top = kmin + nlev - 1
    low_mask = (1 << kmin) - 1
    sf = math.ldexp(1.0, shift)
    inj = math.ldexp(eps, 1 - shift)
    if shift >= LAST_SHIFT:
        inj = max(inj, ROUND_INJ)
    fe = True
    dr = 0.0
    di = 0.0
    de = EZERO
    er = 0.0
    g2 = 1.0
    r2 = 0.0
    zr = 0.0
    zi = 0.0
    ze = EZERO
    m = 0
    n = 0
    steps = 0
    bla = 0
    skipped = 0
    rebases = 0
    t = 0
    fet = 0
    mhi = 0
    while n < max_iter:
        m0 = m
        kind = K_FE if fe else 0
        probes = 0
        took = False
        if nlev > 0 and m > 0 and ((m - 1) & low_mask) == 0:
            j0 = m - 1
            dm = max(abs(dr), abs(di))
            dms = dm * sf
            dse = de + shift
            best = -1
            length = 0
            k = kmin
            while True:
                li = k - kmin
                j = j0 >> k
                if j >= levels[li, 1] or n + (1 << k) > max_iter:
                    break
                idx = levels[li, 0] + j
                probes += 1
                if fe:
                    re_ = tabe[idx, E_R]
                    ok = dse < re_ or (dse == re_ and dm < tab[idx, T_RM])
                else:
                    ok = dms < tab[idx, T_RD]
                if not ok:
                    break
                best = idx
                length = 1 << k
                k += 1
                if k > top or ((j0 >> k) << k) != j0:
                    break
            if best >= 0:
                idx = best
                br, bi, be = _fe_mul(tab[idx, T_BR], tab[idx, T_BI], tabe[idx, E_B],
                                     cnr, cni, cne)
                if fe:
                    d0 = de
                    ar, ai, ae = _fe_mul(tab[idx, T_AR], tab[idx, T_AI], tabe[idx, E_A],
                                         dr, di, de)
                    dr, di, de = _fe_add(ar, ai, ae, br, bi, be)
                    carried, _ = _fe_to_double(tab[idx, T_AM] * er, 0.0,
                                               tabe[idx, E_A] + d0 - de)
                    er = carried + inj * max(abs(dr), abs(di))
                else:
                    bdr, bdi = _fe_to_double(br, bi, be)
                    adr = tab[idx, T_ADR]
                    adi = tab[idx, T_ADI]
                    ndr = ((adr * dr) + -(adi * di)) + bdr
                    di = ((adr * di) + (adi * dr)) + bdi
                    dr = ndr
                    er = (tab[idx, T_AD] * (er * math.sqrt(g2))) + inj * max(abs(dr), abs(di))
                    g2 = 1.0
                m += length
                n += length
                bla += 1
                skipped += length
                took = True
                kind |= K_BLA
        if not took:
            if fe:
                d0 = de
                tr, ti, te = _fe_add(orbit[m, 2], orbit[m, 3], oexp[m] + 1, dr, di, de)
                ur, ui, ue = _fe_mul(tr, ti, te, dr, di, de)
                dr, di, de = _fe_add(ur, ui, ue, cnr, cni, cne)
                grown = er * math.sqrt(((zr * zr) + (zi * zi)) * 4.0)
                er, _ = _fe_to_double(grown, 0.0, ze + d0 - de)
            else:
                g2 = g2 * (r2 * 4.0)
                if g2 > G_HI or g2 < G_LO:
                    er = er * math.sqrt(g2)
                    g2 = 1.0
                tr = (orbit[m, 0] + orbit[m, 0]) + dr
                ti = (orbit[m, 1] + orbit[m, 1]) + di
                ndr = ((tr * dr) + -(ti * di)) + cdr
                di = ((tr * di) + (ti * dr)) + cdi
                dr = ndr
            m += 1
            n += 1
            steps += 1
        if fe:
            fet += 1
        if m > mhi:
            mhi = m
        ma = m
        done = False
        v = 0.0
        doubt = False
        if fe:
            zr, zi, ze = _fe_add(orbit[m, 2], orbit[m, 3], oexp[m], dr, di, de)
            xr, xi = _fe_to_double(zr, zi, ze)
            r2 = (xr * xr) + (xi * xi)
            if r2 > BAILOUT2:
                er = er * math.sqrt(g2)
                e, _ = _fe_to_double(er, 0.0, de)
                v, doubt, done = _smooth(r2, n), not ((e * e) <= (r2 * ERR_TOL2)), True
            elif m == last or _fe_norm2_lt(zr, zi, ze, dr, di, de):
                er, _ = _fe_to_double(er, 0.0, de - ze)
                dr, di, de = zr, zi, ze
                m = 0
                rebases += 1
                kind |= K_REBASE
            if not done and de > UP_EXP:
                dr, di = _fe_to_double(dr, di, de)
                er, _ = _fe_to_double(er, 0.0, de)
                fe = False
        else:
            xr = orbit[m, 0] + dr
            xi = orbit[m, 1] + di
            r2 = (xr * xr) + (xi * xi)
            if r2 > BAILOUT2:
                er = er * math.sqrt(g2)
                v, doubt, done = _smooth(r2, n), not ((er * er) <= (r2 * ERR_TOL2)), True
            elif m == last or _closer_to_zero(xr, xi, r2, dr, di):
                dr = xr
                di = xi
                m = 0
                rebases += 1
                kind |= K_REBASE
            if not done and max(abs(dr), abs(di)) < DOWN:
                dr, di, de = _fe_norm(dr, di, 0)
                er, _ = _fe_to_double(er * math.sqrt(g2), 0.0, -de)
                g2 = 1.0
                zr, zi, ze = _fe_norm(xr, xi, 0)
                fe = True
        if t < cap:
            tm[t] = m0
            ta[t] = ma
            tk[t] = kind
            tp[t] = probes
        t += 1
        if done:
            return v, steps, bla, skipped, rebases, doubt, t, fet, mhi
    er = er * math.sqrt(g2)
    e = er
    if fe:
        e, _ = _fe_to_double(er, 0.0, de)
    return (float(max_iter), steps, bla, skipped, rebases, not ((e * e) <= (r2 * ERR_TOL2)), t,
            fet, mhi)


@njit(cache=True)
def _delta(r, c, d0r, d0i, step, cexp, half_w, half_h):
    cmr, cmi = offset_cpu(r, c, d0r, d0i, step, half_w, half_h)
    cnr, cni, cne = _fe_norm(cmr, cmi, cexp)
    cdr, cdi = _fe_to_double(cnr, cni, cne)
    return cnr, cni, cne, cdr, cdi


@njit(cache=True)
def pixel_counts(rows, cols, grid, orbit, oexp, tab, tabe, levels, kmin, max_iter, eps):
    """The first pass of pixels (rows[i], cols[i]): (value, steps, bla, rebases, doubtful, turns,
    floatexp turns, highest m) each, nothing recorded."""
    n = rows.shape[0]
    out = np.empty((n, 8))
    d0r, d0i, step, cexp, half_w, half_h = grid
    z32 = np.zeros(0, np.int32)
    z8 = np.zeros(0, np.int8)
    for i in range(n):
        cnr, cni, cne, cdr, cdi = _delta(rows[i], cols[i], d0r, d0i, step, int(cexp), half_w,
                                         half_h)
        v, a, b, sk, rb, doubt, t, fet, mhi = traced_walk(
            cnr, cni, cne, cdr, cdi, orbit, oexp, tab, tabe, levels, kmin, max_iter, eps, 0,
            z32, z32, z8, z8, 0)
        out[i, 0] = v
        out[i, 1] = a
        out[i, 2] = b
        out[i, 3] = rb
        out[i, 4] = 1.0 if doubt else 0.0
        out[i, 5] = t
        out[i, 6] = fet
        out[i, 7] = mhi
    return out


@njit(cache=True)
def _distinct(vals, n):
    """Distinct values among vals[:n] (n <= 32)."""
    d = 0
    for i in range(n):
        new = True
        for j in range(i):
            if vals[j] == vals[i]:
                new = False
                break
        if new:
            d += 1
    return d


@njit(cache=True)
def warp_stats(lanes, rows, cols, grid, orbit, oexp, tab, tabe, levels, kmin, max_iter, eps, cap):
    """Lockstep statistics of warps lanes[w, :32] (pixel numbers into rows/cols, -1: no pixel):
    sums over warps of [turns, 32 · max turns, kind slots, probe slots, orbit lines, table rows,
    turns with one m, warp turns, busy lane-turns]."""
    nw = lanes.shape[0]
    d0r, d0i, step, cexp, half_w, half_h = grid
    tm = np.zeros((32, cap), np.int32)
    ta = np.zeros((32, cap), np.int32)
    tk = np.zeros((32, cap), np.int8)
    tp = np.zeros((32, cap), np.int8)
    L = np.zeros(32, np.int64)
    vals = np.zeros(32, np.int64)
    acc = np.zeros(9)
    for w in range(nw):
        maxl = 0
        tot = 0
        for j in range(32):
            p = lanes[w, j]
            if p < 0:
                L[j] = 0
                continue
            cnr, cni, cne, cdr, cdi = _delta(rows[p], cols[p], d0r, d0i, step, int(cexp),
                                             half_w, half_h)
            res = traced_walk(cnr, cni, cne, cdr, cdi, orbit, oexp, tab, tabe, levels, kmin,
                              max_iter, eps, 0, tm[j], ta[j], tk[j], tp[j], cap)
            L[j] = min(res[6], cap)
            tot += L[j]
            if L[j] > maxl:
                maxl = L[j]
        acc[0] += tot
        acc[1] += 32 * maxl
        acc[7] += maxl
        for t in range(maxl):
            mask = 0
            pmax = 0
            nb = 0
            for j in range(32):
                if L[j] > t:
                    mask |= 1 << (tk[j, t] & (K_BLA | K_FE))
                    if tp[j, t] > pmax:
                        pmax = tp[j, t]
                    vals[nb] = ta[j, t] >> 2        # 4 orbit rows of 32 bytes a 128-byte line
                    nb += 1
            acc[8] += nb
            acc[2] += ((mask & 1) + ((mask >> 1) & 1) + ((mask >> 2) & 1) + ((mask >> 3) & 1))
            acc[3] += pmax
            acc[4] += _distinct(vals, nb)
            # the table rows the busy lanes' BLA tests read, level by level
            for lev in range(pmax):
                q = 0
                for j in range(32):
                    if L[j] > t and tp[j, t] > lev:
                        vals[q] = levels[lev, 0] + ((tm[j, t] - 1) >> lev)
                        q += 1
                acc[5] += _distinct(vals, q)
            q = 0
            for j in range(32):
                if L[j] > t:
                    vals[q] = tm[j, t]
                    q += 1
            if _distinct(vals, q) == 1:
                acc[6] += 1
    return acc


# ---------------------------------------------------------------- cases

@dataclasses.dataclass
class Case:
    """A band of pixels drawn by the renderer (values, layers) with what the twin needs."""
    name: str
    cols: int               # columns of the launch (a sector's or the frame's)
    row0: int               # the band's first row in its launch
    rows: int
    grid: tuple
    arrays: tuple           # (orbit, oexp, tab, tabe, levels, kmin, max_iter, eps)
    layers: np.ndarray      # (5, rows, cols)
    values: np.ndarray
    orbit_points: int
    table_bytes: int


def _movie(a):
    from kernels.mandelbrot.deep.locations import KORMANYOS_VERY_DEEP as loc
    from services.movie import MovieSpec, prepare
    from services.movie_keyframes import keyframe_map
    w, h = (int(v) for v in a.size.split("x"))
    spec = MovieSpec(out="/tmp/kfdiv/unused%05d.png", size=(w, h), fps=a.fps, seconds=a.seconds,
                     center=f"{loc.center_re[:1200]},{loc.center_im[:1200]}", width=a.width,
                     colouring=(("mapping", "sqrt"),), keyframes=True)
    os.makedirs("/tmp/kfdiv", exist_ok=True)
    movie = prepare(spec, open_encoder=False)
    return movie, keyframe_map(movie), loc


def _draw(renderer, req, name, cols, row0):
    from kernels.mandelbrot.deep.frame_geometry import FrameGeometry
    from kernels.mandelbrot.deep.loop_args import positional
    layers = np.zeros((5, req.size[1], req.size[0]), np.int32)
    res = renderer.render_values(req.validate(), layers=layers)
    if res.format != "extended":
        raise SystemExit(f"{name}: a {res.format}-format frame; this tool follows the extended "
                         "loop (below 1e-290)")
    geo = FrameGeometry.of(req, renderer.orbit)
    grid = tuple(float(x) for x in positional(geo.grid()))
    orb, oexp = renderer.orbit.arrays()
    _, tab, tabe, levels = renderer._table
    eps = math.ldexp(1.0, -renderer.eps_bits)
    arrays = (orb, oexp, tab, tabe, levels, renderer.kmin, int(req.max_iter), eps)
    return Case(name, cols, row0, req.size[1], grid, arrays, layers, np.array(res.values),
                orb.shape[0], tab.nbytes + tabe.nbytes + orb.nbytes + oexp.nbytes)


def _band(req, row0, rows):
    """Rows row0 .. row0 + rows of a rectangle `req` (deep_frames.band_request's cut)."""
    from kernels.mandelbrot.deep.request import add_decimal, band_shift
    w, tall = int(req.size[0]), int(req.size[1])
    shift = band_shift(req.width_decimal, w, tall, row0, rows)
    return dataclasses.replace(req, center_im=add_decimal(req.center_im, shift), size=(w, rows),
                               within=(tall, row0))


def keyframe_cases(em, k, rows, renderer):
    """One band of `rows` rows (all of them where rows <= 0) at the middle of each sector."""
    from kernels.mandelbrot.expmap_render import keyframe_request
    out = []
    for s in range(len(em.sectors)):
        req = keyframe_request(em, k, s)
        cols, n = req.size
        r0 = 0 if rows <= 0 or rows >= n else (n - rows) // 2
        take = n if rows <= 0 else min(rows, n)
        band = dataclasses.replace(req, size=(cols, take), polar_row0=req.polar_row0 + r0)
        out.append(_draw(renderer, band, f"keyframe {k} sector {s}", cols, r0))
    return out


def rect_case(req, rows, renderer, name):
    h = int(req.size[1])
    r0 = 0 if rows <= 0 or rows >= h else (h - rows) // 2
    band = req if rows <= 0 or rows >= h else _band(req, r0, rows)
    return _draw(renderer, band, name, int(req.size[0]), r0)


# ---------------------------------------------------------------- orderings

def warps_of(case: Case, order: str) -> np.ndarray:
    """(warps, 32) pixel numbers (into the band's rows·cols) of the warps wholly inside it."""
    cols, rows, row0 = case.cols, case.rows, case.row0
    if order == "rows":
        # the kernels' own: index i = row·cols + col of the launch, 32 consecutive a warp
        first = -(-(row0 * cols) // 32)
        last = ((row0 + rows) * cols) // 32
        idx = np.arange(first * 32, last * 32, dtype=np.int64).reshape(-1, 32)
        return idx - row0 * cols
    w, h = (int(v) for v in order[1:].split("x"))
    if w * h != 32:
        raise SystemExit(f"a tile order needs W·H = 32, got {order}")
    tr, tc = rows // h, cols // w
    out = np.empty((tr * tc, 32), np.int64)
    q = 0
    for a in range(tr):
        for b in range(tc):
            rr, cc = np.divmod(np.arange(32), w)
            out[q] = (a * h + rr) * cols + b * w + cc
            q += 1
    return out


def pixel_table(case: Case):
    rr, cc = np.divmod(np.arange(case.rows * case.cols, dtype=np.int64), case.cols)
    return rr, cc


def check_and_count(case: Case):
    """The twin's first pass of every pixel of the band against the renderer's layers."""
    rr, cc = pixel_table(case)
    out = pixel_counts(rr, cc, case.grid, *case.arrays)
    lay = case.layers.reshape(5, -1)
    settled = lay[4] == 0
    vals = case.values.reshape(-1)
    bad = settled & ((out[:, 1] != lay[1]) | (out[:, 2] != lay[2]) | (out[:, 3] != lay[3])
                     | (out[:, 0] != vals))
    return out, int(bad.sum()), int(settled.sum())


def order_stats(case: Case, order: str, counts, max_warps: int):
    lanes = warps_of(case, order)
    if max_warps and lanes.shape[0] > max_warps:
        pick = np.linspace(0, lanes.shape[0] - 1, max_warps).round().astype(np.int64)
        lanes = lanes[pick]
    rr, cc = pixel_table(case)
    cap = int(counts[:, 5].max()) + 1
    acc = warp_stats(lanes, rr, cc, case.grid, *case.arrays, cap)
    return acc, lanes.shape[0]


def summary(name, cases, orders, max_warps, out):
    """Per-pixel and per-order figures of a group of cases (a keyframe's sectors, a frame)."""
    lay = np.concatenate([c.layers.reshape(5, -1) for c in cases], axis=1).astype(np.int64)
    counts, bad, settled = [], 0, 0
    for c in cases:
        o, b, s = check_and_count(c)
        counts.append(o)
        bad += b
        settled += s
    allc = np.concatenate(counts)
    px = allc.shape[0]
    turns = allc[:, 5]
    row = {
        "pixels": px, "mismatch": bad, "settled": settled,
        "iterations": lay[0].mean(), "pert (layers)": lay[1].mean(), "bla (layers)": lay[2].mean(),
        "rebases (layers)": lay[3].mean(), "redone %": 100.0 * (lay[4] > 0).mean(),
        "first-pass turns": turns.mean(), "first-pass pert": allc[:, 1].mean(),
        "first-pass bla": allc[:, 2].mean(),
        "iterations / BLA step": (lay[0].mean() - lay[1].mean()) / max(1e-9, lay[2].mean()),
        "floatexp turns %": 100.0 * allc[:, 6].sum() / max(1, turns.sum()),
        "highest m (median)": float(np.median(allc[:, 7])),
        "highest m (max)": float(allc[:, 7].max()),
        "orbit points": cases[0].orbit_points,
        "orbit+table MB": cases[0].table_bytes / 2 ** 20,
    }
    print(f"\n== {name}: {px:,} pixels ({len(cases)} band(s)); twin vs renderer: {bad} of "
          f"{settled:,} settled pixels differ")
    for k, v in row.items():
        print(f"   {k:24s} {v:,.2f}" if isinstance(v, float) else f"   {k:24s} {v:,}")
    row["orders"] = {}
    for order in orders:
        tot = np.zeros(9)
        nw = 0
        for c, o in zip(cases, counts):
            acc, n = order_stats(c, order, o, max_warps)
            tot += acc
            nw += n
        wt = max(1.0, tot[7])
        st = {"warps": nw, "lane eff %": 100.0 * tot[0] / max(1.0, tot[1]),
              "turns/warp": tot[7] / max(1, nw),
              "kinds/turn": tot[2] / wt, "probes/turn": tot[3] / wt,
              "orbit lines/turn": tot[4] / wt, "table rows/turn": tot[5] / wt,
              "same m %": 100.0 * tot[6] / wt,
              # the warp's turns, each its branches and its longest climb, over its 32 pixels
              "slots/pixel": (tot[2] + tot[3]) / max(1, 32 * nw)}
        row["orders"][order] = st
        print(f"   order {order:6s} warps {nw:,}: " + ", ".join(
            f"{k} {v:.2f}" for k, v in st.items() if k != "warps"))
    out[name] = row
    return row


# ---------------------------------------------------------------- launches

def makespan(costs, workers: int) -> float:
    """Persistent warps taking chunks in order, each when its last is done: the last one's end."""
    import heapq
    if costs.size == 0:
        return 0.0
    if costs.size <= workers:
        return float(costs.max())
    heap = [0.0] * workers
    for x in costs.tolist():
        heapq.heappush(heap, heapq.heappop(heap) + x)
    return max(heap)


def streams_makespan(launches, streams: int, slots: int) -> float:
    """The end of the last kernel when the launches' kernels (each launch: its first pass, then
    its redo kernel, on stream launch % streams, in order) run on `slots` warp slots: a kernel
    starts once the one before it on its stream has ended; a free slot goes to the kernel that
    became ready first among those with chunks left; a warp keeps taking its kernel's chunks
    until none are left (persistent threads), then frees its slot. Costs in warp turns."""
    import heapq
    from collections import deque
    kernels = [[] for _ in range(streams)]
    for i, (first, redo) in enumerate(launches):
        kernels[i % streams] += [first, redo]
    pos = [0] * streams                 # each stream's kernel under way
    nxt = {}                            # (stream, kernel) -> next chunk
    running = {}
    ready = deque()
    events = []
    seq = 0
    now = 0.0
    free = slots
    done_streams = 0

    def make_ready(st):
        nonlocal done_streams
        while pos[st] < len(kernels[st]) and kernels[st][pos[st]].size == 0:
            pos[st] += 1                # a kernel with nothing to do ends at once
        if pos[st] == len(kernels[st]):
            done_streams += 1
            return
        key = (st, pos[st])
        nxt[key], running[key] = 0, 0
        ready.append(key)

    for st in range(streams):
        make_ready(st)
    while True:
        # hand free slots to the ready kernels, first come first served
        while free > 0 and ready:
            key = ready[0]
            chunks = kernels[key[0]][key[1]]
            if nxt[key] >= chunks.size:
                ready.popleft()
                continue
            heapq.heappush(events, (now + chunks[nxt[key]], seq, key))
            seq += 1
            nxt[key] += 1
            running[key] += 1
            free -= 1
        if not events:
            break
        now, _, key = heapq.heappop(events)
        st, ki = key
        chunks = kernels[st][ki]
        running[key] -= 1
        if nxt[key] < chunks.size:      # the same warp takes its kernel's next chunk
            heapq.heappush(events, (now + chunks[nxt[key]], seq, key))
            seq += 1
            nxt[key] += 1
            running[key] += 1
            continue
        free += 1
        if running[key] == 0:
            pos[st] += 1
            make_ready(st)
    return now


def launch_model(name, cases, resident, out, streams=(1,)):
    """Each case a launch (a sector, the frame): the first pass's makespan in warp turns over
    `resident` warps (chunks of 32 indices, cost = the longest first pass among them), and the
    redo kernel's (its pixels' later passes: layers' steps less the first pass's); then the
    whole on 1, 2, ... streams (`streams_makespan`)."""
    tot_first = tot_redo = tot_ideal = 0.0
    px = 0
    launches = []
    for c in cases:
        lay = c.layers.reshape(5, -1).astype(np.int64)
        # the first pass's turns: the layers' steps where nothing was redone, else the twin's
        turns = (lay[1] + lay[2]).astype(np.float64)
        redone = np.nonzero(lay[4] > 0)[0]
        if redone.size:
            rr, cc = np.divmod(redone, c.cols)
            o = pixel_counts(rr, cc, c.grid, *c.arrays)
            first = o[:, 5]
            redo_chain = turns[redone] - first
            turns[redone] = first
        else:
            redo_chain = np.zeros(0)
        n = turns.size
        pad = (-n) % 32
        chunks = np.concatenate([turns, np.zeros(pad)]).reshape(-1, 32).max(axis=1)
        first_ms = makespan(chunks, resident)
        # listed as the first kernel finds them: about in index order
        rchunks = np.concatenate([redo_chain, np.zeros((-redo_chain.size) % 32)])
        rchunks = rchunks.reshape(-1, 32).max(axis=1) if rchunks.size else rchunks
        redo_ms = makespan(rchunks, resident)
        ideal = chunks.sum() / resident
        launches.append((chunks, rchunks))
        tot_first += first_ms
        tot_redo += redo_ms
        tot_ideal += ideal
        px += n
        print(f"   {c.name:28s} px {n:9,} chunks {chunks.size:8,} ({chunks.size / resident:6.2f} "
              f"a warp) first {first_ms:9,.0f} (ideal {ideal:9,.0f}) redo px {redo_chain.size:6,}"
              f" longest {redo_chain.max() if redo_chain.size else 0:6,.0f} kernel {redo_ms:7,.0f}")
    whole = tot_first + tot_redo
    print(f"   {name}: warp turns first {tot_first:,.0f} + redo {tot_redo:,.0f} = {whole:,.0f} "
          f"(ideal first {tot_ideal:,.0f}); per Mpixel {whole / px * 1e6:,.0f}")
    row = {"pixels": px, "first": tot_first, "redo": tot_redo, "ideal": tot_ideal,
           "per_mpixel": whole / px * 1e6, "streams": {}}
    for n in streams:
        t = streams_makespan(launches, n, resident)
        row["streams"][n] = t
        print(f"   {name} on {n} stream(s): {t:,.0f} warp turns, per Mpixel {t / px * 1e6:,.0f} "
              f"({whole / t:.2f}x one stream's)")
    out[name] = row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--fps", type=int, default=60)
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--width", default="1e-1000")
    ap.add_argument("--at", type=float, default=0.98,
                    help="the keyframe's place in the zoom (0..1)")
    ap.add_argument("--keyframe", type=int, default=None, help="a keyframe by number instead")
    ap.add_argument("--rows", type=int, default=32, help="rows a band (0: every row)")
    ap.add_argument("--cases", default="keyframe,frame,bench")
    ap.add_argument("--orders", default="rows,t8x4,t4x8,t1x32")
    ap.add_argument("--bench", default="1e-1000:1000000",
                    help="the bench rectangle's width:iterations (deep/bench.py's DEPTHS: "
                         "1e-300:100000, 1e-1000:1000000)")
    ap.add_argument("--max-warps", type=int, default=0, help="warps traced a band at most")
    ap.add_argument("--launches", action="store_true", help="the launch model (whole frames)")
    ap.add_argument("--streams", default="1,2,3,4,8",
                    help="the launch model's streams (sectors round robin over them)")
    ap.add_argument("--sms", type=int, default=SMS)
    ap.add_argument("--warps-per-sm", type=int, default=WARPS_PER_SM)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    from kernels.backend import resolve
    from kernels.mandelbrot.deep.reference_store import shared_store
    from kernels.mandelbrot.deep.renderer import DeepRenderer
    from kernels.mandelbrot.deep.request import DeepRequest
    from kernels.mandelbrot.expmap import width_log2
    from kernels.mandelbrot.expmap_render import TABLE_SLACK_BITS, pinned_orbit
    movie, em, loc = _movie(a)
    k = a.keyframe if a.keyframe is not None else min(em.count - 1, int(a.at * em.count))
    be = resolve("cpu")
    orders = [o for o in a.orders.split(",") if o]
    wanted = [c for c in a.cases.split(",") if c]
    out = {}
    # the movie's frame whose farthest corner is keyframe k's outer edge
    target = em.inner_log2(k) + 1 - math.log2(em.rho_max)
    lo, hi = 0, movie.path.frames - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if width_log2(movie.path.frame(mid).width) > target:
            lo = mid + 1
        else:
            hi = mid
    fl = movie.path.frame(lo)
    print(f"{em.count} keyframes of {em.samples:,} samples; keyframe {k}: radius "
          f"2^{em.inner_log2(k)} (1e{em.inner_log2(k) * math.log10(2):.1f}), limit "
          f"{em.limits[k]:,}; sectors (cols, rows)"
          f" {[(s[0], s[2]) for s in em.sectors]}; frame {lo} ({fl.width}, {int(fl.iters):,})",
          flush=True)
    groups = {}
    t0 = time.perf_counter()
    rows = 0 if a.launches else a.rows
    with pinned_orbit(em):
        if "keyframe" in wanted:
            kr = DeepRenderer(be)
            kr.references = shared_store()
            kr.table_slack_bits = TABLE_SLACK_BITS
            kr.precision_headroom = em.count - 1 - k
            groups[f"keyframe {k}"] = keyframe_cases(em, k, rows, kr)
        if "frame" in wanted:
            fr = DeepRenderer(be)
            fr.references = shared_store()
            req = DeepRequest(fl.center_re, fl.center_im, fl.width, movie.spec.size, int(fl.iters))
            groups[f"frame {lo}"] = [rect_case(req.validate(), rows, fr, f"frame {lo}")]
    if "bench" in wanted:
        br = DeepRenderer(be)
        bw, bi = a.bench.split(":")
        req = DeepRequest(loc.center_re, loc.center_im, bw, (1920, 1080), int(bi))
        groups[f"bench {bw}"] = [rect_case(req.validate(), rows, br, f"bench {bw}")]
    print(f"drawn in {time.perf_counter() - t0:.1f} s", flush=True)
    if a.launches:
        resident = a.sms * a.warps_per_sm
        print(f"\nlaunch model: {resident:,} resident warps; costs in warp turns")
        for name, cases in groups.items():
            launch_model(name, cases, resident, out.setdefault("launches", {}),
                         [int(x) for x in a.streams.split(",") if x])
    else:
        for name, cases in groups.items():
            summary(name, cases, orders, a.max_warps, out)
    if a.json:
        import json
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
