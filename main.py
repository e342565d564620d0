#!/usr/bin/env python3
"""GPU Explorer: `python main.py` opens the window; --render and --bench run headless without Qt.

See README.md for the options; DESIGN.md in the project notes fixes the headless interface.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

VIEWS = ("mandelbrot", "distance", "throughput")
VIEW_OPTIONS = ("center", "width", "iters", "palette", "bounds", "ref", "unit", "strategy")


class ArgParser(argparse.ArgumentParser):
    def error(self, message):
        # one line, not the whole usage: the message already names the valid choices
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> ArgParser:
    p = ArgParser(prog="main.py", description="GPU Explorer: GPU computing made visible.")
    p.add_argument("--backend", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where to compute (default auto: the GPU when usable, else the CPU)")
    p.add_argument("--view", choices=VIEWS, default=None, help="view to open first (window mode)")
    g = p.add_argument_group("headless rendering")
    from cli.requests import RENDER_VIEWS
    g.add_argument("--render", choices=tuple(RENDER_VIEWS), metavar="VIEW",
                   help=f"render one frame of VIEW ({'|'.join(RENDER_VIEWS)}) without a window")
    g.add_argument("--out", metavar="FILE", help="FILE.png (colours) or FILE.npy (raw float64 values)")
    g.add_argument("--size", default="1920x1080", metavar="WxH", help="picture size (default 1920x1080)")
    g.add_argument("--center", metavar="X,Y", help="mandelbrot: centre of the view")
    g.add_argument("--width", metavar="W", help="mandelbrot: width of the view on the real axis")
    g.add_argument("--iters", metavar="N", help="mandelbrot: iteration limit (default: from the depth)")
    g.add_argument("--palette", metavar="NAME", help="colour map name (e.g. inferno, viridis)")
    g.add_argument("--bounds", metavar="LAT0,LAT1,LON0,LON1", help="distance: grid bounds in degrees")
    g.add_argument("--ref", metavar="LAT,LON", help="distance: reference point")
    g.add_argument("--unit", metavar="km|nm|mi", help="distance: unit")
    g.add_argument("--strategy", metavar="host-mesh|broadcast|device-mesh", help="distance: GPU strategy")
    b = p.add_argument_group("benchmarks")
    b.add_argument("--bench", action="store_true", help="run the registered workloads, print a table")
    b.add_argument("--only", metavar="NAME", help="only the workload NAME (or names starting with it)")
    b.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    b.add_argument("--repeats", type=int, default=20, metavar="N", help="timed runs per case (default 20)")
    b.add_argument("--ui", action="store_true", help="frame-rate bench of the real window (offscreen Qt)")
    b.add_argument("--seconds", type=float, default=5.0, help="duration of the --ui bench (default 5)")
    return p


def parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"--size must look like 1920x1080, not {text!r}") from None
    if w < 1 or h < 1 or w * h > 2**31:
        raise ValueError(f"--size {text}: both sides must be at least 1 and the area at most 2^31 pixels")
    return w, h


def fail(code: int, message: str) -> int:
    print(f"main.py: error: {message}", file=sys.stderr)
    return code


def resolve_backend(choice: str):
    from kernels import backend
    try:
        return backend.resolve(choice), None
    except backend.BackendUnavailable as exc:
        return None, f"the {choice} backend cannot run here: {exc}"


def do_render(args) -> int:
    view = args.render
    from cli.requests import RENDER_VIEWS
    options, build_request = RENDER_VIEWS[view]
    given = {k: getattr(args, k) for k in VIEW_OPTIONS if getattr(args, k) is not None}
    wrong = [k for k in given if k not in options]
    if wrong:
        return fail(2, f"--{wrong[0]} does not apply to --render {view}; its options are "
                       + ", ".join("--" + o for o in options))
    if not args.out:
        return fail(2, "--render needs --out FILE.png or FILE.npy")
    ext = os.path.splitext(args.out)[1].lower()
    if ext not in (".png", ".npy"):
        return fail(2, f"--out must end in .png or .npy, not {ext or 'nothing'!r}")
    try:
        w, h = parse_size(args.size)
        request = build_request({k: getattr(args, k) for k in options}, w, h, ext == ".npy")
    except ValueError as exc:
        return fail(2, str(exc))
    be, why = resolve_backend(args.backend)
    if be is None:
        return fail(1, why)
    from kernels.buffers import OutOfDeviceMemory
    import importlib
    renderer = importlib.import_module(f"kernels.{view}.renderer").Renderer(be)
    try:
        if hasattr(renderer, "export"):
            renderer.export(request, args.out)
        else:
            frame = renderer.render(request)
            save_frame(frame, args.out)
    except (OutOfDeviceMemory, ValueError, OSError) as exc:
        return fail(1, str(exc))
    print(f"wrote {args.out} ({w}x{h}, {view}, {be.label})")
    return 0


def save_frame(frame, path: str):
    import numpy as np
    if path.lower().endswith(".npy"):
        np.save(path, np.ascontiguousarray(frame.values, dtype=np.float64))
    else:
        from PIL import Image
        Image.fromarray(frame.rgba, "RGBA").save(path)


def do_bench(args) -> int:
    if args.repeats < 1:
        return fail(2, "--repeats must be at least 1")
    be, why = resolve_backend(args.backend)
    if be is None:
        return fail(1, why)
    if args.ui:
        from kernels.bench import device_name, versions
        from explorer.ui_bench import run_ui_bench
        res = run_ui_bench(be.name, seconds=args.seconds)
        report = {"device": device_name(be), "versions": versions(), "date": _now(),
                  "results": [ui_result(res)]}
        print(json.dumps(res, indent=2))
    else:
        from kernels import bench
        try:
            report = bench.run(be, only=args.only, repeats=args.repeats)
        except ValueError as exc:
            return fail(2, str(exc))
        print(bench.table(report))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
        print(f"wrote {args.json}")
    return 0


def ui_result(res: dict) -> dict:
    """The window bench in the same layout as every other bench result (DESIGN.md)."""
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
    import datetime as dt
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


VALUE_OPTIONS = ("--center", "--ref", "--bounds", "--width")


def join_negative_values(argv: list[str]) -> list[str]:
    """argparse takes '--center -0.75,0.1' for two options; users should not have to write '='."""
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a in VALUE_OPTIONS and i + 1 < len(argv) and argv[i + 1].startswith("-") \
                and argv[i + 1][1:2] in "0123456789.":
            out.append(f"{a}={argv[i + 1]}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(join_negative_values(argv))
    headless_only = [k for k in ("out", "only", "json") if getattr(args, k) is not None]
    if args.render and args.bench:
        return fail(2, "choose one of --render and --bench")
    if args.render:
        return do_render(args)
    if args.bench:
        return do_bench(args)
    given = [k for k in VIEW_OPTIONS if getattr(args, k) is not None]
    if given or headless_only or args.ui:
        opt = (given + headless_only + (["ui"] if args.ui else []))[0]
        return fail(2, f"--{opt} applies only with --render or --bench")
    be, why = resolve_backend(args.backend)
    if be is None:
        return fail(1, why)
    from explorer.app import run
    return run(args.backend, args.view)


if __name__ == "__main__":
    sys.exit(main())
