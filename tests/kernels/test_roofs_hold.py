"""Roofs that hold: the bandwidth roof is the best of every probe (device copies and the app's
stream kernels), each roof keeps its spread and the probe that set it, a point above its roof
beyond that spread makes the bench measure the roofs again, and a background roofs job lets the
app's own work go first between its probes. Fakes stand in for the GPU."""
import pytest

import kernels.roofs as roofs_pkg
from kernels.backend import Backend
from kernels.roofs import Roofs, add_roofs, gpu_probe, stream_probe
from kernels.roofs import report as rr
from kernels.roofs.hold import beats
from kernels.roofs.model import spread
from kernels.roofs.work import Work, place_one, record
from kernels.timing import GATED, Timings
from kernels import bench

FAKE_GPU = Backend("cuda", device="Fake GPU")


def row(probe, Bps, spread=0.01, **more):
    return dict(probe=probe, bytes=2**29, Bps=Bps, median_Bps=Bps, spread=spread, repeats=10,
                method=GATED, **more)


@pytest.fixture
def fake_gpu_probes(monkeypatch):
    """Device copies, stream kernels and chains of a made-up GPU: the ILP triad is the fastest."""
    monkeypatch.setattr(gpu_probe, "copy_bytes", lambda n: n)
    monkeypatch.setattr(gpu_probe, "device_copies", lambda be, n, r: [
        row("d2d-memcpy", 3.0e12, copy="d2d-memcpy"), row("d2d-kernel", 3.3e12, copy="d2d-kernel")])
    monkeypatch.setattr(stream_probe, "stream_rows", lambda be, n=None, repeats=10, **kw: iter([
        row("copy (cuda-jit)", 3.6e12, op="copy", impl="cuda-jit"),
        row("triad (cuda-jit-ilp4)", 4.1e12, 0.02, op="triad", impl="cuda-jit-ilp4"),
        {"probe": "add (pycuda)", "op": "add", "impl": "pycuda", "Bps": None,
         "error": "PyCUDA is not installed"}]))
    monkeypatch.setattr(gpu_probe, "cache_bytes", lambda: 50 * 2**20)
    monkeypatch.setattr(gpu_probe, "chain_rate", lambda kind, target_ms, repeats, backend=None: (
        {"f32": 60e12, "f64": 30e12, "int32": 30e12}[kind],
        {"times_ms": [20.0, 20.2, 20.1], "method": GATED, "ms": 20.0}))


def test_the_bandwidth_roof_is_the_best_probe_with_its_spread(fake_gpu_probes):
    r = roofs_pkg.measure_roofs(FAKE_GPU)
    assert r.bandwidth_Bps == 4.1e12                # above both device copies
    bw = r.how("bandwidth")
    assert bw["probe"] == "triad (cuda-jit-ilp4)" and bw["probes"] == 4 and bw["method"] == GATED
    assert r.spread("bandwidth") == pytest.approx(0.02)
    assert r.how("f32")["probe"] == "float32 multiply-add chains"
    assert r.spread("f32") == pytest.approx(0.2 / 20.1) and r.method == GATED
    # every probe is kept, the failed one with its reason
    assert [p["probe"] for p in r.details["bandwidth"]][-1] == "add (pycuda)"
    assert r.details["cache_bytes"] == 50 * 2**20 and r.complete


def test_a_roofs_measurement_steps_a_probe_at_a_time(fake_gpu_probes):
    steps = roofs_pkg.measure_roofs_steps(FAKE_GPU)
    names = []
    with pytest.raises(StopIteration) as stop:
        while True:
            names.append(next(steps))
    assert names[0] == "device copies" and "triad (cuda-jit-ilp4)" in names
    assert names[-3:] == ["float32 chains", "float64 chains", "int32 chains"]
    assert stop.value.value.bandwidth_Bps == 4.1e12


def test_the_spread_of_repeats():
    assert spread([10.0, 12.0, 11.0]) == pytest.approx(2.0 / 11.0)   # (slowest - fastest) / median
    assert spread([2.0, 1.0]) == pytest.approx(1.0 / 1.5)
    assert spread([1.0]) is None and spread([None, None]) is None


ROOFS = Roofs("cuda", "Fake GPU", bandwidth_Bps=4e12, f32_flops=60e12, f64_flops=30e12,
              int32_ops=30e12, key="k", details={
                  "cache_bytes": 50 * 2**20,
                  "roofs": {"bandwidth": {"probe": "triad (cuda-jit-ilp4)", "spread": 0.02},
                            "f64": {"probe": "float64 multiply-add chains", "spread": 0.01}}})


def placed(ops, nbytes, seconds, name="add (cuda-jit)", kind="f32"):
    return place_one(Work(name, kind, ops, nbytes), seconds, ROOFS)


def test_a_point_beats_its_roof_only_beyond_the_spread():
    n = 2**26                                       # add: 1 flop, 12 bytes an element
    at = lambda pct: placed(n, 12 * n, 12 * n / (4e12 * pct / 100))
    assert beats(at(101.5), ROOFS) is None          # within the bandwidth's 2 % spread
    b = beats(at(110.0), ROOFS)
    assert b.roof == "bandwidth" and b.over == pytest.approx(0.10) and b.spread == 0.02
    assert "10.0 % above the bandwidth roof (its spread 2.0 %)" in b.words()
    # data that can stay in the 50 MiB cache between runs: above the slope, no evidence
    small = 2**20
    assert beats(placed(small, 12 * small, 12 * small / 8e12), ROOFS) is None
    # compute-bound work above the float64 peak beyond its 1 %; a model's upper bound is not
    assert beats(placed(33e12, 1e6, 1.0, "escape, useful iterations", "f64"), ROOFS).roof == "f64"
    assert beats(placed(33e12, 1e6, 1.0, "escape, executed lane-iterations", "f64"), ROOFS) is None
    assert beats(placed(29e12, 1e6, 1.0, "escape, useful iterations", "f64"), ROOFS) is None


def vector_result(gbs):
    """A bench row of add at N = 2^26 that reached `gbs` GB/s."""
    n = 2**26
    t = Timings(backend="cuda", label="add")
    t.phases_ms.update(kernel=12 * n / (gbs * 1e9) * 1e3)
    record(t, Work("add (cuda-jit-ilp4)", "f32", n, 12 * n))
    return bench.result("vector-add", "cuda", "cuda-jit-ilp4/kernel", "2^26", [t])


def test_a_result_above_its_roof_makes_the_bench_measure_the_roofs_again():
    measured = []
    fresh = [Roofs("cuda", "Fake GPU", bandwidth_Bps=3.3e12, key="k", details=ROOFS.details),
             ROOFS]

    def measure(be):
        measured.append(be)
        return fresh[len(measured) - 1]
    rep = add_roofs({"results": [vector_result(4050.0)]}, "cuda", measure=measure)
    assert len(measured) == 2                       # 123 % of the first roofs: measured again
    (because,) = rep["roofs_remeasured"]["because"]
    assert because["variant"] == "cuda-jit-ilp4/kernel" and because["roof_percent"] > 120
    assert rep["roofs_remeasured"]["still_beaten"] == [] and "roofs_beaten" not in rep
    assert rep["results"][0]["work"][0]["roof_percent"] == pytest.approx(101.25)   # within 2 %


def test_a_result_that_still_beats_the_roofs_is_said():
    measured = []
    low = Roofs("cuda", "Fake GPU", bandwidth_Bps=3.3e12, key="k",
                measured_at="2000-01-01T00:00:00+00:00", details=dict(ROOFS.details, method=GATED))
    rep = {"device": "Fake GPU", "results": [vector_result(4085.0)]}
    add_roofs(rep, "cuda", measure=lambda be: measured.append(be) or low)
    assert len(measured) == 2 and len(rep["roofs_beaten"]) == 1     # measured again, once
    text = rr.roofs_summary(rep)
    assert "bandwidth 3.3 TB/s ±2.0 % (triad (cuda-jit-ilp4))" in text
    assert f"timed by {GATED}" in text and "re-measured" in text
    assert "above its roof: vector-add cuda-jit-ilp4/kernel" in text
    # within the roofs: measured once, nothing said
    measured.clear()
    rep = add_roofs({"results": [vector_result(3900.0)]}, "cuda",
                    measure=lambda be: measured.append(be) or ROOFS)
    assert len(measured) == 1 and "roofs_remeasured" not in rep and "roofs_beaten" not in rep


def test_a_background_roofs_job_lets_other_work_go_first(monkeypatch, cpu_backend):
    """Between two probes, a job that arrives runs first: no probe shares the device with it."""
    from kernels.roofs import jobs
    from kernels.scheduler import Delivered, Scheduler
    order = []

    def steps(backend, remeasure=False, **kw):
        for name in ("copies", "stream", "chains"):
            order.append(name)
            yield name
        return ROOFS
    monkeypatch.setattr(jobs, "device_roofs_steps", steps)
    got = []
    s = Scheduler(got.append, synchronous=True, autodrain=False, handlers=jobs.HANDLERS)
    s.register(str, lambda ctx, req: order.append(req))
    s.submit("roofline:cpu", jobs.RoofsRequest(cpu_backend, background=True))
    s.drain(max_steps=2)                            # the job starts, its first probe runs
    assert order == ["copies"] and not s.idle()
    s.submit("view", "render")
    s.drain()
    assert order == ["copies", "render", "stream", "chains"] and s.idle()
    assert [e.result for e in got if isinstance(e, Delivered) and e.key == "roofline:cpu"] \
        == [ROOFS]
