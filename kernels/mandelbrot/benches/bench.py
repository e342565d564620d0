"""Deep-zoom benchmark workloads (JSON layout of kernels.bench). Not found by the registry on its
own (it only walks kernels/<pkg>/bench.py): kernels.mandelbrot.bench can add `workloads()` to its
list, or run this module: `python -m kernels.mandelbrot.benches.bench --backend cuda --json FILE`.

Frames of the published very deep coordinate (locations.KORMANYOS_VERY_DEEP, ~1100 digits) at widths
near 1e-30, 1e-100, 1e-300 and 1e-1000, 1920x1080 on the GPU (320x180 on the CPU, whose twin runs
the same method ~100x slower). Per width three variants:
  "first frame": a new renderer: reference orbit + BLA table (host) + uploads + kernel + copy;
  "re-render":   the same frame again, reference and table reused: kernel + copy;
  "pan":         the frame moved by 1/8 of its width, the reference reused (table when its bound holds);
  on the GPU also "re-render grid" (one thread per pixel instead of persistent threads) and
  "re-render eps 2^-48" (a stricter BLA radius than the default, bla.EPS_BITS).
Metrics: "frame ms" (total wall time), "kernel ms", "reference ms", "table ms", per-pixel steps,
iterations skipped by BLA (%), rebases, reference points, precision bits, table entries.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from decimal import Decimal

from ... import bench
from ...bench import Workload
from .locations import KORMANYOS_VERY_DEEP

FULL_HD = (1920, 1080)
CPU_SIZE = (320, 180)
# the CPU twin is ~100x slower: fewer repeats there keep a CPU bench to minutes
CPU_MAX_REPEATS = 3
# (name, width, iterations): iterations chosen above the slowest escape in view (measured with the
# CPU twin: 1e-30 escapes at ~5,000-6,700, 1e-100 at ~28,500-29,000, 1e-300 at ~57,200-57,500,
# 1e-1000 at ~568,000-572,000; the reference itself stays bounded to ~671,000)
DEPTHS = (
    ("deep-1e30", "1e-30", 20_000),
    ("deep-1e100", "1e-100", 50_000),
    ("deep-1e300", "1e-300", 100_000),
    ("deep-1e1000", "1e-1000", 1_000_000),
)


def _median(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def _request(width, size, iters, pan=0):
    from ..requests.deep_request import DeepRequest, add_decimal
    loc = KORMANYOS_VERY_DEEP
    cre = loc.center_re
    if pan:
        cre = add_decimal(cre, Decimal(width) * Decimal(pan) / 8)
    return DeepRequest(cre, loc.center_im, width, size, iters)


def _metrics(results, size):
    px = size[0] * size[1]
    last = results[-1]
    st = last.stats
    return {
        "frame ms": _median([r.timings.phases_ms["total"] for r in results]),
        # the pixels float64 cannot place, iterated in MPFR on the host (exact_redo.py)
        "exact pixels ms": _median([r.timings.detail.get("exact pixels") for r in results]),
        "kernel ms": _median([r.timings.phases_ms["kernel"] for r in results]),
        "reference ms": _median([r.timings.detail.get("reference") for r in results]),
        "table ms": _median([r.timings.detail.get("table") for r in results]),
        "steps/px": st["perturbation_steps"] / px,
        "BLA steps/px": st["bla_steps"] / px,
        "BLA skip %": 100.0 * st["bla_iterations"] / max(1, st["bla_iterations"] + st["perturbation_steps"]),
        "rebases/px": st["rebases"] / px,
        # pixels float64 could not place: proved in double-double, iterated in MPFR, and those
        # left doubtful (issue 34)
        "dd pixels": st.get("dd_pixels", 0),
        "exact pixels": st.get("exact_pixels", 0),
        "marked pixels": st.get("marked_pixels", 0),
        "reference points": last.reference.length,
        "precision bits": last.reference.precision,
        "format": last.format,
    }


def _run_depth(name, width, iters):
    def run(backend, repeats):
        from ..deep.renderer import FORMATS, DeepRenderer
        size = FULL_HD if backend.is_gpu else CPU_SIZE
        if not backend.is_gpu:
            repeats = min(repeats, CPU_MAX_REPEATS)
        req = _request(width, size, iters)
        rows = []
        # first frame: a fresh renderer each time (kernels already compiled), few runs: the
        # reference alone takes seconds at 1e-1000
        first_runs = 1 if width == "1e-1000" else min(repeats, 3)
        firsts = []
        compile_ms = DeepRenderer(backend).warmup(FORMATS)
        for _ in range(first_runs):
            r = DeepRenderer(backend)
            r.warmup(FORMATS)
            firsts.append(r.render_values(req))
        rows.append(_row(name, backend, "first frame", size, firsts, compile_ms, width, iters))
        # re-render with everything reused
        rerenders, _ = _timed(lambda: r.render_values(req), repeats)
        rows.append(_row(name, backend, "re-render", size, rerenders, None, width, iters))
        if backend.is_gpu:
            # the same frame with one thread per pixel instead of persistent threads
            g = DeepRenderer(backend, launch="grid")
            g.orbit = r.orbit
            g.exact = r.exact       # the MPFR pixels of this picture (exact_redo.py): re-renders
            grid_runs, _ = _timed(lambda: g.render_values(req), repeats)
            rows.append(_row(name, backend, "re-render grid", size, grid_runs, None, width, iters))
            # the same frame with a stricter BLA radius (see bla.EPS_BITS): the speed it costs
            e = DeepRenderer(backend, eps_bits=48)
            e.orbit, e.exact = r.orbit, r.exact
            eps_runs, _ = _timed(lambda: e.render_values(req), repeats)
            rows.append(_row(name, backend, "re-render eps 2^-48", size, eps_runs, None, width, iters))
        # pans by +-1/8 width: the reference stays, the table stays while its bound holds
        pans = [r.render_values(_request(width, size, iters, pan=(1 if i % 2 else -1)))
                for i in range(max(3, min(repeats, 7)))]
        rows.append(_row(name, backend, "pan 1/8 width", size, pans, None, width, iters))
        return rows
    return run


def _timed(fn, repeats):
    results = []

    def one():
        res = fn()
        results.append(res)
        return res.timings
    runs, compile_ms = bench.time_runs(one, repeats=repeats, warmup=1)
    return results[-len(runs):], compile_ms


def _row(name, backend, variant, size, results, compile_ms, width, iters):
    out = bench.result(name, backend, variant, f"{size[0]}x{size[1]}",
                       [r.timings for r in results], compile_ms, _metrics(results, size))
    out["metrics"]["width"] = width
    out["metrics"]["max_iter"] = iters
    out["metrics"]["reused"] = all(r.reused for r in results)
    return out


def workloads() -> list[Workload]:
    loc = KORMANYOS_VERY_DEEP
    out = []
    for name, width, iters in DEPTHS:
        desc = (f"deep zoom {width} wide, {iters:,} iterations, at the published ~1100-digit "
                f"coordinate {loc.center_re[:20]}… {loc.center_im[:20]}… ({loc.credit}); "
                f"1920x1080 on the GPU, 320x180 on the CPU")
        out.append(Workload(name, desc, _run_depth(name, width, iters)))
    return out


def _table(report: dict) -> str:
    """A short plain-text summary (the full numbers are in the JSON)."""
    lines = [f"device: {report['device']}"]
    for r in report["results"]:
        ph, m = r["phases_ms"], r["metrics"]
        f = lambda v: "-" if v is None else f"{v:.1f}"
        lines.append(f"{r['workload']:<12} {r['variant']:<14} {r['size']:<10} total {f(ph['total'])} ms"
                     f"  host {f(ph['host'])}  h2d {f(ph['h2d'])}  kernel {f(ph['kernel'])}"
                     f"  d2h {f(ph['d2h'])}  steps/px {m['steps/px']:.0f}  BLA skip {m['BLA skip %']:.1f}%"
                     f"  {m['format']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="deep-zoom workloads (JSON as main.py --bench)")
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--only", default=None, help="workload name prefix, e.g. deep-1e300")
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    import datetime as dt
    import json

    from ...backend import resolve
    backend = resolve(args.backend)
    results = []
    for w in workloads():
        if args.only and not w.name.startswith(args.only):
            continue
        if backend.name not in w.backends:
            continue
        print(f"# {w.name}: {w.description}", flush=True)
        results.extend(w.run(backend, args.repeats))
    report = {"device": bench.device_name(backend), "versions": bench.versions(),
              "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
              "results": results}
    print(_table(report))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
