"""Where a start's seconds go: a headless render (`main.py --render`) or the window's first frame
(tools/first_start.py), run once under `-X importtime` and tools/startup_probe.py, as a table.

    python3 tools/startup_profile.py                                 # 256x256 on the CPU
    python3 tools/startup_profile.py --backend cuda --size 1024x1024 \\
        --location ../shared/data/kf-benchmarks/1e14.kfr
    python3 tools/startup_profile.py --window --backend cuda         # the window's first frame
    python3 tools/startup_profile.py --cold ...                      # an empty numba cache

Prints: the whole command's wall time (median of --runs plain runs, then the instrumented one,
whose imports -X importtime slows by ~10-20 %), the phases on one timeline (seconds since the
probe started: imports, CUDA context, warm-ups, reference orbit, file write…), numba's cache loads
and compiles per kernel, the import time by package and the heaviest imports by cumulative time.
--json FILE keeps it all. Times on a shared machine move with its load: it is printed with them.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBE = os.path.join(ROOT, "tools", "startup_probe.py")
# import-time groups, first match wins (the rest is "other": the standard library, small packages)
GROUPS = (("numba.cuda", ("numba.cuda", "numba_cuda", "cuda")), ("numba", ("numba", "llvmlite")),
          ("numpy", ("numpy",)), ("Qt", ("PyQt6", "pyqtgraph")), ("PIL", ("PIL",)),
          ("gmpy2", ("gmpy2",)), ("app: kernels", ("kernels",)), ("app: services", ("services",)),
          ("app: cli", ("cli",)), ("app: explorer", ("explorer",)))


def parse_importtime(text: str) -> list[tuple[str, int, int, int]]:
    """(module, self µs, cumulative µs, depth) for each `-X importtime` line of `text`."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        head, cum, raw = line.split("|", 2)
        self_us, cum_us = int(head.split(":")[1]), int(cum)
        stripped = raw.lstrip()
        depth = (len(raw) - len(stripped) - 1) // 2
        rows.append((stripped.strip(), self_us, cum_us, depth))
    return rows


def group_of(module: str) -> str:
    for label, prefixes in GROUPS:
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return label
    return "other"


def command(args, out_json: str | None) -> list[str]:
    """The command profiled; with `out_json`, under -X importtime and the probe."""
    if args.window:
        script = [os.path.join(ROOT, "tools", "first_start.py"), "--backend", args.backend]
    else:
        script = [os.path.join(ROOT, "main.py"), "--render", args.view, "--size", args.size,
                  "--backend", args.backend, "--out", args.out]
        if args.location:
            script += ["--location", args.location]
    script += args.extra
    if out_json is None:
        return [sys.executable] + script
    return [sys.executable, "-X", "importtime", PROBE, out_json] + script


def run(cmd, env) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    return time.perf_counter() - t, proc


def table(rows, header) -> str:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    fmt = lambda r: "  ".join(str(c).rjust(w) if i else str(c).ljust(w)   # noqa: E731
                              for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows])


def report(args, walls, inst_wall, probe, imports, load, said: str = "") -> dict:
    print(f"command: {' '.join(command(args, None)[1:])}")
    lines = said.strip().splitlines()
    if lines:                    # first_start.py's timeline; a render's "wrote ..."
        print("it said (instrumented run):\n  " + "\n  ".join(lines[-40:]))
    print(f"machine: {os.cpu_count()} cores, load average before {load[0]:.2f} "
          f"after {os.getloadavg()[0]:.2f}; numba cache "
          f"{'cold (empty folder)' if args.cold else 'as found (warm after a first run)'}")
    if walls:
        print(f"whole command, {len(walls)} plain runs: median {statistics.median(walls):.3f} s "
              f"(min {min(walls):.3f}, max {max(walls):.3f})")
    print(f"instrumented run (importtime + probe): {inst_wall:.3f} s; probe end at "
          f"{probe.get('end', float('nan')):.3f} s after its start\n")
    first = {}
    for s in probe["spans"]:
        first.setdefault(s["label"], []).append(s)
    start = f"{probe.get('script_start', 0):.3f}"
    phases = [["the script starts (the probe's own imports before it)", start, "", ""]]
    for label, spans in sorted(first.items(), key=lambda kv: kv[1][0]["start"]):
        phases.append([label, f"{spans[0]['start']:.3f}", f"{sum(s['ms'] for s in spans):.1f}",
                       len(spans)])
    print(table(phases, ["phase", "starts at s", "ms (all calls)", "calls"]) + "\n")
    kernels = collections.OrderedDict()
    for c in probe["cache_loads"]:
        k = kernels.setdefault((c["kernel"], c["target"]), {"loads": 0, "hits": 0, "load_ms": 0.0,
                                                            "compile_ms": 0.0, "compiles": 0})
        k["loads"] += 1
        k["hits"] += bool(c["hit"])
        k["load_ms"] += c["ms"]
    for c in probe["compiles"]:
        k = kernels.setdefault((c["kernel"], c["target"]), {"loads": 0, "hits": 0, "load_ms": 0.0,
                                                            "compile_ms": 0.0, "compiles": 0})
        k["compiles"] += 1
        k["compile_ms"] += c["ms"]
    if kernels:
        rows = [[name, target, k["loads"], k["hits"], f"{k['load_ms']:.1f}", k["compiles"],
                 f"{k['compile_ms']:.1f}"] for (name, target), k in kernels.items()]
        rows.append(["total", "", sum(k["loads"] for k in kernels.values()),
                     sum(k["hits"] for k in kernels.values()),
                     f"{sum(k['load_ms'] for k in kernels.values()):.1f}",
                     sum(k["compiles"] for k in kernels.values()),
                     f"{sum(k['compile_ms'] for k in kernels.values()):.1f}"])
        print("numba, per kernel (the first load also builds numba's typing registries; a CUDA "
              "'compile' is its dispatcher's compile(), a load included):")
        print(table(rows, ["kernel", "target", "cache loads", "hits", "load ms", "compiles",
                           "compile ms"]) + "\n")
    by_group = collections.Counter()
    for name, self_us, _, _ in imports:
        by_group[group_of(name)] += self_us
    total = sum(by_group.values())
    print(table([[g, f"{us / 1e3:.1f}", f"{100 * us / max(total, 1):.0f}%"]
                 for g, us in by_group.most_common()] + [["total", f"{total / 1e3:.1f}", ""]],
                ["imports by package (self time)", "ms", "share"]) + "\n")
    top = sorted(((cum, name, depth) for name, _, cum, depth in imports if depth <= args.depth),
                 reverse=True)[:args.top]
    print(table([[("  " * d) + n, f"{c / 1e3:.1f}"] for c, n, d in top],
                [f"heaviest imports (cumulative, depth <= {args.depth})", "ms"]))
    if probe.get("unwrapped"):
        print(f"\n(not timed here: {', '.join(probe['unwrapped'])})")
    return {"walls_s": walls, "instrumented_s": inst_wall, "probe": probe,
            "imports_ms_by_group": {g: us / 1e3 for g, us in by_group.items()},
            "load": load, "command": command(args, None)[1:]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--window", action="store_true", help="the window's first frame instead")
    ap.add_argument("--backend", default="cpu", choices=("cpu", "cuda", "auto"))
    ap.add_argument("--view", default="mandelbrot")
    ap.add_argument("--size", default="256x256")
    ap.add_argument("--location", help="a .kfr or location file for --render mandelbrot")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "startup_profile.png"))
    ap.add_argument("--runs", type=int, default=3, help="plain runs timed for the median")
    ap.add_argument("--cold", action="store_true", help="every run on an empty numba cache")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--depth", type=int, default=2, help="import nesting shown in the top list")
    ap.add_argument("--json", help="write everything here too")
    ap.add_argument("extra", nargs="*", help="more options for the command (after --)")
    args = ap.parse_args(argv)
    env = dict(os.environ)
    load = os.getloadavg()
    walls = []
    for _ in range(args.runs):
        if args.cold:
            env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="startup-profile-")
        wall, proc = run(command(args, None), env)
        if proc.returncode:
            print(proc.stdout + proc.stderr, file=sys.stderr)
            return proc.returncode
        walls.append(wall)
    if args.cold:
        env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="startup-profile-")
    with tempfile.TemporaryDirectory() as tmp:
        out_json = os.path.join(tmp, "probe.json")
        inst_wall, proc = run(command(args, out_json), env)
        if proc.returncode or not os.path.exists(out_json):
            print(proc.stdout + "\n".join(line for line in proc.stderr.splitlines()
                                          if not line.startswith("import time:")),
                  file=sys.stderr)
            print(f"the instrumented run failed (exit {proc.returncode})", file=sys.stderr)
            return proc.returncode or 1
        with open(out_json) as fh:
            probe = json.load(fh)
    result = report(args, walls, inst_wall, probe, parse_importtime(proc.stderr), load,
                    proc.stdout)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
