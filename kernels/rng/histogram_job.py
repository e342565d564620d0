"""The histogram job: count the job's data into equal bins (plus underflow and overflow) with the
chosen strategy. The backend's part, `count`, is `GpuHistograms` or `CpuHistograms`."""
from __future__ import annotations

import numpy as np

from . import grid
from . import histogram as H
from .choices import race_note, resolve
from .request import HISTOGRAM_HELP, HistogramRequest
from .results import HistogramResult
from .workspace import check, ensure_cpu_compiled


class Histograms:
    def __init__(self, ws):
        self.ws = ws

    def __call__(self, request: HistogramRequest, cancel=None) -> HistogramResult:
        ws = self.ws
        request.validate(ws.backend)
        strategy = resolve("histogram", request.strategy, ws.backend)
        check(cancel)
        n, dtype, nbins = int(request.n), request.np_dtype.name, int(request.bins)
        lo_f, hi_f = request.edges
        lo, scale = H.scale_for(lo_f, hi_f, nbins, dtype)
        timer = ws.timer(f"histogram {strategy} {dtype} n={n:,} bins={nbins}")
        x, _ = ws.data(n, dtype, request.distribution, request.seed, request.data, timer, cancel)
        check(cancel)
        counts = self.count(strategy, x, n, lo, scale, nbins, timer)
        timings = timer.finish()
        counts = np.array(counts, dtype=np.int64)   # the result owns its counts
        note = HISTOGRAM_HELP[strategy] + race_note(strategy, ws.backend)
        return HistogramResult(request=request, strategy=strategy, counts=counts[:nbins],
                               underflow=int(counts[nbins]), overflow=int(counts[nbins + 1]),
                               edges=(lo_f, hi_f), histogram_ms=timings.detail.get("histogram"),
                               bytes_read=n * request.np_dtype.itemsize, timings=timings, note=note)

    def count(self, strategy: str, x, n: int, lo, scale, nbins: int, timer):
        """The nbins + 2 counts (the last two: underflow, overflow), readable once the timer has
        finished."""
        raise NotImplementedError


class CpuHistograms(Histograms):
    def count(self, strategy: str, x, n: int, lo, scale, nbins: int, timer):
        if strategy == "numpy":
            with timer.phase("kernel", detail="histogram"):
                return H.numpy_histogram(x, lo, scale, nbins)
        pool = self.ws.pool
        rows = pool.host("histogram_rows", (H.cpu_rows(n), nbins + 2), np.int64, pinned=False)
        counts = pool.host("counts_host", (nbins + 2,), np.int64, pinned=False)
        args = (x, lo, scale, nbins, rows, counts)
        ensure_cpu_compiled(timer, H.cpu_histogram, args)
        with timer.phase("kernel", detail="histogram"):
            H.cpu_histogram(*args)
        return counts


class GpuHistograms(Histograms):
    def count(self, strategy: str, x, n: int, lo, scale, nbins: int, timer):
        ws = self.ws
        stream = ws.stream()
        counts_d = ws.pool.device("counts", (nbins + 2,), np.int64, stream=stream)
        kernel = H.gpu_kernels(nbins)[strategy]
        args = (x, n, lo, scale, counts_d)
        blocks = ws.blocks(timer, kernel, args, n)
        ws.zero(counts_d)
        grid.hold_stream(stream, timer)
        with timer.phase("kernel", gpu=True, detail="histogram"):
            kernel[blocks, grid.threads_per_block(), stream](*args)
        counts = ws.pool.host("counts_host", (nbins + 2,), np.int64)
        with timer.phase("d2h", gpu=True, nbytes=counts.nbytes):
            counts_d.copy_to_host(counts, stream=stream)
        return counts
