"""What a first start compiles: whether numba's disk cache already holds the CPU kernels a frame
needs, a rough estimate of the wait where it does not, and the words for it. Only the check
imports the kernels (numba); the estimates and words are plain data.

The estimates are an idle 2-core laptop's compile times (docs/PERFORMANCE.md, "Cold and warm
start"), rounded up. Under load the same compile took two to three times as long, so the words
shown to a user carry no number: the window counts the seconds up instead (wait_line.py).
"""
from __future__ import annotations

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
    from . import colour, escape
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
    from .deep import extended_loop, flat_build, perturbation_loop
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
    from ..numba_cache import compile_when
    return f"compiling {what}, {compile_when()}"


def compile_notice(request, backend) -> str | None:
    """One line for the command line before a CPU frame of `request` whose kernels must compile
    first (None when they are cached, or on a GPU)."""
    if backend.is_gpu:
        return None
    from .request import DeepFrameRequest
    fmt = request.format if isinstance(request, DeepFrameRequest) else "float64"
    need = missing(parts_of(fmt, getattr(request, "mapping", "sqrt")))
    return waiting_words(need) if need else None
