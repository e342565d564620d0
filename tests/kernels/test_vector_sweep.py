"""The throughput sweep as a plain generator: references first, one point per step, memory checks,
cancellation, failures; and the bench rows built on it."""
import time

import numpy as np
import pytest

from kernels.vector import bench as vector_bench
from kernels.vector import memory as vector_memory
from kernels.vector import sweep as vector_sweep
from kernels.vector.ops import OP_NAMES, Impl, ImplUnavailable
from kernels.vector.sweep import (
    ImplUnavailableNotice,
    SweepError,
    SweepPoint,
    SweepReferences,
    SweepSummary,
    crossover,
    sizes_up_to,
    sweep,
)

REF = 2**16


def _points(items):
    return [i for i in items if isinstance(i, SweepPoint)]


def test_cpu_sweep_yields_the_first_sizes_points_then_references_then_the_rest(cpu_backend):
    items = list(sweep(cpu_backend, ["add", "saxpy"], ["cpu-numba", "numpy"], vector_sweep.MODES,
                       [2**10, 2**12], ref_bytes=REF, repeats=3))
    # the first point shows without waiting for the chart's ceilings
    refs = [k for k, i in enumerate(items) if isinstance(i, SweepReferences)]
    assert refs == [4] and items[4].refs["cpu-copy"] > 0
    assert {i.N for i in items[:4]} == {2**10} and {i.N for i in items[5:]} == {2**12}
    pts = _points(items)
    # CPU implementations run in kernel mode only: 2 sizes × 2 ops × 2 impls
    assert len(pts) == 8 == len(items) - 1
    assert {(p.impl, p.mode) for p in pts} == {("cpu-numba", "kernel"), ("numpy", "kernel")}
    for p in pts:
        assert p.skipped is None and p.measured
        assert p.gbs > 0 and p.gelems > 0 and 1 <= p.repeats <= 3
        assert p.bytes == 12 * p.N and p.bus_bytes == 0
        assert p.time_ms == p.kernel_ms and p.h2d_ms is None and p.d2h_ms is None
        assert p.gbs == pytest.approx(12 * p.N / (p.kernel_ms * 1e-3) / 1e9)
        assert p.timings.phases_ms["kernel"] == p.kernel_ms
    assert [p.index for p in pts] == list(range(1, 9)) and pts[-1].total == 8


def test_points_export_in_the_layout_files_have_always_had(cpu_backend):
    gen = sweep(cpu_backend, ["add"], ["numpy"], ["kernel"], [2**10, 2**11], ref_bytes=REF, repeats=1)
    items = []
    with pytest.raises(StopIteration) as stop:
        while True:
            items.append(next(gen))
    assert stop.value.value == SweepSummary(points=2, total=2)
    p = _points(items)[0]
    d = p.as_dict()
    assert list(d) == ["type", "op", "impl", "mode", "N", "skipped", "phases_ms", "ms", "GB/s",
                       "Gelem/s", "bytes", "bus_bytes", "repeats", "index", "total"]
    assert d["type"] == "point" and d["N"] == 1024 and d["ms"] == p.kernel_ms
    assert d["GB/s"] == p.gbs == p.rate("GB/s") and d["Gelem/s"] == p.gelems == p.rate("Gelem/s")
    assert set(d["phases_ms"]) == {"h2d", "kernel", "d2h", "total", "compile"}
    assert d["phases_ms"]["kernel"] == p.kernel_ms and d["phases_ms"]["compile"] is None  # numpy
    import json
    json.dumps(d)   # nothing that JSON cannot hold (the Timings object stays out)
    skipped = SweepPoint("add", "numpy", "kernel", 2**40, skipped="too big")
    assert skipped.as_dict()["phases_ms"] == {} and skipped.as_dict()["skipped"] == "too big"
    with pytest.raises(AttributeError):
        p.gbs = 0.0   # frozen


def test_sizes_beyond_host_memory_are_skipped_with_the_reason(cpu_backend, monkeypatch):
    # 3 arrays of 4 bytes with a 0.8 margin: 2^13 elements fit in 200 kB, 2^14 do not
    monkeypatch.setattr(vector_memory, "host_free_bytes", lambda: 200_000)
    pts = _points(sweep(cpu_backend, ["copy"], ["numpy"], ["kernel"], sizes_up_to(15),
                        ref_bytes=REF, repeats=1))
    ran = [p.N for p in pts if not p.skipped]
    skipped = [p for p in pts if p.skipped]
    assert ran == [2**10, 2**11, 2**12, 2**13]
    assert [p.N for p in skipped] == [2**14, 2**15]
    assert all("host memory" in p.skipped and p.gbs is None for p in skipped)
    assert vector_sweep.max_fitting_exponent(gpu=False, pinned=False) == 13


def test_cancel_stops_within_one_point(cpu_backend):
    class Token:
        cancelled = False

    token = Token()
    gen = sweep(cpu_backend, OP_NAMES, ["numpy"], ["kernel"], sizes_up_to(14), token,
                ref_bytes=REF, repeats=2)
    seen = []
    for item in gen:
        seen.append(item)
        if isinstance(item, SweepPoint):
            token.cancelled = True
    assert len(_points(seen)) == 1


def test_cancel_raises_the_workers_exception_when_the_token_has_check(cpu_backend):
    class Stop(Exception):
        pass

    class Token:
        cancelled = False

        def check(self):
            if self.cancelled:
                raise Stop()

    token = Token()
    gen = sweep(cpu_backend, ["copy"], ["numpy"], ["kernel"], sizes_up_to(12), token, ref_bytes=REF)
    assert isinstance(next(gen), SweepPoint)
    assert isinstance(next(gen), SweepReferences)
    assert isinstance(next(gen), SweepPoint)
    token.cancelled = True
    with pytest.raises(Stop):
        next(gen)


def _fake_impl(name, fail_at=None, exc=None):
    def copy(ins, out, s, stream=None):
        if fail_at is not None and out.size >= fail_at:
            raise exc
        np.copyto(out, ins[0])
    return Impl(name, True, "", "cpu", "test double", {"copy": copy})


def test_a_gpu_error_mid_sweep_stops_it_with_a_message(cpu_backend):
    bad = _fake_impl("flaky", fail_at=2**11,
                     exc=RuntimeError("[700] Call to cuLaunchKernel results in CUDA_ERROR_ILLEGAL_ADDRESS"))
    gen = sweep(cpu_backend, ["copy"], [bad], ["kernel"], sizes_up_to(13), ref_bytes=REF, repeats=1)
    items = list(gen)
    assert [p.N for p in _points(items)] == [2**10]
    assert isinstance(items[-1], SweepError)
    assert "flaky failed on copy" in items[-1].message and "ILLEGAL_ADDRESS" in items[-1].message


def test_an_implementation_failing_to_compile_is_reported_and_skipped(cpu_backend):
    bad = _fake_impl("broken", fail_at=0, exc=ImplUnavailable("NVRTC could not compile 'copy': boom"))
    items = list(sweep(cpu_backend, ["copy"], [bad, "numpy"], ["kernel"], [2**10, 2**11],
                       ref_bytes=REF, repeats=1))
    notes = [i for i in items if isinstance(i, ImplUnavailableNotice)]
    assert notes == [ImplUnavailableNotice("broken", "NVRTC could not compile 'copy': boom")]
    pts = _points(items)
    assert [p.skipped for p in pts if p.impl == "broken"] == ["NVRTC could not compile 'copy': boom"] * 2
    assert all(p.skipped is None for p in pts if p.impl == "numpy")


def test_unknown_names_are_refused_with_the_choices(cpu_backend):
    with pytest.raises(ValueError, match="cpu-numba"):
        list(sweep(cpu_backend, ["copy"], ["fortran"], ["kernel"], [1024], ref_bytes=REF))
    with pytest.raises(ValueError, match="pageable"):
        list(sweep(cpu_backend, ["copy"], ["numpy"], ["zero-copy"], [1024], ref_bytes=REF))


def _pt(impl, mode, n, gelem):
    return SweepPoint("add", impl, mode, n, gelems=gelem, repeats=1)


def test_crossover_is_where_the_gpu_end_to_end_stays_ahead():
    pts = [_pt("cpu-numba", "kernel", n, 1.0) for n in (1, 2, 4, 8)]
    pts += [_pt("cuda-jit", "pinned", 1, 0.1), _pt("cuda-jit", "pinned", 2, 2.0),
            _pt("cuda-jit", "pinned", 4, 0.5), _pt("cuda-jit", "pinned", 8, 3.0),
            _pt("cuda-jit", "kernel", 1, 50.0)]   # kernel-only never counts
    assert crossover(pts) == 8
    pts.append(_pt("nvrtc", "pageable", 4, 1.5))
    assert crossover(pts) == 2   # 2.0, 1.5, 3.0 all beat 1.0 from N = 2 on
    assert crossover([p for p in pts if p.impl == "cpu-numba"]) is None
    assert crossover([SweepReferences({}, 0)] + pts) == 2     # other items are ignored


def test_bench_rows_on_the_cpu(cpu_backend, monkeypatch):
    monkeypatch.setattr(vector_bench, "REF_BYTES", REF)
    monkeypatch.setattr(vector_bench, "_refs", {})
    monkeypatch.setattr(vector_bench, "_runners", {})
    rows = vector_bench.bench_op("add", cpu_backend, 3, n=2**12)
    assert [r["variant"] for r in rows] == ["cpu-numba/kernel", "numpy/kernel"]
    for r in rows:
        assert r["workload"] == "vector-add" and r["size"] == "2^12"
        assert r["metrics"]["GB/s"] > 0 and r["metrics"]["% of CPU copy"] > 0
        assert r["phases_ms"]["kernel"] > 0 and set(r["phases_ms"]) >= {"compile", "h2d", "total"}
    names = [w.name for w in vector_bench.workloads()]
    assert names == [f"vector-{op}" for op in OP_NAMES] + ["vector-add-320M"]
    assert vector_bench.workloads()[-1].backends == ("cuda",)


def test_pinned_reference_combines_both_directions():
    from kernels.vector.ops import get_op
    refs = {"h2d-pinned": 50.0, "d2h-pinned": 25.0}
    # add: 8 bytes in at 50 GB/s, 4 out at 25 GB/s -> 12 bytes in 0.32 ns
    assert vector_bench.pinned_reference(refs, get_op("add")) == pytest.approx(12 / 0.32)
    assert vector_bench.pinned_reference({}, get_op("add")) is None


@pytest.mark.gpu
def test_gpu_sweep_small(gpu_backend, simulated, monkeypatch):
    sizes = [2**10] if simulated else [2**10, 2**16]
    items = list(sweep(gpu_backend, ["saxpy"], ["cuda-jit", "cpu-numba"], vector_sweep.MODES, sizes,
                       ref_bytes=REF, repeats=2))
    pts = _points(items)
    assert len(pts) == 4 * len(sizes)
    for p in pts:
        assert p.skipped is None
        if simulated and p.impl == "cuda-jit":
            assert p.gbs is None and p.kernel_ms is None and "simulator" in p.note  # never invented
        else:
            assert p.gbs > 0
    e2e = [p for p in pts if p.mode != "kernel"]
    assert all(p.timings.bytes == {"h2d": 8 * p.N, "d2h": 4 * p.N} for p in e2e)
    assert all(p.bus_bytes == 12 * p.N for p in e2e)
    # a device that is too small: the point is skipped, saying why
    monkeypatch.setattr(vector_memory, "free_device_bytes", lambda: 10_000)
    pts = _points(sweep(gpu_backend, ["copy"], ["cuda-jit"], ["kernel"], [2**10], ref_bytes=REF))
    assert "GPU memory" in pts[0].skipped


MiB = 2**20


def test_reference_size_is_beyond_the_caches_when_memory_allows(monkeypatch):
    monkeypatch.setattr(vector_memory, "host_free_bytes", lambda: 64 * 2**30)
    monkeypatch.setattr(vector_memory, "free_device_bytes", lambda: 80 * 2**30)
    assert vector_sweep.REF_BYTES == 256 * MiB
    assert vector_sweep.reference_bytes(gpu=True) == 256 * MiB
    assert vector_sweep.reference_bytes(gpu=False) == 256 * MiB
    # unknown free memory (e.g. no /proc): the full size
    monkeypatch.setattr(vector_memory, "host_free_bytes", lambda: None)
    monkeypatch.setattr(vector_memory, "free_device_bytes", lambda: None)
    assert vector_sweep.reference_bytes(gpu=True) == 256 * MiB


def test_reference_size_halves_until_the_probe_fits(monkeypatch):
    monkeypatch.setattr(vector_memory, "free_device_bytes", lambda: 80 * 2**30)
    # the GPU probe holds 4 host buffers: 1 GiB free × 0.8 takes 4 × 128 MiB, not 4 × 256 MiB
    monkeypatch.setattr(vector_memory, "host_free_bytes", lambda: 2**30)
    assert vector_sweep.reference_bytes(gpu=True) == 128 * MiB
    assert vector_sweep.reference_bytes(gpu=False) == 256 * MiB   # 2 buffers on the CPU
    # source and destination on the device: 300 MiB × 0.9 takes 2 × 128 MiB
    monkeypatch.setattr(vector_memory, "host_free_bytes", lambda: 64 * 2**30)
    monkeypatch.setattr(vector_memory, "free_device_bytes", lambda: 300 * MiB)
    assert vector_sweep.reference_bytes(gpu=True) == 128 * MiB
    assert vector_sweep.reference_bytes(gpu=False) == 256 * MiB   # the device does not count
    # almost nothing free: the floor, not zero
    monkeypatch.setattr(vector_memory, "free_device_bytes", lambda: MiB)
    assert vector_sweep.reference_bytes(gpu=True) == vector_sweep.MIN_REF_BYTES
    # a size asked for below the floor is kept (tests and the simulator use tiny ones)
    assert vector_sweep.reference_bytes(gpu=True, want=2**16) == 2**16


def test_sweep_measures_its_references_at_the_fitting_size(cpu_backend, monkeypatch):
    from kernels import transfer
    asked = []

    def fake_measure(backend, nbytes, repeats=10):
        asked.append((nbytes, repeats))
        return {"cpu-copy": 10.0}

    monkeypatch.setattr(transfer, "measure", fake_measure)
    monkeypatch.setattr(vector_memory, "host_free_bytes", lambda: 2**30)   # 0.8 GiB: 2 × 256 MiB fit
    items = list(sweep(cpu_backend, ["copy"], ["numpy"], ["kernel"], [2**10], repeats=1))
    assert asked == [(256 * MiB, vector_sweep.REF_REPEATS)]
    # one size: its point, then the references
    assert isinstance(items[0], SweepPoint)
    assert items[1] == SweepReferences({"cpu-copy": 10.0}, 256 * MiB, None)
    monkeypatch.setattr(vector_memory, "host_free_bytes", lambda: 600 * MiB)  # 480 MiB usable
    items = list(sweep(cpu_backend, ["copy"], ["numpy"], ["kernel"], [2**10], repeats=1))
    assert asked[-1][0] == 128 * MiB and items[1].bytes == 128 * MiB


def test_bench_times_ilp_kernels_on_the_device_only(cpu_backend, monkeypatch):
    from kernels.vector.ops import Impl
    calls = []

    class FakeRunner:
        def measure(self, op_name, impl, mode, n, repeats=None):
            calls.append((impl.name, mode))
            return SweepPoint(op_name, impl.name, mode, n, skipped="test double")

    gpu = type("B", (), {"name": "cuda", "simulated": False, "is_gpu": True})()
    fakes = [Impl(name, True, "", "gpu", "", {}) for name in ("cuda-jit", "cuda-jit-ilp4", "nvrtc-ilp4")]
    monkeypatch.setattr(vector_bench, "implementations", lambda backend: fakes)
    monkeypatch.setattr(vector_bench, "references", lambda backend: {})
    monkeypatch.setattr(vector_bench, "_runner", lambda backend, repeats: FakeRunner())
    rows = vector_bench.bench_op("copy", gpu, 3, n=2**12)
    assert calls == [("cuda-jit", "kernel"), ("cuda-jit", "pinned"), ("cuda-jit", "pageable"),
                     ("cuda-jit-ilp4", "kernel"), ("nvrtc-ilp4", "kernel")]
    assert [r["variant"] for r in rows][-2:] == ["cuda-jit-ilp4/kernel", "nvrtc-ilp4/kernel"]


def test_copy_ceiling_is_the_fastest_copy(monkeypatch):
    """The d2d ceiling rises to the fastest implementation's copy, and only on a real GPU."""
    from kernels.backend import Backend
    from kernels.vector import sweep as vs

    class FakeImpl:
        def __init__(self, name, available=True, device="gpu"):
            self.name, self.available, self.device, self.modes = name, available, device, ("kernel",)

    speeds = {"slow": 1000.0, "fast": 3000.0}

    class FakeRunner:
        def measure(self, op, impl, mode, n):
            assert op == "copy" and mode == "kernel"
            return SweepPoint(op, impl.name, mode, n, gbs=speeds[impl.name], repeats=1)

    monkeypatch.setattr(vs, "implementations",
                        lambda b: [FakeImpl("slow"), FakeImpl("fast"), FakeImpl("off", available=False),
                                   FakeImpl("cpu", device="cpu")])
    refs = {"d2d-copy": 2000.0}
    assert vs.add_copy_ceiling(refs, Backend("cuda", device="x"), 1024, FakeRunner()) == "fast"
    assert refs["d2d-copy"] == 3000.0
    refs = {"d2d-copy": 5000.0}
    assert vs.add_copy_ceiling(refs, Backend("cuda", device="x"), 1024, FakeRunner()) == "probe"
    assert refs["d2d-copy"] == 5000.0
    refs = {"d2d-copy": 2000.0}
    assert vs.add_copy_ceiling(refs, Backend("cuda", simulated=True), 1024, FakeRunner()) is None
    assert refs["d2d-copy"] == 2000.0  # the simulator measures no time: nothing to compare


def test_the_sweep_asks_the_buffers_module_for_free_device_memory(monkeypatch):
    from kernels import buffers
    # one probe of device memory, in kernels/buffers.py: the sweep takes its free bytes
    assert vector_sweep.free_device_bytes is buffers.free_device_bytes
    monkeypatch.setattr(buffers, "device_free_bytes", lambda: (123 * MiB, 456 * MiB))
    assert buffers.free_device_bytes() == 123 * MiB
    monkeypatch.setattr(buffers, "device_free_bytes", lambda: None)
    assert buffers.free_device_bytes() is None


def test_dot_is_swept_in_the_implementations_that_have_it(cpu_backend):
    items = list(sweep(cpu_backend, ["dot"], ["vectorize", "cpu-numba", "numpy"], ["kernel"],
                       [2**10, 2**11], ref_bytes=REF, repeats=1))
    notices = [i.message for i in items if isinstance(i, vector_sweep.SweepNotice)]
    assert notices == ["dot is not implemented by vectorize: left out"]
    pts = _points(items)
    assert [(p.impl, p.N) for p in pts] == [("cpu-numba", 1024), ("numpy", 1024),
                                            ("cpu-numba", 2048), ("numpy", 2048)]
    assert all(p.bytes == 8 * p.N and p.gbs > 0 and p.total == 4 for p in pts)
    gpu = type("B", (), {"name": "cuda", "simulated": False, "is_gpu": True})()
    impls = [Impl(name, True, "", "gpu", "", {}) for name in ("cuda-jit", "cuda-jit-stride")]
    combos = vector_sweep.plan(gpu, ["dot", "add"], impls, ["kernel", "pinned"])
    assert [(op, impl.name, mode) for op, impl, mode in combos] == [
        ("dot", "cuda-jit-stride", "kernel"), ("dot", "cuda-jit-stride", "pinned"),
        ("add", "cuda-jit", "kernel"), ("add", "cuda-jit", "pinned"),
        ("add", "cuda-jit-stride", "kernel"), ("add", "cuda-jit-stride", "pinned")]


@pytest.mark.gpu
def test_gpu_dot_end_to_end_copies_the_sum_back(gpu_backend, simulated):
    # one block under the simulator, where each dot of 2^10 (five blocks of 256 threads that meet
    # at nine barriers) takes seconds; the sum over blocks is tests/kernels/test_vector_ops.py's
    n = 2**8 if simulated else 2**10
    pts = _points(sweep(gpu_backend, ["dot"], ["cuda-jit-stride", "cpu-numba"], vector_sweep.MODES,
                        [n], ref_bytes=REF, repeats=1))
    assert [(p.impl, p.mode) for p in pts] == [("cuda-jit-stride", m) for m in vector_sweep.MODES] + [
        ("cpu-numba", "kernel")]
    for p in pts:
        assert p.skipped is None and p.bytes == 8 * p.N
        if p.mode != "kernel":
            # the inputs in, 8 bytes of result out
            assert p.timings.bytes == {"h2d": 8 * p.N, "d2h": 8} and p.bus_bytes == 8 * p.N
        if not (simulated and p.impl != "cpu-numba"):
            assert p.gbs > 0


def test_a_cpu_op_is_warmed_for_a_while_before_its_timed_runs(cpu_backend):
    """Arrays just allocated take many calls to settle (issue 39): a CPU op is called for WARM_S,
    at least 3 times, before the runs its point is the median of; a GPU op once."""
    from kernels.vector import runner as vector_runner
    stamps = []

    def copy(ins, out, s, stream=None):
        stamps.append(time.perf_counter())
        np.copyto(out, ins[0])
    impl = Impl("counting", True, "", "cpu", "test double", {"copy": copy}, jit=False)
    point = vector_runner.PointRunner(cpu_backend, repeats=4, budget_s=5.0).measure(
        "copy", impl, "kernel", 2**10)
    assert point.repeats == 4
    warm = stamps[:-4]
    assert len(warm) >= 3 and warm[-1] - warm[0] >= vector_runner.WARM_S * 0.9, len(warm)


def test_the_sweep_measures_each_cpu_point_inside_settle(cpu_backend, monkeypatch):
    """The window's GUI thread steps aside around a CPU point (explorer/gui_quiet.py): the sweep
    enters `settle()` around each helper-measured point and nowhere else."""
    from contextlib import contextmanager

    inside, seen, started = [False], [], []

    @contextmanager
    def settle():
        inside[0] = True
        yield
        inside[0] = False

    class Runner:
        note = None

        def start_helper(self):
            started.append(list(seen))

        def measure(self, op, impl, mode, n, cancel=None):
            seen.append((impl.name, inside[0]))
            return SweepPoint(op, impl.name, mode, n, gbs=1.0, repeats=1)

        def release(self):
            pass
    helper = Impl("helped", True, "", "cpu", "", {"copy": None}, in_helper=True)
    local = Impl("local", True, "", "cpu", "", {"copy": None})
    monkeypatch.setattr(vector_sweep, "point_runner", lambda *a, **k: Runner())
    list(vector_sweep.sweep(cpu_backend, ["copy"], [helper, local], ["kernel"], [2**10, 2**11],
                            ref_bytes=REF, repeats=1, settle=settle))
    assert seen == [("helped", True), ("local", False)] * 2
    assert started == [[]]          # the helper process boots before the first point is asked
