"""Copies to and from pageable host memory timed from compiled code: start event, the copies and
end event issued in one call that holds no GIL.

A copy from or to ordinary (pageable) NumPy memory waits for its stream, so it cannot sit behind
the gate (stream_gate.py); with events recorded from Python around it, the wait for the GIL before
the copy call and after its return (up to the switch interval while a window repaints) lie inside
the span, on a GPU then idle. Here the driver's own functions (cuEventRecord, cuMemcpy*Async_v2)
are called from a numba function that releases the GIL, so nothing of Python can come between the
events and the copies.
"""
from __future__ import annotations

import ctypes.util

import numpy as np
from llvmlite import binding, ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

NATIVE_COPY = "CUDA events around copies issued from compiled code"

_loaded = []


def _load_driver() -> None:
    """Make libcuda's symbols visible to numba's JIT linker (once)."""
    if not _loaded:
        binding.load_library_permanently(ctypes.util.find_library("cuda") or "libcuda.so.1")
        _loaded.append(True)


def _declare(builder, name, argtypes):
    fnty = ir.FunctionType(ir.IntType(32), argtypes)
    return cgutils.get_or_insert_function(builder.module, fnty, name)


@intrinsic
def _record(typingctx, event, stream):
    def codegen(context, builder, sig, args):
        p = ir.PointerType(ir.IntType(8))
        fn = _declare(builder, "cuEventRecord", [p, p])
        return builder.call(fn, [builder.inttoptr(args[0], p), builder.inttoptr(args[1], p)])
    return types.int32(types.uint64, types.uint64), codegen


@intrinsic
def _copy(typingctx, to_device, dst, src, nbytes, stream):
    """cuMemcpyHtoDAsync_v2(dst, src, n, stream) or cuMemcpyDtoHAsync_v2(dst, src, n, stream)."""
    def codegen(context, builder, sig, args):
        p, i64 = ir.PointerType(ir.IntType(8)), ir.IntType(64)
        h2d = _declare(builder, "cuMemcpyHtoDAsync_v2", [i64, p, i64, p])
        d2h = _declare(builder, "cuMemcpyDtoHAsync_v2", [p, i64, i64, p])
        flag, dst, src, n, s = args
        s = builder.inttoptr(s, p)
        out = cgutils.alloca_once(builder, ir.IntType(32))
        with builder.if_else(builder.icmp_unsigned("!=", flag, ir.Constant(i64, 0))) as (a, b):
            with a:
                builder.store(builder.call(h2d, [dst, builder.inttoptr(src, p), n, s]), out)
            with b:
                builder.store(builder.call(d2h, [builder.inttoptr(dst, p), src, n, s]), out)
        return builder.load(out)
    return types.int32(types.uint64, types.uint64, types.uint64, types.uint64,
                       types.uint64), codegen


@njit(nogil=True)
def _timed_copies(start, end, stream, to_device, dst, src, nbytes):
    err = _record(start, stream)
    for i in range(dst.size):
        if err == 0:
            err = _copy(to_device, dst[i], src[i], nbytes[i], stream)
    if err == 0:
        err = _record(end, stream)
    return err


def handle(obj) -> int:
    """The driver handle of a numba stream or event as an integer."""
    h = getattr(obj, "handle", obj)
    v = getattr(h, "value", None)
    return int(v if v is not None else int(h))


def copies(start, end, stream, pairs, to_device: bool) -> None:
    """Record `start`, copy each (device array, host array) of `pairs` in the given direction,
    record `end`, all on `stream`, with no GIL held in between."""
    _load_driver()
    dev = np.array([d.device_ctypes_pointer.value for d, _ in pairs], np.uint64)
    host = np.array([h.ctypes.data for _, h in pairs], np.uint64)
    nbytes = np.array([d.nbytes for d, _ in pairs], np.uint64)
    dst, src = (dev, host) if to_device else (host, dev)
    err = _timed_copies(np.uint64(handle(start)), np.uint64(handle(end)),
                        np.uint64(handle(stream)), np.uint64(1 if to_device else 0),
                        dst, src, nbytes)
    if err:
        raise RuntimeError(f"CUDA driver error {err} in a pageable copy")
