import sys

import pytest

from kernels import backend


@pytest.fixture(autouse=True)
def fresh_probe():
    backend.cuda_status.cache_clear()
    yield
    backend.cuda_status.cache_clear()


def test_cpu_always_resolves():
    b = backend.resolve("cpu")
    assert b.name == "cpu" and not b.is_gpu and b.label == "CPU"


def test_unknown_choice_names_valid_ones():
    with pytest.raises(ValueError, match="auto, cpu, cuda"):
        backend.resolve("opencl")


def test_without_numba_cuda_reason_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)
    st = backend.cuda_status()
    assert not st.usable
    assert "numba-cuda is not installed" in st.reason
    assert backend.resolve("auto").name == "cpu"
    with pytest.raises(backend.BackendUnavailable, match="not installed"):
        backend.resolve("cuda")


def test_no_device_reason(monkeypatch, numba_cuda):
    cuda = numba_cuda
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    monkeypatch.setattr(cuda, "cuda_error", lambda: None)
    st = backend.cuda_status()
    assert not st.usable and st.reason == "no CUDA-capable GPU was found"
    avail = backend.available()
    assert avail["cpu"].name == "cpu" and avail["cuda"] == st.reason


def test_missing_driver_reason_is_plain(monkeypatch, numba_cuda):
    cuda = numba_cuda
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    monkeypatch.setattr(cuda, "cuda_error", lambda: "\nCUDA driver library cannot be found.\nEnsure…\n")
    assert "no NVIDIA driver found" in backend.cuda_status().reason


def test_auto_never_picks_the_simulator(monkeypatch):
    monkeypatch.setattr(backend, "cuda_status",
                        lambda: backend.CudaStatus(True, "", "CUDA simulator", simulated=True))
    assert backend.resolve("auto").name == "cpu"
    b = backend.resolve("cuda")
    assert b.is_gpu and b.simulated and "simulator" in b.label
