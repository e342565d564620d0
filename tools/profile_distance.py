"""Where the host time of one distance frame goes (run on the GPU machine):
    PYTHONPATH=. python tools/profile_distance.py
"""
import cProfile
import pstats
import statistics
import time

from kernels import backend, distance

be = backend.resolve("cuda")
req = distance.DistanceRequest(bounds=distance.SEED_BOUNDS, ref=distance.SEED_REF, size=(1000, 1000))
r = distance.Renderer(be)
for _ in range(5):
    r.render(req)
walls, totals, kern, d2h = [], [], [], []
for _ in range(300):
    t0 = time.perf_counter()
    f = r.render(req)
    walls.append((time.perf_counter() - t0) * 1e3)
    totals.append(f.timings.phases_ms["total"])
    kern.append(f.timings.phases_ms["kernel"])
    d2h.append(f.timings.phases_ms["d2h"])
print(f"render() wall median {statistics.median(walls):.3f} ms  min {min(walls):.3f}  "
      f"timer total {statistics.median(totals):.3f}  kernel {statistics.median(kern):.3f}  d2h {statistics.median(d2h):.3f}")
pr = cProfile.Profile()
pr.enable()
for _ in range(300):
    r.render(req)
pr.disable()
pstats.Stats(pr).sort_stats("tottime").print_stats(18)
