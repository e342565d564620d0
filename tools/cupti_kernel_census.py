"""Every kernel's own GPU time by name while a command runs, from CUPTI's activity records, so two
trees can be compared kernel by kernel in one call even where one of them times only with CUDA
events (whose spans hold the host's launch work): tools/gpu_session_al.sh.

    cd TREE && PYTHONPATH=TREE GPU_EXPLORER_TIMING=events python3 HERE/tools/cupti_kernel_census.py \
        OUT.json -- --bench --backend cuda --only mandelbrot-full
    python3 tools/cupti_kernel_census.py --compare NEW.json [...] -- BASE.json [...]

Runs TREE's main.py in this process (GPU_EXPLORER_TIMING=events: the app must not register CUPTI
callbacks of its own); writes {kernel: [ms, ...]} with kernels named by their function alone
(numba's mangled names carry the module path, which a layout change moves).
"""
from __future__ import annotations

import json
import os
import re
import runpy
import statistics
import sys


def short_name(mangled: str) -> str:
    """The function's own name out of an Itanium-mangled numba name (_ZN<len><id>...E...)."""
    if not mangled.startswith("_ZN"):
        return mangled
    names, i = [], 3
    while i < len(mangled) and mangled[i].isdigit():
        m = re.match(r"\d+", mangled[i:])
        n = int(m.group())
        i += len(m.group())
        names.append(mangled[i:i + n])
        i += n
    if not names:
        return mangled
    # a factory's kernels are all `kernel` or alike: named by their factory too
    if "_3clocals_3e" in names:
        at = names.index("_3clocals_3e")
        return f"{names[at - 1]}.{names[-1]}" if at > 0 else names[-1]
    return names[-1]


def record(out: str, args: list[str]) -> int:
    from cupti import cupti
    times: dict[str, list[float]] = {}

    def completed(activities):
        for a in activities:
            if a.kind == cupti.ActivityKind.CONCURRENT_KERNEL:
                times.setdefault(short_name(a.name), []).append((a.end - a.start) / 1e6)
    cupti.activity_enable(cupti.ActivityKind.CONCURRENT_KERNEL)
    cupti.activity_register_callbacks(lambda: (4 * 1024 * 1024, 0), completed)
    sys.argv = ["main.py"] + args
    sys.path[0] = os.getcwd()
    rc = 0
    try:
        runpy.run_path("main.py", run_name="__main__")
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else 0
    cupti.activity_flush_all(1)
    with open(out, "w") as f:
        json.dump(times, f)
    return rc


def compare(new: list[str], base: list[str]) -> int:
    def load(paths):
        got: dict[str, list[float]] = {}
        for p in paths:
            for k, v in json.load(open(p)).items():
                got.setdefault(k, []).extend(v)
        return got
    a, b = load(new), load(base)
    ta, tb = sum(map(sum, a.values())), sum(map(sum, b.values()))
    print(f"all kernels: {ta:.2f} ms new, {tb:.2f} ms base, {ta / tb if tb else float('nan'):.3f} new/base")
    print(f"{'kernel':<40} {'launches new/base':>18} {'median new ms':>14} {'median base ms':>15} {'new/base':>9}")
    for k in sorted(set(a) | set(b), key=lambda k: -sum(b.get(k, a.get(k, [0])))):
        ma = statistics.median(a[k]) if k in a else None
        mb = statistics.median(b[k]) if k in b else None
        ratio = f"{ma / mb:.3f}" if ma and mb else "-"
        print(f"{k[:40]:<40} {len(a.get(k, [])):>8}/{len(b.get(k, [])):<9} "
              f"{ma if ma is not None else float('nan'):>14.4f} "
              f"{mb if mb is not None else float('nan'):>15.4f} {ratio:>9}")
    return 0


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--compare":
        cut = argv.index("--")
        return compare(argv[1:cut], argv[cut + 1:])
    cut = argv.index("--")
    return record(argv[0], argv[cut + 1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
