"""Runs the random-number jobs on one backend: `Renderer(backend)` with `generate`, `reduce`,
`histogram` and `monte_carlo`, and `available(backend)`, which lists every generator and strategy
with the reason it cannot run here ("" when it can).

One Renderer per backend, reused and used from one thread (the worker): its buffers come from a
BufferPool, so running the same request again allocates nothing. Data generated for a reduction
or a histogram stay on the device keyed by (distribution, dtype, n, seed), so every strategy of a
comparison reads the same numbers and only the first run pays for making them (and for the exact
sum they are measured against). `cancel`, when given, is an object whose .check() raises; it is
called before the work starts and between chunks of long work.
"""
from __future__ import annotations

from collections import OrderedDict
from fractions import Fraction

import numba
import numpy as np

from ..backend import first_line, simulator_enabled
from ..buffers import BufferPool
from ..timing import JobTimer
from . import grid
from . import histogram as H
from . import montecarlo as M
from . import philox as P
from . import reduce as R
from . import xoroshiro as X
from .request import (AUTO, CPU_HISTOGRAM_STRATEGIES, CPU_REDUCE_STRATEGIES, GENERATOR_HELP,
                      GENERATORS, GPU_HISTOGRAM_STRATEGIES, GPU_REDUCE_STRATEGIES, HEAD,
                      HISTOGRAM_HELP, HISTOGRAM_STRATEGIES, REDUCE_HELP, REDUCE_STRATEGIES,
                      GenerateRequest, HistogramRequest, MonteCarloRequest, ReduceRequest,
                      StrategyUnavailable)
from .results import GenerateResult, HistogramResult, MonteCarloResult, ReduceResult
from .vectorio import aligned

GPU_CHUNK = 1 << 30          # values generated per launch; cancel is checked between launches
CPU_BATCH_CHUNKS = 256       # CPU twin chunks per call (2^24 values), cancel checked between
NUMPY_CHUNK = 1 << 24        # values NumPy generates per call, cancel checked between
MC_GPU_CHUNK = 1 << 33       # points per Monte Carlo launch
MC_CPU_BATCH = 64            # CPU Monte Carlo chunks (of 2^20 points) per call
SEED_STATES_KEPT = 4         # seeds whose initial GPU states are kept on the device
KINDS = ("generate", "reduce", "histogram", "monte-carlo")
MONTE_CARLO_METHODS = ("fused-xoroshiro128p",)
DETERMINISTIC = ("two-pass", "numba-reduce", "cpu-numba", "numpy")
SIMULATOR_RACE_NOTE = ("numba's simulator runs threads one at a time, so the race may not lose "
                       "anything here; on a real GPU it does")


# ---- what can run where -------------------------------------------------------------------------
def _generator_problem(name: str, backend) -> str:
    if name == "philox4_32_10":
        return P.problem(backend)
    return ""


def _strategy_problem(name: str, backend, gpu_names, cpu_names) -> str:
    if name in gpu_names and not backend.is_gpu:
        return f"{name} runs on the GPU; pick the cuda backend"
    if name in cpu_names and backend.is_gpu:
        return f"{name} runs on the CPU; pick the cpu backend"
    return ""


def available(backend, kind: str | None = None) -> dict[str, str]:
    """{name: reason it cannot run on `backend`, or ""} for one kind of job ("generate",
    "reduce", "histogram", "monte-carlo"), or for all of them as {"kind/name": reason}."""
    if kind is None:
        out = {}
        for k in KINDS:
            out.update({f"{k}/{name}": why for name, why in available(backend, k).items()})
        return out
    if kind == "generate":
        return {g: _generator_problem(g, backend) for g in GENERATORS}
    if kind == "reduce":
        return {s: _strategy_problem(s, backend, GPU_REDUCE_STRATEGIES, CPU_REDUCE_STRATEGIES)
                for s in REDUCE_STRATEGIES}
    if kind == "histogram":
        return {s: _strategy_problem(s, backend, GPU_HISTOGRAM_STRATEGIES, CPU_HISTOGRAM_STRATEGIES)
                for s in HISTOGRAM_STRATEGIES}
    if kind == "monte-carlo":
        return {m: "" for m in MONTE_CARLO_METHODS}
    raise ValueError(f"unknown kind {kind!r}; choose one of: {', '.join(KINDS)}")


def default_strategy(kind: str, backend) -> str:
    if kind == "reduce":
        return "two-pass" if backend.is_gpu else "cpu-numba"
    if kind == "histogram":
        return "shared" if backend.is_gpu else "cpu-numba"
    raise ValueError(f"no strategies for {kind!r}")


def _resolve(kind: str, name: str, backend) -> str:
    if name == AUTO:
        return default_strategy(kind, backend)
    why = available(backend, kind)[name]
    if why:
        usable = [n for n, w in available(backend, kind).items() if not w]
        raise StrategyUnavailable(f"{why}; on the {backend.name} backend choose one of: "
                                  f"{', '.join(usable)}")
    return name


def _check(cancel) -> None:
    if cancel is not None:
        cancel.check()


def _nbtype(dtype: str):
    return numba.from_dtype(np.dtype(dtype))


def _ensure_cpu_compiled(timer, dispatcher, args) -> None:
    sig = tuple(numba.typeof(a) for a in args)
    if sig not in dispatcher.overloads:
        with timer.phase("compile"):
            dispatcher.compile(sig)   # loads numba's on-disk cache when it has this version


def _error(value: float, exact) -> float:
    if isinstance(exact, Fraction) and np.isfinite(value):
        return float(Fraction(value) - exact)
    return float(value) - float(exact)


class Renderer:
    """Runs rng requests on one backend, reusing its buffers. Use from one thread only."""

    def __init__(self, backend):
        self.backend = backend
        self.pool = BufferPool(backend)
        self._stream = None
        self._data_key = None            # what the pool's "data" buffer holds now
        self._exact: dict = {}           # data key -> exact sum (Fraction)
        self._seed_states: OrderedDict = OrderedDict()   # (seed, threads) -> initial GPU states
        self._probe_states = None        # one xoroshiro state: typing kernels before sizing them
        self._numba_reduce = None
        self._numba_reduce_ready: set = set()
        self._philox_in_registers: dict = {}   # (dtype, normal) -> True, or the reason it is not
        self._philox_states: dict = {}         # threads -> nvmath states (the fallback's)

    # ---- shared set-up ---------------------------------------------------------------------------
    @property
    def gpu(self) -> bool:
        return bool(self.backend.is_gpu)

    def stream(self):
        if self._stream is None:
            from numba import cuda
            self._stream = cuda.stream()
        return self._stream

    def _timer(self, label: str) -> JobTimer:
        return JobTimer(self.backend, self.stream() if self.gpu else None, label)

    def _zero(self, arr) -> None:
        from numba.cuda.cudadrv import driver
        driver.device_memset(arr, 0, arr.nbytes, stream=self.stream())

    def _compile(self, timer, dispatcher, args) -> None:
        if not grid.is_compiled(dispatcher, args):
            with timer.phase("compile"):
                grid.compile_for(dispatcher, args)

    def _blocks(self, timer, dispatcher, args, n: int | None = None) -> int:
        """Resident blocks for this kernel, at most enough for n elements (one per thread)."""
        self._compile(timer, dispatcher, args)
        tpb = grid.threads_per_block()
        blocks = grid.resident_blocks(dispatcher, args, tpb)
        if n is not None:
            blocks = max(1, min(blocks, (n + tpb - 1) // tpb))
        return blocks

    def _probe(self):
        if self._probe_states is None:
            from numba import cuda
            self._probe_states = cuda.device_array(1, dtype=X.state_dtype())
        return self._probe_states

    def _initial_states(self, seed: int, threads: int, timer):
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
        with timer.phase("h2d", gpu=True, nbytes=host.nbytes, detail="seed-copy"):
            states.copy_to_device(host, stream=self.stream())
        self._seed_states[key] = states
        return states

    def _work_states(self, threads: int):
        """The device states a multi-launch job carries from one launch to the next. One buffer
        per thread count: kernels of different register use fit different numbers of resident
        threads, and one shared name would be reallocated at every switch between them."""
        return self.pool.device(f"xoroshiro_states/{threads}", (threads,), X.state_dtype(),
                                stream=self.stream())

    def warmup(self, cancel=None) -> float:
        """Compile (or load from numba's cache) the kernels of the default requests with tiny
        runs; returns the compile milliseconds."""
        jobs = [lambda: self.generate(GenerateRequest(n=64), cancel),
                lambda: self.reduce(ReduceRequest(n=64), cancel),
                lambda: self.histogram(HistogramRequest(n=64), cancel),
                lambda: self.monte_carlo(MonteCarloRequest(n=64), cancel)]
        ms = 0.0
        for job in jobs:
            ms += job().timings.phases_ms.get("compile") or 0.0
        return ms

    # ---- generation --------------------------------------------------------------------------------
    def generate(self, request: GenerateRequest, cancel=None) -> GenerateResult:
        request.validate(self.backend)
        why = _generator_problem(request.generator, self.backend)
        if why:
            usable = [g for g in GENERATORS if not _generator_problem(g, self.backend)]
            raise StrategyUnavailable(f"{why}; on the {self.backend.name} backend choose one of: "
                                      f"{', '.join(usable)}")
        _check(cancel)
        if self.gpu:
            return self._generate_gpu(request, cancel)
        return self._generate_cpu(request, cancel)

    def _generate_gpu(self, req: GenerateRequest, cancel) -> GenerateResult:
        n, dtype, normal = int(req.n), req.np_dtype.name, req.distribution == "normal"
        stream = self.stream()
        timer = self._timer(f"generate {req.generator} {req.distribution} {dtype} n={n:,}")
        out = self.pool.device("data", (n,), dtype, stream=stream)
        self._data_key = None
        note = GENERATOR_HELP[req.generator]
        where, streams = "device", 1
        if req.generator == "xoroshiro128p":
            streams = self._fill_xoroshiro(out, n, dtype, normal, int(req.seed), timer, cancel)
            self._data_key = ("xoroshiro128p", req.distribution, dtype, n, int(req.seed))
        elif req.generator == "philox4_32_10":
            fallback, streams = self._fill_philox(out, n, dtype, normal, int(req.seed), timer,
                                                  cancel)
            note = fallback or note
        else:
            host = self.pool.host("host_values", (n,), dtype)
            self._fill_numpy(host, normal, int(req.seed), timer, cancel)
            with timer.phase("h2d", gpu=True, nbytes=host.nbytes, detail="copy-in"):
                out.copy_to_device(host, stream=stream)
            where = "host, then copied to the device"
        k = min(n, HEAD)
        head = self.pool.host("head", (HEAD,), dtype)
        with timer.phase("d2h", gpu=True, nbytes=k * req.np_dtype.itemsize):
            out[:k].copy_to_host(head[:k], stream=stream)
        values = None
        if req.want_values:
            values = self.pool.host("values", (n,), dtype, ring=2)
            with timer.phase("d2h", gpu=True, nbytes=values.nbytes):
                out.copy_to_host(values, stream=stream)
        timings = timer.finish()
        return GenerateResult(request=req, generator=req.generator, where=where,
                              head=head[:k].copy(), values=values,
                              generate_ms=self._generate_ms(timings, req.generator),
                              bytes_written=n * req.np_dtype.itemsize, timings=timings,
                              streams=streams, note=note)

    @staticmethod
    def _generate_ms(timings, generator: str):
        d = timings.detail
        ms = d.get("generate")
        if generator == "numpy" and "copy-in" in d:
            copy = d.get("copy-in")
            ms = None if ms is None or copy is None else ms + copy
        return ms

    def _fill_xoroshiro(self, out, n: int, dtype: str, normal: bool, seed: int, timer, cancel):
        kernel = X.generate_kernel(dtype, normal)
        probe = self._probe()
        blocks = self._blocks(timer, kernel, (out, 0, n, probe, probe))
        threads = blocks * grid.threads_per_block()
        initial = self._initial_states(seed, threads, timer)
        work = self._work_states(threads)
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
                _check(cancel)
        return threads

    def _fill_philox(self, out, n: int, dtype: str, normal: bool, seed: int, timer, cancel):
        """Fill `out` with cuRAND Philox numbers; returns (a note when the fallback was used,
        the number of threads)."""
        key = (dtype, normal)
        tpb = grid.threads_per_block()
        seed_u, zero = np.uint64(seed), np.uint64(0)
        try:
            if not simulator_enabled():
                with timer.phase("compile"):
                    P.compiled_apis()          # nvmath's cuRAND functions, built once
        except Exception as exc:
            raise StrategyUnavailable(P.remember_failure(exc)) from exc
        mode = self._philox_in_registers.get(key, True)
        if mode is True:
            try:
                kernel = P.generate_kernel(dtype, normal, True)
                blocks = self._blocks(timer, kernel, (out, 0, n, seed_u, zero))
            except Exception as exc:   # the register-state intrinsic: fall back, and say why
                mode = (f"the state could not be held in registers ({first_line(exc)}); "
                        "it lives in device memory, one per thread, as nvmath's examples do")
            self._philox_in_registers[key] = mode
        states = None
        if mode is not True:
            try:
                kernel = P.generate_kernel(dtype, normal, False)
                one = self._philox_states.get(1) or P.new_states(1)
                self._philox_states[1] = one
                blocks = self._blocks(timer, kernel, (out, 0, n, seed_u, zero, one))
            except Exception as exc:
                raise StrategyUnavailable(P.remember_failure(exc)) from exc
            threads = blocks * tpb
            states = self._philox_states.get(threads)
            if states is None:
                states = self._philox_states[threads] = P.new_states(threads)
        threads = blocks * tpb
        start, chunk = 0, 0
        grid.hold_stream(self.stream(), timer)
        while start < n:
            count = min(GPU_CHUNK, n - start)
            base = np.uint64(chunk * threads)      # fresh subsequences for every launch
            with timer.phase("kernel", gpu=True, detail="generate"):
                launch = kernel[blocks, tpb, self.stream()]
                if states is None:
                    launch(out, start, count, seed_u, base)
                else:
                    launch(out, start, count, seed_u, base, states)
            start += count
            chunk += 1
            if start < n:
                _check(cancel)
        note = "" if mode is True else f"{GENERATOR_HELP['philox4_32_10']} Here {mode}."
        return note, threads

    def _fill_numpy(self, host: np.ndarray, normal: bool, seed: int, timer, cancel) -> None:
        rng = np.random.default_rng(seed)
        with timer.phase("host", detail="generate"):
            for start in range(0, host.size, NUMPY_CHUNK):
                part = host[start:start + NUMPY_CHUNK]
                if normal:
                    rng.standard_normal(out=part, dtype=host.dtype)
                else:
                    rng.random(out=part, dtype=host.dtype)
                if start + NUMPY_CHUNK < host.size:
                    _check(cancel)

    def _fill_cpu_twin(self, out: np.ndarray, normal: bool, seed: int, timer, cancel) -> None:
        kind = X.cpu_kind(out.dtype.name, normal)
        seed_u = np.uint64(seed)
        _ensure_cpu_compiled(timer, X.cpu_fill, (out, 0, 1, seed_u, kind))
        chunks = X.cpu_chunks(out.size)
        with timer.phase("kernel", detail="generate"):
            for first in range(0, chunks, CPU_BATCH_CHUNKS):
                X.cpu_fill(out, first, min(first + CPU_BATCH_CHUNKS, chunks), seed_u, kind)
                if first + CPU_BATCH_CHUNKS < chunks:
                    _check(cancel)

    def _generate_cpu(self, req: GenerateRequest, cancel) -> GenerateResult:
        n, dtype, normal = int(req.n), req.np_dtype.name, req.distribution == "normal"
        timer = self._timer(f"generate {req.generator} {req.distribution} {dtype} n={n:,} cpu")
        if req.want_values:   # the caller keeps these: not the buffer later jobs reuse
            out = self.pool.host("values", (n,), dtype, pinned=False, ring=2)
        else:
            out = self.pool.host("data", (n,), dtype, pinned=False)
            self._data_key = None
        if req.generator == "numpy":
            self._fill_numpy(out, normal, int(req.seed), timer, cancel)
            note, where, streams = GENERATOR_HELP["numpy"], "host", 1
        else:
            self._fill_cpu_twin(out, normal, int(req.seed), timer, cancel)
            if not req.want_values:
                self._data_key = ("xoroshiro128p", req.distribution, dtype, n, int(req.seed))
            note = ("the CPU twin: xoroshiro128+ in parallel over chunks of "
                    f"{X.CPU_CHUNK:,} values, each seeded by splitmix64 from (seed, chunk)")
            where, streams = "host", X.cpu_chunks(n)
        timings = timer.finish()
        return GenerateResult(request=req, generator=req.generator, where=where,
                              head=out[:HEAD].copy(), values=out if req.want_values else None,
                              generate_ms=timings.detail.get("generate"),
                              bytes_written=n * req.np_dtype.itemsize, timings=timings,
                              streams=streams, note=note)

    # ---- the data reductions and histograms read ------------------------------------------------
    def _data(self, n: int, dtype: str, distribution: str, seed: int, data, timer, cancel):
        """(array, key): the job's data where the backend computes, generated from the seed with
        xoroshiro128+ (key = what they are) or taken from `data` (key None)."""
        if data is not None:
            self._data_key = None
            if not self.gpu:
                return np.ascontiguousarray(data), None
            x = self.pool.device("data", (n,), dtype, stream=self.stream())
            host = np.ascontiguousarray(data)
            with timer.phase("h2d", gpu=True, nbytes=host.nbytes, detail="copy-in"):
                x.copy_to_device(host, stream=self.stream())
            return x, None
        key = ("xoroshiro128p", distribution, dtype, n, int(seed))
        normal = distribution == "normal"
        if self.gpu:
            x = self.pool.device("data", (n,), dtype, stream=self.stream())
            if self._data_key != key:
                self._data_key = None
                self._fill_xoroshiro(x, n, dtype, normal, int(seed), timer, cancel)
        else:
            x = self.pool.host("data", (n,), dtype, pinned=False)
            if self._data_key != key:
                self._data_key = None
                self._fill_cpu_twin(x, normal, int(seed), timer, cancel)
        self._data_key = key
        return x, key

    # ---- reductions -----------------------------------------------------------------------------
    def reduce(self, request: ReduceRequest, cancel=None) -> ReduceResult:
        request.validate(self.backend)
        strategy = _resolve("reduce", request.strategy, self.backend)
        _check(cancel)
        n, dtype = int(request.n), request.np_dtype.name
        timer = self._timer(f"reduce {strategy} {dtype} n={n:,}")
        x, key = self._data(n, dtype, "uniform", request.seed, request.data, timer, cancel)
        _check(cancel)
        if self.gpu:
            pending_exact = self._exact_gpu(x, key, n, dtype, timer) if key not in self._exact else None
            value_host, blocks = self._reduce_gpu(strategy, x, n, dtype, timer)
            tpb = grid.threads_per_block()
            chain = R.longest_chain(strategy, n, blocks * tpb, blocks, tpb)
        else:
            if key is not None and key not in self._exact:
                self._exact[key] = self._exact_cpu(x, dtype, timer)
            pending_exact = None
            value_host = self._reduce_cpu(strategy, x, dtype, timer)
            chain = R.longest_chain(strategy, n)
        below = 1.0        # generated data are uniform in [0, 1): Σ|x| is the exact sum
        if key is None:
            with timer.phase("host", detail="reference"):
                exact = R.fsum(request.data)
                abs_sum = float(R.fsum(np.abs(request.data)))
                if strategy in R.SINGLE_ACCUMULATOR:
                    below = float(np.nextafter(np.max(np.abs(request.data)), np.inf))
        timings = timer.finish()
        if pending_exact is not None:
            hi, lo = (int(v) for v in pending_exact)
            self._exact[key] = R.exact_from_parts(hi, lo, dtype)
        if key is not None:
            exact = self._exact[key]
            abs_sum = float(exact)
        value = float(value_host)
        stuck = strategy in R.SINGLE_ACCUMULATOR and R.stagnated(value, below, dtype)
        note = REDUCE_HELP[strategy]
        if strategy == "racy" and getattr(self.backend, "simulated", False):
            note += " " + SIMULATOR_RACE_NOTE + "."
        if strategy == "numba-reduce":
            note += " It allocates its partial sums on every call."
        if stuck:
            note += (f" The accumulator stagnated: at {value:,.0f} neighbouring {dtype} numbers "
                     f"are {float(np.spacing(np.dtype(dtype).type(abs(value)))):g} apart, so every "
                     "value added after it got there was rounded away; the error is far beyond "
                     "what random rounding would give.")
        return ReduceResult(request=request, strategy=strategy, value=value,
                            reference=float(exact), reference_kind="exact" if key else "fsum",
                            error=_error(value, exact), reduce_ms=timings.detail.get("reduce"),
                            bytes_read=n * request.np_dtype.itemsize,
                            deterministic=strategy in DETERMINISTIC, timings=timings, note=note,
                            error_bound=R.rounding_bound(chain, dtype, abs_sum), stagnated=stuck)

    def _exact_gpu(self, x, key, n: int, dtype: str, timer):
        """Queue the exact-sum pass; returns the pinned host pair filled once the job finishes."""
        if key is None:
            return None
        kernel = R.exact_kernel()
        acc = self.pool.device("exact_acc", (2,), np.int64, stream=self.stream())
        scale = float(1 << R.SCALE_BITS[dtype])
        args = (x, n, scale, acc)
        blocks = self._blocks(timer, kernel, args, n)
        self._zero(acc)
        with timer.phase("kernel", gpu=True, detail="reference"):
            kernel[blocks, grid.threads_per_block(), self.stream()](*args)
        host = self.pool.host("exact_host", (2,), np.int64)
        with timer.phase("d2h", gpu=True, nbytes=16):
            acc.copy_to_host(host, stream=self.stream())
        return host

    def _exact_cpu(self, x: np.ndarray, dtype: str, timer) -> Fraction:
        scale = float(1 << R.SCALE_BITS[dtype])
        _ensure_cpu_compiled(timer, R.cpu_exact_parts, (x, scale))
        with timer.phase("kernel", detail="reference"):
            hi, lo = R.cpu_exact_parts(x, scale)
        return R.exact_from_parts(hi, lo, dtype)

    def _reduce_gpu(self, strategy: str, x, n: int, dtype: str, timer):
        """Queue the sum; returns (the pinned value filled once the job finishes, the blocks of
        the launch that summed the values; 1 for numba's reduce, whose launches are its own)."""
        stream = self.stream()
        blocks = 1
        tpb = grid.threads_per_block()
        acc = self.pool.device("acc", (1,), dtype, stream=stream)
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
                probe = self.pool.device("partials_probe", (1,), dtype, stream=stream)
                blocks = self._blocks(timer, first, (x, n, probe), n)
                # sized for the most blocks of any n, so a job of another n reuses it
                most = grid.resident_blocks(first, (x, n, probe), tpb)
                partials = self.pool.device("partials", (max(most, blocks),), dtype, stream=stream)
                self._compile(timer, kernels["finish"], (partials, blocks, acc))
                grid.hold_stream(stream, timer)
                with timer.phase("kernel", gpu=True, detail="reduce"):
                    first[blocks, tpb, stream](x, n, partials)
                    kernels["finish"][1, tpb, stream](partials, blocks, acc)
            else:
                kernel = kernels[strategy]
                blocks = self._blocks(timer, kernel, (x, n, acc), n)
                self._zero(acc)
                grid.hold_stream(stream, timer)
                with timer.phase("kernel", gpu=True, detail="reduce"):
                    kernel[blocks, tpb, stream](x, n, acc)
        host = self.pool.host("acc_host", (1,), dtype)
        with timer.phase("d2h", gpu=True, nbytes=host.nbytes):
            acc.copy_to_host(host, stream=stream)
        return _Deferred(host), blocks

    def _reduce_cpu(self, strategy: str, x: np.ndarray, dtype: str, timer):
        if strategy == "numpy":
            with timer.phase("kernel", detail="reduce"):
                return np.sum(x)
        zero = x.dtype.type(0)
        parts = self.pool.host("parts", (R.cpu_parts_len(x.size),), dtype, pinned=False)
        _ensure_cpu_compiled(timer, R.cpu_sum, (x, parts, zero))
        with timer.phase("kernel", detail="reduce"):
            return R.cpu_sum(x, parts, zero)

    # ---- histograms -----------------------------------------------------------------------------
    def histogram(self, request: HistogramRequest, cancel=None) -> HistogramResult:
        request.validate(self.backend)
        strategy = _resolve("histogram", request.strategy, self.backend)
        _check(cancel)
        n, dtype, nbins = int(request.n), request.np_dtype.name, int(request.bins)
        lo_f, hi_f = request.edges
        lo, scale = H.scale_for(lo_f, hi_f, nbins, dtype)
        timer = self._timer(f"histogram {strategy} {dtype} n={n:,} bins={nbins}")
        x, _ = self._data(n, dtype, request.distribution, request.seed, request.data, timer, cancel)
        _check(cancel)
        if self.gpu:
            stream = self.stream()
            counts_d = self.pool.device("counts", (nbins + 2,), np.int64, stream=stream)
            kernel = H.gpu_kernels(nbins)[strategy]
            args = (x, n, lo, scale, counts_d)
            blocks = self._blocks(timer, kernel, args, n)
            self._zero(counts_d)
            grid.hold_stream(stream, timer)
            with timer.phase("kernel", gpu=True, detail="histogram"):
                kernel[blocks, grid.threads_per_block(), stream](*args)
            counts = self.pool.host("counts_host", (nbins + 2,), np.int64)
            with timer.phase("d2h", gpu=True, nbytes=counts.nbytes):
                counts_d.copy_to_host(counts, stream=stream)
        elif strategy == "numpy":
            with timer.phase("kernel", detail="histogram"):
                counts = H.numpy_histogram(x, lo, scale, nbins)
        else:
            rows = self.pool.host("histogram_rows", (H.cpu_rows(n), nbins + 2), np.int64,
                                  pinned=False)
            counts = self.pool.host("counts_host", (nbins + 2,), np.int64, pinned=False)
            args = (x, lo, scale, nbins, rows, counts)
            _ensure_cpu_compiled(timer, H.cpu_histogram, args)
            with timer.phase("kernel", detail="histogram"):
                H.cpu_histogram(*args)
        timings = timer.finish()
        counts = np.array(counts, dtype=np.int64)   # the result owns its counts
        note = HISTOGRAM_HELP[strategy]
        if strategy == "racy" and getattr(self.backend, "simulated", False):
            note += " " + SIMULATOR_RACE_NOTE + "."
        return HistogramResult(request=request, strategy=strategy, counts=counts[:nbins],
                               underflow=int(counts[nbins]), overflow=int(counts[nbins + 1]),
                               edges=(lo_f, hi_f), histogram_ms=timings.detail.get("histogram"),
                               bytes_read=n * request.np_dtype.itemsize, timings=timings, note=note)

    # ---- Monte Carlo ----------------------------------------------------------------------------
    def monte_carlo(self, request: MonteCarloRequest, cancel=None) -> MonteCarloResult:
        request.validate(self.backend)
        _check(cancel)
        n, seed = int(request.n), int(request.seed)
        timer = self._timer(f"monte carlo n={n:,}")
        if self.gpu:
            inside, streams = self._monte_carlo_gpu(n, seed, timer, cancel)
            note = ("one fused kernel: each thread draws and tests its points with its "
                    "xoroshiro128+ state in registers; only one count per block is written")
        else:
            inside, streams = self._monte_carlo_cpu(n, seed, timer, cancel), M.cpu_chunks(n)
            note = ("the CPU twin: chunks of 2^20 points in parallel, each seeded by splitmix64 "
                    "from (seed, chunk)")
        timings = timer.finish()
        inside = int(inside)
        return MonteCarloResult(request=request, inside=inside, estimate=4.0 * inside / n,
                                monte_carlo_ms=timings.detail.get("monte-carlo"),
                                timings=timings, streams=streams, note=note)

    def _monte_carlo_gpu(self, n: int, seed: int, timer, cancel):
        stream = self.stream()
        kernel = M.gpu_kernel()
        probe = self._probe()
        partials_probe = self.pool.device("mc_probe", (1,), np.int64, stream=stream)
        blocks = self._blocks(timer, kernel, (n, probe, probe, partials_probe))
        threads = blocks * grid.threads_per_block()
        initial = self._initial_states(seed, threads, timer)
        work = self._work_states(threads)
        partials = self.pool.device("mc_partials", (blocks,), np.int64, stream=stream)
        self._zero(partials)
        done = 0
        grid.hold_stream(stream, timer)
        while done < n:
            count = min(MC_GPU_CHUNK, n - done)
            with timer.phase("kernel", gpu=True, detail="monte-carlo"):
                kernel[blocks, grid.threads_per_block(), stream](
                    count, initial if done == 0 else work, work, partials)
            done += count
            if done < n:
                _check(cancel)
        host = self.pool.host("mc_host", (blocks,), np.int64)
        with timer.phase("d2h", gpu=True, nbytes=host.nbytes):
            partials.copy_to_host(host, stream=stream)
        return _Deferred(host, total=True), threads

    def _monte_carlo_cpu(self, n: int, seed: int, timer, cancel) -> int:
        chunks = M.cpu_chunks(n)
        hits = self.pool.host("mc_hits", (min(MC_CPU_BATCH, chunks),), np.int64, pinned=False)
        seed_u = np.uint64(seed)
        _ensure_cpu_compiled(timer, M.cpu_pi, (hits, 0, n, seed_u))
        inside = 0
        with timer.phase("kernel", detail="monte-carlo"):
            for first in range(0, chunks, MC_CPU_BATCH):
                part = hits[:min(MC_CPU_BATCH, chunks - first)]
                M.cpu_pi(part, first, n, seed_u)
                inside += int(part.sum())
                if first + MC_CPU_BATCH < chunks:
                    _check(cancel)
        return inside


class _Deferred:
    """A pinned host buffer a queued copy fills: read only after the job's timer has finished
    (which synchronises the stream)."""

    def __init__(self, host: np.ndarray, total: bool = False):
        self.host, self.total = host, total

    def __float__(self) -> float:
        return float(self.host[0])

    def __int__(self) -> int:
        return int(self.host.sum()) if self.total else int(self.host[0])
