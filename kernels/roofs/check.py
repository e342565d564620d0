"""The roofs' target check: the roofs as the window measures them, and in the same run a separate
measurement of each — the probe that set the bandwidth (a device copy or one of the app's stream
kernels) over a larger array, the chain kernels run ten times longer for the peaks — with their
ratio (target: within 10 %).

    python tools/roofs_check.py --backend cpu|cuda     (or: main.py --bench --only roofs)
"""
from __future__ import annotations

import time

import numpy as np

from . import measure_roofs
from .model import KIND_TITLES, KINDS

TOLERANCE = 0.10
LONGER = 10                     # the check's arithmetic launches last this many times longer


def _gpu_probe_Bps(backend, probe: dict, nbytes: int, repeats: int) -> tuple[float | None, str]:
    """(B/s, how) of the probe that set the GPU's bandwidth roof, again, over larger arrays:
    `nbytes` for a device copy, four times the probe's N for a stream kernel."""
    if probe.get("impl"):
        from .stream_probe import STREAM_N, stream_rows
        rows = list(stream_rows(backend, n=4 * int(probe.get("n") or STREAM_N), repeats=repeats,
                                ops=(probe["op"],), impls=(probe["impl"],)))
        if not rows or not rows[0].get("Bps"):
            return None, f"{probe['probe']}: {rows[0].get('error') if rows else 'did not run'}"
        n = rows[0]["n"]
        return rows[0]["Bps"], f"{probe['probe']}, N = 2^{n.bit_length() - 1}"
    from .gpu_probe import device_copies
    rows = {r["probe"]: r for r in device_copies(backend, nbytes, repeats)}
    name = probe.get("probe") if probe.get("probe") in rows else "d2d-kernel"
    return rows[name]["Bps"], f"{name} over {nbytes // 2**20} MiB"


def _cpu_copy_Bps(nbytes: int, repeats: int) -> float:
    from ..transfer import _cpu_copy_parallel
    src = np.random.default_rng(3).random(nbytes // 8)
    dst = np.ones_like(src)
    _cpu_copy_parallel(dst, src)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        _cpu_copy_parallel(dst, src)
        best = min(best, time.perf_counter() - t)
    return 2 * src.nbytes / best


def check(backend, *, nbytes: int | None = None, target_ms: float = 20.0, repeats: int = 5
          ) -> list[dict]:
    """[{quantity, roof, check, ratio, within}] for the bandwidth and each peak (rates per
    second; None where not measured)."""
    roofs = measure_roofs(backend, nbytes=nbytes, target_ms=target_ms, repeats=3)
    rows = []
    gpu = getattr(backend, "is_gpu", False)
    if roofs.simulated:
        return [{"quantity": "all", "roof": None, "check": None, "ratio": None, "within": None,
                 "note": roofs.note}]
    if gpu:
        from .gpu_probe import COPY_BYTES, copy_bytes
        size = copy_bytes(nbytes or COPY_BYTES)
        big = copy_bytes(4 * size)           # a larger array than the roof's own probe
    else:
        size = nbytes or 64 * 2**20
        big = 4 * size
    if gpu:
        copy, how = _gpu_probe_Bps(backend, roofs.how("bandwidth"), big, repeats)
    else:
        copy, how = _cpu_copy_Bps(big, repeats), f"copy kernel over {big // 2**20} MiB"
    rows.append(_row("bandwidth (B/s)", roofs.bandwidth_Bps, copy, how))
    if gpu:
        from .gpu_probe import chain_rate
        more = {"backend": backend}
    else:
        from .cpu_probe import chain_rate
        more = {}
    for kind in KINDS:
        rate, det = chain_rate(kind, target_ms * LONGER, repeats=3, **more)
        rows.append(_row(f"{KIND_TITLES[kind]} peak (op/s)", roofs.peak(kind), rate,
                         f"chains {det['ms']:.0f} ms long"))
    return rows


def _row(quantity, roof, other, how):
    ratio = roof / other if roof and other else None
    return {"quantity": quantity, "roof": roof, "check": other, "ratio": ratio,
            "within": None if ratio is None else abs(ratio - 1.0) <= TOLERANCE, "note": how}


def _g(v) -> str:
    return "-" if v is None else f"{v:.4g}"


def format_rows(rows: list[dict], device: str) -> str:
    lines = [f"roofs target check on {device} (target: roof / check within {TOLERANCE:.0%})",
             f"{'quantity':<22} {'roof':>12} {'check':>12} {'ratio':>7}  ok   how"]
    for r in rows:
        ok = "-" if r["within"] is None else ("yes" if r["within"] else "NO")
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.3f}"
        lines.append(f"{r['quantity']:<22} {_g(r['roof']):>12} {_g(r['check']):>12} "
                     f"{ratio:>7}  {ok:<4} {r['note']}")
    return "\n".join(lines)
