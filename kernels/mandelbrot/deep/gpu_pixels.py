"""GpuPixels: how a deep frame's pixels run on the GPU, behind the same small seam as CpuPixels
(cpu_pixels.py): the arrays uploaded once per version, a first-pass kernel over the pixels and a
redo kernel over the doubtful ones, then one copy back.

Launch scheme of every loop's kernels (targets.LoopCode). dynamic=True ("persistent"): a few blocks
per SM whose threads each take the next pixel index of [p0, p1) from counters[slot] when their last
pixel is done, so threads whose pixels escape early keep working instead of idling until the
slowest pixel of the frame finishes. dynamic=False ("grid"): pixel p0 + thread, then strides of the
whole grid (launched with one thread per pixel). Counts are summed per thread and added once.
The accuracy guard's later passes run in a kernel of their own: the first kernel lists its
doubtful pixels in `redo` (nredo[0] of them) and the second redoes them. Redone inside the first
kernel, a pixel held its warp's other 31 lanes idle for 2-3 pixels' time and the loop around the
passes took more registers (docs/PERFORMANCE.md, "The accuracy guard").
"""
from __future__ import annotations

import time

import numpy as np

from ...buffers import ensure_device_fits
from ...launch import Launchers
from ..redo.gpu_untrusted import queue_listing, settle_on_device
from ..tables.layout import N_STATS
from ..loops.targets import cuda, zero_kernel

# persistent GPU threads: threads per block, and blocks per SM when the kernel's register count
# cannot be asked (otherwise as many blocks as fit at once, by the kernel's registers: blocks
# beyond those would only start once the resident ones have taken every pixel)
THREADS = 128
BLOCKS_PER_SM = 4
SIM_BLOCKS, SIM_THREADS = 2, 4
# a cancellable GPU frame runs in bands of this many pixels, with a check between bands
GPU_BAND_PIXELS = 2 ** 19
# ... unless the last frame of these GpuPixels took less than this (a movie's or a poster's next
# frame, asked without progress): each band ends in a synchronisation, the GPU idle while its last
# pixels finish and the next band is launched, and a cancel waits a frame at most anyway
QUICK_FRAME_S = 0.1


def band_pixels(total: int, cancel, progress, last_frame_s: float | None) -> int:
    """Pixels a band of a frame of `total` pixels: the whole frame unless it reports progress,
    or may be cancelled and its GpuPixels' last frame was not quick (or there was none)."""
    quick = last_frame_s is not None and last_frame_s < QUICK_FRAME_S
    if progress is None and (cancel is None or quick):
        return max(1, total)
    return GPU_BAND_PIXELS


class GpuPixels:
    """The GPU side of DeepRenderer: one stream, the device copies of the arrays the loops read
    (by slot, each kept while its key stays), and the kernels' launches."""

    def __init__(self, backend, launch: str = "persistent"):
        """launch: "persistent" or "grid" (DeepRenderer checks it)."""
        self.backend = backend
        self.launch = launch
        self._stream = None
        self._launchers = None
        self._placed = {}       # slot -> (key, device arrays)
        self._started = None    # perf_counter() when run() began the frame fetch() ends
        self.started = None     # ... that of the frame fetch() queued last
        self.last_frame_s = None  # run() to fetch() of the last frame, seconds

    def stream(self):
        if self._stream is None:
            self._stream = cuda.stream()
        return self._stream

    def launchers(self) -> Launchers:
        """This stream's prepared launches: a movie launches the same five kernels every frame."""
        if self._launchers is None:
            self._launchers = Launchers(self.stream())
        return self._launchers

    def place(self, slot, key, arrays, timer, what=None):
        """Device copies of `arrays`, uploaded (one "h2d" phase) when `key` differs from the one
        `slot` holds; `what` names them for the check that they fit in device memory."""
        held = self._placed.get(slot)
        if held is not None and held[0] == key:
            return held[1]
        old = self._placed.pop(slot, None)    # the old copies go before the new ones come
        if old is not None and self._launchers is not None:
            self._launchers.forget(old[1])
        nbytes = sum(a.nbytes for a in arrays)
        if what is not None:
            ensure_device_fits(nbytes, what=what)
        s = self.stream()
        with timer.phase("h2d", gpu=True, nbytes=nbytes, gate=False):   # allocates
            dev = tuple(cuda.to_device(a, stream=s) for a in arrays)
        self._placed[slot] = (key, dev)
        return dev

    def to_device(self, arrays):
        """Device copies of `arrays`, kept by nobody (the warm-up's)."""
        s = self.stream()
        return tuple(cuda.to_device(np.ascontiguousarray(a), stream=s) for a in arrays)

    def run(self, pool, shape, code, args, timer, cancel, progress, kernels=None):
        """The pixels of a frame of `shape` (H, W) by `code`'s kernels with the positional `args`
        (loop_args.py) into pool buffers on the device: (values (H, W), stats (N_STATS,)).
        kernels: (first, redo) in place of code's own (sectors.py's, over shape (1, pixels))."""
        h, w = shape
        s = self.stream()
        values = pool.device("values", (h, w), np.float64, stream=s)
        stats = pool.device("stats", (N_STATS,), np.int64, stream=s)
        total = h * w
        band = band_pixels(total, cancel, progress, self.last_frame_s)
        self._started = time.perf_counter()
        nbands = -(-total // band)
        # one counter per band, one for the redo kernel; the list of pixels to redo and its length
        counters = pool.device("counters", (nbands + 1,), np.int64, stream=s)
        redo = pool.device("redo", (max(total, 1),), np.int64, stream=s)
        nredo = pool.device("nredo", (1,), np.int64, stream=s)
        simulated = self.backend.simulated
        threads = SIM_THREADS if simulated else THREADS
        dynamic = self.launch == "persistent"
        kernel, redo_kernel = kernels or (code.gpu_first, code.gpu_redo)
        launch = self.launchers()
        if not dynamic:
            resident = None
        elif simulated:
            resident = SIM_BLOCKS
        else:
            resident = launch.resident(kernel, threads, BLOCKS_PER_SM)
        # one timed phase for all the frame's launches: each phase records two events, whose
        # host calls cost more than the small kernels around the pixels' pass
        with timer.phase("kernel", gpu=True):
            launch(zero_kernel, 1, 32)(stats)
            launch(zero_kernel, -(-counters.shape[0] // 32), 32)(counters)
            launch(zero_kernel, 1, 32)(nredo)
            for b in range(nbands):
                p0, p1 = b * band, min(total, (b + 1) * band)
                need = -(-(p1 - p0) // threads)
                nblocks = need if resident is None else max(1, min(resident, need))
                launch(kernel, nblocks, threads)(values, counters, b, p0, p1, dynamic, *args,
                                                 stats, redo, nredo)
                if nbands > 1 and (cancel is not None or progress is not None):
                    timer.wait()
                    if cancel is not None:
                        cancel.check()
                    if progress is not None:
                        progress(p1 / total, "pixels")
            # the doubtful pixels (a few per thousand at most where measured): persistent threads
            # take them from the last counter until nredo[0], which only the device knows
            rblocks = SIM_BLOCKS if simulated else launch.resident(redo_kernel, threads,
                                                                    BLOCKS_PER_SM)
            launch(redo_kernel, rblocks, threads)(values, counters, nbands, *args, stats, redo,
                                                  nredo)
            queue_listing(self, pool, values, redo, nredo)     # what it handed back (exact())
        return values, stats

    def exact(self, pool, run_out, request, exact: bool, timer, cache=None, cancel=None,
              layers=None, progress=None):
        """The pixels the redo kernel handed back, iterated exactly where the values are
        (gpu_untrusted.py): one wait per frame, for their count, none where they are only
        marked; `layers`, `progress` and what it returns as CpuPixels.exact."""
        got = settle_on_device(self, pool, run_out[0], request, exact, timer, cache, cancel,
                               layers, progress)
        return got if callable(got) else (lambda: got)

    def fetch(self, pool, run_out, shape, timer, to_host=True):
        """(values, stats) on the host, their copies queued without waiting for them: they are
        there once the caller's timer has finished (JobTimer.queued), which then calls
        settled(self.started). to_host=False leaves the values on the device (this frame's until
        the next frame's kernels) and copies only the counts (one of a ring of 3)."""
        values, stats = run_out
        h, w = shape
        s = self.stream()
        host = pool.host("values-host", (h, w), np.float64, ring=3) if to_host else None
        host_stats = pool.host("stats-host", (N_STATS,), np.int64, ring=3)
        nbytes = host_stats.nbytes + (host.nbytes if to_host else 0)
        with timer.phase("d2h", gpu=True, nbytes=nbytes):
            if to_host:
                values.copy_to_host(host, stream=s)
            stats.copy_to_host(host_stats, stream=s)
        self.started, self._started = self._started, None
        return (host if to_host else values), host_stats

    def settled(self, started: float | None) -> None:
        """A frame whose run() began at `started` has come back: note how long it took."""
        if started is not None:
            self.last_frame_s = time.perf_counter() - started
