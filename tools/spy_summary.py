#!/usr/bin/env python3
"""A py-spy `--format raw` profile (`record --gil --threads`: the thread holding the GIL) cut to a
few lines: samples per thread, then the functions each thread spent the most samples in
(inclusive), so a profile fits in a report.

    python3 tools/spy_summary.py PROFILE.txt [--top 25] [--rate 250] [--thread REGEX]

--thread keeps the functions of the threads whose name matches (e.g. 'pool-gpu').
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter


def summarise(lines, top: int, rate: float, only: str | None = None, leaf: bool = False
              ) -> list[str]:
    """leaf: count each sample for its innermost function only (where the time is spent)."""
    threads: Counter = Counter()
    inclusive: Counter = Counter()
    for line in lines:
        stack, _, n = line.rstrip("\n").rpartition(" ")
        if not stack or not n.isdigit():
            continue
        frames = stack.split(";")
        thread = re.sub(r"^thread \(\d+\): ", "", frames[0])
        threads[thread] += int(n)
        if only and not re.search(only, thread):
            continue
        for f in {re.sub(r":\d+\)$", ")", f) for f in (frames[-1:] if leaf else frames[1:])}:
            inclusive[(thread, f)] += int(n)
    out = [f"samples {sum(threads.values())} ({sum(threads.values()) / rate:.1f} s at {rate:g} Hz)"]
    out += [f"  {n / rate:7.2f} s  {t}" for t, n in threads.most_common(12)]
    skip = re.compile(r"^(Thread\.|_bootstrap|<module>|main |_main |_find_and_load|_call_with|"
                      r"_load_unlocked|_LoaderBasics|_handle_fromlist)")
    for (t, f), n in inclusive.most_common():
        if top <= 0:
            break
        if skip.search(f):
            continue
        out.append(f"  {n / rate:7.2f} s  {t}: {f}")
        top -= 1
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--rate", type=float, default=250.0)
    ap.add_argument("--thread", default=None)
    ap.add_argument("--leaf", action="store_true", help="innermost functions only")
    a = ap.parse_args()
    with open(a.profile) as fh:
        print("\n".join(summarise(fh, a.top, a.rate, a.thread, a.leaf)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
