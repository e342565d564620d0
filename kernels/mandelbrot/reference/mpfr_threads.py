"""The compiled reference engine with its three squarings on threads: x², y² and (x+y)² of one
iteration are independent, so two or three threads square at once and one of them (the
coordinator, the caller's thread) adds them up, with a spin barrier between (spin_barrier.py)
twice an iteration. Kalles Fraktaler does the same with three threads; FractalShark with two
squaring threads and a coordinator.

The loops run nogil, started from Python threads for each chunk of iterations and joined at its
end, so no thread outlives a chunk. Threads pay only where a square costs well above the barrier's
hand-over (`threads_for`).
"""
from __future__ import annotations

import os
import threading

import numpy as np
from numba import njit

from ..numbers import mpfr_lib as M
from .mpfr_engine import T, X, X2, Y, Y2, MpfrEngine, combine, record
from .spin_barrier import store_release, wait_at_least

# the three squares of an iteration: (result row, operand row); T holds x+y before its square
SQUARES = ((X2, X), (Y2, Y), (T, T))
# threads pay from this precision on, where at least this many cores are idle (measured on a
# 32-core host: docs/PERFORMANCE.md, "The reference orbit"); forced either way by the engine's name
THREADS_FROM_BITS = 8192
MIN_CORES = 3


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def idle_cores() -> float:
    """Cores ours to use less the machine's load (a spinning thread whose partner waits for a
    core loses everything threads gain)."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    return usable_cores() - load


def threads_for(precision: int, cores: float | None = None) -> int:
    """Threads the automatic choice gives: 3 where squares are long and 3 cores are idle, else 1."""
    cores = idle_cores() if cores is None else cores
    return 3 if precision >= THREADS_FROM_BITS and cores >= MIN_CORES else 1


@njit(nogil=True, cache=True)
def _square(a, task):
    r, o = SQUARES[task]
    M.sqr(a[r], a[o], M.RNDN)


@njit(nogil=True, cache=True)
def worker(a, flags, j, nthreads, count):
    """Thread j's part of `count` iterations: wait for the go of iteration i (flags[0] >= i; a
    negative value ends it), square its share, report done (flags[1 + j] = i)."""
    for i in range(1, count + 1):
        if wait_at_least(flags, 0, i) < 0:
            return
        for task in range(j, 3, nthreads):
            _square(a, task)
        store_release(flags, 1 + j, i)


@njit(nogil=True, cache=True)
def coordinate(a, flags, nthreads, count, out, tiny_k, tiny_m, tiny_e):
    """As mpfr_engine.iterate, with the squares shared among `nthreads` threads (this one and
    workers 1 .. nthreads-1)."""
    nt = 0
    for k in range(count):
        i = k + 1
        M.add(a[T], a[X], a[Y], M.RNDN)
        store_release(flags, 0, i)
        for task in range(0, 3, nthreads):
            _square(a, task)
        for j in range(1, nthreads):
            wait_at_least(flags, 1 + j, i)
        combine(a)
        nt, escaped = record(a, k, out, nt, tiny_k, tiny_m, tiny_e)
        if escaped:
            store_release(flags, 0, -1)
            return k + 1, nt, True
    return count, nt, False


class ThreadedMpfrEngine(MpfrEngine):
    """MpfrEngine whose step shares the squares among `threads` threads (2 or 3)."""

    def __init__(self, centre_re_hex: str, centre_im_hex: str, precision: int, threads: int = 3):
        super().__init__(centre_re_hex, centre_im_hex, precision)
        if threads not in (2, 3):
            raise ValueError(f"the threaded engine squares on 2 or 3 threads, not {threads}")
        self.threads = threads
        self.name = f"MPFR, compiled, {threads} threads"

    def step(self, count: int, z, tk, tm, te) -> tuple[int, int, bool]:
        flags = np.zeros(1 + self.threads, dtype=np.int64)
        addr = self.nums.addr
        helpers = [threading.Thread(target=worker, args=(addr, flags, j, self.threads, count),
                                    name=f"reference squares {j}", daemon=True)
                   for j in range(1, self.threads)]
        for h in helpers:
            h.start()
        done = False
        try:
            made, nt, escaped = coordinate(addr, flags, self.threads, count, z, tk, tm, te)
            done = True
        finally:
            if not done:
                flags[0] = -1        # the workers stop at their next wait
            for h in helpers:
                h.join()
        return int(made), int(nt), bool(escaped)
