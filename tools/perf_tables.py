"""Print the markdown tables of docs/PERFORMANCE.md from a `main.py --bench --json` file
(the files behind the page are kept in docs/bench/).

    python tools/perf_tables.py bench.json [more.json …]

The numbers in the docs are this script's output, so none is typed by hand.
"""
import json
import sys

PHASES = ("compile", "h2d", "kernel", "d2h", "host", "total")


def fmt(v, nd=3):
    if v is None:
        return "–"
    if isinstance(v, float):
        if v != 0 and abs(v) < 0.01:
            return f"{v:.2e}"       # rounding errors, not zeros
        return f"{v:.{nd}f}" if abs(v) < 1000 else f"{v:,.0f}"
    return str(v)


def table(report, prefix, metric_keys):
    rows = [r for r in report["results"] if r["workload"].startswith(prefix)]
    if not rows:
        return ""
    head = ["workload", "variant", "size"] + [f"{p} ms" for p in PHASES[1:]] + list(metric_keys)
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["workload"], r["variant"], r["size"]]
        cells += [fmt(r["phases_ms"].get(p)) for p in PHASES[1:]]
        cells += [fmt(r["metrics"].get(k), 2) for k in metric_keys]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(paths):
    for path in paths:
        with open(path) as fh:
            rep = json.load(fh)
        vers = ", ".join(f"{k} {v}" for k, v in rep["versions"].items())
        print(f"### {path}\n\ndevice: {rep['device']} · date: {rep['date']} · {vers}\n")
        for prefix, keys in (("transfer", ["GB/s"]),
                             ("mandelbrot", ["frame ms", "escape ms", "colourise ms", "G iter/s"]),
                             ("distance", ["end-to-end ms", "Mpixel/s"]),
                             ("vector", ["GB/s", "% of d2d copy", "% of pinned bw", "% of CPU copy",
                                         "x cuda-jit"]),
                             ("rng-generate", ["Gsample/s", "GB/s", "% of write bw", "% of d2d copy"]),
                             ("rng-reduce", ["GB/s", "% of read bw", "% of d2d copy", "% of CPU copy",
                                             "rel error", "within bound", "stagnated"]),
                             ("rng-histogram", ["GB/s", "% of read bw", "lost"]),
                             ("rng-monte-carlo", ["Gsample/s", "% of int throughput", "error"]),
                             ("deep-", ["steps/px", "BLA skip %"]),
                             ("ui-", ["frames/s", "frames"])):
            t = table(rep, prefix, keys)
            if t:
                print(t + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
