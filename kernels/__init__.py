"""Compute layer of GPU Explorer: kernels, CPU twins, timing and buffers. Never imports Qt."""
