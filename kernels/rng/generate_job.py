"""The generation job: fill n values with the request's generator where the backend computes and
return the first HEAD of them (all of them when asked). `GpuGeneration` runs xoroshiro128+ and
cuRAND's Philox on the device (NumPy on the host, then copied in); `CpuGeneration` runs the
xoroshiro128+ CPU twin or NumPy."""
from __future__ import annotations

import numpy as np

from ..backend import first_line, simulator_enabled
from . import grid
from . import philox as P
from . import xoroshiro as X
from .choices import check_generator
from .request import GENERATOR_HELP, HEAD, GenerateRequest, StrategyUnavailable
from .results import GenerateResult
from .workspace import GPU_CHUNK, check, data_key

NUMPY_CHUNK = 1 << 24        # values NumPy generates per call, cancel checked between


def fill_numpy(host: np.ndarray, normal: bool, seed: int, timer, cancel) -> None:
    rng = np.random.default_rng(seed)
    with timer.phase("host", detail="generate"):
        for start in range(0, host.size, NUMPY_CHUNK):
            part = host[start:start + NUMPY_CHUNK]
            if normal:
                rng.standard_normal(out=part, dtype=host.dtype)
            else:
                rng.random(out=part, dtype=host.dtype)
            if start + NUMPY_CHUNK < host.size:
                check(cancel)


class Generation:
    """Checks the request, then runs it on the workspace's backend (`run`)."""

    def __init__(self, ws):
        self.ws = ws

    def __call__(self, request: GenerateRequest, cancel=None) -> GenerateResult:
        request.validate(self.ws.backend)
        check_generator(request.generator, self.ws.backend)
        check(cancel)
        return self.run(request, cancel)

    def run(self, req: GenerateRequest, cancel) -> GenerateResult:
        raise NotImplementedError


class CpuGeneration(Generation):
    def run(self, req: GenerateRequest, cancel) -> GenerateResult:
        ws = self.ws
        n, dtype, normal = int(req.n), req.np_dtype.name, req.distribution == "normal"
        timer = ws.timer(f"generate {req.generator} {req.distribution} {dtype} n={n:,} cpu")
        if req.want_values:   # the caller keeps these: not the buffer later jobs reuse
            out = ws.pool.host("values", (n,), dtype, pinned=False, ring=2)
        else:
            out = ws.pool.host("data", (n,), dtype, pinned=False)
            ws.data_key = None
        if req.generator == "numpy":
            fill_numpy(out, normal, int(req.seed), timer, cancel)
            note, where, streams = GENERATOR_HELP["numpy"], "host", 1
        else:
            ws.fill(out, n, dtype, normal, int(req.seed), timer, cancel)
            if not req.want_values:
                ws.data_key = data_key(req.distribution, dtype, n, req.seed)
            note = ("the CPU twin: xoroshiro128+ in parallel over chunks of "
                    f"{X.CPU_CHUNK:,} values, each seeded by splitmix64 from (seed, chunk)")
            where, streams = "host", X.cpu_chunks(n)
        timings = timer.finish()
        return GenerateResult(request=req, generator=req.generator, where=where,
                              head=out[:HEAD].copy(), values=out if req.want_values else None,
                              generate_ms=timings.detail.get("generate"),
                              bytes_written=n * req.np_dtype.itemsize, timings=timings,
                              streams=streams, note=note)


class GpuGeneration(Generation):
    def __init__(self, ws):
        super().__init__(ws)
        self._philox_in_registers: dict = {}   # (dtype, normal) -> True, or the reason it is not
        self._philox_states: dict = {}         # threads -> nvmath states (the fallback's)

    def run(self, req: GenerateRequest, cancel) -> GenerateResult:
        ws = self.ws
        n, dtype, normal = int(req.n), req.np_dtype.name, req.distribution == "normal"
        stream = ws.stream()
        timer = ws.timer(f"generate {req.generator} {req.distribution} {dtype} n={n:,}")
        out = ws.pool.device("data", (n,), dtype, stream=stream)
        ws.data_key = None
        note = GENERATOR_HELP[req.generator]
        where, streams = "device", 1
        if req.generator == "xoroshiro128p":
            streams = ws.fill(out, n, dtype, normal, int(req.seed), timer, cancel)
            ws.data_key = data_key(req.distribution, dtype, n, req.seed)
        elif req.generator == "philox4_32_10":
            fallback, streams = self._fill_philox(out, n, dtype, normal, int(req.seed), timer,
                                                  cancel)
            note = fallback or note
        else:
            host = ws.pool.host("host_values", (n,), dtype)
            fill_numpy(host, normal, int(req.seed), timer, cancel)
            with timer.phase("h2d", gpu=True, nbytes=host.nbytes, detail="copy-in"):
                out.copy_to_device(host, stream=stream)
            where = "host, then copied to the device"
        k = min(n, HEAD)
        head = ws.pool.host("head", (HEAD,), dtype)
        with timer.phase("d2h", gpu=True, nbytes=k * req.np_dtype.itemsize):
            out[:k].copy_to_host(head[:k], stream=stream)
        values = None
        if req.want_values:
            values = ws.pool.host("values", (n,), dtype, ring=2)
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
        """NumPy's numbers count their copy to the device as part of making them."""
        d = timings.detail
        ms = d.get("generate")
        if generator == "numpy" and "copy-in" in d:
            copy = d.get("copy-in")
            ms = None if ms is None or copy is None else ms + copy
        return ms

    def _fill_philox(self, out, n: int, dtype: str, normal: bool, seed: int, timer, cancel):
        """Fill `out` with cuRAND Philox numbers; returns (a note when the fallback was used,
        the number of threads)."""
        ws = self.ws
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
                blocks = ws.blocks(timer, kernel, (out, 0, n, seed_u, zero))
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
                blocks = ws.blocks(timer, kernel, (out, 0, n, seed_u, zero, one))
            except Exception as exc:
                raise StrategyUnavailable(P.remember_failure(exc)) from exc
            threads = blocks * tpb
            states = self._philox_states.get(threads)
            if states is None:
                states = self._philox_states[threads] = P.new_states(threads)
        threads = blocks * tpb
        start, chunk = 0, 0
        grid.hold_stream(ws.stream(), timer)
        while start < n:
            count = min(GPU_CHUNK, n - start)
            base = np.uint64(chunk * threads)      # fresh subsequences for every launch
            with timer.phase("kernel", gpu=True, detail="generate"):
                launch = kernel[blocks, tpb, ws.stream()]
                if states is None:
                    launch(out, start, count, seed_u, base)
                else:
                    launch(out, start, count, seed_u, base, states)
            start += count
            chunk += 1
            if start < n:
                check(cancel)
        note = "" if mode is True else f"{GENERATOR_HELP['philox4_32_10']} Here {mode}."
        return note, threads
