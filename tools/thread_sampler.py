"""A sampling profiler over every thread of this process: where a start's seconds go when the GUI
thread and the worker share the GIL (cProfile sees one thread, and its own cost distorts imports).

    sampler = ThreadSampler(0.005).start()
    ...
    sampler.stop(); sampler.report(sys.stdout, top=30)

Every `interval` seconds it takes sys._current_frames(): for each thread, each function on its
stack gets the interval (inclusive time, once per sample even when recursive) and the frame on top
gets it as self time. A thread waiting on a lock or in C without the GIL still shows its Python
caller, which is what tells a wait from work. Timeline marks (`mark`) go in beside the samples.
"""
from __future__ import annotations

import collections
import sys
import threading
import time


def _where(code) -> str:
    path = code.co_filename
    for cut in ("site-packages/", "/tmp/site/", "/work/main/", "/lib/python3"):
        if cut in path:
            path = path.split(cut, 1)[1]
            break
    return f"{path}:{code.co_name}"


class ThreadSampler:
    def __init__(self, interval: float = 0.005):
        self.interval = interval
        self.inclusive: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.own: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.samples: collections.Counter = collections.Counter()
        self.marks: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sampler", daemon=True)
        self.t0 = time.perf_counter()

    def start(self) -> "ThreadSampler":
        self._thread.start()
        return self

    def mark(self, what: str) -> None:
        self.marks.append((time.perf_counter() - self.t0, what))

    def _run(self):
        me = threading.get_ident()
        while not self._stop.wait(self.interval):
            names = {t.ident: t.name for t in threading.enumerate()}
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                name = names.get(ident, str(ident))
                self.samples[name] += 1
                self.own[name][_where(frame.f_code)] += 1
                seen = set()
                while frame is not None:
                    key = _where(frame.f_code)
                    if key not in seen:
                        seen.add(key)
                        self.inclusive[name][key] += 1
                    frame = frame.f_back

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def report(self, out, top: int = 30) -> None:
        ms = self.interval * 1e3
        for name, n in self.samples.most_common():
            print(f"--- thread {name}: {n} samples ({n * ms:.0f} ms)", file=out)
            print("  inclusive:", file=out)
            for key, k in self.inclusive[name].most_common(top):
                print(f"    {k * ms:7.0f} ms  {key}", file=out)
            print("  self:", file=out)
            for key, k in self.own[name].most_common(top // 2):
                print(f"    {k * ms:7.0f} ms  {key}", file=out)
