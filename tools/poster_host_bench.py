#!/usr/bin/env python3
"""A poster's host side without a GPU: `Poster.render` and `Poster.write` (services/poster.py) over
an in-process pool of N fake GPUs, whose bands cost a set GPU time (a sleep, the GIL let go), a
set host time on their worker (Python holding the GIL) and the copy of their pixels into the
parts file, as a deep band's does. What is timed is what the command adds around the bands: the
hand-over of each band on the render thread, the rounds of the marks' writer (its sync and
done.json), the wait for the last round, and the final write (the .npy moved into place, with and
without an earlier output to replace).

`--before` lists each band as the tree before services/poster_marks.py did (numpy's flush, then
done.json, on the render thread), for an A/B in one process. Cases alternate over `--repeats`.

    python3 tools/poster_host_bench.py [--size 16384] [--gpus 1,2] [--gpu-ms 39] [--host-ms 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class SyncMarks:
    """The marking of the tree before poster_marks: each band flushed (numpy's msync, the GIL
    held) and listed on the render thread."""

    def __init__(self, parts):
        self.parts = parts
        self.rounds = 0

    def add(self, index, counts=None):
        from services.files import write_json
        p = self.parts
        p.pixels.flush()
        p.done.add(int(index))
        if counts is not None:
            p.counts[int(index)] = counts
        write_json(p.done_path, {"bands": sorted(p.done),
                                 "exact": {str(i): c for i, c in sorted(p.counts.items())}},
                   indent=None)
        self.rounds += 1

    def wait(self):
        pass

    def close(self):
        pass


def fake_bands(gpu_s: float, host_s: float, rows: int, width: int):
    """BandInto.start for fake GPUs: the host part holds the GIL, then the band is queued behind
    the worker's last; the finish waits for its GPU time and copies the band into the picture."""
    src = np.arange(rows * width, dtype=np.float64).reshape(rows, width)
    busy: dict = {}
    idle: list = []

    def start(self, worker):
        j = self.job
        out = self.picture[j.row0:j.row0 + j.rows]
        t = time.perf_counter()
        while time.perf_counter() - t < host_s:     # Python, GIL held: the band's host part
            pass
        now, last = time.perf_counter(), busy.get(worker.device)
        if last is not None:        # the fake GPU waited for the host since its last band ended
            idle.append(max(0.0, now - last))
        end = max(now, last or 0.0) + gpu_s
        busy[worker.device] = end

        def done():
            time.sleep(max(0.0, end - time.perf_counter()))
            np.copyto(out, src[:j.rows] + j.row0)
            return {}
        return done
    start.idle = idle
    start.reset = lambda: (busy.clear(), idle.clear())
    return start


def one(args, gpus: int, before: bool, replace: bool, folder: str) -> dict:
    from kernels.backend import Backend
    from kernels.mandelbrot.requests.request import MandelbrotRequest
    from kernels.spread import LocalPool
    from services import poster, poster_marks
    req = MandelbrotRequest(-0.75, 0.1, 3.0, (args.size, args.size), 100)
    out = os.path.join(folder, "poster.npy")
    if replace and not os.path.exists(out):     # on disk before the timed part begins
        earlier = np.lib.format.open_memmap(out, mode="w+", dtype=np.float64,
                                            shape=(args.size, args.size))
        earlier[:] = 1.0
        earlier.flush()
        del earlier
    elif not replace and os.path.exists(out):
        os.remove(out)
    # the hand-over on the render thread, and the writer's rounds, timed where they run
    hand, rounds, drain = [], [], []
    from kernels.mandelbrot import tiles
    tiles.BandInto.start.reset()
    marks_cls = SyncMarks if before else poster_marks.BandMarks
    real_mark_many = poster.Parts.mark_many

    class Timed(marks_cls):
        def add(self, index, counts=None):
            t = time.perf_counter()
            super().add(index, counts)
            hand.append(time.perf_counter() - t)

        def wait(self):
            t = time.perf_counter()
            super().wait()
            drain.append(time.perf_counter() - t)

    def mark_many(self, bands):
        t = time.perf_counter()
        real_mark_many(self, bands)
        rounds.append((time.perf_counter() - t, len(bands)))
    poster.BandMarks, poster.Parts.mark_many = Timed, mark_many
    try:
        p = poster.Poster("mandelbrot", req, out)
        p.open()
        pool = LocalPool(Backend("cuda", simulated=True), tuple(range(gpus)))
        with pool:
            t = time.perf_counter()
            p.render(pool, None)
            render_s = time.perf_counter() - t
        write_s = p.write()
    finally:
        poster.BandMarks, poster.Parts.mark_many = poster_marks.BandMarks, real_mark_many
    bands_s = p.total * args.gpu_ms / 1000 / gpus
    return {"render_s": render_s, "over_bands_s": render_s - bands_s, "write_s": write_s,
            "hand_s": sum(hand), "hand_max_ms": 1000 * max(hand), "drain_s": sum(drain),
            "rounds": len(rounds) if not before else len(hand),
            "writer_s": sum(r[0] for r in rounds), "bands": p.total,
            "gpu_idle_s": sum(tiles.BandInto.start.idle)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=16384)
    ap.add_argument("--gpus", default="1,2", help="fake GPU counts, comma-separated")
    ap.add_argument("--gpu-ms", type=float, default=39.0, help="one band's GPU time")
    ap.add_argument("--host-ms", type=float, default=3.0, help="one band's host part (GIL held)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--folder", default=None, help="where the parts file goes (a disk, not tmpfs)")
    a = ap.parse_args(argv)
    from kernels.mandelbrot import tiles
    rows = tiles.band_rows(a.size, a.size)
    fake = fake_bands(a.gpu_ms / 1000, a.host_ms / 1000, rows, a.size)
    tiles.BandInto.start = fake
    folder = tempfile.mkdtemp(prefix="poster-host-", dir=a.folder)
    cases = [(g, before, replace) for g in map(int, a.gpus.split(","))
             for before in (True, False) for replace in (False, True)]
    got: dict = {c: [] for c in cases}
    try:
        for _ in range(a.repeats):
            for c in cases:
                got[c].append(one(a, *c, folder))
    finally:
        import shutil
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{a.size}² float64 poster, {got[cases[0]][0]['bands']} bands of {rows} rows, fake GPUs "
          f"of {a.gpu_ms:g} ms a band, {a.host_ms:g} ms host part; medians of {a.repeats}")
    print(f"{'case':<34}{'render':>8}{'over bands':>11}{'GPU idle':>9}{'hand-over':>10}{'max':>7}"
          f"{'rounds':>7}{'writer':>8}{'last wait':>10}{'write':>7}")
    for (g, before, replace), rs in got.items():
        med = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
        name = f"{g} GPU{'s' if g > 1 else ''}, {'before' if before else 'now'}" + \
            (", out replaced" if replace else "")
        print(f"{name:<34}{med['render_s']:8.3f}{med['over_bands_s']:11.3f}"
              f"{med['gpu_idle_s']:9.3f}{med['hand_s']:10.3f}"
              f"{med['hand_max_ms']:7.1f}{med['rounds']:7.0f}{med['writer_s']:8.3f}"
              f"{med['drain_s']:10.3f}{med['write_s']:7.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
