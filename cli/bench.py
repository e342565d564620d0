"""`main.py --bench`: run the registered workloads (kernels.bench), print them as a table, write
the report as JSON. `--bench --ui` measures the real window, which lives in explorer/: this layer
never imports it, so main.py hands the window bench in as a function."""
from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable

from kernels.roofs.report import roof_percent, roofs_summary
from kernels.timing import PHASES
from services.files import check_writable, write_json

from .args import DEFAULT_REPEATS, DEFAULT_SECONDS
from .failures import UNUSABLE, USAGE, fail, interrupted, resolve_backend


def run_bench(args) -> int:
    """The registered workloads on `--backend`, as a table on stdout (and JSON with --json)."""
    problem = _usage_problem(args)
    if problem:
        return fail(USAGE, problem)
    be, why = resolve_backend(args.backend)
    if be is None:
        return fail(UNUSABLE, why)
    from kernels import bench
    if args.number_type is not None:      # the Mandelbrot frame workloads' number type
        from kernels.mandelbrot import bench as mandelbrot_bench
        mandelbrot_bench.NUMBER_TYPE = args.number_type
    try:
        if args.location:
            chosen = location_workloads(args, be)
        else:
            chosen = select(bench.all_workloads() + kf_workloads(), be, args.only)
    except ValueError as exc:
        return fail(USAGE, str(exc))
    results, stopped = [], False
    try:
        for w in chosen:
            print(f"# {w.name}: {w.description}", flush=True)
            results.extend(w.run(be, args.repeats or DEFAULT_REPEATS))
    except KeyboardInterrupt:     # keep what was measured: the table and JSON say it is partial
        stopped = True
    report = {"device": bench.device_name(be), "versions": bench.versions(), "date": _now(),
              "results": results}
    if not stopped:         # the roofs of this run, and each result's % of the one bounding it
        from kernels.roofs import add_roofs
        add_roofs(report, be)
    if stopped:
        report["partial"] = True
    print(table(report))
    if roofs_summary(report):       # the roofs, how they were set, and any result above them
        print(roofs_summary(report))
    if stopped and not results:       # nothing measured: an earlier report at --json stays
        return interrupted("no workload had finished; nothing was written")
    code = _write_json(args.json, report)
    if stopped:
        kept = f"{len(results)} result(s) kept" + (f", written to {args.json} marked partial"
                                                   if args.json and code == 0 else "")
        return interrupted(kept)
    return code


def kf_workloads():
    """Kalles Fraktaler's six benchmark locations (services.kf_bench), read from the shipped files."""
    from services.kf_bench import kf_workloads as workloads
    return workloads()


def location_workloads(args, backend):
    """`--bench --location FILE`: the one deep workload of that place (no --only with it)."""
    if args.only:
        raise ValueError("--location benches the place in its file; leave out --only")
    from services.kf_bench import location_workload
    try:
        return [location_workload(args.location)]
    except ValueError as exc:
        raise ValueError(f"--location: {exc}") from None


def select(workloads, backend, only: str | None):
    """The workloads to run on `backend`: all that run there, or those named `only` (or whose
    names start with it); ValueError when none is, listing only names that run on `backend`
    (a workload that needs the other backend is named as such, never listed as a choice)."""
    workloads = list(workloads)
    here = [w for w in workloads if backend.name in w.backends]
    if not only:
        return [w for w in here if backend.name not in w.named_only]
    named = [w for w in workloads if w.name == only or w.name.startswith(only)]
    chosen = [w for w in named if w in here]
    if chosen:
        return chosen
    names = ", ".join(sorted({w.name for w in here}))
    where = "GPU" if backend.is_gpu else "CPU"
    if named:
        need = sorted({b for w in named for b in w.backends})
        runs_on = " or ".join("the GPU (--backend cuda)" if b == "cuda" else f"the {b.upper()}"
                              for b in need)
        raise ValueError(f"workload {only!r} runs only on {runs_on}, not on the {where}; "
                         f"on the {where} choose one of: {names}")
    raise ValueError(f"no workload named {only!r}; on the {where} choose one of: {names}")


# the window bench's picture when --size is not given: a frame each backend draws many times
# within the bench's seconds (the CPU renders a 1920×1080 frame in a large part of a second; the
# simulator runs one Python thread per CUDA thread)
UI_BENCH_SIZES = {"cuda": (1920, 1080), "cpu": (960, 540), "simulator": (16, 9)}


def ui_bench_size(backend) -> tuple[int, int]:
    return UI_BENCH_SIZES["simulator" if backend.simulated else backend.name]


def run_window_bench(args, window_bench: Callable[[str, float, tuple[int, int]], dict]) -> int:
    """`--bench --ui`: window_bench(backend name, seconds, (w, h)) -> its result dict
    (explorer.ui_bench). Without --size the size suits the backend, and the result says so."""
    problem = _usage_problem(args)
    if problem:
        return fail(USAGE, problem)
    be, why = resolve_backend(args.backend)
    if be is None:
        return fail(UNUSABLE, why)
    from kernels.bench import device_name, versions
    size = args.size or ui_bench_size(be)
    res = window_bench(be.name, args.seconds or DEFAULT_SECONDS, size)
    if not args.size:
        res["size_note"] = (f"{size[0]}x{size[1]} is the default size on the {be.label}; "
                            "give --size WxH for another")
    report = {"device": device_name(be), "versions": versions(), "date": _now(),
              "results": [ui_result(res)]}
    print(json.dumps(res, indent=2))
    return _write_json(args.json, report)


def _usage_problem(args) -> str | None:
    """What is wrong with the bench arguments, found before anything runs; None when nothing."""
    if args.json:
        try:
            check_writable(args.json)
        except ValueError as exc:
            return str(exc)
    return None


def _write_json(path, report) -> int:
    if path:
        try:
            write_json(path, report)
        except OSError as exc:
            return fail(UNUSABLE, f"cannot write {path}: {exc.strerror or exc}")
        print(f"wrote {path}")
    return 0


def ui_result(res: dict) -> dict:
    """The window bench in the same layout as every other bench result (the --bench JSON)."""
    per = res.get("per_frame_ms", {})
    fps = res.get("fps")
    return {"workload": "ui-mandelbrot", "backend": res.get("backend"),
            "variant": f"scripted pan and zoom, {res.get('iterations')} iterations",
            "size": res.get("size"),
            "phases_ms": {"compile": None, "h2d": None, "kernel": per.get("compute"),
                          "d2h": per.get("copy"), "host": per.get("display"),
                          "total": (1000.0 / fps) if fps else None},
            "bytes": {"h2d": 0, "d2h": 0},
            "metrics": {"frames/s": fps, "frames": res.get("frames"), "seconds": res.get("seconds")}}


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _fmt(v, nd=3):
    return "-" if v is None else f"{v:.{nd}f}"


def table(report: dict) -> str:
    """The report as a fixed-width table: one row per result, phase columns in milliseconds."""
    phase_cols = [f"{p} ms" for p in PHASES]
    head = (f"{'workload':<22} {'variant':<26} {'size':<12} "
            + " ".join(f"{c:>10}" for c in phase_cols) + f" {'% roof':>7}  metrics")
    lines = [f"device: {report['device']}", head, "-" * len(head)]
    if report.get("partial"):
        lines.insert(1, "partial: interrupted before every workload had run")
    for r in report["results"]:
        m = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                      for k, v in r["metrics"].items())
        lines.append(f"{r['workload']:<22} {r['variant']:<26} {r['size']:<12} "
                     + " ".join(f"{_fmt(r['phases_ms'][p]):>10}" for p in PHASES)
                     + f" {_fmt(roof_percent(r), 1):>7}  " + m)
    return "\n".join(lines)
