"""Where a poster command's own time goes once the process is warm (as in a render server,
cli/serve.py): `--render … --gpus G` run in this process once to warm up, then again under
cProfile (the main thread: opening the parts folder, waiting for and marking bands, writing),
with the command's own line (rendering and writing seconds) and a timeline of the bands' marks.

    python3 tools/poster_profile.py --location resources/kf-1e1086.kfr --size 16384x16384 \\
        --out /tmp/p.npy --gpus 0 [--gpus all] [--extra=--marked-pixels]
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--location", required=True)
    ap.add_argument("--size", default="16384x16384")
    ap.add_argument("--out", default="/tmp/poster_profile.npy")
    ap.add_argument("--gpus", action="append", required=True)
    ap.add_argument("--extra", action="append", default=[])
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args(argv)
    from kernels import timing
    timing.set_method("events")         # as a headless render's
    from services import poster
    from cli.serve import render_command
    marks: list = []
    real_mark = poster.Parts.mark

    def mark(self, *args, **kw):
        t = time.perf_counter()
        real_mark(self, *args, **kw)
        marks.append((t, time.perf_counter() - t))
    poster.Parts.mark = mark
    spans = _spans()
    for g in a.gpus:
        argv = ["--render", "mandelbrot", "--backend", "cuda", "--size", a.size, "--location",
                a.location, "--out", a.out, "--gpus", g, *a.extra]
        t = time.perf_counter()
        render_command(argv)
        print(f"--gpus {g}: warm-up command {time.perf_counter() - t:.2f} s", flush=True)
        marks.clear()
        spans.clear()
        prof = cProfile.Profile()
        t0 = time.perf_counter()
        prof.enable()
        code = render_command(argv)
        prof.disable()
        wall = time.perf_counter() - t0
        flush = sum(m[1] for m in marks)
        print(f"--gpus {g}: command {wall:.2f} s (rc {code}); {len(marks)} bands marked, first at "
              f"{marks[0][0] - t0:.2f} s, last at {marks[-1][0] - t0:.2f} s; marking (flush and "
              f"done.json) {flush:.2f} s on the main thread", flush=True)
        for (label, thread), (n, total, first) in sorted(spans.items(), key=lambda kv: kv[1][2]):
            print(f"  {label:<34} {thread:<22} {n:>4} calls {total:8.3f} s, first at "
                  f"{first - t0:.3f} s")
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(a.top)
        print("\n".join(line[:170] for line in s.getvalue().splitlines()[6:]), flush=True)
    return 0


# (module, attribute path, label): timed wherever they run, by thread
TIMED = (("services.poster", "Parts.open", "parts folder opened"),
         ("services.poster", "Poster.write", "output written"),
         ("kernels.spread", "open_pool", "pool opened"),
         ("kernels.mandelbrot.deep_frames", "DeepFrameRenderer.warmup", "warm-up"),
         ("kernels.mandelbrot.deep.renderer", "DeepRenderer._reference", "reference"),
         ("kernels.mandelbrot.deep.renderer", "DeepRenderer._table_for", "table"),
         ("kernels.mandelbrot.deep.renderer", "DeepRenderer.start_values", "band queued"),
         ("kernels.mandelbrot.deep.gpu_untrusted", "settle_on_device", "doubtful pixels settled"),
         ("kernels.mandelbrot.tiles", "BandInto.__call__", "band (BandInto)"))


def _spans() -> dict:
    """Wrap TIMED; returns {(label, thread name): [calls, seconds, first start]}."""
    import functools
    import importlib
    import threading
    out: dict = {}
    for mod_name, path, label in TIMED:
        mod = importlib.import_module(mod_name)
        owner, name = mod, path
        if "." in path:
            cls, name = path.split(".")
            owner = getattr(mod, cls)
        real = getattr(owner, name)

        def wrapped(*args, __real=real, __label=label, **kw):
            t = time.perf_counter()
            try:
                return __real(*args, **kw)
            finally:
                key = (__label, threading.current_thread().name)
                got = out.setdefault(key, [0, 0.0, t])
                got[0] += 1
                got[1] += time.perf_counter() - t
        setattr(owner, name, functools.wraps(real)(wrapped))
    return out


if __name__ == "__main__":
    sys.exit(main())
