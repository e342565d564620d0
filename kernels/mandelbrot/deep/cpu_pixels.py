"""CpuPixels: how a deep frame's pixels run on the CPU, behind the same small seam as GpuPixels
(gpu_pixels.py): arrays stay where they are, and the loop's row function fills bands of rows."""
from __future__ import annotations

import numpy as np

from ...cpu_chunks import control
from ..loops.escape import row_stride
from ..redo import exact_redo
from ..tables.layout import N_STATS

# rows per band at least this many pixels, for a cancellation check between bands
CPU_BAND_PIXELS = 2 ** 16


class CpuPixels:
    """The CPU side of DeepRenderer: no device, no stream, numba's threads over rows."""

    def __init__(self, backend):
        self.backend = backend
        self.started = None
        self.ctl = control()    # where the loop's threads claim rows and stamp their span

    def stream(self):
        return None

    def place(self, slot, key, arrays, timer, what=None):
        """The arrays where the loop reads them: here, the host arrays themselves."""
        return tuple(arrays)

    def to_device(self, arrays):
        return tuple(arrays)

    def run(self, pool, shape, code, args, timer, cancel, progress):
        """The pixels of a frame of `shape` (H, W) by `code.cpu_rows` with the positional `args`
        (loop_args.py) into pool buffers: (values (H, W), stats per row)."""
        h, w = shape
        values = pool.host("values", (h, w), np.float64, pinned=False, ring=3)
        stats = pool.host("stats", (h, N_STATS), np.int64, pinned=False)
        band = max(1, min(h, -(-CPU_BAND_PIXELS // w)))
        for r0 in range(0, h, band):
            n = min(band, h - r0)
            # rows claimed one at a time by whichever thread is free, each thread timing itself
            # (cpu_chunks): neither a thread that loses its core nor the wait for the GIL after
            # the loop is in the band's time
            timer.native("kernel", code.cpu_rows, values, stats, r0, n, row_stride(n), *args,
                         self.ctl, stamped=True)
            if cancel is not None:
                cancel.check()
            if progress is not None:
                progress((r0 + n) / h, "pixels")
        return values, stats

    def exact(self, pool, run_out, request, exact: bool, timer, cache=None, cancel=None,
              layers=None, progress=None):
        """The pixels the loop handed back, iterated exactly (exact_redo.py); `layers`: the
        overlays', whose redone layer keeps 2 only where a pixel stays marked; `progress` hears
        the stage request.DOUBTFUL_STAGE when they are iterated again. Returns their counts as a
        function to call once the frame is finished (GpuPixels.exact's form)."""
        with timer.phase("host", detail="exact pixels"):
            got = exact_redo.settle(request, run_out[0], exact, cache=cache, cancel=cancel,
                                    layers=layers, progress=progress)
        return lambda: got

    def fetch(self, pool, run_out, shape, timer, to_host=True):
        """(values, stats summed over the frame) on the host."""
        values, stats = run_out
        return values, stats.sum(axis=0)

    def settled(self, started) -> None:
        """GpuPixels' note of a frame's time: nothing to note here."""
