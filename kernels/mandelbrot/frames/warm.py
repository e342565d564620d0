"""What a first start compiles: whether numba's disk cache already holds the CPU kernels a frame
needs, a rough estimate of the wait where it does not, and the words for it; and a renderer's
compile itself (Compiled), with a timer that times nothing (WarmUpTimer). Only the check and the
compile import the kernels (numba); the estimates and words are plain data.

The estimates are an idle 2-core laptop's compile times (docs/PERFORMANCE.md, "Cold and warm
start"), rounded up. Under load the same compile took two to three times as long, so the words
shown to a user carry no number: the window counts the seconds up instead (wait_line.py).
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from types import SimpleNamespace
from typing import TYPE_CHECKING

from ..requests.formulas import MANDELBROT

if TYPE_CHECKING:
    from ..colouring.colourer import Colourer

# seconds a cold compile of each part takes on the 2-core machine (rounded up)
ESTIMATE_S = {"float64": 4.0, "sqrt": 2.0, "log": 1.0, "histogram": 1.5,
              "table": 6.0, "perturbation": 4.0, "extended": 10.0}
DEEP_FORMATS = ("perturbation", "extended")


def parts_of(fmt: str, mapping: str) -> tuple[str, ...]:
    """The compiled parts a CPU frame in number format `fmt` coloured by `mapping` needs (a deep
    renderer's warm-up compiles every mapping: deep_frames.DeepFrameRenderer)."""
    if fmt == "float64":
        return ("float64", mapping)
    return ("table", fmt) + tuple(dict.fromkeys((mapping, "sqrt", "log", "histogram")))


def estimate_s(parts) -> float:
    return float(sum(ESTIMATE_S.get(p, 0.0) for p in parts))


def _dispatchers(part: str) -> list:
    """The numba dispatchers (cache=True) that make up `part` on the CPU."""
    from ..colouring import colour
    from ..loops import escape
    if part == "float64":
        return [escape.escape_rows_cpu]
    if part == "sqrt":
        return [colour.colour_rows_cpu]
    if part == "log":
        return [colour.colour_rows_cpu, colour.stats_cpu]
    if part == "histogram":
        return [colour.colour_rows_cpu, colour.stats_cpu, colour.histogram_bins_cpu,
                colour.count_bins_cpu, colour.cdf_cpu]
    # (the table built ahead of the orbit is not waited for: frames use it once it is loaded)
    from ..loops import extended_loop, perturbation_loop
    from ..tables import flat_build
    return {"table": flat_build.table_kernels(),
            "perturbation": [perturbation_loop.deep_rows_pert_cpu],
            "extended": [extended_loop.deep_rows_ext_cpu]}.get(part, [])


def on_disk(dispatcher) -> bool:
    """Whether numba's disk cache holds a compiled version of `dispatcher` for this machine and
    its current source (compiled or loaded already counts too). Reads the cache's index through
    numba's internals: any surprise there answers False, which costs a preview, never a wrong
    picture."""
    if dispatcher.overloads:
        return True
    try:
        cache = dispatcher._cache
        index = cache._cache_file._load_index()
        codegen = dispatcher.targetctx.codegen()
        return any(cache._index_key(key[0], codegen) == key for key in index)
    except Exception:
        return False


def missing(parts) -> tuple[str, ...]:
    """The parts among `parts` that would compile on the CPU (not in numba's disk cache)."""
    return tuple(p for p in parts if not all(on_disk(d) for d in _dispatchers(p)))


def waiting_words(parts) -> str:
    """What a wait for compiling `parts` is, in the status bar's words."""
    deep = any(p in DEEP_FORMATS or p == "table" for p in parts)
    what = "the deep-zoom kernels" if deep else "the kernels"
    from ...numba_cache import compile_when
    return f"compiling {what}, {compile_when()}"


def compile_notice(request, backend) -> str | None:
    """One line for the command line before a CPU frame of `request` whose kernels must compile
    first (None when they are cached, or on a GPU)."""
    if backend.is_gpu:
        return None
    from ..requests.request import DeepFrameRequest
    fmt = request.format if isinstance(request, DeepFrameRequest) else "float64"
    need = missing(parts_of(fmt, getattr(request, "mapping", "sqrt")))
    return waiting_words(need) if need else None


class Compiled:
    """What one float64/float32 renderer has compiled (the escape kernels of each formula, the
    colourer's mappings), and the compile itself: a tiny render on the renderer's own target and
    colourer, before a frame's timer exists so that its time is the frame's "compile", not its
    kernel time. Imports the kernels only when it compiles."""

    def __init__(self, backend, target, colourer: Colourer):
        self.backend, self.target = backend, target
        self.colourer: Colourer = colourer
        self.formulas: set[str] = set()

    def before(self, request) -> float | None:
        """The compile a frame of `request` needs first: milliseconds, None when none."""
        if request.formula in self.formulas and request.mapping in self.colourer.warm_mappings:
            return None
        return self.warmup((request.mapping,), request.formula)

    def warmup(self, mappings=("sqrt",), formula: str = MANDELBROT) -> float:
        """Renderer.warmup: milliseconds spent compiling `formula` and `mappings` (0 when
        already compiled)."""
        if formula in self.formulas and self.colourer.warm_mappings.issuperset(mappings):
            return 0.0
        import dataclasses
        import warnings

        from ...buffers import BufferPool
        from ..loops.escape import PixelGrid
        from .frame_work import start_count
        from ..requests.request import MandelbrotRequest
        t = time.perf_counter()
        req = MandelbrotRequest(-0.5, 0.0, 3.0, (4, 3), 8, formula=formula)
        args = PixelGrid.of(req).args(0, req.max_iter)
        pool = BufferPool(self.backend)
        target = self.target
        values = target.values(pool, "warm-values", 3, 4)
        counts = target.counts(pool, "warm-counts", 3, 4)
        rgba = target.rgba(pool, "warm-rgba", 3, 4)
        # its times would be thrown away: it times nothing, but sets up what a frame's timer uses
        timer = WarmUpTimer(self.backend, target.stream)
        with warnings.catch_warnings():
            # numba-cuda warns about grids under 128 blocks; this one is tiny on purpose
            warnings.filterwarnings("ignore", message=r"Grid size \d+ will likely result in GPU")
            target.warm(values, counts, args, timer, formula)
            # the roofline's count too: compiled here, not inside a frame's kernel time
            start_count(self.backend, pool, target.stream, values, args, timer, formula=formula)
            self.colourer.warm(timer, target.stream, mappings)
            first = (tuple(mappings) or ("sqrt",))[0]
            self.colourer.colour(values, rgba, dataclasses.replace(req, mapping=first),
                                 req.max_iter, timer, target.stream)
        timer.finish()
        self.formulas.add(formula)
        return (time.perf_counter() - t) * 1e3


class WarmUpTimer:
    """JobTimer's face for the warm-up's calls (phase, wait, native, add_host_ms, queued, finish
    and timings.bytes), with none of its clocks."""

    def __init__(self, backend, stream=None):
        self.backend, self.stream = backend, stream
        self.timings = SimpleNamespace(bytes={"h2d": 0, "d2h": 0})     # targets count copies here
        self._gpu = bool(getattr(backend, "is_gpu", False))
        self._real = self._gpu and not getattr(backend, "simulated", False)
        self._how = None            # "cupti", "gate" or "events", once a GPU phase asked
        self._spans = 0             # the spans a JobTimer would have held events for
        self._open = False
        self._pids: list[int] = []

    def _prepare(self) -> str:
        """What a JobTimer's first GPU phase sets up: CUPTI where the method allows it and it
        starts, else the thread's gate (unless bare events), closed and opened once on the
        stream so that its launch there is prepared too."""
        from ... import timing
        if timing.use_cupti():
            return "cupti"
        if timing.method_setting() == "events":
            return "events"
        from ...stream_gate import gate_for_thread
        gate = gate_for_thread()        # notes its own setup's cost
        gate.close(self.stream)
        gate.open()
        return "gate"

    @contextmanager
    def phase(self, name: str, *, gpu: bool = False, nbytes: int = 0, detail: str | None = None,
              gate: bool = True):
        if not (gpu and self._real):
            yield
            return
        if self._how is None:
            self._how = self._prepare()
        self._spans += 1
        if self._how != "cupti":
            self._open = self._how == "gate" and gate
            try:
                yield
            finally:
                self._open = False
            return
        from ... import cupti_records
        self._pids.append(cupti_records.push())     # its records claimed at finish, not left
        try:
            yield
        finally:
            cupti_records.pop()

    def wait(self) -> None:
        """Wait for the work queued so far (a gated span would end here and a new one start)."""
        if self._open:
            self._spans += 1
        self._sync()

    def native(self, name: str, kernel, *args, detail: str | None = None,
               stamped: bool = False) -> None:
        """Run a numba CPU kernel in the wrapper JobTimer.native times it with, so that the
        wrapper is compiled here; its clock is dropped."""
        from numba.core.registry import CPUDispatcher
        if not isinstance(kernel, CPUDispatcher):   # a Python function (a test's stand-in)
            kernel(*args)
        elif stamped:
            from ...cpu_chunks import stamped as wrap
            wrap(kernel)(*args)
        else:
            from ...native_clock import timed_cached
            timed_cached(kernel)(*args)

    def add_host_ms(self, name: str, ms: float, detail: str | None = None) -> None:
        pass

    def queued(self) -> None:
        pass                        # finish() waits for the stream

    def _sync(self) -> None:
        if self.stream is not None:
            self.stream.synchronize()
        elif self._gpu:
            from numba import cuda
            cuda.synchronize()

    def finish(self) -> None:
        """Wait for the warm-up's work; leave on this thread's free list the timing events a
        JobTimer's spans would have left (the first frame then creates none, as later frames),
        and claim and drop its CUPTI records (else the first frame's flush would take them)."""
        if self._gpu:
            self._sync()
        if not self._spans:
            return
        from ...timing import spare_events
        spare_events(2 * self._spans)
        if self._pids:
            from ... import cupti_records
            cupti_records.busy_ms(self._pids)
