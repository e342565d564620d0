"""16-byte vector stores and loads for any package's kernels: `store16(arr, i, values)`
writes a tuple of 16 bytes (four float32 or two float64) to arr[i:i + k] with one instruction,
`load16(arr, i)` reads them back as a tuple.

numba turns `arr[i] = v` into one 4- or 8-byte store, with a fix-up for negative indices, so a
warp moves 128 or 256 bytes per store instruction. A kernel that writes a whole 16-byte group per
thread and iteration (`st.global.v4.f32` / `.v2.f64`) issues a quarter of the store instructions
for the same bytes, which leaves the issue slots to the kernel's arithmetic (kernels/rng's
generators; a load of a whole row of the deep float32 loop's orbit, loops/perturbation_loop.py).

The caller guarantees what the instruction needs: `arr` is one-dimensional and C-contiguous, its
data are 16-byte aligned (device allocations are), `i` is a multiple of WIDTH[dtype] and
arr[i:i + k] lies inside the array (nothing is checked inside the kernel; `aligned()` checks the
pointer on the host). Under numba's CUDA simulator the same names are plain device functions
that store or load element by element.
"""
from __future__ import annotations


from .backend import cuda_imported, numba_cuda, simulator_enabled

# numba.cuda, or where it does not import (no CUDA runtime) a stand-in: the CPU twins still run
cuda = numba_cuda()

VECTOR_BYTES = 16
WIDTH = {"float32": 4, "float64": 2}   # elements in one 16-byte group


def aligned(arr) -> bool:
    """True when a device array's data start on a 16-byte boundary (always under the
    simulator, which has no such instruction)."""
    if simulator_enabled():
        return True
    return arr.device_ctypes_pointer.value % VECTOR_BYTES == 0


def _intrinsics():
    from llvmlite import ir
    from numba.core import types
    from numba.cuda import cgutils
    from numba.cuda.extending import intrinsic

    def _check(arr, values=None):
        if not (isinstance(arr, types.Array) and arr.ndim == 1 and arr.layout == "C"):
            raise TypeError(f"a 16-byte access needs a 1-D C-contiguous array, got {arr}")
        k = VECTOR_BYTES * 8 // arr.dtype.bitwidth
        if values is not None and not (isinstance(values, types.UniTuple) and values.count == k):
            raise TypeError(f"store16 on {arr.dtype} takes a tuple of {k} values, got {values}")
        return k

    def _pointer(context, builder, arrty, arr, idxty, idx, k):
        ary = context.make_array(arrty)(context, builder, value=arr)
        idx = context.cast(builder, idx, idxty, types.intp)
        ptr = cgutils.get_item_pointer(context, builder, arrty, ary, [idx], wraparound=False)
        vec = ir.VectorType(context.get_data_type(arrty.dtype), k)
        return builder.bitcast(ptr, vec.as_pointer()), vec

    @intrinsic
    def store16(typingctx, arr, i, values):
        k = _check(arr, values)

        def codegen(context, builder, sig, args):
            arrty, idxty, valty = sig.args
            arr_v, idx, vals = args
            ptr, vec_t = _pointer(context, builder, arrty, arr_v, idxty, idx, k)
            vec = ir.Constant(vec_t, ir.Undefined)
            for j in range(k):
                v = context.cast(builder, builder.extract_value(vals, j), valty.dtype, arrty.dtype)
                vec = builder.insert_element(vec, v, ir.Constant(ir.IntType(32), j))
            builder.store(vec, ptr).align = VECTOR_BYTES
            return context.get_dummy_value()

        return types.void(arr, i, values), codegen

    @intrinsic
    def load16(typingctx, arr, i):
        k = _check(arr)
        result = types.UniTuple(arr.dtype, k)

        def codegen(context, builder, sig, args):
            arrty, idxty = sig.args
            ptr, _ = _pointer(context, builder, arrty, args[0], idxty, args[1], k)
            load = builder.load(ptr)
            load.align = VECTOR_BYTES
            parts = [builder.extract_element(load, ir.Constant(ir.IntType(32), j))
                     for j in range(k)]
            return context.make_tuple(builder, sig.return_type, parts)

        return result(arr, i), codegen

    return store16, load16


def _simulated():
    @cuda.jit(device=True)
    def store16(arr, i, values):
        for j in range(len(values)):
            arr[i + j] = values[j]

    @cuda.jit(device=True)
    def load16(arr, i):
        if arr.dtype.itemsize == 4:
            return arr[i], arr[i + 1], arr[i + 2], arr[i + 3]
        return arr[i], arr[i + 1]

    return store16, load16


# without numba.cuda (no CUDA runtime) the simulator's shape: stand-ins that say why if called
store16, load16 = _simulated() if simulator_enabled() or not cuda_imported() else _intrinsics()
