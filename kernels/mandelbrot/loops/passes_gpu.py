"""The deep loops' two GPU passes, written once for every loop (issue 36): the first pass over a
frame's pixels, which lists the doubtful ones, and the redo pass over that list. A loop gives its
pixel function and the tuple of its own arguments; `counting` (a constant of the compile: where
False its branches are gone) adds the deep overlays' layers (loop_args.with_layers).

A pass takes the frame's grid as `geo`: (half_w, half_h) of one grid, or, with `sectors` (a
constant of the compile), (offs, cols, half_ws, half_hs) of several log-polar grids packed in one
launch (sectors.py): the same passes, a pixel's place found from its packed index
(`_place_in_sectors`) instead of its frame index (`_place_in_frame`). A pixel function:
pixel(r, c, d0r, d0i, step, cexp, half_w, half_h, loop) -> (value, perturbation steps, BLA steps,
BLA iterations, rebases, doubtful) for the first pass, the same less `doubtful` for the redo
(perturbation_loop.py, extended_loop.py). The launch scheme (persistent threads or one per pixel,
the counters, the redo list) is gpu_pixels.py's. The kernels that call these are their loops'
own, in their loops' modules, so that numba's disk cache, which keys a kernel by its own file,
sees an edit of the loop; an edit here must touch those files too.
"""
from __future__ import annotations

from ..tables.layout import iteration_of
from .targets import cuda

if cuda is not None:
    _iteration_gpu = cuda.jit(device=True)(iteration_of)

    @cuda.jit(device=True, inline="always")
    def _place_in_frame(values, i, s, geo):
        """Pixel i of a frame's grid (i = row * cols + col): (s, row, col, half_w, half_h, the
        index of its value); `s` is the sectors' own, passed through."""
        half_w, half_h = geo
        cols = values.shape[1]
        r = i // cols
        c = i - r * cols
        return s, r, c, half_w, half_h, r, c

    @cuda.jit(device=True, inline="always")
    def _place_in_sectors(values, i, s, geo):
        """Pixel i of sectors packed one after another in values[0, :]: it lies in sector s
        (offs[s] <= i < offs[s + 1], searched from the `s` given up; offs: each sector's first
        pixel, then the total) at its grid's (row, col), cols[s] columns, with half_ws[s],
        half_hs[s]. The same returns as _place_in_frame's."""
        offs, cols, half_ws, half_hs = geo
        while i >= offs[s + 1]:
            s += 1
        j = i - offs[s]
        r = j // cols[s]
        c = j - r * cols[s]
        return s, r, c, half_ws[s], half_hs[s], 0, i

    def make_first(pixel, counting: bool, sectors: bool = False):
        """The first pass of pixels [p0, p1) with `pixel`, the doubtful ones listed in
        redo[:nredo[0]]; each pixel's counts into layers where `counting`. With `sectors`, over
        sectors packed one after another (_place_in_sectors): one launch instead of a launch a
        sector, each pixel's δc from the same arguments by the same operations."""
        place = _place_in_sectors if sectors else _place_in_frame

        @cuda.jit(device=True)
        def first(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp, geo, loop,
                  max_iter, layers, stats, redo, nredo):
            stride = cuda.gridsize(1)
            i = cuda.atomic.add(counters, slot, 1) + p0 if dynamic else p0 + cuda.grid(1)
            s = 0       # (sectors) a thread's i only grows: its sector is searched onward
            s0 = s1 = s2 = s3 = 0
            while i < p1:
                s, r, c, half_w, half_h, vr, vc = place(values, i, s, geo)
                v, a, b, sk, rb, doubt = pixel(r, c, d0r, d0i, step, cexp, half_w, half_h, loop)
                values[vr, vc] = v
                if counting:
                    layers[0, r, c] = _iteration_gpu(v, max_iter)
                    layers[1, r, c] = a
                    layers[2, r, c] = b
                    layers[3, r, c] = rb
                    layers[4, r, c] = 0
                if doubt:
                    redo[cuda.atomic.add(nredo, 0, 1)] = i
                s0 += a
                s1 += b
                s2 += sk
                s3 += rb
                i = cuda.atomic.add(counters, slot, 1) + p0 if dynamic else i + stride
            cuda.atomic.add(stats, 0, s0)
            cuda.atomic.add(stats, 1, s1)
            cuda.atomic.add(stats, 2, s2)
            cuda.atomic.add(stats, 3, s3)
        return first

    def make_redo(pixel, counting: bool, sectors: bool = False):
        """The pixels the first pass listed in redo[:nredo[0]], taken from counters[slot], with
        `pixel`; their passes' counts added into layers where `counting`. With `sectors`, the
        list holds packed indices: every sector's doubtful pixels in one launch."""
        place = _place_in_sectors if sectors else _place_in_frame

        @cuda.jit(device=True)
        def redo_pass(values, counters, slot, d0r, d0i, step, cexp, geo, loop, max_iter, layers,
                      stats, redo, nredo):
            k = cuda.atomic.add(counters, slot, 1)
            s0 = s1 = s2 = s3 = s4 = 0
            while k < nredo[0]:
                i = redo[k]
                _, r, c, half_w, half_h, vr, vc = place(values, i, 0, geo)
                v, a, b, sk, rb = pixel(r, c, d0r, d0i, step, cexp, half_w, half_h, loop)
                values[vr, vc] = v
                if counting:
                    layers[0, r, c] = _iteration_gpu(v, max_iter)
                    layers[1, r, c] += a
                    layers[2, r, c] += b
                    layers[3, r, c] += rb
                    layers[4, r, c] = 2 if v < 0 else 1      # 2: handed back (exact_redo.py)
                s0 += a
                s1 += b
                s2 += sk
                s3 += rb
                s4 += 1
                k = cuda.atomic.add(counters, slot, 1)
            cuda.atomic.add(stats, 0, s0)
            cuda.atomic.add(stats, 1, s1)
            cuda.atomic.add(stats, 2, s2)
            cuda.atomic.add(stats, 3, s3)
            cuda.atomic.add(stats, 4, s4)
        return redo_pass
