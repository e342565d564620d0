import numpy as np
import pytest

from kernels import buffers
from kernels.backend import Backend


def test_host_buffers_reused_until_shape_changes():
    pool = buffers.BufferPool(Backend("cpu"))
    a = pool.host("frame", (4, 5, 4), np.uint8)
    b = pool.host("frame", (4, 5, 4), np.uint8)
    assert a is b and pool.allocations == 1
    c = pool.host("frame", (8, 5, 4), np.uint8)
    assert c.shape == (8, 5, 4) and pool.allocations == 2


def test_ring_rotates_so_the_shown_frame_survives():
    pool = buffers.BufferPool(Backend("cpu"))
    r = [pool.host("f", (2, 2), np.uint8, ring=3) for _ in range(4)]
    assert r[0] is not r[1] and r[1] is not r[2] and r[3] is r[0]
    assert pool.allocations == 3


def test_fit_check_gives_a_plain_message(monkeypatch):
    monkeypatch.setattr(buffers, "device_free_bytes", lambda: (100 * 2**20, 1000 * 2**20))
    buffers.ensure_device_fits(50 * 2**20)
    with pytest.raises(buffers.OutOfDeviceMemory, match=r"needs 200\.0 MiB .* only 100\.0 MiB"):
        buffers.ensure_device_fits(200 * 2**20, what="the frame")


@pytest.mark.gpu
def test_device_buffers_reused(gpu_backend):
    pool = buffers.BufferPool(gpu_backend)
    a = pool.device("v", (3, 4), np.float64)
    assert pool.device("v", (3, 4), np.float64) is a
    assert pool.device("v", (3, 4), np.float32) is not a
    assert pool.allocations == 2
    h = pool.host("f", (3, 4), np.uint8)
    assert h.shape == (3, 4)


@pytest.mark.gpu
def test_device_buffer_of_another_shape_is_a_view_of_the_same_memory(gpu_backend):
    """Sectors of changing shapes reuse one allocation (a free waits for the GPU); a larger
    shape grows it, and each shape's view is kept so launches see the same array again."""
    pool = buffers.BufferPool(gpu_backend)
    big = pool.device("v", (4, 6), np.float64)
    small = pool.device("v", (2, 5), np.float64)
    assert small.shape == (2, 5) and pool.allocations == 1
    small.copy_to_device(np.arange(10.0).reshape(2, 5))
    assert np.array_equal(big.copy_to_host().ravel()[:10], np.arange(10.0))
    assert pool.device("v", (4, 6), np.float64) is big
    assert pool.device("v", (2, 5), np.float64) is small and pool.allocations == 1
    grown = pool.device("v", (5, 6), np.float64)
    assert grown.shape == (5, 6) and pool.allocations == 2
    assert pool.device("v", (7,), np.float64).shape == (7,) and pool.allocations == 2
