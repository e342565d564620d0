"""What the random-number jobs are asked for (no numba): the frozen requests, the names of the
generators and strategies with a sentence on each, and `validate()` that says in plain words what
is wrong before anything is allocated.

Every request carries `n` (how many values or points) and `seed`. Generated data is uniform in
[0, 1) or standard normal, float32 or float64. Reductions and histograms either generate their
data on the device from `seed` (so every strategy sees the same numbers) or take `data=`, a 1-D
NumPy array, in which case `n` and `dtype` must describe it (`from_data()` builds such a request).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np

from ..backend import Backend

GENERATORS = ("xoroshiro128p", "philox4_32_10", "numpy")
GENERATOR_HELP = {
    "xoroshiro128p": "numba.cuda.random's xoroshiro128+: one state per resident GPU thread, each "
                     "thread loads its state once, strides over the output writing 16 bytes (two "
                     "draws) per store and stores the state once; on the CPU the twin runs the "
                     "same generator in parallel, seeded per chunk.",
    "philox4_32_10": "cuRAND's Philox4_32_10 through nvmath-python's device API, called inside a "
                     "numba kernel; counter-based, so each thread starts its own state in "
                     "registers from (seed, subsequence) and nothing is loaded or stored.",
    "numpy": "NumPy's Generator (PCG64) on the host; on the GPU backend the numbers are then "
             "copied to the device, the path a user would otherwise take.",
}
DISTRIBUTIONS = ("uniform", "normal")
DTYPES = ("float32", "float64")

REDUCE_STRATEGIES = ("racy", "atomic", "warp-shuffle", "two-pass", "numba-reduce",
                     "cpu-numba", "numpy")
GPU_REDUCE_STRATEGIES = ("racy", "atomic", "warp-shuffle", "two-pass", "numba-reduce")
CPU_REDUCE_STRATEGIES = ("cpu-numba", "numpy")
REDUCE_HELP = {
    "racy": "every thread adds into one global accumulator with a plain +=, no atomics: updates "
            "are lost on a real GPU, so the answer is wrong (numba's simulator runs threads one "
            "at a time and may not show it).",
    "atomic": "one atomic add per element into one global accumulator: correct, serialised on "
              "one address, slow.",
    "warp-shuffle": "each thread sums its grid-stride share, warps combine with shuffles, blocks "
                    "through shared memory, then one atomic add per block.",
    "two-pass": "BabelStream's way: a few blocks per SM sum grid-stride shares, each block writes "
                "its partial sum to memory, a second one-block pass adds the partials; no "
                "atomics, so the answer is the same on every run.",
    "numba-reduce": "numba.cuda.reduce with a + b: numba's own two-stage tree reduction.",
    "cpu-numba": "the CPU twin: numba parallel, fixed chunks each summed with vector "
                 "accumulators, the chunk sums added in order (the same answer for any thread "
                 "count).",
    "numpy": "numpy.sum: pairwise summation on one core.",
}

HISTOGRAM_STRATEGIES = ("shared", "racy", "cpu-numba", "numpy")
GPU_HISTOGRAM_STRATEGIES = ("shared", "racy")
CPU_HISTOGRAM_STRATEGIES = ("cpu-numba", "numpy")
HISTOGRAM_HELP = {
    "shared": "privatised: each block counts into its own bins in shared memory with shared "
              "atomics, then adds each bin to the global bins with one atomic per bin.",
    "racy": "every thread adds 1 to the global bin with a plain +=, no atomics: counts are lost "
            "on a real GPU.",
    "cpu-numba": "the CPU twin: numba parallel, one private histogram per chunk, summed.",
    "numpy": "NumPy: the bin indices as an array, then numpy.bincount.",
}

AUTO = "auto"
MAX_N = 2**36               # values held in memory: beyond this no machine here has the room
MAX_MONTE_CARLO_N = 2**44   # points: nothing is stored, only time limits them
MAX_BINS = 4096
MAX_SEED = 2**64 - 1
HEAD = 16                   # values of a generated array always copied back for a readout


class StrategyUnavailable(ValueError):
    """The chosen generator or strategy cannot run on this backend; str(exc) says why and what to
    pick instead."""


def _check_choice(what: str, value, choices) -> None:
    if value not in choices:
        raise ValueError(f"unknown {what} {value!r}; choose one of: {', '.join(choices)}")


def _is_int(v) -> bool:
    return isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_))


def check_n(n, limit: int = MAX_N, what: str = "n") -> None:
    """n must be a whole number from 1 to `limit`."""
    if not _is_int(n):
        raise ValueError(f"{what} must be a whole number of values, got {n!r}")
    if n < 1:
        raise ValueError(f"{what} must be at least 1, got {n}")
    if n > limit:
        raise ValueError(f"{what} = {n:,} is too large (at most {limit:,} = 2^{limit.bit_length() - 1})")


def check_seed(seed) -> None:
    if not _is_int(seed) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed must be a whole number from 0 to 2^64 - 1, got {seed!r}")


def dtype_name(dtype) -> str:
    """'float32' or 'float64' from a name, a NumPy dtype or a scalar type; ValueError otherwise."""
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = str(dtype)
    if name not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; choose one of: {', '.join(DTYPES)}")
    return name


def _check_data(data, n, dtype) -> None:
    if not isinstance(data, np.ndarray) or data.ndim != 1:
        raise ValueError("data must be a one-dimensional NumPy array")
    if data.dtype.name not in DTYPES:
        raise ValueError(f"data must be float32 or float64, got {data.dtype}")
    if data.size != n:
        raise ValueError(f"n = {n!r} does not match the data's length {data.size:,}")
    if data.dtype.name != dtype_name(dtype):
        raise ValueError(f"dtype {dtype!r} does not match the data's dtype {data.dtype}")


def _mib(nbytes: int) -> str:
    if nbytes >= 2**30:
        return f"{nbytes / 2**30:,.1f} GiB"
    return f"{nbytes / 2**20:,.1f} MiB"


def check_memory(nbytes: int, backend, what: str) -> None:
    """ValueError when `nbytes` would not fit in the backend's free memory (device memory on a
    real GPU, available host memory on the CPU); silent where it cannot be told."""
    if backend is None:
        return
    from .. import buffers
    if getattr(backend, "is_gpu", False):
        info = buffers.device_free_bytes()
        if info is None:
            return
        free, _total = info
        where = "GPU memory"
    else:
        free = buffers.host_available_bytes()
        if free is None:
            return
        where = "host memory"
    if nbytes > 0.9 * free:
        raise ValueError(f"{what} needs {_mib(nbytes)} of {where} but only {_mib(free)} is free; "
                         "use a smaller n")


@dataclass(frozen=True)
class GenerateRequest:
    generator: str = "xoroshiro128p"
    distribution: str = "uniform"
    dtype: str = "float32"
    n: int = 2**20
    seed: int = 0
    want_values: bool = False    # copy every value back to the host (else only the first HEAD)
    backend: Backend | None = None   # where it runs: the scheduler reads it; a Renderer ignores it

    def validate(self, backend=None) -> GenerateRequest:
        """Raise ValueError in plain words when the request cannot run (on `backend`, or the
        request's own backend, when there is one: then the memory it needs is checked too)."""
        backend = backend or self.backend
        _check_choice("generator", self.generator, GENERATORS)
        _check_choice("distribution", self.distribution, DISTRIBUTIONS)
        itemsize = np.dtype(dtype_name(self.dtype)).itemsize
        check_n(self.n)
        check_seed(self.seed)
        nbytes = self.n * itemsize
        if getattr(backend, "is_gpu", False):
            check_memory(nbytes, backend, f"{self.n:,} {self.dtype} values")
            if self.want_values or self.generator == "numpy":
                check_memory(nbytes, _host_of(backend), f"{self.n:,} {self.dtype} values on the host")
        else:
            check_memory(nbytes, backend, f"{self.n:,} {self.dtype} values")
        return self

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype(dtype_name(self.dtype))


@dataclass(frozen=True)
class ReduceRequest:
    strategy: str = AUTO
    n: int = 2**20
    dtype: str = "float32"
    seed: int = 0
    data: np.ndarray | None = field(default=None, compare=False, repr=False)
    backend: Backend | None = None

    @classmethod
    def from_data(cls, data: np.ndarray, strategy: str = AUTO, backend=None) -> ReduceRequest:
        return cls(strategy=strategy, n=int(np.asarray(data).size), dtype=np.asarray(data).dtype.name,
                   data=data, backend=backend)

    def validate(self, backend=None) -> ReduceRequest:
        backend = backend or self.backend
        _check_choice("strategy", self.strategy, (AUTO,) + REDUCE_STRATEGIES)
        itemsize = np.dtype(dtype_name(self.dtype)).itemsize
        check_n(self.n)
        check_seed(self.seed)
        if self.data is not None:
            _check_data(self.data, self.n, self.dtype)
        check_memory(self.n * itemsize, backend, f"{self.n:,} {self.dtype} values")
        return self

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype(dtype_name(self.dtype))


@dataclass(frozen=True)
class HistogramRequest:
    strategy: str = AUTO
    n: int = 2**20
    bins: int = 256
    dtype: str = "float32"
    distribution: str = "uniform"
    seed: int = 0
    lo: float | None = None      # left edge; None = 0 for uniform data, -4 for normal
    hi: float | None = None      # right edge (excluded); None = 1 for uniform, +4 for normal
    data: np.ndarray | None = field(default=None, compare=False, repr=False)
    backend: Backend | None = None

    @classmethod
    def from_data(cls, data: np.ndarray, lo: float, hi: float, bins: int = 256,
                  strategy: str = AUTO, backend=None) -> HistogramRequest:
        return cls(strategy=strategy, n=int(np.asarray(data).size), bins=bins,
                   dtype=np.asarray(data).dtype.name, lo=lo, hi=hi, data=data, backend=backend)

    def validate(self, backend=None) -> HistogramRequest:
        backend = backend or self.backend
        _check_choice("strategy", self.strategy, (AUTO,) + HISTOGRAM_STRATEGIES)
        _check_choice("distribution", self.distribution, DISTRIBUTIONS)
        itemsize = np.dtype(dtype_name(self.dtype)).itemsize
        check_n(self.n)
        check_seed(self.seed)
        if not _is_int(self.bins) or not 1 <= self.bins <= MAX_BINS:
            raise ValueError(f"bins must be a whole number from 1 to {MAX_BINS}, got {self.bins!r}")
        lo, hi = self.edges
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
            raise ValueError(f"the range needs finite lo < hi, got lo = {lo} and hi = {hi}")
        if self.data is not None:
            _check_data(self.data, self.n, self.dtype)
        check_memory(self.n * itemsize, backend, f"{self.n:,} {self.dtype} values")
        return self

    @property
    def edges(self) -> tuple[float, float]:
        normal = self.distribution == "normal"
        lo = (-4.0 if normal else 0.0) if self.lo is None else self.lo
        hi = (4.0 if normal else 1.0) if self.hi is None else self.hi
        try:
            return float(lo), float(hi)
        except (TypeError, ValueError):
            raise ValueError(f"lo and hi must be numbers, got {lo!r} and {hi!r}") from None

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype(dtype_name(self.dtype))


@dataclass(frozen=True)
class MonteCarloRequest:
    n: int = 2**24               # points in the unit square
    seed: int = 0
    backend: Backend | None = None

    def validate(self, backend=None) -> MonteCarloRequest:
        check_n(self.n, MAX_MONTE_CARLO_N)
        check_seed(self.seed)
        return self


def _host_of(backend):
    """The CPU side of a GPU backend, for checking host memory."""
    return Backend("cpu") if backend is not None else None
