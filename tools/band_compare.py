"""A poster's bands timed one by one on one GPU and on several (tools/poster_band_profile.py
--compare): where the extra time of a band on a shared machine goes."""
from __future__ import annotations

import threading
import time

import numpy as np


class _Band:
    """Band `index` of the poster into `picture`, noting (index, worker, wall s, GPU ms, table
    reused, copy-back ms) into `log`. A deep band renders as DeepFrameRenderer.band does (its frame, then the
    copy into the picture), keeping the frame's timings."""

    def __init__(self, request, index, row0, rows, picture, log):
        self.request, self.index, self.row0, self.rows = request, index, row0, rows
        self.picture, self.log = picture, log

    def __call__(self, worker):
        from kernels.mandelbrot.deep_frames import band_request
        from kernels.mandelbrot.jobs import renderer_of
        from kernels.mandelbrot.requests.request import DeepFrameRequest
        from kernels.mandelbrot.tiles import ROLE, BandJob
        t = time.perf_counter()
        into = self.picture[self.row0:self.row0 + self.rows]
        reused = None
        if isinstance(self.request, DeepFrameRequest):
            frame = renderer_of(worker, self.request, ROLE).render(
                band_request(self.request, self.row0, self.rows, False), cancel=worker.cancel)
            np.copyto(into, frame.rgba)
            p = frame.timings.phases_ms
            reused = bool(frame.meta.get("table_reused"))
        else:
            BandJob(self.request, self.row0, self.rows).render_into(worker, into)
            p = renderer_of(worker, self.request, ROLE).band_timings.phases_ms
        gpu = sum(p.get(x) or 0.0 for x in ("kernel", "h2d", "d2h"))
        self.log.append((self.index, threading.current_thread().name,
                         time.perf_counter() - t, gpu, reused, p.get("d2h") or 0.0))


def _run(pool, request, cut, picture):
    log: list = []
    jobs = [_Band(request, i, r0, n, picture, log) for i, (r0, n) in enumerate(cut)]
    t = time.perf_counter()
    for _ in pool.ordered(jobs):
        pass
    return time.perf_counter() - t, log, sum(x[5] for x in log)


def compare(poster: str, size: int, gpus: str, repeats: int) -> int:
    from spread_bench import posters, warm
    from kernels.mandelbrot.tiles import bands, picture_rows
    from kernels.spread import open_pool
    request = posters(size)[poster]
    w, h = request.size
    cut = bands(h, picture_rows(request))
    picture = np.zeros((h, w, 4), np.uint8)
    pools = {"1 GPU": open_pool("cuda", gpus=gpus.split(",")[0]), f"GPUs {gpus}": open_pool("cuda", gpus=gpus)}
    best: dict = {}
    try:
        for pool in pools.values():
            warm(pool, request, w)
        for rep in range(repeats):
            for case, pool in pools.items():
                took, log, d2h = _run(pool, request, cut, picture)
                if case not in best or took < best[case][0]:
                    best[case] = (took, log, d2h)
                print(f"{case} rep {rep}: {took:.3f} s", flush=True)
    finally:
        for pool in pools.values():
            pool.close()
    _report(best, len(cut))
    return 0


def _report(best, n):
    one, many = list(best)
    by = {case: {i: (who, s, g, r) for i, who, s, g, r, _ in log} for case, (_, log, _) in best.items()}
    for case, (took, log, d2h) in best.items():
        workers = sorted({who for _, who, *_ in log})
        parts = []
        for who in workers:
            mine = [x for x in log if x[1] == who]
            busy = sum(x[2] for x in mine)
            gpu = sum(x[3] or 0.0 for x in mine) / 1e3
            rebuilt = sum(1 for x in mine if x[4] is False)
            parts.append(f"{who}: {len(mine)} bands, busy {busy:.3f} s, GPU {gpu:.3f} s, "
                         f"host {busy - gpu:.3f} s, tables built {rebuilt}")
        print(f"{case}: {took:.3f} s (copies back {d2h:.1f} ms in all); " + "; ".join(parts))
    d_wall = sum(by[many][i][1] - by[one][i][1] for i in range(n))
    d_gpu = sum((by[many][i][2] or 0.0) - (by[one][i][2] or 0.0) for i in range(n)) / 1e3
    print(f"bands' extra time on {many} over 1 GPU, summed: wall {d_wall * 1e3:+.1f} ms, GPU "
          f"{d_gpu * 1e3:+.1f} ms, host {(d_wall - d_gpu) * 1e3:+.1f} ms")
    worst = sorted(range(n), key=lambda i: by[many][i][1] - by[one][i][1], reverse=True)[:8]
    for i in worst:
        a, b = by[one][i], by[many][i]
        print(f"  band {i}: 1 GPU {a[1] * 1e3:.1f} ms (GPU {a[2] or 0:.1f}, table "
              f"{'kept' if a[3] else 'built' if a[3] is False else '-'}) | {b[0]} "
              f"{b[1] * 1e3:.1f} ms (GPU {b[2] or 0:.1f}, table "
              f"{'kept' if b[3] else 'built' if b[3] is False else '-'})")
