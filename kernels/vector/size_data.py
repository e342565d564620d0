"""The buffers of one sweep size: random inputs and outputs, allocated once and reused by every
point of that size. `HostSizeData` (the CPU backend: host arrays only) and `DeviceSizeData` (the
GPU backend: device copies, the pageable result of end-to-end runs, page-locked copies when a
pinned point asks) have the same methods; a PointRunner picks one for its backend."""
from __future__ import annotations

import numpy as np


class HostSizeData:
    """Host inputs and output of size n; what the CPU implementations read and write."""

    dev_in = dev_out = None
    pin_in = pin_out = page_out = None

    def __init__(self, pool, stream, n: int):
        self.n = n
        self.pool = pool
        rng = np.random.default_rng(2024 + n)
        # random data, never zeros; inputs in [0.5, 1.5) keep every op away from cancellation
        self.host_in = [pool.host(f"in{j}", (n,), np.float32, pinned=False) for j in range(2)]
        for arr in self.host_in:
            rng.random(out=arr, dtype=np.float32)
            arr += np.float32(0.5)
        self.host_out = pool.host("out", (n,), np.float32, pinned=False)
        self.host_out[:] = 1.0  # touch the pages so the first timed write does not fault them in

    @staticmethod
    def new_stream():
        return None

    @staticmethod
    def release_garbage() -> None:
        pass

    @property
    def pinned_ready(self) -> bool:
        return True      # no end-to-end modes without a device

    def ensure_pinned(self) -> None:
        pass

    def arrays(self, op, where: str):
        """(ins, out) for an op on the host (CPU implementations) or the device."""
        k = len(op.inputs)
        src, dst = (self.host_in, self.host_out) if where == "host" else (self.dev_in, self.dev_out)
        ins = tuple(src[:k])
        if op.reduction:
            return ins, self.result(where)
        return ins, (ins[1] if op.inplace else dst)

    def result(self, where: str):
        """The one-element float64 array a reduction writes its sum to: on the "host" (CPU
        implementations), the "device", or the "pinned" / "pageable" copy end-to-end runs fetch."""
        if where == "device":
            return self.pool.device("d_res", (1,), np.float64)
        return self.pool.host(f"{where}_res", (1,), np.float64, pinned=(where == "pinned"))

    def host_out_for(self, op, mode: str):
        """Where an end-to-end run copies the op's output back to."""
        if op.reduction:
            return self.result(mode)
        return self.pin_out if mode == "pinned" else self.page_out


class DeviceSizeData(HostSizeData):
    """The host arrays plus their device copies (the GPU backend)."""

    def __init__(self, pool, stream, n: int):
        super().__init__(pool, stream, n)
        self.dev_in = [pool.device(f"d_in{j}", (n,), np.float32) for j in range(2)]
        self.dev_out = pool.device("d_out", (n,), np.float32)
        for d, h in zip(self.dev_in, self.host_in):
            d.copy_to_device(h, stream=stream)
        self.dev_out.copy_to_device(self.host_out, stream=stream)
        self.page_out = pool.host("page_out", (n,), np.float32, pinned=False)
        self.page_out[:] = 1.0
        stream.synchronize()

    @staticmethod
    def new_stream():
        from numba import cuda
        return cuda.stream()

    @staticmethod
    def release_garbage() -> None:
        try:  # hand freed device buffers back now, so the fit check sees them as free
            from numba import cuda
            cuda.current_context().deallocations.clear()
        except Exception:
            pass

    @property
    def pinned_ready(self) -> bool:
        return self.pin_in is not None

    def ensure_pinned(self) -> None:
        if self.pin_in is not None:
            return
        self.pin_in = [self.pool.host(f"pin_in{j}", (self.n,), np.float32) for j in range(2)]
        for p, h in zip(self.pin_in, self.host_in):
            p[:] = h
        self.pin_out = self.pool.host("pin_out", (self.n,), np.float32)
        self.pin_out[:] = 1.0
