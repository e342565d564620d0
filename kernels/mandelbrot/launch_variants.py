"""The plain GPU launches that only benches, tools and tests select (Renderer(launch=...)).

Each runs a kernel of escape_variants.py where gpu_target.WarpLaunch runs the app's; the values are
the same bit for bit. "grid": one thread per pixel; "persistent": threads that each take their
next pixels from a counter; "sorted": the warp kernel handed the pixels longest first.
"""
from __future__ import annotations

import numpy as np

from . import escape_gpu as mk
from . import escape_variants as ev
from .gpu_target import THRESH, WARPS_PER_SM, CountedLaunch, WarpLaunch
from .launch_settings import CHUNK, GRAB

# Persistent launch: threads per block (CHUNK and GRAB: launch_settings.py)
THREADS = 128
# resident blocks per SM when the kernel's register count cannot be asked
BLOCKS_PER_SM = 8
SIM_PERSISTENT = (2, 4)         # (blocks, threads) under the simulator


class GridLaunch:
    """escape_variants.escape_kernel: one thread per pixel, blocks of gpu.block."""

    counted = False

    def run(self, gpu, values, counts, b0, n, args, timer):
        cols = values.shape[1]
        bx, by = gpu.block
        blocks = ((cols + bx - 1) // bx, (n + by - 1) // by)
        with timer.phase("kernel", gpu=True):
            gpu.kernel(ev.escape_kernel, blocks, (bx, by))(values, b0, n, *args)


class PersistentLaunch(CountedLaunch):
    """escape_variants.escape_persistent_kernel: `chunk` iterations between checks, `grab`
    pixels per fetch from the counter."""

    counter_dtype = np.int64
    threads = THREADS
    sim_grid = SIM_PERSISTENT
    cap = False

    def __init__(self, chunk: int = CHUNK, grab: int = GRAB):
        super().__init__(BLOCKS_PER_SM)
        self.chunk, self.grab = int(chunk), int(grab)

    def dispatcher(self):
        return ev.escape_persistent_kernel

    def escape(self, gpu, values, counts, counter, b0, n, args, grid, finish):
        nblocks, threads = grid
        ev.escape_persistent_kernel[nblocks, threads, gpu.stream](
            values, counts, counter, self.grab, self.chunk, b0, n, *args)


class SortedLaunch(WarpLaunch):
    """The warp launch on a list of the pixels, longest first, as one sample per `sample` x
    `sample` pixels iterated `probe` iterations predicts them (a pixel's estimate the largest of
    the `reach` x 2 samples around it each way; escape_variants.py)."""

    def __init__(self, thresh: int, warps_per_sm: int, sample: int = ev.SAMPLE,
                 probe: int = ev.PROBE, reach: int = ev.REACH):
        super().__init__(thresh, warps_per_sm)
        self.sample, self.probe, self.reach = int(sample), int(probe), int(reach)
        self._meta_views = None         # (meta, hist, cursor)

    def order(self, gpu, values, counts, b0, n, args, finish):
        """Queue the first passes for band rows b0 .. b0 + n: the samples' results go into
        values/counts; returns (order, hist) for the warp kernel."""
        blocks, block = finish
        s, pool = gpu.stream, gpu.pool
        rows, cols = values.shape
        nsr, nsc = ev.sample_shape(n, cols, self.sample)
        est = pool.device("order-est", ev.sample_shape(rows, cols, self.sample), np.int32,
                          stream=s)
        order = pool.device("order", (rows * cols,), np.int32, stream=s)
        meta = pool.device("order-meta", (2 * ev.NCLASSES,), np.int32, stream=s)
        if self._meta_views is None or self._meta_views[0] is not meta:
            # the same view objects every frame: prepared launches convert them once
            self._meta_views = (meta, meta[:ev.NCLASSES], meta[ev.NCLASSES:])
        _, hist, cursor = self._meta_views
        bx, by = block
        gpu.kernel(mk.zero_kernel, 1, 2 * ev.NCLASSES)(meta)
        gpu.kernel(ev.probe_kernel, ((nsc + bx - 1) // bx, (nsr + by - 1) // by), block)(
            values, counts, est, self.sample, self.probe, b0, n, *args)
        gpu.kernel(ev.count_kernel, blocks, block)(est, self.sample, self.reach, hist, n, cols)
        gpu.kernel(ev.scatter_kernel, blocks, block)(est, self.sample, self.reach, hist, cursor,
                                                     order, n, cols)
        return order, hist


VARIANTS = ("persistent", "grid", "sorted")


def variant(name: str, *, chunk: int = CHUNK, grab: int = GRAB, thresh: int = THRESH,
            warps_per_sm: int = WARPS_PER_SM, sample: int = ev.SAMPLE, probe: int = ev.PROBE,
            reach: int = ev.REACH):
    """The launch object for a variant's name ("grid", "persistent" or "sorted") and its knobs,
    for Renderer(launch=...): "persistent" runs `chunk` iterations between checks and takes
    `grab` pixels per fetch; "sorted" hands out the pixels longest first, as predicted by one
    sample per `sample` x `sample` pixels iterated `probe` iterations, a pixel's estimate the
    largest of the `reach` x 2 samples around it each way, on the warp launch's `thresh` and
    `warps_per_sm`; "grid" is one thread per pixel (the Renderer's `block`)."""
    if int(chunk) < 1 or int(grab) < 1:
        raise ValueError(f"chunk and grab must be at least 1, got {chunk} and {grab}")
    if int(sample) < 1 or int(probe) < 1 or int(reach) < 1:
        raise ValueError(f"sample, probe and reach must be at least 1, got {sample}, {probe} "
                         f"and {reach}")
    if name == "grid":
        return GridLaunch()
    if name == "persistent":
        return PersistentLaunch(chunk, grab)
    if name == "sorted":
        return SortedLaunch(thresh, warps_per_sm, sample, probe, reach)
    raise ValueError(f"no launch variant {name!r}; choose one of: warp, {', '.join(VARIANTS)}")
