"""Large host arrays lent for one trip from the thread that makes them to the one that uses them
last, then given back for the next trip.

A keyframe movie hands every frame (8 MB at 1080p) and every keyframe (tens of MB) from the GPU's
worker to the encoder lanes and the keyframe files; a fresh numpy array for each is a fresh mmap
whose every page faults in as it is first written, which made the copy out of the pinned ring ten
times slower than a copy into memory touched before, on the worker thread that feeds the GPU.
`copy_of` fills an array from the free list instead; whoever is done with it last calls `give`.
On a GPU a frame is lent pinned (`take(..., pinned=True)`): the device copies straight into the
array the encoder reads, at full speed, with no host copy at all.
An array this module did not lend (a Dask worker's, pickled on the way; one read from a file) is
ignored by `give`, so a consumer may give back whatever it was handed.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np

# free arrays kept a shape at most: more than the frames a movie holds in flight at once (the
# lanes' queues and a chunk) is memory held for nothing
KEEP = 64


class Lender:
    """Arrays lent by `copy_of`/`take` and taken back by `give`, a free list per (shape, dtype)."""

    def __init__(self, keep: int = KEEP):
        self.keep = int(keep)
        self._free: dict[tuple, list[np.ndarray]] = {}
        # id -> (weak reference to the lent array, its free-list key): an array dropped without
        # `give` leaves, and a later array at the same address is not mistaken for it
        self._lent: dict[int, tuple] = {}
        self._lock = threading.RLock()     # a loan's weak callback may run in a GC inside it
        self.reused = 0
        self.made = 0
        self.pinned_bytes = 0       # of the pinned arrays made and not released

    def take(self, shape, dtype, pinned: bool = False) -> np.ndarray:
        """An array of that shape and dtype (contents undefined), lent until `give`; `pinned`:
        page-locked for a GPU's copies (numba.cuda's; only where a real GPU is used)."""
        key = (tuple(int(s) for s in shape), np.dtype(dtype).str, bool(pinned))
        with self._lock:
            free = self._free.get(key)
            arr = free.pop() if free else None
            if arr is None:
                self.made += 1
            else:
                self.reused += 1
        if arr is None:
            if pinned:
                from numba import cuda
                arr = cuda.pinned_array(key[0], dtype=np.dtype(dtype))
                with self._lock:
                    self.pinned_bytes += arr.nbytes
            else:
                arr = np.empty(key[0], np.dtype(dtype))
        with self._lock:
            self._lent[id(arr)] = (weakref.ref(arr, self._forget(id(arr))), key)
        return arr

    def take_pinned(self, shape, dtype, limit_bytes: int):
        """take(shape, dtype, pinned=True) where a free one waits or a new one keeps the pinned
        arrays made within `limit_bytes`; else None (page-locked memory cannot be swapped out:
        the caller copies through its own buffer instead)."""
        key = (tuple(int(s) for s in shape), np.dtype(dtype).str, True)
        nbytes = int(np.prod(key[0])) * np.dtype(dtype).itemsize
        with self._lock:
            if not self._free.get(key) and self.pinned_bytes + nbytes > limit_bytes:
                return None
        return self.take(shape, dtype, pinned=True)

    def _forget(self, ident: int):
        """The callback that drops a loan's entry once its array is gone unreturned."""
        def forget(ref, lent=self._lent, lock=self._lock):
            with lock:
                if ident in lent and lent[ident][0] is ref:
                    del lent[ident]
        return forget

    def copy_of(self, a: np.ndarray) -> np.ndarray:
        """A lent array holding a copy of `a`."""
        out = self.take(a.shape, a.dtype)
        np.copyto(out, a)
        return out

    def give(self, arr) -> None:
        """Back to the free list if this lender lent it (and it was not given back already);
        anything else is left alone. The caller must hold no view of it any more."""
        if not isinstance(arr, np.ndarray):
            return
        with self._lock:
            got = self._lent.get(id(arr))
            if got is None or got[0]() is not arr:
                return
            del self._lent[id(arr)]
            free = self._free.setdefault(got[1], [])
            # a pinned one is always kept: dropped here, numba would free it on this thread,
            # which may hold no CUDA context (release_pinned frees them where one is current)
            if len(free) < self.keep or got[1][2]:
                free.append(arr)

    def clear(self) -> None:
        """Drop the free pageable arrays (a movie's end: their memory goes back)."""
        with self._lock:
            for key in [k for k in self._free if not k[2]]:
                del self._free[key]

    def release_pinned(self) -> None:
        """Drop the free pinned arrays; call it on a thread where the GPU's context is current
        (the one that drew the frames)."""
        with self._lock:
            for key in [k for k in self._free if k[2]]:
                self.pinned_bytes -= sum(a.nbytes for a in self._free.pop(key))


# the process's lender: movie frames and keyframes
LENT = Lender()
