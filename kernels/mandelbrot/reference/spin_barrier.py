"""Atomic loads and stores on an int64 array for compiled code (numba has none on the CPU), and a
spin wait built on them: what threads running nogil loops use to hand work to each other once an
iteration, where a lock or an event would cost more than the work.

An acquire load is never hoisted out of a loop (a plain load may be: nothing in the loop writes
the array), and pairs with a release store so that whatever the storing thread wrote before (MPFR
numbers) is seen by the loading thread after. A long wait yields the core (sched_yield): on a busy
machine the thread it waits for may need it.
"""
from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

# spins before each yield of the core
SPINS_PER_YIELD = 200

sched_yield = types.ExternalFunction("sched_yield", types.int32())


def _pointer(context, builder, sig, args):
    aryty = sig.args[0]
    ary = context.make_array(aryty)(context, builder, args[0])
    return cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)


@intrinsic
def load_acquire(typingctx, arr, idx):
    """arr[idx] (an int64 array) read atomically with acquire ordering."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.int64):
        return None

    def codegen(context, builder, sig, args):
        return builder.load_atomic(_pointer(context, builder, sig, args), "acquire", 8)
    return types.int64(arr, idx), codegen


@intrinsic
def store_release(typingctx, arr, idx, val):
    """arr[idx] = val (an int64 array) written atomically with release ordering."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.int64):
        return None

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[2], sig.args[2], types.int64)
        builder.store_atomic(v, _pointer(context, builder, sig, args[:2]), "release", 8)
        return context.get_dummy_value()
    return types.void(arr, idx, val), codegen


@intrinsic
def cpu_relax(typingctx):
    """The x86 `pause` hint inside a spin loop (nothing elsewhere)."""
    def codegen(context, builder, sig, args):
        import platform
        if platform.machine().lower() in ("x86_64", "amd64"):
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), []),
                                                "llvm.x86.sse2.pause")
            builder.call(fn, [])
        return context.get_dummy_value()
    return types.void(), codegen


@njit(nogil=True, cache=True)
def wait_at_least(flags, idx, want):
    """Spin until flags[idx] >= want or flags[idx] < 0 (a stop); return the value seen."""
    spins = 0
    while True:
        v = load_acquire(flags, idx)
        if v >= want or v < 0:
            return v
        cpu_relax()
        spins += 1
        if spins >= SPINS_PER_YIELD:
            sched_yield()
            spins = 0
