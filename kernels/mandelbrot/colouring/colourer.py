"""Colourer: colours value buffers on either backend (colour.py's CPU kernels, colour_gpu.py's
CUDA ones, the latter imported at the first GPU frame: a CPU frame never imports numba.cuda).
"""
from __future__ import annotations

import math

import numpy as np

from ... import palettes
from ...buffers import BufferPool
from ...cpu_chunks import control
from .colour import (
    CDF_THREADS,
    COLOUR_BLOCK,
    HIST_BINS,
    HISTOGRAM,
    MAPPINGS,
    N_STATS,
    REDUCE_GRID,
    SIM_BLOCK,
    SIM_CDF_THREADS,
    SIM_REDUCE_GRID,
    SQRT,
    cdf_cpu,
    colour_rows_cpu,
    count_bins_cpu,
    histogram_bins_cpu,
    mapping_index,
    pack_colour,
    pack_rgba,
    phase_scale,
    stats_cpu,
)


OVERLAY_LUT = "lut:overlays"    # the overlays' palette among the palettes' tables


class Colourer:
    """Colours value buffers on one backend with a request's palette, density, offset, interior
    colour and mapping (any object with those attributes). Keeps the packed palette tables (on the
    device for a GPU) and the small statistics buffers between frames. Use from one thread."""

    def __init__(self, backend):
        self.backend = backend
        self.pool = BufferPool(backend)
        self._luts: dict[str, object] = {}
        self.warm_mappings: set = set()     # mappings whose kernels warm() has compiled
        self._launchers = None              # (stream, kernels.launch.Launchers) of the last frame
        self.ctl = control()                # the CPU passes' control block (cpu_chunks), reused

    def _launch(self, dispatcher, grid, block, stream):
        """`dispatcher[grid, block, stream]`, prepared once per stream (kernels/launch.py)."""
        if stream is None or isinstance(stream, int):       # the default stream
            return dispatcher[grid, block, stream or 0]
        if self._launchers is None or self._launchers[0] is not stream:
            from ...launch import Launchers
            self._launchers = (stream, Launchers(stream))
        return self._launchers[1](dispatcher, grid, block)

    def lut(self, name: str, timer, stream=None):
        hit = self._luts.get(name)
        if hit is not None:
            return hit
        packed = pack_rgba(palettes.lut(name))
        if self.backend.is_gpu:
            dev = self.pool.device(f"lut:{name}", packed.shape, np.uint32, stream=stream)
            with timer.phase("h2d", gpu=True, nbytes=packed.nbytes):
                dev.copy_to_device(packed, stream=stream)
            hit = dev
        else:
            hit = packed
        self._luts[name] = hit
        return hit

    def colour(self, values, rgba, spec, max_iter: int, timer, stream=None, fixed=None):
        """rgba (H, W) uint32 ← colours of values (H, W) float64, both where the backend keeps
        them (device arrays on a GPU). Timed as kernel time, detail "colourise". `fixed`: the
        statistics (an object with host arrays `stats` and `cdf`, picture_colour.FixedStats) of
        the whole picture these values are a part of, used instead of the values' own."""
        lut = self.lut(spec.palette, timer, stream)
        mode = mapping_index(getattr(spec, "mapping", "sqrt"))
        dens = phase_scale(MAPPINGS[mode], spec.density)
        offset = float(spec.offset) % 1.0
        interior = pack_colour(spec.interior)
        max_iter = int(max_iter)
        if fixed is not None and mode != SQRT:
            colour_fixed(self, values, rgba, (max_iter, mode, dens, offset, lut, interior), timer,
                         stream, fixed)
        elif self.backend.is_gpu:
            self._colour_gpu(values, rgba, max_iter, mode, dens, offset, lut, interior, timer, stream)
        else:
            stats = self.pool.host("stats", (N_STATS,), np.float64, pinned=False)
            cdf = self.pool.host("cdf", (HIST_BINS + 1,), np.float64, pinned=False)
            # each pass timed by its own clock (cpu_chunks, native_clock): no wait for the GIL
            stats[:] = (math.inf, -math.inf, 0.0)
            if mode != SQRT:
                timer.native("kernel", stats_cpu, values, max_iter, stats, detail="colourise")
            if mode == HISTOGRAM:
                hist = self.pool.host("hist", (HIST_BINS,), np.int64, pinned=False)
                bins = self.pool.host("bins", values.shape, np.int16, pinned=False)
                timer.native("kernel", histogram_bins_cpu, values, max_iter, stats, bins,
                             self.ctl, detail="colourise", stamped=True)
                timer.native("kernel", count_bins_cpu, bins, hist, detail="colourise")
                timer.native("kernel", cdf_cpu, hist, cdf, detail="colourise")
            timer.native("kernel", colour_rows_cpu, values, rgba, max_iter, mode, dens, offset,
                         stats, cdf, lut, interior, self.ctl, detail="colourise", stamped=True)

    def _colour_gpu(self, values, rgba, max_iter, mode, dens, offset, lut, interior, timer, stream):
        sim = self.backend.simulated
        rows, cols = values.shape
        stats = self.pool.device("stats", (N_STATS,), np.float64, stream=stream)
        hist = self.pool.device("hist", (HIST_BINS,), np.int64, stream=stream)
        cdf = self.pool.device("cdf", (HIST_BINS + 1,), np.float64, stream=stream)
        bx, by = SIM_BLOCK if sim else COLOUR_BLOCK
        blocks = ((cols + bx - 1) // bx, (rows + by - 1) // by)
        rgrid = SIM_REDUCE_GRID if sim else REDUCE_GRID
        from . import colour_gpu as g
        with timer.phase("kernel", gpu=True, detail="colourise"):
            launch = self._launch
            launch(g.stats_init_kernel, 4, 256 if not sim else 8, stream)(stats, hist)
            if mode != SQRT:
                launch(g.stats_kernel, rgrid, (bx, by), stream)(values, max_iter, stats)
            if mode == HISTOGRAM:
                launch(g.histogram_kernel, rgrid, (bx, by), stream)(values, max_iter, stats, hist)
                launch(g.cdf_kernel, 1, SIM_CDF_THREADS if sim else CDF_THREADS, stream)(hist, cdf)
            launch(g.colour_kernel, blocks, (bx, by), stream)(values, rgba, max_iter, mode, dens,
                                                              offset, stats, cdf, lut, interior)

    def frame_colours(self, values, rgba, spec, max_iter: int, timer, stream=None, drawn=None):
        """A float64 frame's rgba: its colours (colour()), or overlay `drawn` (overlays.Drawn) in
        their place (overlay())."""
        if drawn is None:
            self.colour(values, rgba, spec, max_iter, timer, stream)
        else:
            self.overlay(values, rgba, drawn, timer, stream)

    # ---- overlays, coloured in place of the picture (overlays.py, overlay_device.py) ---------
    def overlay(self, values, rgba, drawn, timer, stream=None):
        """rgba ← overlay `drawn` (overlays.Drawn) of a float64 frame in place of its picture,
        from what its escape pass left: the iterations from the values, lane efficiency from
        them and the lane-iterations."""
        from . import overlay_device as od
        from . import overlays as ov
        scale, args = drawn.scale, drawn.args
        if self.backend.is_gpu:
            lut = self._overlay_lut(timer, stream)
            blocks, threads = od.grid2(rgba.shape, self.backend.simulated)
            lanes = drawn.name == ov.LANES
            kernel = self._launch(od.colour_lanes_kernel if lanes else od.colour_iterations_kernel,
                                  blocks, threads, stream)
            span = od.span_of(scale)
            with timer.phase("kernel", gpu=True, detail="overlay"):
                if lanes:
                    kernel(values, drawn.slots, rgba, args[-1], scale.lo, span, lut,
                           np.uint32(ov.no_value_word()))
                else:
                    kernel(values, rgba, args[0], *args[2:], scale.lo, span, bool(scale.log), lut)
            return
        with timer.phase("kernel", detail="overlay"):
            layers = od.float64_layers(values, args, into=self.pool.host(
                "overlay-layers", (ov.N_FLOAT64_LAYERS,) + values.shape, np.int32, pinned=False))
            od.colour_cpu(ov.shown_values(drawn.name, layers), scale, rgba)

    def colour_layers(self, layers, name, max_iter, rgba, timer, stream=None):
        """rgba ← overlay `name` of a deep frame's layers (N_DEEP_LAYERS, H, W), where they lie;
        returns its overlays.Scale (deep step counts: up to the frame's largest)."""
        from . import overlay_device as od
        from . import overlays as ov
        k = ov.DEEP_LAYER[name]
        gpu = self.backend.is_gpu
        top = 0
        if name not in (ov.ITERATIONS, ov.REDONE):
            top = self._layer_max(layers, k, timer, stream) if gpu else int(
                layers[k].max(initial=0))
        scale = ov.scale_for(name, max_iter, top)
        if not gpu:
            with timer.phase("kernel", detail="overlay"):
                od.colour_cpu(ov.shown_values(name, layers), scale, rgba)
            return scale
        lut = self._overlay_lut(timer, stream)
        blocks, threads = od.grid2(rgba.shape, self.backend.simulated)
        with timer.phase("kernel", gpu=True, detail="overlay"):
            od.colour_layer_kernel[blocks, threads, stream](
                layers, k, -1, rgba, scale.lo, scale.hi, scale.log, lut,
                np.uint32(ov.no_value_word()))
        return scale

    def _layer_max(self, layers, k, timer, stream) -> int:
        from ..loops import escape_gpu
        from . import overlay_device as od
        out = self.pool.device("overlay-max", (1,), np.int32, stream=stream)
        host = self.pool.host("overlay-max", (1,), np.int32)
        blocks, threads = od.reduce_grid(self.backend.simulated)
        with timer.phase("kernel", gpu=True, detail="overlay"):
            escape_gpu.zero_kernel[1, 32, stream](out)
            od.layer_max_kernel[blocks, threads, stream](layers, k, out)
        out.copy_to_host(host, stream=stream)
        stream.synchronize()
        return int(host[0])

    def _overlay_lut(self, timer, stream):
        """The overlays' palette on the device, uploaded once."""
        hit = self._luts.get(OVERLAY_LUT)
        if hit is None:
            from .overlays import lut_words
            words = lut_words()
            hit = self.pool.device(OVERLAY_LUT, words.shape, np.uint32, stream=stream)
            with timer.phase("h2d", gpu=True, nbytes=words.nbytes):
                hit.copy_to_device(words, stream=stream)
            self._luts[OVERLAY_LUT] = hit
        return hit

    def warm(self, timer, stream=None, mappings=MAPPINGS):
        """Compile the colouring kernels of `mappings` (a 3×4 frame in each) not yet compiled.
        The GPU compiles them all at once; the CPU only those asked for (each one's compile is
        part of a first start's wait)."""
        if self.backend.is_gpu:
            mappings = MAPPINGS
        todo = [m for m in MAPPINGS if m in mappings and m not in self.warm_mappings]
        if not todo:
            return
        vals = np.array([[1.0, 2.5, 9.0, 40.0], [3.0, 40.0, 7.0, 12.0], [40.0, 5.5, 6.0, 8.0]])
        from types import SimpleNamespace
        if self.backend.is_gpu:
            from numba import cuda
            dv = cuda.to_device(vals, stream=stream)
            out = cuda.device_array((3, 4), np.uint32, stream=stream)
        else:
            dv, out = vals, np.empty((3, 4), np.uint32)
        for m in todo:
            spec = SimpleNamespace(palette=palettes.DEFAULT, density=1.0, offset=0.0,
                                   interior=(0, 0, 0, 255), mapping=m)
            self.colour(dv, out, spec, 40, timer, stream)
            self.warm_mappings.add(m)


def colour_fixed(colourer, values, rgba, params, timer, stream, fixed) -> None:
    """Colourer.colour's pass with `fixed` statistics: the colour kernel alone, the statistics
    its inputs. `params`: (max_iter, mode, density, offset, lut, interior) as colour() makes them."""
    max_iter, mode, dens, offset, lut, interior = params
    if not colourer.backend.is_gpu:
        timer.native("kernel", colour_rows_cpu, values, rgba, max_iter, mode, dens, offset,
                     fixed.stats, fixed.cdf, lut, interior, colourer.ctl, detail="colourise",
                     stamped=True)
        return
    stats = colourer.pool.device("fixed-stats", (N_STATS,), np.float64, stream=stream)
    cdf = colourer.pool.device("fixed-cdf", (HIST_BINS + 1,), np.float64, stream=stream)
    with timer.phase("h2d", gpu=True, nbytes=fixed.stats.nbytes + fixed.cdf.nbytes):
        stats.copy_to_device(fixed.stats, stream=stream or 0)
        cdf.copy_to_device(fixed.cdf, stream=stream or 0)
    rows, cols = values.shape
    bx, by = SIM_BLOCK if colourer.backend.simulated else COLOUR_BLOCK
    blocks = ((cols + bx - 1) // bx, (rows + by - 1) // by)
    with timer.phase("kernel", gpu=True, detail="colourise"):
        from .colour_gpu import colour_kernel
        colour_kernel[blocks, (bx, by), stream or 0](values, rgba, max_iter, mode, dens, offset,
                                                     stats, cdf, lut, interior)
