#!/usr/bin/env python3
"""How much of the seahorse frame's ordering problem a schedule can solve, in a model without a
GPU: the frame's exact iteration counts (CPU twin, 1920x1080, 2000 iterations) handed to L lanes
that each take the next pixel of a list when theirs is done, every lane iterating at the same
rate (no refill cost, no warps). Prints each schedule's efficiency = (iterations / L) / the time
the last lane ends, for: picture order, the oracle (longest first by the true counts), the sorted
launch's estimate (escape_variants.py: samples every S pixels, probe P, reach R, in classes or by
the estimate itself), round robin (picture order, pixels cut into slices re-queued at the back,
with a per-slice cost in iterations), and passes that compact the unfinished pixels (every pixel
iterates up to a cap K in picture order; those still running continue, with the per-slice cost,
either after all the first passes (a barrier) or as lanes come free behind them).

    .venv/bin/python tools/schedule_model.py [--lanes 67584] [--rr 256,512] [--rr-cost 10]
        [--caps 64,256,600]

67,584 lanes = 16 resident warps on each of the H100's 132 SMs (the warp launch's default).
"""
from __future__ import annotations

import argparse
import collections
import heapq
import itertools
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def makespan(costs, lanes: int) -> int:
    heap = [0] * lanes
    for x in costs.tolist():
        heapq.heappush(heap, heapq.heappop(heap) + x)
    return max(heap)


def round_robin(costs, lanes: int, slice_: int, cost: int) -> float:
    """Makespan when pixels run `slice_` iterations at a time, the rest re-queued at the back."""
    free = [0.0] * lanes
    queue: collections.deque = collections.deque()
    arrivals: list = []                 # (time, seq, remaining): slices that end and re-queue
    seq = itertools.count()
    fresh, n, end = 0, costs.size, 0.0
    while True:
        t = heapq.heappop(free)
        while arrivals and arrivals[0][0] <= t:
            queue.append(heapq.heappop(arrivals)[2])
        setup = cost
        if fresh < n:
            rem, setup = int(costs[fresh]), 0
            fresh += 1
        elif queue:
            rem = queue.popleft()
        elif arrivals:
            t, _, rem = heapq.heappop(arrivals)
        else:
            return end
        done = t + setup + min(rem, slice_)
        end = max(end, done)
        if rem > slice_:
            heapq.heappush(arrivals, (done, next(seq), rem - slice_))
        heapq.heappush(free, done)


def capped_passes(costs, lanes: int, cap: int, cost: int) -> tuple[float, float]:
    """Makespans of two passes: up to `cap` iterations per pixel in list order, then the rest of
    the pixels still running, (with a barrier between the passes, without one)."""
    first = np.minimum(costs, cap)
    rest = costs[costs > cap] - cap + cost
    barrier = makespan(first, lanes) + makespan(rest, lanes)
    free = [0] * lanes
    end = 0
    later = []
    for c in costs.tolist():
        t = heapq.heappop(free)
        done = t + min(c, cap)
        end = max(end, done)
        heapq.heappush(free, done)
        if c > cap:
            later.append((done, c - cap + cost))
    later.sort()
    for ready, rem in later:
        t = max(heapq.heappop(free), ready)
        end = max(end, t + rem)
        heapq.heappush(free, t + rem)
    return barrier, end


def sample_estimate(counts, sample: int, probe: int, reach: int, spread: bool = False):
    """The sorted launch's estimate per pixel: the largest probe result of the samples within reach;
    with spread, that plus twice (largest - smallest): a pixel whose neighbourhood mixes short and
    long samples lies near the set's boundary, where a long pixel can hide between samples."""
    h, w = counts.shape
    s = counts[::sample, ::sample]
    est = np.where(s <= probe, s, probe + 1)
    rr, cc = np.arange(h) // sample, np.arange(w) // sample
    out = np.zeros((h, w), np.int64)
    low = np.full((h, w), np.iinfo(np.int64).max)
    for di in range(-reach + 1, reach + 1):
        for dj in range(-reach + 1, reach + 1):
            i = np.clip(rr + di, 0, s.shape[0] - 1)
            j = np.clip(cc + dj, 0, s.shape[1] - 1)
            out = np.maximum(out, est[i][:, j])
            low = np.minimum(low, est[i][:, j])
    return out + 2 * (out - low) if spread else out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lanes", type=int, default=67584)
    ap.add_argument("--rr", default="256,512")
    ap.add_argument("--rr-cost", type=int, default=10)
    ap.add_argument("--caps", default="", help="caps of the first pass, e.g. 64,256,600")
    ap.add_argument("--estimates", default="4/256/1,4/256/2,4/2000/2,2/256/2,8/2000/2",
                    help="sample/probe/reach triples")
    a = ap.parse_args()
    from kernels.backend import resolve
    from kernels.mandelbrot import renderer as m
    from kernels.mandelbrot.bench import FULL_HD, SEAHORSE
    cx, cy, width = SEAHORSE
    req = m.MandelbrotRequest(cx, cy, width, FULL_HD, 2000, want_values=True)
    counts = m.iteration_counts(m.Renderer(resolve("cpu")).render(req).values, 2000)
    counts = counts.reshape(FULL_HD[1], FULL_HD[0]).astype(np.int64)
    flat = counts.ravel()
    ideal = flat.sum() / a.lanes
    print(f"{flat.sum():,} iterations, {a.lanes:,} lanes: {ideal:.0f} per lane; "
          f"{int((flat == 2000).sum()):,} pixels inside")
    print(f"picture order          {ideal / makespan(flat, a.lanes):.3f}", flush=True)
    print(f"oracle (longest first) {ideal / makespan(flat[np.argsort(-flat, kind='stable')], a.lanes):.3f}",
          flush=True)
    bits = np.array([v.bit_length() for v in range(0, 4096)])
    for spec in a.estimates.split(","):
        sample, probe, reach = (int(v) for v in spec.split("/"))
        est = sample_estimate(counts, sample, probe, reach).ravel()
        by_class = flat[np.argsort(-bits[np.minimum(est, 4095)], kind="stable")]
        by_est = flat[np.argsort(-est, kind="stable")]
        print(f"samples {spec:10s}     classes {ideal / makespan(by_class, a.lanes):.3f}, "
              f"estimate {ideal / makespan(by_est, a.lanes):.3f}", flush=True)
        key = sample_estimate(counts, sample, probe, reach, spread=True).ravel()
        by_class = flat[np.argsort(-bits[np.minimum(key, 4095)], kind="stable")]
        by_key = flat[np.argsort(-key, kind="stable")]
        print(f"  with the spread      classes {ideal / makespan(by_class, a.lanes):.3f}, "
              f"estimate {ideal / makespan(by_key, a.lanes):.3f}", flush=True)
    for s in (int(v) for v in a.rr.split(",")):
        print(f"round robin, slices of {s}, {a.rr_cost} per slice: "
              f"{ideal / round_robin(flat, a.lanes, s, a.rr_cost):.3f}", flush=True)
    for k in (int(v) for v in a.caps.split(",") if v):
        barrier, free = capped_passes(flat, a.lanes, k, a.rr_cost)
        late = flat[flat > k]
        print(f"passes capped at {k}: {late.size:,} pixels continue "
              f"({100 * (late - k).sum() / flat.sum():.1f} % of the work); "
              f"with a barrier {ideal / barrier:.3f}, without {ideal / free:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
