"""The roofs: the bound arithmetic, the chain kernels' results, CPU roofs, the simulator's note,
and the roofs kept per device (written, read, a corrupt file ignored)."""
import json

import numpy as np
import pytest

import kernels.roofs as roofs_pkg
from kernels.roofs import Roofs, chains, device_roofs, device_key, measure_roofs, store
from kernels.roofs.work import Work, describe, place_one, work_seconds


def roofs(**kw):
    base = dict(backend="cpu", device="test", bandwidth_Bps=100e9, f32_flops=10e12,
                f64_flops=5e12, int32_ops=2e12, key="k")
    base.update(kw)
    return Roofs(**base)


def test_the_bound_is_the_lower_of_the_slope_and_the_peak():
    r = roofs()
    assert r.ridge("f64") == pytest.approx(50.0)
    rate, which = r.bound("f64", 10.0)              # left of the ridge: memory bound
    assert which == "memory" and rate == pytest.approx(1e12)
    rate, which = r.bound("f64", 200.0)             # right of it: the float64 peak
    assert which == "compute" and rate == pytest.approx(5e12)
    assert r.bound("f32", 200.0) == (pytest.approx(10e12), "compute")
    # one roof missing: the other bounds alone; both missing: no bound
    assert roofs(f64_flops=None).bound("f64", 200.0) == (pytest.approx(20e12), "memory")
    assert roofs(bandwidth_Bps=None).bound("f64", 1.0) == (pytest.approx(5e12), "compute")
    assert roofs(bandwidth_Bps=None, f64_flops=None).bound("f64", 1.0) == (None, "")


def test_a_placement_is_its_rate_over_the_bounding_roof():
    w = Work("escape", "f64", ops=8e9, bytes=1e8, minus=("colourise",))
    secs = work_seconds({"kernel": 12.0}, {"colourise": 2.0}, w)
    assert secs == pytest.approx(0.010)             # the colouring's 2 ms are not the escape's
    p = place_one(w, secs, roofs(), "frame")
    assert p.intensity == pytest.approx(80.0) and p.bound == "compute"
    assert p.rate == pytest.approx(8e11)
    assert p.percent == pytest.approx(100 * 8e11 / 5e12)
    text = describe(p)
    assert "escape" in text and "10 ms" in text and "16.0 % of the float64 peak roof" in text
    copy = place_one(Work("copy", "f32", 0, 2e9), 0.05, roofs())   # no ops: bandwidth only
    assert copy.bound == "memory" and copy.percent == pytest.approx(40.0)
    assert not copy.plottable


def test_work_rejects_what_is_not_work():
    with pytest.raises(ValueError):
        Work("x", "f16", 1, 1)
    with pytest.raises(ValueError):
        Work("x", "f32", -1, 1)


def test_cpu_chains_compute_what_numpy_computes():
    out = np.zeros(3, dtype=np.int32)
    x, y = chains.constants("int32")
    chains.kernel("int32", gpu=False)(out, 5, x, y)
    assert [int(v) for v in out] == [int(chains.expected("int32", i, 5, False)) for i in range(3)]
    outf = np.zeros(3, dtype=np.float64)
    chains.kernel("f64", gpu=False)(outf, 5, *chains.constants("f64"))
    assert np.allclose(outf, [chains.expected("f64", i, 5, False) for i in range(3)], rtol=1e-12)


def test_calibration_grows_the_launch_to_the_target():
    lengths = []

    def fake(n):
        lengths.append(n)
        return n / 1000.0                           # 1 µs per step
    n, ms = chains.calibrate(fake, 20.0, start=64)
    assert n >= 20000 and ms >= 20.0 and ms == pytest.approx(n / 1000.0)
    assert lengths == sorted(lengths)               # only ever longer


def test_cpu_roofs_are_measured(cpu_backend):
    r = measure_roofs(cpu_backend, nbytes=1 << 20, target_ms=5.0)
    assert r.complete and r.note == "" and not r.simulated
    assert r.bandwidth_Bps > 1e8 and min(r.f32_flops, r.f64_flops, r.int32_ops) > 1e7
    assert r.key == device_key(cpu_backend) and "cpu" in r.key
    assert r.details["f64"]["ops"] == chains.ops(r.details["f64"]["threads"],
                                                 r.details["f64"]["n_iter"], gpu=False)


@pytest.fixture
def small_stream_probes(monkeypatch):
    """The stream probes of the bandwidth roof cut to two kernels at N = 2^24 (tests: the roofs'
    own default runs every implementation's ops at 2^26)."""
    from kernels.roofs import stream_probe
    monkeypatch.setattr(stream_probe, "STREAM_N", 2**24)
    monkeypatch.setattr(stream_probe, "STREAM_OPS", ("copy", "triad"))


@pytest.mark.gpu
def test_gpu_roofs(gpu_backend, simulated, small_stream_probes):
    from kernels import timing
    if simulated:
        r = measure_roofs(gpu_backend)
        assert r.simulated and not r.measured and "simulator" in r.note
        # the app's stream kernels ran through the same runner, and nothing was timed
        (probe,) = r.details["bandwidth"]
        assert probe["probe"] == "triad (cuda-jit-ilp4)" and probe["Bps"] is None
        assert probe["method"] == timing.UNTIMED
        from kernels.roofs.gpu_probe import simulate_chains
        got = simulate_chains(n_iter=3)
        n = len(got["int32"])
        assert [int(v) for v in got["int32"]] == [int(chains.expected("int32", i, 3, True))
                                                 for i in range(n)]
        assert np.allclose(got["f32"], [chains.expected("f32", i, 3, True) for i in range(n)],
                           rtol=1e-5)
    else:
        r = measure_roofs(gpu_backend, nbytes=64 << 20, target_ms=5.0)
        assert r.complete, r.note
        assert r.f32_flops > r.bandwidth_Bps / 4        # any GPU computes faster than it streams
        # timed as the app's jobs are, no host pause inside; the bandwidth the best of every probe
        assert r.method in (timing.CUPTI, timing.GATED), r.method
        probes = r.details["bandwidth"]
        assert {"d2d-memcpy", "d2d-kernel", "triad (cuda-jit-ilp4)"} <= {p["probe"] for p in probes}
        assert r.bandwidth_Bps == max(p["Bps"] for p in probes if p.get("Bps"))
        for name in ("bandwidth", "f32", "f64", "int32"):
            how = r.how(name)
            assert how["probe"] and how["repeats"] >= 3 and 0 <= how["spread"] < 0.5, (name, how)
        # the chains are the instructions counted: fused multiply-adds, 32-bit integer ones
        ptx = {k: "".join(chains.kernel(k, gpu=True).inspect_asm().values()) for k in
               ("f32", "f64", "int32")}
        assert ptx["f32"].count("fma.rn.f32") >= chains.GPU_CHAINS
        assert ptx["f64"].count("fma.rn.f64") >= chains.GPU_CHAINS
        assert ptx["int32"].count("mad.lo.s32") >= chains.GPU_CHAINS    # not 64-bit products


def test_roofs_are_kept_per_device_and_a_corrupt_file_is_ignored(tmp_path):
    r = roofs(key="dev A")
    assert store.save(r, str(tmp_path)) is None
    assert store.load("dev A", str(tmp_path)) == r
    assert store.load("dev B", str(tmp_path)) is None
    path = store.cache_path(str(tmp_path))
    data = json.loads(open(path).read())
    data["dev B"] = dict(r.as_dict(), key="dev B", f32_flops=-1)    # a bad entry: skipped alone
    open(path, "w").write(json.dumps(data))
    assert store.load("dev B", str(tmp_path)) is None and store.load("dev A", str(tmp_path)) == r
    open(path, "w").write("{not json")
    assert store.load("dev A", str(tmp_path)) is None
    assert store.save(roofs(key="dev C"), str(tmp_path)) is None    # replaces the broken file
    assert store.load("dev C", str(tmp_path)) is not None


def test_device_roofs_measure_once_then_read_the_cache(tmp_path, monkeypatch, cpu_backend):
    calls = []

    def fake(backend, **kw):
        calls.append(kw)
        return roofs(key=device_key(backend), measured_at=f"run {len(calls)}")
    monkeypatch.setattr(roofs_pkg, "measure_roofs", fake)
    first = device_roofs(cpu_backend, folder=str(tmp_path))
    again = device_roofs(cpu_backend, folder=str(tmp_path))
    assert len(calls) == 1 and again == first
    fresh = device_roofs(cpu_backend, remeasure=True, folder=str(tmp_path))
    assert len(calls) == 2 and fresh.measured_at == "run 2"
    assert device_roofs(cpu_backend, folder=str(tmp_path)).measured_at == "run 2"


def test_simulator_roofs_are_never_kept(tmp_path, monkeypatch, cpu_backend):
    sim = roofs(key=device_key(cpu_backend), simulated=True, bandwidth_Bps=None, f32_flops=None,
                f64_flops=None, int32_ops=None, note="simulator: roofs not measured")
    monkeypatch.setattr(roofs_pkg, "measure_roofs", lambda backend, **kw: sim)
    assert device_roofs(cpu_backend, folder=str(tmp_path)) == sim
    assert not (tmp_path / store.FILE_NAME).exists()


def test_an_unwritable_cache_is_said_in_the_note(tmp_path, monkeypatch, cpu_backend):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setattr(roofs_pkg, "measure_roofs",
                        lambda backend, **kw: roofs(key=device_key(backend)))
    r = device_roofs(cpu_backend, folder=str(blocker / "sub"))
    assert r.measured and "could not be kept" in r.note


def test_an_off_cache_keeps_nothing(monkeypatch, cpu_backend, tmp_path):
    monkeypatch.setenv(store.ENV_DIR, store.OFF)
    assert store.cache_path() is None
    assert store.save(roofs(key="x")) is None and store.load("x") is None
    monkeypatch.setenv(store.ENV_DIR, str(tmp_path))
    assert store.cache_path() == str(tmp_path / store.FILE_NAME)


def test_the_target_check_measures_both_sides(cpu_backend):
    from kernels.roofs.check import check, format_rows
    rows = check(cpu_backend, nbytes=1 << 20, target_ms=2.0, repeats=2)
    assert [r["quantity"].split()[0] for r in rows] == ["bandwidth", "float32", "float64", "int32"]
    for r in rows:
        assert r["roof"] > 0 and r["check"] > 0
        assert r["ratio"] == pytest.approx(r["roof"] / r["check"])
        assert r["within"] == (abs(r["ratio"] - 1) <= 0.10)
    text = format_rows(rows, "test CPU")
    assert "test CPU" in text and len(text.splitlines()) == 6


@pytest.mark.gpu
def test_the_target_check_on_the_gpu(gpu_backend, simulated, small_stream_probes):
    from kernels.roofs.check import check
    rows = check(gpu_backend, nbytes=64 << 20, target_ms=5.0, repeats=3)
    if simulated:
        assert len(rows) == 1 and "simulator" in rows[0]["note"] and rows[0]["ratio"] is None
    else:
        assert len(rows) == 4 and all(r["ratio"] for r in rows)


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["f32", "f64", "int32"])
def test_gpu_chain_loops_are_multiply_adds(kind, monkeypatch, numba_cuda):
    """Compiled to PTX (needs NVVM), each chain kernel's loop is nearly all multiply-adds: its
    counter and branch must not take the issue slots the peak is made of."""
    import types

    from kernels.backend import simulator_enabled
    from tools.ptx_loops import arithmetic_share, loops
    if simulator_enabled():
        pytest.skip("the simulator compiles no PTX")
    cuda = numba_cuda
    from numba.cuda import dispatcher
    monkeypatch.setattr(dispatcher, "get_current_device",
                        lambda: types.SimpleNamespace(compute_capability=(9, 0)))
    dt = {"f32": "float32", "f64": "float64", "int32": "int32"}[kind]
    try:
        ptx, _ = cuda.compile_ptx(chains._build_gpu(kind).py_func,
                                  f"{dt}[::1], int64, {dt}, {dt}", cc=(9, 0))
    except Exception as exc:   # no NVVM: a machine without the CUDA toolkit
        pytest.skip(f"cannot compile PTX here: {type(exc).__name__}")
    (_, ops), = loops(ptx)
    arith, total = arithmetic_share(ops, kind)
    assert arith >= chains.GPU_CHAINS * chains.GPU_UNROLL - 1
    assert arith / total >= 0.9, ops


def test_kept_rates_read_the_file_again_only_when_it_changed(monkeypatch, tmp_path):
    """The window asks for the kept rates on every frame, on the UI thread: one read per change."""
    import os

    from kernels.backend import Backend
    roofs = roofs_pkg
    monkeypatch.setenv("GPU_EXPLORER_CACHE_DIR", str(tmp_path))
    gpu = Backend("cuda", device="Some GPU")
    key = roofs.device_key(gpu)
    assert roofs.kept_rates(gpu) is None                      # nothing kept yet
    keep = lambda f32: store.save(roofs.Roofs("cuda", "Some GPU", f32_flops=f32, f64_flops=1e12,
                                              key=key))
    assert keep(4e12) is None
    reads = []
    real_load = store.load
    monkeypatch.setattr(store, "load", lambda *a, **k: reads.append(1) or real_load(*a, **k))
    assert roofs.kept_rates(gpu) == (4e12, 1e12) and roofs.kept_rates(gpu) == (4e12, 1e12)
    assert len(reads) == 1
    monkeypatch.setattr(store, "load", real_load)
    assert keep(8e12) is None
    path = store.cache_path()
    os.utime(path, ns=(os.stat(path).st_mtime_ns + 10**9,) * 2)   # a later write, whatever the clock
    assert roofs.kept_rates(gpu) == (8e12, 1e12)
