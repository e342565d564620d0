"""What a first start compiles: whether numba's disk cache already holds the CPU kernels a frame
needs, a rough estimate of the wait where it does not, and the words for it; and a renderer's
compile itself (Compiled). Only the check and the compile import the kernels (numba); the
estimates and words are plain data.

The estimates are an idle 2-core laptop's compile times (docs/PERFORMANCE.md, "Cold and warm
start"), rounded up. Under load the same compile took two to three times as long, so the words
shown to a user carry no number: the window counts the seconds up instead (wait_line.py).
"""
from __future__ import annotations

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
        import time
        import warnings

        from ...buffers import BufferPool
        from ...timing import JobTimer
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
        timer = JobTimer(self.backend, target.stream, "warm-up")
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
