"""The perturbation loop's layout of the BLA table built while its reference orbit is computed:
TableAhead.

The orbit runs on one thread (compiled, without the GIL) while a second core would idle; every
2^CHUNK_LEVELS steps of the orbit that are final make one block of the table (bla_blocks.py), so a
second thread builds the blocks as the orbit passes them, with the orbit's float arrays
(orbit_floatexp.fill_rows) and the loop's layout of both (zo, bt). When the orbit stops, only its
last block, the few levels above the blocks and zo's end rows are left.

bt's rows are loop_tables' rows of build_table's table bit for bit wherever the loop reads them,
but the levels start where an orbit of the largest length the frame allows would put them
(bla_blocks.py), so `levels` has gaps between them: the loop goes through `levels` (offset,
count) as it always does. The table's own entries (tab, tabe) are not kept (only bt is written),
so frames that read them (the extended format, float32 deltas) build the table as before.
"""
from __future__ import annotations

import os
import threading

import numpy as np

from ..tables.bla import CHUNK_LEVELS, build_table, level_counts
from ..tables.bla_blocks import final_blocks, stream_blocks
from ..tables.layout import N_TAB
from ..reference.orbit_floatexp import fill_rows
from ..tables.flat_build import _CLAMP, B_AA, B_AI, B_AR, B_BI, B_BR, B_R, BW, Z_IM, Z_R0, Z_RE, ZW
from ..tables.flat_build import loop_tables

# the arrays of the largest orbit the frame allows are reserved (not touched) up to this size;
# a frame that could ask for more builds its table after the orbit, as before
MAX_RESERVED_BYTES = 2 << 30
# blocks per compiled call of the second thread: how long it takes to notice the orbit's end
BUNCH = 8
_BLOCK = 1 << CHUNK_LEVELS
_ZCOLS = np.array((Z_RE, Z_IM, Z_R0), dtype=np.int64)
_BCOLS = np.array((B_AR, B_AI, B_BR, B_BI, B_R, B_AA), dtype=np.int64)


def reserved_bytes(points: int) -> int:
    """Bytes TableAhead reserves (most of them never touched) for an orbit of at most `points`."""
    entries = sum(level_counts(points))
    return points * (4 * 8 + 4 + ZW * 8) + entries * (N_TAB * 8 + 3 * 4 + BW * 8)


def second_core() -> bool:
    """Whether this process may run on two cores at once (else the table is built at the end)."""
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except AttributeError:          # not on Linux
        return (os.cpu_count() or 1) >= 2


class TableAhead:
    """The perturbation loop's zo and bt of an orbit of at most `capacity` points, its table
    built for the bound c_max on |δc| (as build_table takes it). The orbit's extend() calls
    `advance` as its points become final; then `finish(points)` gives the whole, or `abandon()`
    drops it (a cancelled extend). thread: build on a second thread (default: where there is a
    second core)."""

    def __init__(self, capacity: int, c_max: tuple[float, int], eps_bits: int,
                 thread: bool | None = None):
        self.capacity = int(capacity)
        self._cm, self._ce = float(c_max[0]), int(c_max[1])
        self._eps = int(eps_bits)
        counts = level_counts(self.capacity)
        self._counts = np.asarray(counts, dtype=np.int64)
        self._offsets = np.zeros(len(counts), dtype=np.int64)
        self._offsets[1:] = np.cumsum(counts[:-1])
        total = max(1, int(sum(counts)))
        # np.empty: pages nothing writes are never touched (tab, tabe: only the levels from
        # CHUNK_LEVELS up are written)
        self.orbit = np.empty((self.capacity, 4), dtype=np.float64)
        self.oexp = np.empty(self.capacity, dtype=np.int32)
        self.tab = np.empty((total, N_TAB), dtype=np.float64)
        self.tabe = np.empty((total, 3), dtype=np.int32)
        self.zo = np.empty((self.capacity, ZW), dtype=np.float64)
        self.bt = np.empty((total, BW), dtype=np.float64)
        self._cond = threading.Condition()
        self._buf = np.zeros(1, dtype=np.complex128)
        self._final = 0             # points of the orbit known final
        self._tiny = (np.zeros(0, np.int64), np.zeros((0, 2)), np.zeros(0, np.int64))
        self._rows = 0              # orbit rows written
        self._blocks = 0            # blocks built
        self._stop = False
        self._error: BaseException | None = None
        self._thread = None
        if len(counts) > CHUNK_LEVELS and (second_core() if thread is None else thread):
            self._thread = threading.Thread(target=self._work, name="BLA table ahead",
                                            daemon=True)
            self._thread.start()

    # ---- the orbit's side ---------------------------------------------------------------------
    def advance(self, buf: np.ndarray, points: int, tiny=None) -> None:
        """Points 0 .. points-1 of the orbit are final, as buf (complex128) holds them; tiny: the
        exact (n, mantissas, exponents) of those below float64's range among the new ones."""
        with self._cond:
            self._buf = buf
            self._final = max(self._final, min(int(points), self.capacity))
            if tiny is not None and len(tiny[0]):
                self._tiny = tuple(np.concatenate([a, np.asarray(b, dtype=a.dtype)])
                                   for a, b in zip(self._tiny, tiny))
            self._cond.notify()

    def abandon(self) -> None:
        """Stop the second thread and drop the work (the orbit's extend was cancelled)."""
        self._halt()

    # ---- the second thread --------------------------------------------------------------------
    def _ready_blocks(self, points: int) -> int:
        # block c is whole in every final table once points (c+1)·2^CHUNK_LEVELS + 1 are final
        # and one more follows it (a level-0 step never starts from the orbit's last point)
        return max(0, (points - 2) // _BLOCK)

    def _work(self) -> None:
        try:
            while True:
                with self._cond:
                    while not self._stop and self._final <= self._rows and \
                            self._ready_blocks(self._final) <= self._blocks:
                        self._cond.wait()
                    if self._stop:
                        return
                    buf, final, tiny = self._buf, self._final, self._tiny
                self._catch_up(buf, final, tiny)
        except BaseException as exc:        # raised again by finish()
            self._error = exc

    def _catch_up(self, buf, final: int, tiny) -> None:
        """The orbit's rows up to `final` and the blocks they make whole."""
        if final > self._rows:
            fill_rows(buf, self._rows, final, *tiny, self.orbit, self.oexp)
            self._rows = final
        ready = self._ready_blocks(final)
        while self._blocks < ready and not self._stop:
            c1 = min(ready, self._blocks + BUNCH)
            self._stream(self._blocks, c1)
            self._blocks = c1

    def _stream(self, c0: int, c1: int) -> None:
        stream_blocks(self.orbit, self.oexp, self._cm, self._ce, self._eps, self._offsets,
                      self._counts, CHUNK_LEVELS, c0, c1, self.tab, self.tabe, self.zo, self.bt,
                      _ZCOLS, _BCOLS, _CLAMP)

    def _stream_shared(self, c0: int, c1: int, two: bool) -> None:
        """Blocks c0 .. c1-1, half of them on a helper thread where there are enough to share."""
        if not two or c1 - c0 < 2 * BUNCH:
            self._stream(c0, c1)
            return
        mid = (c0 + c1) // 2
        errors = []

        def other():
            try:
                self._stream(mid, c1)
            except BaseException as exc:    # raised below, in the caller's thread
                errors.append(exc)
        helper = threading.Thread(target=other, name="BLA table ahead, the rest", daemon=True)
        helper.start()
        try:
            self._stream(c0, mid)
        finally:
            helper.join()
        if errors:
            raise errors[0]

    def _halt(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    # ---- the end ------------------------------------------------------------------------------
    def finish(self, points: int, parallel: bool = True):
        """For the orbit's final length: (orbit, orbit_exp, tab, tabe, levels, flat) with the
        orbit's arrays (ReferenceOrbit.arrays()) and flat = (zo, bt) flattened as
        perturbation_loop.flat_tables reads them, for levels; tab and tabe None (not kept), but
        for an orbit too short for a whole block, whose table is build_table's. None when the
        orbit was not all given to `advance`. parallel: what the second thread left is shared
        with a helper thread (two cores)."""
        self._halt()
        if self._error is not None:
            raise self._error
        points = int(points)
        if not 0 < points <= self._final:
            return None
        buf, tiny = self._buf, self._tiny
        fill_rows(buf, self._rows, points, *tiny, self.orbit, self.oexp)
        self._rows = points
        orbit, oexp = self.orbit[:points], self.oexp[:points]
        counts = level_counts(points)
        if len(counts) <= CHUNK_LEVELS:     # too short for a whole block: as before
            tab, tabe, levels = build_table(orbit, oexp, (self._cm, self._ce), self._eps,
                                            parallel=parallel)
            zo, bt = loop_tables(orbit, tab, tabe, levels)
            return orbit, oexp, tab, tabe, levels, (zo.reshape(-1), bt.reshape(-1))
        # the whole blocks the second thread did not reach, shared with a helper thread, then
        # the last block and the levels above the blocks
        ready = self._ready_blocks(points)
        self._stream_shared(self._blocks, ready, parallel and second_core())
        self._blocks = ready
        counts = np.asarray(counts, dtype=np.int64)
        offsets = self._offsets[:counts.shape[0]]
        final_blocks(orbit, oexp, self._cm, self._ce, self._eps, offsets, counts, CHUNK_LEVELS,
                     ready, self.tab, self.tabe, self.zo, self.bt, _ZCOLS, _BCOLS, _CLAMP, points)
        levels = np.stack([offsets, counts], axis=1)
        flat = (self.zo[:points].reshape(-1), self.bt.reshape(-1))
        return orbit, oexp, None, None, levels, flat


def kernels() -> list:
    """The compiled functions a table built ahead uses on this machine (warm.py's disk check)."""
    return [stream_blocks, final_blocks, fill_rows]


_ready = [False]


def warm() -> None:
    """Load (or compile) the compiled code of a table built ahead, with a small made-up orbit."""
    if _ready[0]:
        return
    n = 2 * _BLOCK + 3
    z = np.full(n, 0.25 + 0.25j)
    z[0] = 0.0
    ahead = TableAhead(n, (0.5, -20), 32, thread=False)
    ahead.advance(z, n)
    ahead._catch_up(z, n, ahead._tiny)
    ahead.finish(n)
    _ready[0] = True


def ready() -> bool:
    """Whether this process has the table-ahead code loaded: frames build their table ahead only
    then, so a first start never waits for its compile (seconds) to save a fraction of one."""
    return _ready[0]


def cached() -> bool:
    """Whether numba's disk cache holds the table-ahead code (loading it takes a moment)."""
    from ..frames.warm import on_disk
    return all(on_disk(d) for d in kernels())


def table_nbytes(tab, tabe, levels: np.ndarray) -> int:
    """Bytes of a table's entries its readers can reach: tab and tabe (build_table's), or bt's
    rows where only those were kept (TableAhead)."""
    if tab is None:
        return int(levels[:, 1].sum()) * BW * 8 + levels.nbytes
    return tab.nbytes + tabe.nbytes + levels.nbytes
