"""Several log-polar grids of one picture drawn as one frame (issue 37: a keyframe's sectors,
expmap.ExpMap.sectors): one reference orbit and one table for all, and on a GPU one first-pass
launch over every sector's pixels, then one redo launch over every sector's doubtful pixels
(passes_gpu.make_first with sectors=True). A launch a sector left the GPU idle through each
sector's last pixels and its redo kernel, which lasts as long as its longest redone pixel
(docs/notes/keyframe-pixel-cost.md). Each pixel's δc comes from its sector's own grid by the same
operations, so the values are the same bits as sector by sector; the CPU runs its row function
sector by sector (it has no launches to save), after one orbit and table.

It drives a DeepRenderer's own steps (reference, table, placing, the loop) as start_values does,
so the orbit and table it leaves behind are the ones the next frame of that renderer finds.
"""
from __future__ import annotations

import math

import numpy as np

from ...roofs.work import record
from ...timing import JobTimer
from .deep_work import frame_work
from ..requests.formulas import MANDELBROT
from .frame_geometry import FrameGeometry
from ..tables.layout import N_STATS, stats_dict
from ..loops.loop_args import positional
from .result import DeepResult, PendingValues
from .table_ahead import table_nbytes

# what every sector's grid must share to be one frame: all but its columns and first row
SHARED = ("d0r", "d0i", "step", "cexp", "c_bound_exp", "reach")


def alike(requests) -> bool:
    """Whether `requests` are log-polar grids of one picture (centre, inner radius, limit,
    format) that differ in their columns, rows and first row alone."""
    first = requests[0]
    keys = ("center_re", "center_im", "width", "max_iter", "number_format", "bla", "formula")
    return all(r.polar > 0 and r.within is None and r.formula == MANDELBROT
               and all(getattr(r, k) == getattr(first, k) for k in keys) for r in requests)


def start_sectors(deep, requests, cancel=None, to_host: bool = True) -> PendingValues | None:
    """DeepRenderer.start_values of `deep` for the log-polar `requests` (alike), their values
    packed one after another in one array of all their pixels (a GPU's with to_host=False: on
    the device, valid until the renderer's next frame; the CPU's: a new array). None, before
    any pixel, where they cannot be one frame (the first's orbit does not serve the others,
    another table or loop), for the caller to draw them one by one."""
    reqs = [r.validate() for r in requests]
    if not reqs or not alike(reqs) or deep.kmin != 0 or deep.number_type == "float32":
        return None
    first = reqs[0]
    fmt = first.format
    sizes = [int(r.size[0]) * int(r.size[1]) for r in reqs]
    total = sum(sizes)
    compile_ms = None
    if not deep.compiled(fmt):
        compile_ms = deep.warmup((fmt,))
    timer = JobTimer(deep.backend, deep.stream,
                     f"deep keyframe of {len(reqs)} sectors, {total:,} pixels, "
                     f"{first.max_iter:,} iterations, {fmt}")
    if compile_ms is not None:
        timer.add_host_ms("compile", compile_ms)
    try:
        with timer.phase("host", detail="reference"):
            # the first sector's orbit, as start_values finds it; the others would reuse it
            # where it serves them (their grids alike): otherwise they are drawn one by one
            orbit, reused = deep._reference(first, cancel, None)
            geos = [FrameGeometry.of(r, orbit) for r in reqs]
        width_log2 = first.width_log10 * math.log2(10.0)
        if not all(orbit.serves(r.center_re, r.center_im, width_log2, r.precision)
                   and all(getattr(g, k) == getattr(geos[0], k) for k in SHARED)
                   for r, g in zip(reqs, geos)):
            return None
        deep._f32 = False
        with timer.phase("host", detail="table"):
            table, table_reused = deep._table_for(orbit, geos[0], first.bla, None,
                                                  not deep._takes_perturbation_loop(fmt))
    except BaseException:       # a table being built ahead must not wait for a next frame
        if deep._ahead is not None:
            deep._ahead[1].abandon()
            deep._ahead = None
        raise
    dev, flat = deep._place(fmt, orbit, table, timer)
    code, args = deep._loop(fmt, dev, flat, first.max_iter)
    if deep.backend.is_gpu and code.gpu_sectors is None:
        return None
    if deep.backend.is_gpu:
        values, stats, exact = _gpu(deep, reqs, geos, sizes, code, args, timer, cancel, to_host)
    else:
        values, stats, exact = _cpu(deep, reqs, geos, sizes, code, args, timer, cancel)
    timer.queued()
    started = deep.pixels.started

    def settle() -> DeepResult:
        timings = timer.finish()
        deep.pixels.settled(started)
        timings.detail["reference engine"] = orbit.engine_name
        st = {**stats_dict(stats), **exact()}
        deep.last_exact = {k: st[k] for k in ("dd_pixels", "exact_pixels", "marked_pixels")}
        record(timings, frame_work(st, total, sum(a.nbytes for a in orbit.arrays())
                                   + table_nbytes(*table[1:])))
        return DeepResult(values=values, timings=timings, format=fmt, stats=st, reference=orbit,
                          reused=reused, table_reused=table_reused)
    return PendingValues(values, settle)


def _gpu(deep, reqs, geos, sizes, code, args, timer, cancel, to_host):
    """One first pass and one redo over the packed sectors, each sector's grid in small arrays
    the kernels index by the pixel's sector (kept on the device while the layout stays)."""
    total = sum(sizes)
    offs = np.cumsum([0] + sizes).astype(np.int64)
    cols = np.array([int(r.size[0]) for r in reqs], np.int64)
    half_ws = np.array([g.half_w for g in geos], np.float64)
    half_hs = np.array([g.half_h for g in geos], np.float64)
    key = (tuple(offs), tuple(half_ws), tuple(half_hs))
    layout = deep.pixels.place("sectors", key, (offs, cols, half_ws, half_hs), timer)
    g = geos[0]
    grid = (float(g.d0r), float(g.d0i), float(g.step), int(g.cexp)) + tuple(layout)
    run_out = deep.pixels.run(deep.pool, (1, total), code, grid + positional(args), timer,
                              cancel, None, kernels=code.gpu_sectors)
    # keyframes only mark the pixels the redo hands back (exact_redo.mode_of: rectangles only)
    exact = deep.pixels.exact(deep.pool, run_out, reqs[0], False, timer, deep.exact, cancel)
    values, stats = deep.pixels.fetch(deep.pool, run_out, (1, total), timer, to_host)
    return values.reshape(total), stats, exact


def _cpu(deep, reqs, geos, sizes, code, args, timer, cancel):
    """Each sector's rows into its part of one new array, as its own frame would draw them."""
    values = np.empty(sum(sizes))
    stats = np.zeros(N_STATS, np.int64)
    marked = []
    off = 0
    for r, g, n in zip(reqs, geos, sizes):
        shape = (int(r.size[1]), int(r.size[0]))
        run_out = deep.pixels.run(deep.pool, shape, code, positional(g.grid(), args), timer,
                                  cancel, None)
        marked.append(deep.pixels.exact(deep.pool, run_out, r, False, timer, deep.exact, cancel))
        v, st = deep.pixels.fetch(deep.pool, run_out, shape, timer)
        values[off:off + n] = v.reshape(n)
        stats += st
        off += n

    def exact() -> dict:
        got = [m() for m in marked]
        return {k: sum(x[k] for x in got) for k in ("dd_pixels", "exact_pixels", "marked_pixels")}
    return values, stats, exact
