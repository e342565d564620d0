"""A machine without the CUDA runtime library: numba.cuda's import fails (numba-cuda 0.30 asks
cuda-pathfinder for libcudart and raises DynamicLibNotFoundError, a RuntimeError, not an
ImportError). The app must still start and render on the CPU, saying why in one line."""
import os
import subprocess
import sys
import textwrap

import pytest

from kernels import backend

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# run main.main(argv) in a process where importing numba.cuda fails as it does with no libcudart
NO_CUDART = textwrap.dedent('''
    import sys

    class DynamicLibNotFoundError(RuntimeError):
        pass

    class NoCudart:
        def find_spec(self, name, path=None, target=None):
            if name == "numba.cuda" or name.startswith("numba.cuda."):
                raise DynamicLibNotFoundError(
                    'Failure finding "libcudart.so.13 or libcudart.so.12": No such file')
            return None

    sys.meta_path.insert(0, NoCudart())
    sys.path.insert(0, {root!r})
    if sys.argv[1] == "--import-all":
        import importlib, pkgutil, kernels
        for m in pkgutil.walk_packages(kernels.__path__, "kernels."):
            importlib.import_module(m.name)
        from kernels.rng import xoroshiro
        from kernels.distance import haversine
        from kernels import backend
        assert not backend.cuda_imported()
        try:
            haversine.host_mesh_kernel[1, 1]()
        except backend.BackendUnavailable as exc:
            print("refused:", exc)
        print("imported", xoroshiro.CPU["uniform64"] is not None)
        sys.exit(0)
    import main
    sys.exit(main.main(sys.argv[1:]))
''').format(root=ROOT)


def run_without_cudart(*argv):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    return subprocess.run([sys.executable, "-c", NO_CUDART, *argv], capture_output=True,
                          text=True, timeout=600, cwd=ROOT, env=env)


def test_render_auto_falls_back_to_the_cpu_in_one_line(tmp_path):
    out = tmp_path / "m.png"
    r = run_without_cudart("--render", "mandelbrot", "--backend", "auto", "--size", "32x24",
                           "--iters", "50", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 0 and "CPU" in r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith("main.py: note: rendering on the CPU: ")
    assert "CUDA runtime" in lines[0] and "libcudart" in lines[0]


def test_render_cuda_says_why_in_one_line(tmp_path):
    r = run_without_cudart("--render", "mandelbrot", "--backend", "cuda", "--size", "32x24",
                           "--out", str(tmp_path / "m.png"))
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith("main.py: error: the cuda backend cannot run here: ")
    assert "libcudart" in lines[0]
    assert not (tmp_path / "m.png").exists()


def test_every_kernel_module_imports_and_gpu_kernels_say_why():
    r = run_without_cudart("--import-all")
    assert r.returncode == 0, r.stderr
    assert "imported True" in r.stdout
    assert "refused: no GPU code here: numba-cuda did not import (Failure finding" in r.stdout


# ---------------------------------------------------------------- the reason, in-process

class DynamicLibNotFoundError(RuntimeError):
    pass


MISSING = DynamicLibNotFoundError('Failure finding "libcudart.so.13 or libcudart.so.12": '
                                  'No such file: libcudart.so.13 or libcudart.so.12\nattempts…')


def test_missing_runtime_with_a_driver_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(backend, "driver_present", lambda: True)
    text = backend.import_failure(MISSING)
    assert text.startswith("the CUDA runtime library libcudart.so.13 or libcudart.so.12 was not "
                           "found: install the cuda12 or cuda13 extra matching your driver")
    assert "[cuda12]" in text and "\n" not in text


def test_missing_runtime_and_driver_says_there_is_no_gpu(monkeypatch):
    monkeypatch.setattr(backend, "driver_present", lambda: False)
    assert backend.import_failure(MISSING) == (
        "no NVIDIA driver found (libcuda is missing) and no CUDA runtime (libcudart): "
        "this machine has no usable NVIDIA GPU")


def test_other_import_failures_keep_their_first_line():
    assert backend.import_failure(ValueError("numpy too new\nmore")) == \
        "numba-cuda failed to import: numpy too new"


@pytest.mark.parametrize("decorate", [
    lambda cuda, f: cuda.jit(f),
    lambda cuda, f: cuda.jit(cache=True)(f),
    lambda cuda, f: cuda.jit("void(float64[:])", device=True)(f),
])
def test_stand_in_kernels_refuse_with_the_reason(decorate):
    cuda = backend.CudaMissing(MISSING)

    def f(x):
        return x
    k = decorate(cuda, f)
    assert k.py_func is f and not cuda.is_available()
    with pytest.raises(backend.BackendUnavailable, match="libcudart"):
        k[1, 32](1)
    with pytest.raises(backend.BackendUnavailable):
        k(1)
    with pytest.raises(AttributeError, match="numba-cuda did not import"):
        cuda.device_array
