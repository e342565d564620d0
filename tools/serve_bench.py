"""Whole `--render` commands with a render server (`main.py --serve`, cli/serve.py) against the
same commands in their own processes (`--no-server`), in one run so that the machine's drift
falls on both (issue 38). Starts its own server in a private folder, waits until it is ready,
times each command --runs times (after one untimed run that fills the caches), and prints per
command: the whole command's median wall time with the server and without, and the server's own
time for it (its log: the frame, the file) so that what the client costs shows.

    python3 tools/serve_bench.py --backend cuda --size 1024x1024 --kf resources/kf-1e14.kfr ...
    python3 tools/serve_bench.py --backend cuda --size 16384x16384 --kf resources/kf-1e1086.kfr \\
        --out-ext npy --gpus 0 --gpus all [--fresh-out]

Each command writes the same output, so each replaces the last one's; `--fresh-out` removes it
before each timed command instead, its removal timed apart.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAIN = os.path.join(ROOT, "main.py")


def timed(argv, env) -> tuple[float, int, str]:
    t = time.perf_counter()
    p = subprocess.run([sys.executable, MAIN, *argv], cwd=ROOT, env=env, capture_output=True,
                       text=True)
    return time.perf_counter() - t, p.returncode, (p.stdout + p.stderr).strip()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--size", default="1024x1024")
    ap.add_argument("--kf", action="append", required=True, help="a .kfr location (repeatable)")
    ap.add_argument("--gpus", action="append", default=None, help="--gpus value (repeatable)")
    ap.add_argument("--out-ext", default="png")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--own-runs", type=int, default=3, help="runs without the server")
    ap.add_argument("--json")
    ap.add_argument("--fresh-out", action="store_true",
                    help="remove the output before each timed command (its removal timed apart)")
    a = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="serve-bench-")
    env = {k: v for k, v in os.environ.items() if k != "GPU_EXPLORER_SERVER"}
    env["GPU_EXPLORER_RUN_DIR"] = os.path.join(tmp, "run")
    log = os.path.join(tmp, "server.log")
    t0 = time.perf_counter()
    server = subprocess.Popen([sys.executable, MAIN, "--serve", "--backend", a.backend,
                               "--idle-minutes", "20"], cwd=ROOT, env=env,
                              stdout=open(log, "w"), stderr=subprocess.STDOUT)
    while "ready" not in open(log).read():
        if server.poll() is not None or time.perf_counter() - t0 > 300:
            print(open(log).read())
            return 1
        time.sleep(0.05)
    print(f"server ready {time.perf_counter() - t0:.2f} s after its start: "
          f"{open(log).read().strip()[:120]}", flush=True)
    rows = []
    try:
        for kf in a.kf:
            for gpus in a.gpus or [None]:
                out = os.path.join(tmp, f"out.{a.out_ext}")
                cmd = ["--render", "mandelbrot", "--size", a.size, "--backend", a.backend,
                       "--location", kf, "--out", out] + (["--gpus", gpus] if gpus else [])
                name = os.path.basename(kf) + (f" --gpus {gpus}" if gpus else "")
                first = timed(cmd, env)
                served, own, server_s, removed = [], [], [], []

                def fresh():
                    # the file system frees a replaced output inside the command's rename
                    if a.fresh_out and os.path.exists(out):
                        t = time.perf_counter()
                        os.remove(out)
                        removed.append(time.perf_counter() - t)
                for _ in range(a.runs):
                    fresh()
                    wall, rc, text = timed(cmd, env)
                    served.append(wall)
                    m = re.findall(r"-> (\d+) in ([\d.]+) s", open(log).read())
                    server_s.append(float(m[-1][1]) if m else float("nan"))
                    if rc:
                        print(f"{name}: rc {rc}: {text[-300:]}")
                for _ in range(a.own_runs):
                    fresh()
                    wall, rc, text = timed(cmd + ["--no-server"], env)
                    own.append(wall)
                    if rc:
                        print(f"{name} --no-server: rc {rc}: {text[-300:]}")
                row = {"command": name, "first_served_s": round(first[0], 3),
                       "served_s": round(statistics.median(served), 3),
                       "served_min_max": [round(min(served), 3), round(max(served), 3)],
                       "server_side_s": round(statistics.median(server_s), 3),
                       "own_process_s": round(statistics.median(own), 3) if own else None,
                       "said": first[2].splitlines()[-1][:160] if first[2] else "",
                       "earlier_output_removed_s": round(statistics.median(removed), 3)
                       if removed else None}
                rows.append(row)
                print(f"{name}: whole command {row['served_s']:.3f} s with the server "
                      f"(min {row['served_min_max'][0]:.3f}, max {row['served_min_max'][1]:.3f}; "
                      f"its own time {row['server_side_s']:.3f} s; first {row['first_served_s']:.3f}"
                      f" s), {row['own_process_s']} s in its own process"
                      + (f"; the earlier output removed beforehand in "
                         f"{row['earlier_output_removed_s']} s" if removed else ""), flush=True)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(60)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"rows": rows, "server_log": open(log).read()}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
