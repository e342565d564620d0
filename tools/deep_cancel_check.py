#!/usr/bin/env python3
"""On a real GPU: what slicing deep Mandelbrot frames by iterations costs, and how soon a cancel
lands. Writes deep_cancel.json to $OUT (or the current folder) and prints it.

    python3 tools/deep_cancel_check.py            # needs the CUDA backend
    NUMBA_ENABLE_CUDASIM=1 python3 tools/deep_cancel_check.py --tiny    # a smoke run of the script

1. Deep frames (1920x1080, 50,000 and 200,000 iterations, where the renderer slices the iteration
   count so a cancel can land between slices) against the same frame in ONE launch (no
   cancellation possible): median ms of each, and whether the values agree bit for bit.
2. Cancel latency: a 1920x1080 frame of slow pixels at 10,000,000 iterations is cancelled from
   another thread after 1 s; the seconds from the cancel to the render's end (target < 0.5 s).
The frame `--bench --only mandelbrot-seahorse` times (2000 iterations) is not sliced: it is one
launch as before; compare that bench's numbers with earlier runs for any slow-down.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import kernels.mandelbrot.renderer as m  # noqa: E402
from kernels import backend  # noqa: E402
from kernels.mandelbrot.requests.request import MandelbrotRequest  # noqa: E402
from kernels.scheduler import Cancelled, CancelToken  # noqa: E402

DEEP = (-0.743643887037151, 0.131825904205330, 2e-6)
MINIBROT = (-1.7549, 0.0, 0.04)


def timed(renderer, req, repeats=5):
    renderer.render(req)                        # warm (buffers, compile)
    ms = []
    for _ in range(repeats):
        t = time.perf_counter()
        renderer.render(req)
        ms.append((time.perf_counter() - t) * 1e3)
    return statistics.median(ms)


def main() -> int:
    tiny = "--tiny" in sys.argv[1:]
    size = (16, 12) if tiny else (1920, 1080)
    be = backend.resolve("cuda")
    out = {"device": be.device, "size": list(size), "deep_frames": [], "cancel": {}}
    for iters in ((300, 900) if tiny else (50_000, 200_000)):
        req = MandelbrotRequest(*DEEP, size, iters, want_values=True)
        sliced = m.Renderer(be, reuse_values=False)
        sliced_ms = timed(sliced, req, 1 if tiny else 5)
        sliced_values = sliced.render(req).values.copy()
        saved = m.GPU_BAND_WORK
        m.GPU_BAND_WORK = 2 ** 62                # one launch: the frame as before, uncancellable
        try:
            whole = m.Renderer(be, reuse_values=False)
            whole_ms = timed(whole, req, 1 if tiny else 5)
            whole_values = whole.render(req).values.copy()
        finally:
            m.GPU_BAND_WORK = saved
        out["deep_frames"].append({
            "iterations": iters, "sliced_ms": round(sliced_ms, 2), "one_launch_ms": round(whole_ms, 2),
            "sliced_over_one_launch": round(sliced_ms / whole_ms, 3),
            "identical_values": bool(np.array_equal(sliced_values, whole_values))})

    r = m.Renderer(be)
    r.warmup()
    token = CancelToken()
    req = MandelbrotRequest(*MINIBROT, size, 10_000_000)
    when = {}

    def cancel():
        when["cancel"] = time.perf_counter()
        token.cancel()
    threading.Timer(1.0, cancel).start()
    try:
        r.render(req, cancel=token)
        out["cancel"]["result"] = "finished before the cancel"
    except Cancelled:
        out["cancel"]["result"] = "cancelled"
    out["cancel"]["seconds_after_cancel"] = round(time.perf_counter() - when.get("cancel", time.perf_counter()), 3)

    text = json.dumps(out, indent=2)
    print(text)
    with open(os.path.join(os.environ.get("OUT", "."), "deep_cancel.json"), "w") as fh:
        fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
