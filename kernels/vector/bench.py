"""Bench workloads of the vector ops (`main.py --bench --only vector`): every op, implementation
(that has the op) and mode at N = 2^26 float32 (the four-elements-per-thread kernels in kernel mode
only), and the seed's 320-million-element add on the GPU.

The reference bandwidths are measured once per run, in the same process, so the percentages
compare numbers taken on the same machine minutes apart.
"""
from __future__ import annotations

from functools import partial

from ..backend import first_line
from ..bench import Workload
from ..roofs.report import result_work
from .ops import CPU_IMPLS, ILP_IMPLS, OP_NAMES, ImplUnavailable, get_op
from .registry import implementations
from .results import SweepPoint
from .cpu_process import ProcessPointRunner, point_runner
from .sweep import add_copy_ceiling

BENCH_N = 2**26
SEED_N = 320_000_000
REF_BYTES = 256 * 2**20

_refs: dict = {}
_ceiling_by: dict = {}
_runners: dict = {}


def references(backend) -> dict:
    key = (backend.name, backend.simulated)
    if key not in _refs:
        from ..transfer import measure  # imports numba.cuda: only when a bench runs
        refs = measure(backend, REF_BYTES if not backend.simulated else 2**16, repeats=5)
        _ceiling_by[key] = add_copy_ceiling(refs, backend, REF_BYTES // 4, _runner(backend, 20))
        _refs[key] = refs
    return _refs[key]


def _runner(backend, repeats: int) -> ProcessPointRunner:
    key = (backend.name, backend.simulated)
    r = _runners.get(key)
    if r is None:
        # at most ~1 s per point: a pageable round trip at 2^26 takes ~0.1 s, at 320M ~0.5 s
        # CPU points in the helper process, as in the window (cpu_process.py)
        r = _runners[key] = point_runner(backend, repeats=min(repeats, 7), budget_s=1.0)
    return r


def _pct(value, ref):
    return 100.0 * value / ref if value and ref else None


def pinned_reference(refs: dict, op) -> float | None:
    """GB/s an ideal end-to-end run would reach: inputs in at the pinned h2d rate, the result out
    at the pinned d2h rate, nothing else."""
    h2d, d2h = refs.get("h2d-pinned"), refs.get("d2h-pinned")
    if not h2d or not d2h:
        return None
    seconds = op.h2d_bytes_per_element / (h2d * 1e9) + op.d2h_bytes_per_element / (d2h * 1e9)
    return op.bus_bytes_per_element / seconds / 1e9


def metrics_for(point: SweepPoint, refs: dict) -> dict:
    op = get_op(point.op)
    gbs = point.gbs
    m = {"GB/s": gbs, "Gelem/s": point.gelems}
    if point.impl in CPU_IMPLS:
        m["% of CPU copy"] = _pct(gbs, refs.get("cpu-copy"))
    elif point.mode == "kernel":
        m["% of d2d copy"] = _pct(gbs, refs.get("d2d-copy"))
    else:
        m["% of pinned bw"] = _pct(gbs, pinned_reference(refs, op))
    return m


def _row(workload: str, backend, variant: str, size: str, point: SweepPoint | None,
         metrics: dict) -> dict:
    phases = {p: None for p in ("compile", "h2d", "kernel", "d2h", "host", "total")}
    nbytes = {"h2d": 0, "d2h": 0}
    if point is not None and point.timings is not None:
        phases.update({k: v for k, v in point.phases_ms.items() if k in phases})
        nbytes = dict(point.timings.bytes)
    work = result_work([point.timings]) if point is not None and point.timings is not None else []
    return {"workload": workload, "backend": backend.name, "variant": variant, "size": size,
            "phases_ms": phases, "bytes": nbytes, "metrics": metrics, "work": work}


def _measure_rows(workload: str, backend, repeats: int, op_name: str, n: int, size: str,
                  impl_names=None, modes=None) -> list[dict]:
    refs = references(backend)
    runner = _runner(backend, repeats)
    rows, by_variant = [], {}
    for impl in implementations(backend):
        if impl_names is not None and impl.name not in impl_names:
            continue
        if impl.device == "gpu" and not backend.is_gpu:
            continue
        if not get_op(op_name).implemented_by(impl.name):
            continue  # dot exists in three implementations only
        for mode in impl.modes:
            if modes is not None and mode not in modes:
                continue
            if impl.name in ILP_IMPLS and mode != "kernel":
                continue  # end to end the bus sets the pace: the plain kernels show it already
            variant = f"{impl.name}/{mode}"
            if not impl.available:
                rows.append(_row(workload, backend, variant, size, None,
                                 {"skipped": impl.reason}))
                continue
            try:
                # kernel-only runs take well under a millisecond at 2^26: afford the full count
                want = repeats if (mode == "kernel" and impl.device == "gpu") else min(repeats, 5)
                point = runner.measure(op_name, impl, mode, n, repeats=want)
            except ImplUnavailable as exc:
                rows.append(_row(workload, backend, variant, size, None, {"skipped": str(exc)}))
                continue
            except Exception as exc:  # recorded, so one failure does not lose the whole run
                rows.append(_row(workload, backend, variant, size, None,
                                 {"error": first_line(exc)}))
                continue
            if point.skipped:
                rows.append(_row(workload, backend, variant, size, None,
                                 {"skipped": point.skipped}))
                continue
            m = metrics_for(point, refs)
            row = _row(workload, backend, variant, size, point, m)
            rows.append(row)
            by_variant[variant] = m.get("GB/s")
    # what the convenience of @vectorize (and the other ways) costs against a plain @cuda.jit
    for row in rows:
        impl, mode = row["variant"].split("/")
        base = by_variant.get(f"cuda-jit/{mode}")
        gbs = row["metrics"].get("GB/s")
        if impl not in ("cuda-jit", "cpu-numba", "numpy") and base and gbs:
            row["metrics"]["x cuda-jit"] = gbs / base
    if rows:
        rows[0]["metrics"]["refs GB/s"] = ", ".join(
            f"{k}={v:.1f}" for k, v in refs.items() if v is not None)
        by = _ceiling_by.get((backend.name, backend.simulated))
        if by:
            rows[0]["metrics"]["d2d copy set by"] = by
    return rows


def bench_op(op_name: str, backend, repeats: int, n: int | None = None) -> list[dict]:
    n = n if n is not None else (BENCH_N if not backend.simulated else 2**10)
    size = f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else f"{n:,}"
    return _measure_rows(f"vector-{op_name}", backend, repeats, op_name, n, size)


def bench_seed_add(backend, repeats: int) -> list[dict]:
    n = SEED_N if not backend.simulated else 2**10
    rows = _measure_rows("vector-add-320M", backend, min(repeats, 3), "add", n, f"{n:,}",
                         impl_names=("vectorize", "cuda-jit", "cuda-jit-ilp4"))
    _runner(backend, repeats).release()  # 3.8 GB of buffers: hand them back
    return rows


def workloads() -> list[Workload]:
    out = [Workload(f"vector-{name}", f"vector op {get_op(name).formula} (float32, N = 2^26), "
                                      "every implementation × mode", partial(bench_op, name))
           for name in OP_NAMES]
    out.append(Workload("vector-add-320M", "the seed's vector add at N = 320,000,000: @vectorize "
                                           "vs @cuda.jit (and its 4-per-thread variant), on device "
                                           "/ pinned / pageable",
                        bench_seed_add, backends=("cuda",)))
    return out
