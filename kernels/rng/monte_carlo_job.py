"""The Monte Carlo job: estimate π from n random points in the unit square. The backend's part,
`count`, is `GpuMonteCarlo` (one fused kernel) or `CpuMonteCarlo` (the CPU twin)."""
from __future__ import annotations

import numpy as np

from . import grid
from . import montecarlo as M
from .request import MonteCarloRequest
from .results import MonteCarloResult
from .workspace import Deferred, check, ensure_cpu_compiled

MC_GPU_CHUNK = 1 << 33       # points per Monte Carlo launch
MC_CPU_BATCH = 64            # CPU Monte Carlo chunks (of 2^20 points) per call


class MonteCarlo:
    note = ""

    def __init__(self, ws):
        self.ws = ws

    def __call__(self, request: MonteCarloRequest, cancel=None) -> MonteCarloResult:
        request.validate(self.ws.backend)
        check(cancel)
        n, seed = int(request.n), int(request.seed)
        timer = self.ws.timer(f"monte carlo n={n:,}")
        inside, streams = self.count(n, seed, timer, cancel)
        timings = timer.finish()
        inside = int(inside)
        return MonteCarloResult(request=request, inside=inside, estimate=4.0 * inside / n,
                                monte_carlo_ms=timings.detail.get("monte-carlo"),
                                timings=timings, streams=streams, note=self.note)

    def count(self, n: int, seed: int, timer, cancel):
        """(the points inside the quarter circle, readable once the timer has finished, the
        streams of random numbers that drew them)."""
        raise NotImplementedError


class CpuMonteCarlo(MonteCarlo):
    note = ("the CPU twin: chunks of 2^20 points in parallel, each seeded by splitmix64 "
            "from (seed, chunk)")

    def count(self, n: int, seed: int, timer, cancel):
        chunks = M.cpu_chunks(n)
        hits = self.ws.pool.host("mc_hits", (min(MC_CPU_BATCH, chunks),), np.int64, pinned=False)
        seed_u = np.uint64(seed)
        ensure_cpu_compiled(timer, M.cpu_pi, (hits, 0, n, seed_u))
        inside = 0
        with timer.phase("kernel", detail="monte-carlo"):
            for first in range(0, chunks, MC_CPU_BATCH):
                part = hits[:min(MC_CPU_BATCH, chunks - first)]
                M.cpu_pi(part, first, n, seed_u)
                inside += int(part.sum())
                if first + MC_CPU_BATCH < chunks:
                    check(cancel)
        return inside, chunks


class GpuMonteCarlo(MonteCarlo):
    note = ("one fused kernel: each thread draws and tests its points with its "
            "xoroshiro128+ state in registers; only one count per block is written")

    def count(self, n: int, seed: int, timer, cancel):
        ws = self.ws
        stream = ws.stream()
        kernel = M.gpu_kernel()
        probe = ws.probe()
        partials_probe = ws.pool.device("mc_probe", (1,), np.int64, stream=stream)
        blocks = ws.blocks(timer, kernel, (n, probe, probe, partials_probe))
        threads = blocks * grid.threads_per_block()
        initial = ws.initial_states(seed, threads, timer)
        work = ws.work_states(threads)
        partials = ws.pool.device("mc_partials", (blocks,), np.int64, stream=stream)
        ws.zero(partials)
        done = 0
        grid.hold_stream(stream, timer)
        while done < n:
            count = min(MC_GPU_CHUNK, n - done)
            with timer.phase("kernel", gpu=True, detail="monte-carlo"):
                kernel[blocks, grid.threads_per_block(), stream](
                    count, initial if done == 0 else work, work, partials)
            done += count
            if done < n:
                check(cancel)
        host = ws.pool.host("mc_host", (blocks,), np.int64)
        with timer.phase("d2h", gpu=True, nbytes=host.nbytes):
            partials.copy_to_host(host, stream=stream)
        return Deferred(host, total=True), threads
