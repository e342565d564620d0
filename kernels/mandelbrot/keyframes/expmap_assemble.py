"""A zoom movie's frames resampled from its exponential-map keyframes (expmap.py), on the GPU or
the CPU: the keyframes a frame needs sit in a stack of slots where the kernel reads them, the
kernel writes the frame's smooth counts, Colourer colours them in place with the movie's one
mapping, and the finished RGBA is the one copy per frame (DESIGN rule 5).

The sampling (expmap_sample.py) is one description compiled for both targets.
"""
from __future__ import annotations

from collections import deque

import numpy as np
from numba import njit, prange

from ...buffers import BufferPool
from ...timing import JobTimer
from ..colouring.colourer import Colourer
from .expmap_sample import make_sample

# GPU launch: threads per block (x, y); the simulator runs one Python thread per CUDA thread
BLOCK = (32, 8)
SIM_BLOCK = (4, 2)
# frames queued before the first is waited for, at most (each holds a lent pinned array)
MAX_AHEAD = 16


_value_cpu = make_sample(njit(inline="always"))


@njit(parallel=True, cache=True)
def assemble_cpu(out, stack, slot_of, sec, ax, ay, lw, limit, outer, first, last):
    """out (Hpx, Wpx) float64 ← the frame's smooth counts (make_sample's value per pixel; its
    keyframes packed in sectors)."""
    hpx, wpx = out.shape
    for r in prange(hpx):
        for c in range(wpx):
            out[r, c] = _value_cpu(r, c, hpx, wpx, stack, slot_of, sec, ax, ay, lw, limit,
                                   outer, first, last)


class Assembler:
    """The keyframes of one ExpMap held in `slots` slots where the backend computes (a device
    array on a GPU), and frames made from them. `load(k, values)` puts keyframe k (its packed
    samples, ExpMap.samples float64) into a free slot, `drop(k)` frees it, `frame(...)` makes a frame. One thread."""

    def __init__(self, backend, em, slots: int):
        self.backend, self.em = backend, em
        self.pool = BufferPool(backend)
        self.colourer = Colourer(backend)
        self._stream = None
        self.sec = np.array(em.sectors, dtype=np.int64).reshape(-1, 4)
        if backend.is_gpu:
            from numba import cuda
            self._stream = cuda.stream()
            self._slot_dev = cuda.device_array((em.count,), np.int64, stream=self._stream)
            self._sec_dev = cuda.to_device(self.sec, stream=self._stream)
        self.stack = None
        self._loading = {}          # slot -> event after its copy from another stream (load_device)
        self._events = deque()      # the frames' wait events, a ring (_event)
        self.ensure(slots)

    def ensure(self, slots: int) -> None:
        """At least `slots` slots (more slots: a new stack, every keyframe to load again, so it
        grows by a quarter at least)."""
        em = self.em
        if self.stack is not None and self.stack.shape[0] >= slots:
            return
        grown = 0 if self.stack is None else self.stack.shape[0] * 5 // 4
        shape = (max(1, int(slots), min(grown, int(slots) * 5 // 4)), em.samples)
        for ev in self._loading.values():
            ev.synchronize()        # no copy into the old stack may be left running
        self.stack = None           # the old stack's memory goes first
        if self.backend.is_gpu:
            from numba import cuda
            self.stack = cuda.device_array(shape, np.float64, stream=self._stream)
        else:
            self.stack = np.empty(shape, np.float64)
        self.slot_of = np.full(em.count, -1, np.int64)
        self._free = list(range(shape[0] - 1, -1, -1))
        self._loading = {}
        self._slots_changed = True

    @property
    def loaded(self) -> set:
        return {int(k) for k in np.flatnonzero(self.slot_of >= 0)}

    def load(self, k: int, values: np.ndarray) -> None:
        if self.slot_of[k] >= 0:
            return
        if not self._free:
            raise RuntimeError(f"no free slot for keyframe {k} ({self.stack.shape[0]} slots)")
        slot = self._free.pop()
        if self.backend.is_gpu:
            self._ready(slot)
            self.stack[slot].copy_to_device(np.ascontiguousarray(values), stream=self._stream)
        else:
            self.stack[slot] = values
        self.slot_of[k] = slot
        self._slots_changed = True

    def load_device(self, k: int, values, stream) -> bool:
        """Keyframe k from a device array of its packed samples (where the worker's GPU just drew
        it), copied on `stream` (the drawing one: ordered before its buffer is drawn into
        again; the caller waits for it before this assembler reads the slot). False, and nothing
        copied, where it is loaded already or no slot is free."""
        if not self.backend.is_gpu or self.slot_of[k] >= 0 or not self._free:
            return False
        slot = self._free.pop()
        self._ready(slot)
        self.stack[slot].copy_to_device(values, stream=stream)
        if stream is not self._stream and not self.backend.simulated:
            # this assembler's stream waits for it on the GPU, not the host, before the slot
            # is read or written again: frames from other slots go on meanwhile
            from numba import cuda
            ev = cuda.event(timing=False)
            ev.record(stream)
            self._loading[slot] = ev
        self.slot_of[k] = slot
        self._slots_changed = True
        return True

    def _ready(self, slot: int) -> None:
        """This assembler's stream made to wait for a copy into `slot` queued on another."""
        ev = self._loading.pop(slot, None)
        if ev is not None:
            ev.wait(self._stream)

    def drop(self, k: int) -> None:
        slot = int(self.slot_of[k])
        if slot >= 0:
            self._free.append(slot)
            self.slot_of[k] = -1
            self._slots_changed = True

    def values(self, lw: float, limit: int, first: int, last: int, timer=None):
        """A frame 2^lw wide with iteration limit `limit` from keyframes first..last (loaded):
        its smooth counts where the backend keeps them (a pool buffer, reused)."""
        em = self.em
        missing = [k for k in range(first, last + 1) if self.slot_of[k] < 0]
        if missing:
            raise RuntimeError(f"keyframes {missing[:4]} are not loaded")
        wpx, hpx = em.size
        args = (float(em.a[0]), float(em.a[1]), float(lw), int(limit), float(em.outer_log2),
                int(first), int(last))
        if not self.backend.is_gpu:
            out = self.pool.host("frame-values", (hpx, wpx), np.float64, pinned=False)
            assemble_cpu(out, self.stack, self.slot_of, self.sec, *args)
            return out
        s = self._stream
        for k in range(first, last + 1):
            self._ready(int(self.slot_of[k]))
        if self._slots_changed:
            self._slot_dev.copy_to_device(self.slot_of, stream=s)
            self._slots_changed = False
        out = self.pool.device("frame-values", (hpx, wpx), np.float64, stream=s)
        bx, by = SIM_BLOCK if self.backend.simulated else BLOCK
        grid = (-(-wpx // bx), -(-hpx // by))
        from .expmap_assemble_gpu import assemble_kernel
        assemble_kernel[grid, (bx, by), s](out, self.stack, self._slot_dev, self._sec_dev, *args)
        return out

    def frame(self, spec, lw: float, limit: int, first: int, last: int) -> np.ndarray:
        """The coloured frame (Hpx, Wpx, 4) uint8 on the host, one of a ring of 3 buffers (pinned
        on a GPU: the one copy per frame at full speed), valid until the third frame after; `spec`
        has the colouring (palette, density, offset, interior, mapping: a frame's request)."""
        return self._take(self._queue(spec, lw, limit, first, last))

    def frames(self, spec, frames, check=None, lender=None):
        """frame() for each (lw, limit, first, last) of `frames`, in order. `check()` (a cancel)
        before each frame is queued. `lender` (kernels.lent_arrays): each frame comes in an array
        it lent, the caller's to hand on (pinned on a GPU, copied into straight from the device),
        and on a GPU every frame's kernels and copy are queued before the first is waited for: the
        host's part of them is done while the GPU still draws (a keyframe drawn beside them, on
        another stream). Without one, each frame is valid until the second one after it is asked
        for (the ring), and only the next frame is queued ahead. One timer for them all: the
        frames' phases summed."""
        lent = lender is not None and self.backend.is_gpu and not self.backend.simulated
        ahead = min(len(frames), MAX_AHEAD) if lent else 1
        timer = JobTimer(self.backend, self._stream, f"keyframe assembly of {len(frames)} frames")
        pending = deque()
        for f in frames:
            if check is not None:
                check()
            pending.append(self._queue(spec, *f, lender=lender, timer=timer))
            if len(pending) > ahead:
                yield self._take(pending.popleft(), lender)
        while pending:
            yield self._take(pending.popleft(), lender)
        timer.finish()

    def _queue(self, spec, lw, limit, first, last, lender=None, timer=None):
        """A frame's kernels and its copy to the host queued (all done, on the CPU): into the
        ring, or on a GPU with a `lender` into a pinned array lent by it. Returns (what to wait
        for: a timer to finish or an event, None on the CPU; the frame)."""
        wpx, hpx = self.em.size
        own = timer is None
        if own:
            timer = JobTimer(self.backend, self._stream, "keyframe assembly")
        values = self.values(lw, limit, first, last, timer)
        if self.backend.is_gpu:
            rgba = self.pool.device("rgba", (hpx, wpx), np.uint32, stream=self._stream)
        else:
            rgba = self.pool.host("rgba", (hpx, wpx), np.uint32, pinned=False, ring=3)
        self.colourer.colour(values, rgba, spec, int(limit), timer, self._stream)
        done = timer if own else None
        if self.backend.is_gpu:
            if lender is not None and not self.backend.simulated:
                host = lender.take((hpx, wpx, 4), np.uint8, pinned=True)
                rgba.copy_to_host(host.view(np.uint32).reshape(hpx, wpx), stream=self._stream)
            else:
                host = self.pool.host("rgba-host", (hpx, wpx), np.uint32, ring=3)
                rgba.copy_to_host(host, stream=self._stream)
            if own:
                timer.queued()
            elif not self.backend.simulated:
                done = self._event()
                done.record(self._stream)
            rgba = host
        return done, rgba

    def _event(self):
        """A (non-timing) event from a ring as long as the frames' lent arrays need: one per
        frame in flight."""
        from numba import cuda
        if len(self._events) < 64:
            ev = cuda.event(timing=False)
        else:
            ev = self._events.popleft()
        self._events.append(ev)
        return ev

    def _take(self, queued, lender=None) -> np.ndarray:
        """A queued frame once it is on the host (its own timer finished: its GPU span alone;
        or its event met), as (Hpx, Wpx, 4) uint8: lent by `lender` where given."""
        done, rgba = queued
        if isinstance(done, JobTimer):
            done.finish()
        elif done is not None:
            done.synchronize()
        if rgba.ndim == 3:          # already the lender's
            return rgba
        wpx, hpx = self.em.size
        view = rgba.view(np.uint8).reshape(hpx, wpx, 4)
        return view if lender is None else lender.copy_of(view)


# a pool worker's kept assembler (its kept renderers' key; "movie" at [2]: dropped with the movie)
ASSEMBLER_KEY = ("mandelbrot", "keyframe-assembler", "movie")


def worker_assembler(worker, em, slots: int | None = None):
    """The worker's Assembler for `em`, or None where it has none (slots None); with `slots`, made
    (again, for another zoom: compared by value, a cluster's jobs arrive as new objects) with room
    for that many keyframes at least."""
    held = worker.renderer(ASSEMBLER_KEY, dict)
    asm = held.get("asm")
    if asm is not None and asm.em != em:
        held["asm"] = asm = None        # the old stack's memory goes first
    if slots is None:
        return asm
    if asm is None:
        held["asm"] = asm = Assembler(worker.backend, em, int(slots))
    asm.ensure(int(slots))
    return asm
