"""Where a poster command's own time goes once the process is warm (as in a render server,
cli/serve.py): `--render … --gpus G` run in this process once to warm up, then `--runs` times more
(the last with the main thread under cProfile: the pool's opening, waits, the write), with the
command's own line (rendering and writing seconds), the bands' hand-over on the render thread and
the rounds of the marks' writer (services/poster_marks.py: its sync and done.json, and the wait for
its last round), and the phases timed wherever they run, by thread.

`--before` also runs each case with the bands listed as before poster_marks (numpy's flush and
done.json on the render thread: tools/poster_host_bench.SyncMarks), cases alternating, for an A/B
in one process. `--fresh-out` removes the output before each timed command (the removal, the file
system freeing the earlier output that the command's rename would otherwise free, is timed apart).

    python3 tools/poster_profile.py --location resources/kf-1e1086.kfr --size 16384x16384 \\
        --out /tmp/p.npy --gpus 0 --gpus all [--before] [--runs 3] [--fresh-out] [--extra=…]
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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--location", required=True)
    ap.add_argument("--size", default="16384x16384")
    ap.add_argument("--backend", default="cuda", help="cpu: a try of the tool without a GPU")
    ap.add_argument("--out", default="/tmp/poster_profile.npy")
    ap.add_argument("--gpus", action="append", required=True)
    ap.add_argument("--extra", action="append", default=[])
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--runs", type=int, default=1, help="timed commands per case")
    ap.add_argument("--before", action="store_true", help="also the marking of the tree before")
    ap.add_argument("--fresh-out", action="store_true", help="remove the output before each run")
    a = ap.parse_args(argv)
    from kernels import timing
    timing.set_method("events")         # as a headless render's
    from services import poster, poster_marks
    from cli.serve import render_command
    from poster_host_bench import SyncMarks
    hand: list = []       # (start, seconds) of each band's hand-over on the render thread
    rounds: list = []     # (start, seconds, bands) of each round of the marks' writer
    last: list = []       # seconds the render waited for the writer's last round

    def timed_marks(base):
        class Timed(base):
            def add(self, index, counts=None):
                t = time.perf_counter()
                super().add(index, counts)
                hand.append((t, time.perf_counter() - t))

            def wait(self):
                t = time.perf_counter()
                super().wait()
                last.append(time.perf_counter() - t)
        return Timed
    modes = {"now": timed_marks(poster_marks.BandMarks), "before": timed_marks(SyncMarks)}
    real_many = poster.Parts.mark_many

    def mark_many(self, bands):
        t = time.perf_counter()
        real_many(self, bands)
        rounds.append((t, time.perf_counter() - t, len(bands)))
    poster.Parts.mark_many = mark_many
    if a.backend == "cpu":      # a small picture in bands, as a poster on the GPUs is
        poster.POSTER_MIN_PIXELS = 0
    spans = _spans()
    cases = [(g, m) for g in a.gpus for m in (("before", "now") if a.before else ("now",))]
    for g in a.gpus:
        poster.BandMarks = modes["now"]
        t = time.perf_counter()
        render_command(_argv(a, g))
        print(f"--gpus {g}: warm-up command {time.perf_counter() - t:.2f} s", flush=True)
    for run in range(a.runs):
        for g, mode in cases:
            poster.BandMarks = modes[mode]
            _one(a, g, mode, run == a.runs - 1, render_command, hand, rounds, last, spans)
    poster.BandMarks = poster_marks.BandMarks
    return 0


def _argv(a, g) -> list:
    gpus = ["--gpus", g] if a.backend != "cpu" else []
    return ["--render", "mandelbrot", "--backend", a.backend, "--size", a.size, "--location",
            a.location, "--out", a.out, *gpus, *a.extra]


def _one(a, g, mode, profile, render_command, hand, rounds, last, spans) -> None:
    """One timed command of case (g, mode); under cProfile when `profile`."""
    removed = ""
    if a.fresh_out and os.path.exists(a.out):
        t = time.perf_counter()
        os.remove(a.out)
        removed = f"; the earlier output removed beforehand in {time.perf_counter() - t:.2f} s"
    for got in (hand, rounds, last):
        got.clear()
    spans.clear()
    prof = cProfile.Profile() if profile else None
    t0 = time.perf_counter()
    if prof:
        prof.enable()
    code = render_command(_argv(a, g))
    if prof:
        prof.disable()
    wall = time.perf_counter() - t0
    print(f"--gpus {g} ({mode}): command {wall:.2f} s (rc {code}){removed}", flush=True)
    if hand:
        print(f"  {len(hand)} bands handed over, first at {hand[0][0] - t0:.2f} s, last at "
              f"{hand[-1][0] - t0:.2f} s, {sum(h[1] for h in hand):.3f} s on the render thread "
              f"(longest {1000 * max(h[1] for h in hand):.1f} ms)", flush=True)
    if rounds:
        print(f"  marks' writer: {len(rounds)} rounds, {sum(r[1] for r in rounds):.3f} s "
              f"(sync and done.json), last ended at "
              f"{rounds[-1][0] + rounds[-1][1] - t0:.2f} s; the render waited "
              f"{sum(last):.3f} s for its last round", flush=True)
    for (label, thread), (n, total, first) in sorted(spans.items(), key=lambda kv: kv[1][2]):
        print(f"  {label:<34} {thread:<22} {n:>4} calls {total:8.3f} s, first at "
              f"{first - t0:.3f} s")
    if prof:
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(a.top)
        print("\n".join(line[:170] for line in s.getvalue().splitlines()[6:]), flush=True)


# (module, attribute path, label): timed wherever they run, by thread
TIMED = (("services.poster", "Parts.open", "parts folder opened"),
         ("services.poster", "Poster.write", "output written"),
         ("services.poster", "Poster.render", "bands rendered and listed"),
         ("services.poster", "Parts.sync_pixels", "parts file synced"),
         ("kernels.spread", "open_pool", "pool opened"),
         ("kernels.mandelbrot.deep_frames", "DeepFrameRenderer.warmup", "warm-up"),
         ("kernels.mandelbrot.deep.renderer", "DeepRenderer._reference", "reference"),
         ("kernels.mandelbrot.deep.renderer", "DeepRenderer._table_for", "table"),
         ("kernels.mandelbrot.deep.renderer", "DeepRenderer.start_values", "band queued"),
         ("kernels.mandelbrot.redo.gpu_untrusted", "settle_on_device", "doubtful pixels settled"),
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
