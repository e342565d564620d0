"""The 16-byte stores and loads of the package's streaming kernels (kernels/wide_access.py, where
they live for other packages' kernels too)."""
from ..wide_access import VECTOR_BYTES, WIDTH, aligned, load16, store16

__all__ = ["VECTOR_BYTES", "WIDTH", "aligned", "load16", "store16"]
