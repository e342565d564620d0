"""The GPU's primary context opened on a thread while numba imports (kernels/context_ahead.py),
its retain handed back by the CUDA probe; with a stand-in libcuda, so it runs anywhere."""
import ctypes
import threading

import pytest

from kernels import backend, context_ahead


class FakeDriver:
    def __init__(self, init_error=0):
        self.calls, self.init_error = [], init_error

    def cuInit(self, flags):
        self.calls.append(("init", threading.current_thread().name))
        return self.init_error

    def cuDeviceGet(self, dev, ordinal):
        ctypes.cast(dev, ctypes.POINTER(ctypes.c_int))[0] = ordinal + 7
        return 0

    def cuDevicePrimaryCtxRetain(self, ctx, dev):
        self.calls.append(("retain", dev.value))
        return 0

    def cuDevicePrimaryCtxRelease_v2(self, dev):
        self.calls.append(("release", dev.value))
        return 0


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(context_ahead, "_state", {"thread": None, "lib": None, "device": None})


def test_retained_on_its_thread_and_released_once(fresh, monkeypatch):
    driver = FakeDriver()
    monkeypatch.setattr(ctypes, "CDLL", lambda name: driver)
    assert context_ahead.start(1) is True
    assert context_ahead.start(1) is False          # once per process
    assert context_ahead.release() is True
    assert context_ahead.release() is False
    assert driver.calls == [("init", "cuda-context-ahead"), ("retain", 8), ("release", 8)]


def test_no_driver_or_no_gpu_leaves_nothing_to_release(fresh, monkeypatch):
    def missing(name):
        raise OSError("libcuda.so.1: cannot open shared object file")
    monkeypatch.setattr(ctypes, "CDLL", missing)
    context_ahead.start()
    assert context_ahead.release() is False
    monkeypatch.setattr(context_ahead, "_state", {"thread": None, "lib": None, "device": None})
    driver = FakeDriver(init_error=100)             # CUDA_ERROR_NO_DEVICE
    monkeypatch.setattr(ctypes, "CDLL", lambda name: driver)
    context_ahead.start()
    assert context_ahead.release() is False
    assert [c[0] for c in driver.calls] == ["init"]


def test_the_cuda_probe_hands_the_retain_back(monkeypatch):
    seen = []
    monkeypatch.setattr(backend, "_probe_cuda", lambda: seen.append("probe") or "status")
    monkeypatch.setattr(context_ahead, "release", lambda: seen.append("release"))
    backend.cuda_status.cache_clear()
    try:
        assert backend.cuda_status() == "status"
    finally:
        backend.cuda_status.cache_clear()
    assert seen == ["probe", "release"]
