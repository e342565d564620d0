"""Where the host time of one distance frame goes (run on the GPU machine):
    PYTHONPATH=. python tools/profile_distance.py
Prints the frame's median wall time, then the host cost of each piece in isolation.
"""
import statistics
import time

import numpy as np

from kernels import backend
from kernels.distance import renderer as distance
from kernels.distance import haversine as dk
from kernels.timing import JobTimer

try:
    be = backend.resolve("cuda")
except backend.BackendUnavailable as exc:
    # a GPU-only measurement: on a machine without one, one line instead of a traceback
    raise SystemExit(f"profile_distance.py needs a usable NVIDIA GPU: {exc}") from None
if be.simulated:
    raise SystemExit("profile_distance.py measures real launches and copies; the CUDA simulator has "
                     "neither (unset NUMBA_ENABLE_CUDASIM)")
cuda = backend.numba_cuda()
req = distance.DistanceRequest(bounds=distance.SEED_BOUNDS, ref=distance.SEED_REF, size=(1000, 1000))
r = distance.Renderer(be)
for _ in range(5):
    r.render(req)


def med_us(fn, n=500):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(ts)


walls = []
for _ in range(300):
    t0 = time.perf_counter()
    f = r.render(req)
    walls.append((time.perf_counter() - t0) * 1e3)
t = f.timings.phases_ms
print(f"render() wall median {statistics.median(walls):.3f} ms (kernel {t['kernel']:.3f}, d2h {t['d2h']:.3f})")

stream = r._stream
p = r._params(req)
n, w = p["n"], p["w"]
rgba_d = r.pool.device("rgba", (n,), np.uint32, stream=stream)
values_d = r.pool.device("values_dummy", (1,), np.float64, stream=stream)
lut = r._device_luts[req.palette]
args = (rgba_d, values_d, False, w, n, p["lat1"], p["dlat"], p["lon0"], p["dlon"], p["ref_lat_r"],
        p["ref_lon_r"], p["cos_ref"], p["radius"], p["cscale"], p["top"], lut)
blocks, tpb = dk.blocks_for(n), dk.THREADS_PER_BLOCK
host = r.pool.host("rgba", (1000, 1000, 4), np.uint8, ring=3).view(np.uint32).reshape(n)
stream.synchronize()
print(f"numba launch (async): {med_us(lambda: dk.device_mesh_kernel[blocks, tpb, stream](*args)):.1f} us")
prepared = next(iter(r._launchers.values()))
print(f"prepared launch (async): {med_us(lambda: prepared(*args)):.1f} us  (fast path: {prepared.fast})")
stream.synchronize()
print(f"d2h call only (async): {med_us(lambda: rgba_d.copy_to_host(host, stream=stream)):.1f} us")
stream.synchronize()
print(f"stream.synchronize on idle stream: {med_us(stream.synchronize):.1f} us")
print(f"request.validate + _params: {med_us(lambda: (req.validate(), r._params(req))):.1f} us")


def timer_only():
    tm = JobTimer(be, stream)
    with tm.phase("kernel", gpu=True):
        pass
    with tm.phase("d2h", gpu=True, nbytes=4):
        pass
    tm.finish()


print(f"JobTimer with two empty GPU phases + finish: {med_us(timer_only):.1f} us")
import cProfile
import pstats
pr = cProfile.Profile()
pr.enable()
for _ in range(300):
    r.render(req)
pr.disable()
pstats.Stats(pr).sort_stats("tottime").print_stats(14)
e0, e1 = cuda.event(), cuda.event()
e0.record(stream)
dk.device_mesh_kernel[blocks, tpb, stream](*args)
e1.record(stream)
e1.synchronize()
print(f"kernel alone, events around an already-queued launch is impossible; GPU kernel incl. launch gap: {e0.elapsed_time(e1) * 1e3:.1f} us")
