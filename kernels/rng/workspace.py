"""What the rng jobs of one backend share, and the one seam between the backends.

A workspace holds the buffer pool (running the same request again allocates nothing), the job
timer, and the data reductions and histograms read: generated once with xoroshiro128+ and kept,
keyed by (distribution, dtype, n, seed), so every strategy of a comparison reads the same numbers
and only the first run pays for making them (and for the exact sum they are measured against).
`GpuWorkspace` and `CpuWorkspace` have the same methods; the Renderer picks one per backend.
"""
from __future__ import annotations

from collections import OrderedDict

import numba
import numpy as np

from ..buffers import BufferPool
from ..timing import JobTimer
from . import grid
from . import xoroshiro as X
from ..wide_access import aligned

GPU_CHUNK = 1 << 30          # values generated per launch; cancel is checked between launches
CPU_BATCH_CHUNKS = 256       # CPU twin chunks per call (2^24 values), cancel checked between
SEED_STATES_KEPT = 4         # seeds whose initial GPU states are kept on the device


def check(cancel) -> None:
    """`cancel`, when given, is an object whose .check() raises."""
    if cancel is not None:
        cancel.check()


def ensure_cpu_compiled(timer, dispatcher, args) -> None:
    sig = tuple(numba.typeof(a) for a in args)
    if sig not in dispatcher.overloads:
        with timer.phase("compile"):
            dispatcher.compile(sig)   # loads numba's on-disk cache when it has this version


def data_key(distribution: str, dtype: str, n: int, seed: int) -> tuple:
    """What generated data are: the key the workspace keeps them (and their exact sum) by."""
    return ("xoroshiro128p", distribution, dtype, n, int(seed))


class Deferred:
    """A pinned host buffer a queued copy fills: read only after the job's timer has finished
    (which synchronises the stream)."""

    def __init__(self, host: np.ndarray, total: bool = False):
        self.host, self.total = host, total

    def __float__(self) -> float:
        return float(self.host[0])

    def __int__(self) -> int:
        return int(self.host.sum()) if self.total else int(self.host[0])


class Workspace:
    """The backend-independent part: pool, timer, and the kept data with their exact sums."""

    def __init__(self, backend):
        self.backend = backend
        self.pool = BufferPool(backend)
        self.data_key = None             # what the pool's "data" buffer holds now
        self.exact: dict = {}            # data key -> exact sum (Fraction)

    def stream(self):
        return None

    def timer(self, label: str) -> JobTimer:
        return JobTimer(self.backend, self.stream(), label)

    def data(self, n: int, dtype: str, distribution: str, seed: int, data, timer, cancel):
        """(array, key): the job's data where the backend computes, generated from the seed with
        xoroshiro128+ (key = what they are) or taken from `data` (key None)."""
        if data is not None:
            self.data_key = None
            return self.take(data, n, dtype, timer), None
        key = data_key(distribution, dtype, n, seed)
        x = self.data_buffer(n, dtype)
        if self.data_key != key:
            self.data_key = None
            self.fill(x, n, dtype, distribution == "normal", int(seed), timer, cancel)
        self.data_key = key
        return x, key

    # the backend's side: the same methods on the GPU and on the CPU
    def data_buffer(self, n: int, dtype: str):
        raise NotImplementedError

    def take(self, data, n: int, dtype: str, timer):
        raise NotImplementedError

    def fill(self, out, n: int, dtype: str, normal: bool, seed: int, timer, cancel) -> int:
        """Fill `out` with xoroshiro128+ numbers of `seed`; returns the streams that made them."""
        raise NotImplementedError


class CpuWorkspace(Workspace):
    """Data in host memory; the xoroshiro128+ CPU twin fills it in parallel chunks."""

    def data_buffer(self, n: int, dtype: str):
        return self.pool.host("data", (n,), dtype, pinned=False)

    def take(self, data, n: int, dtype: str, timer):
        return np.ascontiguousarray(data)

    def fill(self, out, n: int, dtype: str, normal: bool, seed: int, timer, cancel) -> int:
        kind = X.cpu_kind(out.dtype.name, normal)
        seed_u = np.uint64(seed)
        ensure_cpu_compiled(timer, X.cpu_fill, (out, 0, 1, seed_u, kind))
        chunks = X.cpu_chunks(out.size)
        with timer.phase("kernel", detail="generate"):
            for first in range(0, chunks, CPU_BATCH_CHUNKS):
                X.cpu_fill(out, first, min(first + CPU_BATCH_CHUNKS, chunks), seed_u, kind)
                if first + CPU_BATCH_CHUNKS < chunks:
                    check(cancel)
        return chunks


class GpuWorkspace(Workspace):
    """Data in device memory, one stream for every job, kernels launched on grids that fill the
    GPU (kernels/rng/grid.py), and the xoroshiro128+ states that carry from launch to launch."""

    def __init__(self, backend):
        super().__init__(backend)
        self._stream = None
        self._seed_states: OrderedDict = OrderedDict()   # (seed, threads) -> initial GPU states
        self._probe_states = None        # one xoroshiro state: typing kernels before sizing them

    def stream(self):
        if self._stream is None:
            from numba import cuda
            self._stream = cuda.stream()
        return self._stream

    def zero(self, arr) -> None:
        from numba.cuda.cudadrv import driver
        driver.device_memset(arr, 0, arr.nbytes, stream=self.stream())

    def compile(self, timer, dispatcher, args) -> None:
        if not grid.is_compiled(dispatcher, args):
            with timer.phase("compile"):
                grid.compile_for(dispatcher, args)

    def blocks(self, timer, dispatcher, args, n: int | None = None) -> int:
        """Resident blocks for this kernel, at most enough for n elements (one per thread)."""
        self.compile(timer, dispatcher, args)
        tpb = grid.threads_per_block()
        blocks = grid.resident_blocks(dispatcher, args, tpb)
        if n is not None:
            blocks = max(1, min(blocks, (n + tpb - 1) // tpb))
        return blocks

    def probe(self):
        if self._probe_states is None:
            from numba import cuda
            self._probe_states = cuda.device_array(1, dtype=X.state_dtype())
        return self._probe_states

    def initial_states(self, seed: int, threads: int, timer):
        """numba.cuda.random's initial states of `seed` for `threads` threads (kept per seed)."""
        key = (int(seed), int(threads))
        hit = self._seed_states.get(key)
        if hit is not None:
            self._seed_states.move_to_end(key)
            return hit
        from numba import cuda
        while len(self._seed_states) >= SEED_STATES_KEPT:
            self._seed_states.popitem(last=False)
        with timer.phase("host", detail="seed-states"):
            host = X.initial_states(seed, threads)
        states = cuda.device_array(threads, dtype=X.state_dtype(), stream=self.stream())
        with timer.phase("h2d", gpu=True, nbytes=host.nbytes, detail="seed-copy", gate=False):
            states.copy_to_device(host, stream=self.stream())
        self._seed_states[key] = states
        return states

    def work_states(self, threads: int):
        """The device states a multi-launch job carries from one launch to the next. One buffer
        per thread count: kernels of different register use fit different numbers of resident
        threads, and one shared name would be reallocated at every switch between them."""
        return self.pool.device(f"xoroshiro_states/{threads}", (threads,), X.state_dtype(),
                                stream=self.stream())

    def data_buffer(self, n: int, dtype: str):
        return self.pool.device("data", (n,), dtype, stream=self.stream())

    def take(self, data, n: int, dtype: str, timer):
        x = self.data_buffer(n, dtype)
        host = np.ascontiguousarray(data)
        with timer.phase("h2d", gpu=True, nbytes=host.nbytes, detail="copy-in", gate=False):
            x.copy_to_device(host, stream=self.stream())
        return x

    def fill(self, out, n: int, dtype: str, normal: bool, seed: int, timer, cancel) -> int:
        kernel = X.generate_kernel(dtype, normal)
        probe = self.probe()
        blocks = self.blocks(timer, kernel, (out, 0, n, probe, probe))
        threads = blocks * grid.threads_per_block()
        initial = self.initial_states(seed, threads, timer)
        work = self.work_states(threads)
        if not aligned(out):   # the kernel's 16-byte stores need it; pool buffers always are
            raise ValueError("the output's device memory is not 16-byte aligned")
        start = 0
        grid.hold_stream(self.stream(), timer)
        while start < n:
            count = min(GPU_CHUNK, n - start)   # GPU_CHUNK is a whole number of groups
            with timer.phase("kernel", gpu=True, detail="generate"):
                kernel[blocks, grid.threads_per_block(), self.stream()](
                    out, start, count, initial if start == 0 else work, work)
            start += count
            if start < n:
                check(cancel)
        return threads
