"""Compute layer of GPU Explorer: kernels, CPU twins, timing and buffers. Never imports Qt."""
import os as _os

# Small launches are deliberate here (warm-up frames, one-pixel readouts, tiny previews); numba's
# low-occupancy warning would otherwise flood the console and the logs for each of them.
_os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
