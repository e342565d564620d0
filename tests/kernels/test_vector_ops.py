"""The vector ops: every implementation against the NumPy reference, byte counts, and the reasons
given when an implementation cannot run."""
from types import SimpleNamespace

import numpy as np
import pytest

from kernels.vector import nvrtc as vector_nvrtc
from kernels.vector import ops as vector_ops
from kernels.vector import pycuda_impl as vector_pycuda
from kernels.vector.ops import OP_NAMES, SCALAR, ImplUnavailable, get_op, reference
from kernels.vector.registry import implementations

# 255, 256, 257 and 258: every remainder mod 4, which the four-per-thread kernels must handle
SIZES = (0, 1, 255, 256, 257, 258, 10**5)
SIM_SIZES = (0, 1, 255, 256, 257, 258)
# dot has no four-per-thread kernel, and each of its launches under the simulator makes 256
# threads meet at nine barriers (~1.5 s): nothing, one short block, and a second block with one
# element (more blocks and the grid-stride loop: test_dot_kernel_sums_over_the_grid_stride_loop…)
SIM_DOT_SIZES = (0, 255, 257)


def _inputs(op_name, n, seed=0):
    rng = np.random.default_rng(seed + n)
    k = len(get_op(op_name).inputs)
    return tuple((rng.random(n, dtype=np.float32) + np.float32(0.5)) for _ in range(k))


def test_byte_and_flop_counts():
    expect = {"copy": (8, 4, 0), "scale": (8, 4, 1), "add": (12, 8, 1), "triad": (12, 8, 2),
              "saxpy": (12, 8, 2), "seed-expr": (12, 8, 7)}
    for name, (nbytes, h2d, flops) in expect.items():
        op = get_op(name)
        assert op.bytes_per_element == nbytes, name
        assert op.h2d_bytes_per_element == h2d, name
        assert op.bus_bytes_per_element == h2d + 4, name
        assert op.flops == flops, name
        assert not op.reduction and op.out_shape(7) == (7,) and op.out_dtype == np.float32
    assert get_op("saxpy").inplace and not get_op("add").inplace
    # dot, as BabelStream counts it: two reads per element, one multiply-add, an 8-byte result
    dot = get_op("dot")
    assert (dot.bytes_per_element, dot.h2d_bytes_per_element, dot.bus_bytes_per_element) == (8, 8, 8)
    assert dot.flops == 2 and dot.reduction and not dot.inplace
    assert dot.out_shape(10**6) == (1,) and dot.out_dtype == np.float64
    assert vector_ops.ELEMENTWISE_OPS == tuple(n for n in OP_NAMES if n != "dot")


def test_which_implementations_have_which_op(cpu_backend):
    impls = {i.name: i for i in implementations(_REAL_GPU)}
    for name in ("cuda-jit-stride", "cpu-numba", "numpy"):
        assert "dot" in impls[name].ops and get_op("dot").implemented_by(name)
    for name in ("vectorize", "cuda-jit", "cuda-jit-ilp4"):
        assert "dot" not in impls[name].ops and not get_op("dot").implemented_by(name)
    for impl in impls.values():
        assert set(vector_ops.ELEMENTWISE_OPS) <= set(impl.ops) or not impl.available
    # the CUDA C++ sources cover the elementwise ops, no more
    assert set(vector_nvrtc.SOURCES) == set(vector_ops.ELEMENTWISE_OPS)
    assert set(vector_nvrtc.ops("ilp4")) == set(vector_ops.ELEMENTWISE_OPS)


def test_unknown_op_names_the_choices():
    with pytest.raises(ValueError, match="seed-expr"):
        get_op("fma")


def test_reference_seed_expression_by_hand():
    a, b = np.array([1.0], np.float32), np.array([0.0], np.float32)
    assert reference("seed-expr", (a, b))[0] == pytest.approx((1 * 10 + 2) * ((0 + 2) * 10 - 5) * 5)
    assert reference("triad", (a, b + 2))[0] == pytest.approx(1 + 3 * 2)
    x, y = np.array([1.5, 2.0, 0.25], np.float32), np.array([2.0, -1.0, 4.0], np.float32)
    got = reference("dot", (x, y))
    assert got.dtype == np.float64 and got.shape == (1,) and got[0] == 3.0 - 2.0 + 1.0


def _run_host(impl, op_name, ins):
    op = get_op(op_name)
    ins = tuple(x.copy() for x in ins)
    out = ins[1] if op.inplace else np.full(op.out_shape(ins[0].size), np.nan, op.out_dtype)
    impl.ops[op_name](ins, out, SCALAR)
    return out


def _rtol(impl_name, op_name):
    # dot sums in float64 (exact products) except NumPy's float32 BLAS sdot
    if op_name == "dot":
        return 1e-5 if impl_name == "numpy" else 1e-12
    return 1e-6


@pytest.mark.parametrize("impl_name", ["cpu-numba", "numpy"])
@pytest.mark.parametrize("op_name", OP_NAMES)
def test_cpu_implementations_match_reference(cpu_backend, impl_name, op_name):
    impl = {i.name: i for i in implementations(cpu_backend)}[impl_name]
    assert impl.available and impl.reason == ""
    op = get_op(op_name)
    for n in SIZES:
        ins = _inputs(op_name, n)
        got = _run_host(impl, op_name, ins)
        want = reference(op_name, ins)
        assert got.dtype == op.out_dtype and got.shape == op.out_shape(n)
        np.testing.assert_allclose(got, want, rtol=_rtol(impl_name, op_name),
                                   err_msg=f"{impl_name} {op_name} N={n}")


def test_gpu_implementations_unavailable_on_cpu_backend(cpu_backend):
    impls = implementations(cpu_backend)
    names = [i.name for i in impls]
    assert names == list(vector_ops.IMPL_NAMES)
    for impl in impls:
        if impl.device == "gpu":
            assert not impl.available and "CUDA backend" in impl.reason
        else:
            assert impl.available


@pytest.mark.gpu
def test_gpu_implementations_match_reference(gpu_backend, simulated):
    from numba import cuda
    stream = cuda.stream()
    ran, why = [], {}
    for impl in implementations(gpu_backend):
        if impl.device != "gpu":
            continue
        if not impl.available:
            assert impl.reason.strip(), f"{impl.name} unavailable without a reason"
            continue
        try:
            for op_name in OP_NAMES:
                op = get_op(op_name)
                if not op.implemented_by(impl.name):
                    assert op_name not in impl.ops
                    continue
                for n in ((SIM_DOT_SIZES if op.reduction else SIM_SIZES) if simulated else SIZES):
                    ins = _inputs(op_name, n)
                    d_ins = tuple(cuda.to_device(x, stream=stream) for x in ins)
                    # poisoned output: an element left unwritten stays NaN and fails; in place
                    # (saxpy) an unwritten element keeps y, which differs from s·x + y
                    d_out = d_ins[1] if op.inplace else cuda.to_device(
                        np.full(op.out_shape(n), np.nan, op.out_dtype), stream=stream)
                    impl.ops[op_name](d_ins, d_out, SCALAR, stream)
                    got = d_out.copy_to_host(stream=stream)
                    stream.synchronize()
                    np.testing.assert_allclose(got, reference(op_name, ins),
                                               rtol=_rtol(impl.name, op_name),
                                               err_msg=f"{impl.name} {op_name} N={n}")
        except ImplUnavailable as exc:  # e.g. NVRTC failing: a reason, never a silent gap
            assert str(exc).strip()
            why[impl.name] = str(exc)
            continue
        ran.append(impl.name)
    assert {"cuda-jit", "cuda-jit-stride", "cuda-jit-ilp4"} <= set(ran), why
    if not simulated:  # on a real GPU the seed's ufuncs, NVRTC and PyCUDA must work, not just explain
        assert "vectorize" in ran, why
        if vector_ops.module_available("cuda.core"):
            assert "nvrtc" in ran and "nvrtc-ilp4" in ran, why
        if vector_ops.module_available("pycuda"):
            assert "pycuda" in ran, why
    if simulated:
        reasons = {i.name: i.reason for i in implementations(gpu_backend)}
        for name in ("nvrtc", "nvrtc-ilp4", "pycuda", "vectorize"):
            assert "simulator" in reasons[name]


_REAL_GPU = SimpleNamespace(is_gpu=True, simulated=False, name="cuda")


def test_missing_packages_are_reported(monkeypatch):
    monkeypatch.setattr(vector_nvrtc, "module_available", lambda name: False)
    monkeypatch.setattr(vector_pycuda, "module_available", lambda name: False)
    assert "cuda.core is not installed" in vector_nvrtc.unavailable_reason(_REAL_GPU)
    assert "PyCUDA is not installed" in vector_pycuda.unavailable_reason(_REAL_GPU)
    impls = {i.name: i for i in implementations(_REAL_GPU)}
    assert not impls["nvrtc"].available and "cuda.core" in impls["nvrtc"].reason
    assert not impls["pycuda"].available and "PyCUDA" in impls["pycuda"].reason


def test_nvrtc_compile_failure_becomes_a_reason(monkeypatch):
    class BrokenProgram:
        def __init__(self, code, code_type, options=None):
            self.code = code

        def compile(self, target, logs=None):
            if logs is not None:
                logs.write("default_program(2): error: identifier \"flaot\" is undefined")
            raise RuntimeError("NVRTC_ERROR_COMPILATION")

    fake_core = SimpleNamespace(Program=BrokenProgram, ProgramOptions=lambda **kw: kw)
    monkeypatch.setattr(vector_nvrtc, "_core", lambda: fake_core)
    kernels = vector_nvrtc._NvrtcKernels()
    monkeypatch.setattr(kernels, "_device_current", lambda: SimpleNamespace(arch="90"))
    with pytest.raises(ImplUnavailable, match="NVRTC could not compile 'add'.*flaot"):
        kernels.kernel("add")


def test_kernel_arguments_follow_the_c_signatures():
    class FakeDev:
        def __init__(self, ptr):
            self.__cuda_array_interface__ = {"data": (ptr, False)}

    a, b, c = FakeDev(16), FakeDev(32), FakeDev(48)
    args = vector_nvrtc.kernel_args("triad", (a, b), c, 3.0, 1000)
    assert [int(x) for x in args[:3]] == [16, 32, 48]
    assert args[3].dtype == np.float32 and args[4].dtype == np.uint64 and int(args[4]) == 1000
    args = vector_nvrtc.kernel_args("saxpy", (a, b), b, 3.0, 5)
    assert [int(x) for x in args[:2]] == [16, 32] and len(args) == 4
    for name in vector_ops.ELEMENTWISE_OPS:
        assert vector_nvrtc.KERNEL_NAMES[name] in vector_nvrtc.SOURCES[name]


def _fake_cuda_core(module_class, launches: list, check_program=None):
    """A stand-in for cuda.core: Program compiles to module_class(), launch() records its args."""

    class FakeProgram:
        def __init__(self, code, code_type, options=None):
            if check_program is not None:
                check_program(code, code_type, options)

        def compile(self, target, logs=None):
            assert target == "cubin"
            return module_class()

    class FakeLaunchConfig:
        def __init__(self, grid=None, block=None):
            self.grid, self.block = grid, block

    return SimpleNamespace(Program=FakeProgram, ProgramOptions=lambda **kw: kw,
                           LaunchConfig=FakeLaunchConfig, launch=lambda *a: launches.append(a))


def test_nvrtc_launch_uses_numbas_stream_and_the_current_api(monkeypatch):
    launches = []

    class FakeKernel:
        pass

    class FakeModule:
        def get_kernel(self, name):
            assert name == "vec_saxpy"
            return FakeKernel()

    def check(code, code_type, options):
        assert "vec_saxpy" in code and code_type == "c++" and options["arch"] == "sm_90"

    fake_core = _fake_cuda_core(FakeModule, launches, check)

    class NumbaStream:
        handle = 1234

        def __cuda_stream__(self):
            return (0, 1234)

    wrapped = []
    dev = SimpleNamespace(arch="90", create_stream=lambda obj: wrapped.append(obj) or "core-stream")
    monkeypatch.setattr(vector_nvrtc, "_core", lambda: fake_core)
    kernels = vector_nvrtc._NvrtcKernels()
    monkeypatch.setattr(kernels, "_device_current", lambda: dev)

    class FakeDev:
        def __init__(self, ptr, n):
            self.__cuda_array_interface__ = {"data": (ptr, False)}
            self.size = n

    x, y = FakeDev(0x1000, 1000), FakeDev(0x2000, 1000)
    st = NumbaStream()
    kernels.run("saxpy", (x, y), y, 3.0, st)
    kernels.run("saxpy", (x, y), y, 3.0, st)
    assert len(wrapped) == 1 and wrapped[0] is st          # one wrapper per numba stream
    stream, cfg, kernel, *args = launches[0]
    assert stream == "core-stream" and isinstance(kernel, FakeKernel)
    assert cfg.grid == 4 and cfg.block == 256              # ceil(1000 / 256)
    assert [int(a) for a in args] == [0x1000, 0x2000, 3, 1000]
    kernels.run("saxpy", (x, FakeDev(0x2000, 0)), FakeDev(0x2000, 0), 3.0, st)
    assert len(launches) == 2                              # nothing launched for N = 0


def test_ilp_implementations_explain_themselves(cpu_backend):
    impls = {i.name: i for i in implementations(cpu_backend)}
    for name in vector_ops.ILP_IMPLS:
        desc = impls[name].description
        assert "ILP" in desc and "i+3q" in desc and "before any store" in desc
    names = list(vector_ops.IMPL_NAMES)
    assert names.index("cuda-jit-ilp4") == names.index("cuda-jit-stride") + 1
    assert names.index("nvrtc-ilp4") == names.index("nvrtc") + 1


def test_ilp4_jit_launch_geometry(monkeypatch):
    from kernels.vector import cuda_jit as vector_cuda
    launches = []

    class FakeKernel:
        def __getitem__(self, config):
            def launch(*args):
                launches.append((config, args))
            return launch

    monkeypatch.setitem(vector_cuda.KERNELS, ("ilp4", "triad"), FakeKernel())
    b, c, out = np.ones(1025, np.float32), np.ones(1025, np.float32), np.ones(1025, np.float32)
    vector_cuda.run_jit("ilp4", "triad", (b, c), out, 3.0)
    (blocks, threads, stream), args = launches[0]
    # q = ceil(1025 / 4) = 257 threads' worth of work -> 2 blocks of 256
    assert (blocks, threads, stream) == (2, 256, 0)
    assert args[:3] == (b, c, out) and args[3] == np.float32(3.0) and args[4] == 257
    vector_cuda.run_jit("ilp4", "triad", (b[:0], c[:0]), out[:0], 3.0)
    assert len(launches) == 1                              # nothing launched for N = 0


def test_jit_kernels_are_built_once_per_family_and_op(monkeypatch):
    from kernels.vector import cuda_jit
    built = []

    def factory(element, inplace=False):
        built.append((element, inplace))
        return object()

    monkeypatch.setattr(cuda_jit, "KERNELS", {})
    monkeypatch.setitem(cuda_jit.FACTORIES, "stride", factory)
    k = cuda_jit.kernel("stride", "saxpy")
    assert cuda_jit.kernel("stride", "saxpy") is k and cuda_jit.kernel("stride", "copy") is not k
    # saxpy writes into y: its kernel is told so; copy writes a separate output
    assert built == [(cuda_jit.saxpy_element, True), (cuda_jit.copy_element, False)]
    assert set(cuda_jit.ELEMENTS) == set(vector_ops.ELEMENTWISE_OPS) and set(cuda_jit.FACTORIES) == {
        "per-thread", "stride", "ilp4"}


def test_jit_kernel_arguments_are_two_inputs_an_output_and_the_scalar():
    from kernels.vector import cuda_jit
    a, b, c = (np.ones(3, np.float32) for _ in range(3))
    args = cuda_jit.kernel_args("scale", (a,), c, 3.0)
    assert args[0] is a and args[1] is a and args[2] is c      # one input: passed as both
    assert args[3] == np.float32(3.0) and args[3].dtype == np.float32
    args = cuda_jit.kernel_args("saxpy", (a, b), b, 2.0)
    assert args[:3] == (a, b, b)
    args = cuda_jit.kernel_args("seed-expr", (a, b), c, 3.0)
    assert args[:3] == (a, b, c)


def test_nvrtc_ilp4_sources_load_everything_before_storing():
    for name in vector_ops.ELEMENTWISE_OPS:
        src = vector_nvrtc.ILP4_SOURCES[name]
        assert vector_nvrtc.ILP4_KERNEL_NAMES[name] in src
        assert src.count("__restrict__") == len(get_op(name).inputs) + (0 if get_op(name).inplace else 1)
        assert "(n + 3) / 4" in src
        # every load ("...[at];", clamped to a valid index) comes before the one store
        assert src.rindex("[at];") < src.index("if (j < n)") and src.count("if (j < n)") == 1


def test_nvrtc_ilp4_launch_covers_a_quarter_of_the_threads(monkeypatch):
    launches, compiled = [], []

    class FakeModule:
        def get_kernel(self, name):
            compiled.append(name)
            return name

    fake_core = _fake_cuda_core(FakeModule, launches)
    monkeypatch.setattr(vector_nvrtc, "_core", lambda: fake_core)
    kernels = vector_nvrtc._NvrtcKernels()
    monkeypatch.setattr(kernels, "_device_current", lambda: SimpleNamespace(arch="90"))
    monkeypatch.setattr(kernels, "stream", lambda s: "core-stream")

    class FakeDev:
        def __init__(self, ptr, n):
            self.__cuda_array_interface__ = {"data": (ptr, False)}
            self.size = n

    a, out = FakeDev(0x1000, 4097), FakeDev(0x2000, 4097)
    kernels.run("copy", (a,), out, 3.0, None, "ilp4")
    kernels.run("copy", (a,), out, 3.0, None)
    assert compiled == ["vec_copy_ilp4", "vec_copy"]       # one kernel per variant, cached apart
    assert launches[0][1].grid == 5                        # ceil(ceil(4097 / 4) / 256)
    assert launches[1][1].grid == 17                       # ceil(4097 / 256)
    assert [int(x) for x in launches[0][3:]] == [0x1000, 0x2000, 4097]
    with pytest.raises(ValueError, match="ilp4"):
        vector_nvrtc.ops("ilp8")


def test_dot_launch_geometry(monkeypatch):
    from kernels.vector import cuda_jit
    launches = []

    class FakeKernel:
        def __init__(self, name):
            self.name = name

        def __getitem__(self, config):
            return lambda *args: launches.append((self.name, config, args))

    monkeypatch.setattr(cuda_jit, "dot_blocks", FakeKernel("blocks"))
    monkeypatch.setattr(cuda_jit, "dot_final", FakeKernel("final"))
    monkeypatch.setattr(cuda_jit, "stride_blocks", lambda: 16)
    monkeypatch.setattr(cuda_jit, "_dot_partials", lambda blocks, stream: np.zeros(blocks))
    a, out = np.ones(1000, np.float32), np.zeros(1)
    cuda_jit.run_jit("stride", "dot", (a, a), out, 3.0)
    (name1, cfg1, args1), (name2, cfg2, args2) = launches
    assert (name1, cfg1) == ("blocks", (4, 256, 0)) and args1[2].shape == (4,)   # ceil(1000/256)
    assert (name2, cfg2) == ("final", (1, 256, 0)) and args2[0] is args1[2] and args2[1] is out
    launches.clear()
    big = np.ones(10**6, np.float32)   # large N: a few blocks per SM, no more
    cuda_jit.run_jit("stride", "dot", (big, big), out, 3.0)
    assert launches[0][1] == (16, 256, 0)
    launches.clear()
    cuda_jit.run_jit("stride", "dot", (a[:0], a[:0]), out, 3.0)   # N = 0 still writes the sum, 0
    assert [cfg for _, cfg, _ in launches] == [(1, 256, 0), (1, 256, 0)]
    with pytest.raises(ValueError, match="grid-stride"):
        cuda_jit.run_jit("ilp4", "dot", (a, a), out, 3.0)


@pytest.mark.gpu
def test_dot_kernel_sums_over_the_grid_stride_loop_and_the_blocks(gpu_backend, simulated, monkeypatch):
    from numba import cuda

    from kernels.vector import cuda_jit
    # two blocks of 256 threads: each thread takes several elements, each block a partial sum
    monkeypatch.setattr(cuda_jit, "_stride_blocks", 2)
    for n in (511, 512, 513, 1500) if simulated else (511, 512, 513, 1500, 10**7 + 3):
        a, b = _inputs("dot", n, seed=7)
        out = cuda.to_device(np.full(1, np.nan))
        cuda_jit.run_dot((cuda.to_device(a), cuda.to_device(b)), out)
        np.testing.assert_allclose(out.copy_to_host(), reference("dot", (a, b)), rtol=1e-12)
