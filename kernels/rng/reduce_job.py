"""The reduction job: sum the job's data with the chosen strategy and measure it against the exact
sum (generated data: an exact fixed-point pass, kept per data key; given data: math.fsum). The
backend's part, `exact` and `total`, is `GpuReduction` or `CpuReduction`; the rest (the data, the
reference, the error bound, the note) is shared."""
from __future__ import annotations

from fractions import Fraction

import numba
import numpy as np

from ..backend import simulator_enabled
from . import grid
from . import reduce as R
from .choices import race_note, resolve
from .request import REDUCE_HELP, ReduceRequest
from .results import ReduceResult
from .workspace import Deferred, check, ensure_cpu_compiled

DETERMINISTIC = ("two-pass", "numba-reduce", "cpu-numba", "numpy")


def _nbtype(dtype: str):
    return numba.from_dtype(np.dtype(dtype))


def _error(value: float, exact) -> float:
    if isinstance(exact, Fraction) and np.isfinite(value):
        return float(Fraction(value) - exact)
    return float(value) - float(exact)


class Reduction:
    def __init__(self, ws):
        self.ws = ws

    def __call__(self, request: ReduceRequest, cancel=None) -> ReduceResult:
        ws = self.ws
        request.validate(ws.backend)
        strategy = resolve("reduce", request.strategy, ws.backend)
        check(cancel)
        n, dtype = int(request.n), request.np_dtype.name
        timer = ws.timer(f"reduce {strategy} {dtype} n={n:,}")
        x, key = ws.data(n, dtype, "uniform", request.seed, request.data, timer, cancel)
        check(cancel)
        pending_exact = None
        if key is not None and key not in ws.exact:
            pending_exact = self.exact(x, n, dtype, timer)
        value_host, chain = self.total(strategy, x, n, dtype, timer)
        below = 1.0        # generated data are uniform in [0, 1): Σ|x| is the exact sum
        if key is None:
            with timer.phase("host", detail="reference"):
                exact = R.fsum(request.data)
                abs_sum = float(R.fsum(np.abs(request.data)))
                if strategy in R.SINGLE_ACCUMULATOR:
                    below = float(np.nextafter(np.max(np.abs(request.data)), np.inf))
        timings = timer.finish()
        if pending_exact is not None:
            ws.exact[key] = pending_exact()
        if key is not None:
            exact = ws.exact[key]
            abs_sum = float(exact)
        value = float(value_host)
        stuck = strategy in R.SINGLE_ACCUMULATOR and R.stagnated(value, below, dtype)
        return ReduceResult(request=request, strategy=strategy, value=value,
                            reference=float(exact), reference_kind="exact" if key else "fsum",
                            error=_error(value, exact), reduce_ms=timings.detail.get("reduce"),
                            bytes_read=n * request.np_dtype.itemsize,
                            deterministic=strategy in DETERMINISTIC, timings=timings,
                            note=self._note(strategy, value, dtype, stuck),
                            error_bound=R.rounding_bound(chain, dtype, abs_sum), stagnated=stuck)

    def _note(self, strategy: str, value: float, dtype: str, stuck: bool) -> str:
        note = REDUCE_HELP[strategy] + race_note(strategy, self.ws.backend)
        if strategy == "numba-reduce":
            note += " It allocates its partial sums on every call."
        if stuck:
            note += (f" The accumulator stagnated: at {value:,.0f} neighbouring {dtype} numbers "
                     f"are {float(np.spacing(np.dtype(dtype).type(abs(value)))):g} apart, so every "
                     "value added after it got there was rounded away; the error is far beyond "
                     "what random rounding would give.")
        return note

    # the backend's part
    def exact(self, x, n: int, dtype: str, timer):
        """Start the exact sum of generated data; returns a callable giving it (a Fraction) once
        the job's timer has finished."""
        raise NotImplementedError

    def total(self, strategy: str, x, n: int, dtype: str, timer):
        """Start the sum; returns (its value, readable once the timer has finished, the longest
        chain of additions any one value went through)."""
        raise NotImplementedError


class CpuReduction(Reduction):
    def exact(self, x: np.ndarray, n: int, dtype: str, timer):
        scale = float(1 << R.SCALE_BITS[dtype])
        ensure_cpu_compiled(timer, R.cpu_exact_parts, (x, scale))
        with timer.phase("kernel", detail="reference"):
            hi, lo = R.cpu_exact_parts(x, scale)
        value = R.exact_from_parts(hi, lo, dtype)
        return lambda: value

    def total(self, strategy: str, x: np.ndarray, n: int, dtype: str, timer):
        return self._sum(strategy, x, dtype, timer), R.longest_chain(strategy, n)

    def _sum(self, strategy: str, x: np.ndarray, dtype: str, timer):
        if strategy == "numpy":
            with timer.phase("kernel", detail="reduce"):
                return np.sum(x)
        zero = x.dtype.type(0)
        parts = self.ws.pool.host("parts", (R.cpu_parts_len(x.size),), dtype, pinned=False)
        ensure_cpu_compiled(timer, R.cpu_sum, (x, parts, zero))
        with timer.phase("kernel", detail="reduce"):
            return R.cpu_sum(x, parts, zero)


class GpuReduction(Reduction):
    def __init__(self, ws):
        super().__init__(ws)
        self._numba_reduce = None
        self._numba_reduce_ready: set = set()

    def exact(self, x, n: int, dtype: str, timer):
        """Queue the exact-sum pass into a pinned host pair filled once the job finishes."""
        ws = self.ws
        kernel = R.exact_kernel()
        acc = ws.pool.device("exact_acc", (2,), np.int64, stream=ws.stream())
        scale = float(1 << R.SCALE_BITS[dtype])
        args = (x, n, scale, acc)
        blocks = ws.blocks(timer, kernel, args, n)
        ws.zero(acc)
        with timer.phase("kernel", gpu=True, detail="reference"):
            kernel[blocks, grid.threads_per_block(), ws.stream()](*args)
        host = ws.pool.host("exact_host", (2,), np.int64)
        with timer.phase("d2h", gpu=True, nbytes=16):
            acc.copy_to_host(host, stream=ws.stream())

        def value():
            hi, lo = (int(v) for v in host)
            return R.exact_from_parts(hi, lo, dtype)
        return value

    def total(self, strategy: str, x, n: int, dtype: str, timer):
        value_host, blocks = self._sum(strategy, x, n, dtype, timer)
        tpb = grid.threads_per_block()
        return value_host, R.longest_chain(strategy, n, blocks * tpb, blocks, tpb)

    def _sum(self, strategy: str, x, n: int, dtype: str, timer):
        """Queue the sum; returns (the pinned value filled once the job finishes, the blocks of
        the launch that summed the values; 1 for numba's reduce, whose launches are its own)."""
        ws = self.ws
        stream = ws.stream()
        blocks = 1
        tpb = grid.threads_per_block()
        acc = ws.pool.device("acc", (1,), dtype, stream=stream)
        if strategy == "numba-reduce":
            from numba import cuda
            if self._numba_reduce is None:
                self._numba_reduce = cuda.reduce(lambda a, b: a + b)
            # the simulator's reduce takes no stream
            on = {} if simulator_enabled() else {"stream": stream}
            if dtype not in self._numba_reduce_ready:
                with timer.phase("compile"):   # numba compiles its kernels on the first call
                    self._numba_reduce(x[:1], res=acc, **on)
                    stream.synchronize()
                self._numba_reduce_ready.add(dtype)
            grid.hold_stream(stream, timer)
            with timer.phase("kernel", gpu=True, detail="reduce"):
                self._numba_reduce(x, res=acc, **on)
        else:
            kernels = R.gpu_kernels(_nbtype(dtype))
            if strategy == "two-pass":
                first = kernels["partial"]
                probe = ws.pool.device("partials_probe", (1,), dtype, stream=stream)
                blocks = ws.blocks(timer, first, (x, n, probe), n)
                # sized for the most blocks of any n, so a job of another n reuses it
                most = grid.resident_blocks(first, (x, n, probe), tpb)
                partials = ws.pool.device("partials", (max(most, blocks),), dtype, stream=stream)
                ws.compile(timer, kernels["finish"], (partials, blocks, acc))
                grid.hold_stream(stream, timer)
                with timer.phase("kernel", gpu=True, detail="reduce"):
                    first[blocks, tpb, stream](x, n, partials)
                    kernels["finish"][1, tpb, stream](partials, blocks, acc)
            else:
                kernel = kernels[strategy]
                blocks = ws.blocks(timer, kernel, (x, n, acc), n)
                ws.zero(acc)
                grid.hold_stream(stream, timer)
                with timer.phase("kernel", gpu=True, detail="reduce"):
                    kernel[blocks, tpb, stream](x, n, acc)
        host = ws.pool.host("acc_host", (1,), dtype)
        with timer.phase("d2h", gpu=True, nbytes=host.nbytes):
            acc.copy_to_host(host, stream=stream)
        return Deferred(host), blocks
