"""The vector ops as probes of the bandwidth roof (kernels/roofs/stream_probe.py finds this module
by name): every GPU implementation's stream ops, the four-elements-per-thread ILP variants
included, each timed in kernel mode by the PointRunner the throughput view and the bench use
(JobTimer underneath). A roof below a kernel the app runs would be no roof.
"""
from __future__ import annotations

# every elementwise op and the one reduction: each is a stream over memory the bench measures
STREAM_OPS = ("copy", "scale", "add", "triad", "saxpy", "seed-expr", "dot")


def stream_rows(backend, n: int, repeats: int = 10, ops=None, impls=None):
    """Yield one row per (op, GPU implementation) that runs here, at N = `n` float32 elements
    (halved while its buffers do not fit): kernels.roofs.gpu_probe.rate_row's layout with `op`,
    `impl` and `n`, or `error` instead of rates where it failed. `ops`: default STREAM_OPS;
    `impls`: names to keep (None: every GPU implementation)."""
    from ..backend import first_line
    from ..roofs.gpu_probe import rate_row
    from .memory import max_fitting_exponent
    from .ops import get_op
    from .registry import implementations
    from .runner import PointRunner
    n = min(int(n), 2 ** max_fitting_exponent(gpu=True, pinned=False))
    ops = ops if ops is not None else STREAM_OPS
    # the budget only stops a slow probe early: a kernel-mode run at 2^26 lasts well under 1 ms
    runner = PointRunner(backend, repeats=repeats, budget_s=2.0)
    try:
        for impl in implementations(backend):
            if impl.device != "gpu" or not impl.available:
                continue
            if impls is not None and impl.name not in impls:
                continue
            for op_name in ops:
                op = get_op(op_name)
                if not op.implemented_by(impl.name):
                    continue
                probe = f"{op_name} ({impl.name})"
                try:
                    point = runner.measure(op_name, impl, "kernel", n, repeats=repeats)
                except Exception as exc:    # a compiler missing here: the others still count
                    yield {"probe": probe, "op": op_name, "impl": impl.name, "Bps": None,
                           "error": first_line(exc)}
                    break
                if point.skipped:
                    yield {"probe": probe, "op": op_name, "impl": impl.name, "Bps": None,
                           "error": point.skipped}
                    continue
                # the fastest, median and slowest run: the best rate and the spread
                runs = (point.min_ms, point.time_ms, point.max_ms)
                method = point.timings.method if point.timings is not None else ""
                row = rate_row(probe, op.bytes_per_element * n, runs, (method,), op=op_name,
                               impl=impl.name, n=int(n))
                row["repeats"] = point.repeats if row["Bps"] else 0
                yield row
    finally:
        runner.release()
