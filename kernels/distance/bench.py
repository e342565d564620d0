"""Distance heatmap benchmark workloads for `main.py --bench` (see kernels.bench for the JSON layout)."""
from __future__ import annotations

from ..bench import Workload, result, time_runs
from .renderer import Renderer
from .request import LONDON, SEED_BOUNDS, SEED_REF, STRATEGIES, WORLD, DistanceRequest



def _bench_one(workload: str, backend, req: DistanceRequest, repeats: int, variant: str) -> dict:
    renderer = Renderer(backend)
    # a GPU frame takes well under a millisecond, where host jitter is a large share: more runs
    # make the median stable between two identical invocations
    if backend.is_gpu:
        repeats = max(repeats, 100)
    runs, compile_ms = time_runs(lambda: renderer.render(req).timings, repeats=repeats, warmup=5)
    w, h = req.size
    out = result(workload, backend, variant, f"{w}x{h}", runs, compile_ms=compile_ms)
    total = out["phases_ms"]["total"]
    out["metrics"] = {"end-to-end ms": total,
                      "Mpixel/s": (w * h / (total * 1e-3) / 1e6) if total else None}
    return out


def _bench(workload: str, bounds, ref, size):
    def run(backend, repeats: int = 20) -> list[dict]:
        if not backend.is_gpu:
            req = DistanceRequest(bounds=bounds, ref=ref, size=size)
            return [_bench_one(workload, backend, req, repeats, "cpu-twin")]
        out = []
        for strategy in STRATEGIES:
            if strategy == "broadcast" and backend.simulated:
                continue  # the simulator cannot build CUDA ufuncs
            req = DistanceRequest(bounds=bounds, ref=ref, size=size, strategy=strategy)
            out.append(_bench_one(workload, backend, req, repeats, strategy))
        return out
    return run


def workloads() -> list[Workload]:
    return [
        Workload("distance-seed", "a 1000×1000 mesh (lat 29–31, lon 99–101, point 30,101) "
                 "→ RGBA in pinned host memory, per strategy", _bench("distance-seed", SEED_BOUNDS,
                                                                      SEED_REF, (1000, 1000))),
        Workload("distance-world", "4096×2048 whole world from London → RGBA, per strategy",
                 _bench("distance-world", WORLD, LONDON, (4096, 2048))),
    ]
