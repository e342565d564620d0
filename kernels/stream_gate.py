"""A gate that holds a stream while a timed phase is queued (the blocking-kernel method of NVIDIA's
nvbench), so that no host pause can enter a phase's CUDA-event span.

Events time what lies between them on the stream, idle time included. If the timing thread loses
the GIL between recording the start event and its launch (another Python thread, a repaint, a
compile), the span holds that pause (docs/PERFORMANCE.md, "Honest GPU times"). With the gate, a
one-thread kernel spinning on a flag in mapped host memory is queued first; the start event, the
phase's work and the end event queue behind it; only then does the host raise the flag. The GPU meets the start
event, the work and the end event back to back, whatever the host did meanwhile.

The spinning kernel gives up after TIMEOUT_NS (a body that waits on its own stream, e.g. a copy to
pageable memory, would otherwise never return) and says so: that phase's time is then the plain
event span, and the timer reports it as such.

Loading a module (a kernel's first use in the process) waits for every running kernel, the spinning
one too: a first launch behind a closed gate would stall until the timeout. So every closed gate
of the process is opened before numba loads a module (`_open_gates_before_loads`, with eager
module loading: kernels/__init__.py); the phases they held keep plain event spans and say so.
"""
from __future__ import annotations

import threading
import time

import numpy as np
from llvmlite import ir
from numba import types

from .backend import numba_cuda
from .host_costs import note_host_cost

cuda = numba_cuda()    # a stand-in where numba.cuda does not import: the gate is never used there
try:
    from numba.cuda.extending import intrinsic
except Exception:      # no CUDA runtime library: nothing here is compiled or launched
    intrinsic = None

TIMEOUT_NS = 1_000_000_000      # longer than any queueing a phase does, short of a hang
_POLL_NS = 200                  # the spinning thread's pause between reads of the flag

_local = threading.local()
_closed: set = set()            # gates closed now, on any thread: opened before a module load
_closed_lock = threading.Lock()

if intrinsic is not None:

    @intrinsic
    def _load_volatile(typingctx, arr):
        """arr[0] read from memory each time: never hoisted out of the loop, never cached."""
        sig = types.int64(arr)

        def codegen(context, builder, sig, args):
            ary = context.make_array(sig.args[0])(context, builder, args[0])
            fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64)])
            asm = ir.InlineAsm(fnty, "ld.volatile.global.s64 $0, [$1];", "=l,l",
                               side_effect=True)
            return builder.call(asm, [builder.ptrtoint(ary.data, ir.IntType(64))])
        return sig, codegen

    @intrinsic
    def _global_timer(typingctx):
        def codegen(context, builder, sig, args):
            fnty = ir.FunctionType(ir.IntType(64), [])
            asm = ir.InlineAsm(fnty, "mov.u64 $0, %globaltimer;", "=l", side_effect=True)
            return builder.call(asm, [])
        return types.int64(), codegen

    @cuda.jit(cache=True)
    def _hold(flag, generation, timeout_ns):
        start = _global_timer()
        while _load_volatile(flag) < generation:
            if _global_timer() - start > timeout_ns:
                flag[1] += 1               # given up: the timer reads the count at its end
                return
            cuda.nanosleep(_POLL_NS)


class Gate:
    """One thread's gate on one device: `close(stream)` before a phase's start event, `open()`
    once its end event is queued. Generations only grow, so a flag never needs resetting and an
    open reaches every earlier close."""

    def __init__(self):
        self.flag = cuda.mapped_array(2, dtype=np.int64)   # [released generation, holds given up]
        self.flag[:] = 0
        # the spinning kernel's own module loaded now, not by its first close (which would open
        # the gate it is closing)
        s = cuda.stream()
        _hold[1, 1, s](self.flag, np.int64(0), np.int64(TIMEOUT_NS))
        s.synchronize()
        self.generation = 0
        self.opened_early = 0       # holds opened before their phase was queued (a module load)
        self._launch: dict = {}

    def close(self, stream) -> None:
        """Hold `stream` (None: the default stream) until open()."""
        from .launch import PreparedKernel
        self.generation += 1
        key = id(stream) if stream is not None else 0
        got = self._launch.get(key)
        if got is None or got[0] is not stream:
            got = self._launch[key] = (stream, PreparedKernel(_hold, 1, 1, stream or 0))
        with _closed_lock:
            _closed.add(self)
        got[1](self.flag, np.int64(self.generation), np.int64(TIMEOUT_NS))

    def open(self) -> None:
        self.flag[0] = self.generation
        with _closed_lock:
            _closed.discard(self)

    def open_early(self) -> None:
        """Open before the phase is queued: its span may now hold host time, and says so."""
        self.opened_early += 1
        self.open()

    def given_up(self) -> int:
        """How many holds have timed out so far (read once the stream has passed them)."""
        return int(self.flag[1])


def _open_gates_before_loads() -> None:
    """Wrap numba's module load so that it opens every closed gate first, once per process."""
    try:
        from numba.cuda.cudadrv.driver import Context
    except Exception:       # no CUDA here: no module is ever loaded
        return
    load = Context.create_module_image
    if getattr(load, "opens_gates", False):
        return

    def create_module_image(self, *args, **kwargs):
        with _closed_lock:
            held = list(_closed)
        for g in held:
            g.open_early()
        return load(self, *args, **kwargs)

    create_module_image.opens_gates = True
    Context.create_module_image = create_module_image


def gate_for_thread() -> Gate:
    """This thread's gate for its current device: mapped memory belongs to a context."""
    dev = cuda.get_current_device().id
    gates = getattr(_local, "gates", None)
    if gates is None:
        gates = _local.gates = {}
    g = gates.get(dev)
    if g is None:
        t = time.perf_counter()
        _open_gates_before_loads()
        g = gates[dev] = Gate()
        note_host_cost("timing setup", (time.perf_counter() - t) * 1e3)
    return g
