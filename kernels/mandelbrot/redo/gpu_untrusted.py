"""The GPU's side of exact_redo.py: the pixels a frame's redo kernel handed back (values below 0,
guard.untrusted) listed on the device, and their exact values put back where the frame's values
are, so the colouring and the copy back read them. Only pixels of the redo list can be handed
back, so the listing reads that list, not the frame."""
from __future__ import annotations

import numpy as np

from . import exact_redo
from ..loops.targets import cuda, zero_kernel

THREADS = 128
# the listing kernel's blocks (a grid-stride loop to nredo[0], which only the device knows)
BLOCKS = 64

if cuda is not None:
    @cuda.jit(cache=True)
    def list_untrusted(values, redo, nredo, out, nout):
        """out[:nout[0]] = the indices among redo[:nredo[0]] whose value is below 0."""
        cols = values.shape[1]
        k = cuda.grid(1)
        while k < nredo[0]:
            i = redo[k]
            r = i // cols
            if values[r, i - r * cols] < 0.0:
                out[cuda.atomic.add(nout, 0, 1)] = i
            k += cuda.gridsize(1)

    @cuda.jit(cache=True)
    def put_values(values, index, new):
        """values at the flat indices `index` = `new`, or where new is NaN (no tier ran) their
        loop's own value back."""
        k = cuda.grid(1)
        if k < index.shape[0]:
            i = index[k]
            r = i // values.shape[1]
            c = i - r * values.shape[1]
            v = new[k]
            values[r, c] = -1.0 - values[r, c] if v != v else v

    @cuda.jit(cache=True)
    def restore_listed(values, out, nout):
        """The loop's own value back (guard.untrusted undone) at the flat indices out[:nout[0]]:
        put_values with no tier run, for a frame that only marks them."""
        cols = values.shape[1]
        k = cuda.grid(1)
        while k < nout[0]:
            i = out[k]
            r = i // cols
            values[r, i - r * cols] = -1.0 - values[r, i - r * cols]
            k += cuda.gridsize(1)

    @cuda.jit(cache=True)
    def unmark(layers, index):
        """The redone layer at the flat indices `index` back to 1 (settled, no longer marked)."""
        k = cuda.grid(1)
        if k < index.shape[0]:
            i = index[k]
            r = i // layers.shape[2]
            layers[exact_redo.REDONE_LAYER, r, i - r * layers.shape[2]] = 1
else:  # pragma: no cover - only where numba-cuda is broken
    list_untrusted = put_values = restore_listed = unmark = None


def _lists(pixels, pool, total):
    s = pixels.stream()
    return (pool.device("untrusted", (max(total, 1),), np.int64, stream=s),
            pool.device("nuntrusted", (1,), np.int64, stream=s))


def queue_listing(pixels, pool, values, redo, nredo) -> None:
    """Queue the listing of the handed-back pixels behind the redo kernel (GpuPixels.run calls it
    inside the frame's one timed kernel phase)."""
    launch = pixels.launchers()
    out, nout = _lists(pixels, pool, values.shape[0] * values.shape[1])
    sim = pixels.backend.simulated
    launch(zero_kernel, 1, 32)(nout)
    launch(list_untrusted, 2 if sim else BLOCKS, 4 if sim else THREADS)(values, redo, nredo, out,
                                                                         nout)


def settle_on_device(pixels, pool, values, request, exact: bool, timer, cache=None,
                     cancel=None, layers=None, progress=None) -> dict:
    """exact_redo.settle for a frame whose values are on the device, listed by queue_listing:
    one wait for their count (8 bytes), then, if any, iterate them on the host and put the
    answers back. A frame that only marks them (`exact` False: keyframes, the window's
    interactive frames) waits for nothing: the loop's own values go back on the device and the
    count comes with the frame's other copies; then the counts are returned as a function to
    call once the frame's timer has finished."""
    s = pixels.stream()
    launch = pixels.launchers()
    out, nout = _lists(pixels, pool, values.shape[0] * values.shape[1])
    if not exact:
        sim = pixels.backend.simulated
        with timer.phase("kernel", gpu=True):
            launch(restore_listed, 2 if sim else BLOCKS, 4 if sim else THREADS)(values, out, nout)
        marked = pool.host("marked-host", (1,), np.int64, ring=3)
        with timer.phase("d2h", gpu=True, nbytes=8):
            nout.copy_to_host(marked, stream=s)
        return lambda: {"dd_pixels": 0, "exact_pixels": 0, "marked_pixels": int(marked[0])}
    count = pool.host("nuntrusted-host", (1,), np.int64)
    with timer.phase("d2h", gpu=True, nbytes=8):
        nout.copy_to_host(count, stream=s)
    s.synchronize()
    n = int(count[0])
    if n == 0:
        return {"dd_pixels": 0, "exact_pixels": 0, "marked_pixels": 0}
    index = out[:n].copy_to_host(stream=s)
    s.synchronize()
    index = np.sort(index)      # the listing's order is the atomics': sorted, the same each run
    w = values.shape[1]
    with timer.phase("host", detail="exact pixels"):
        new, got, marked = exact_redo.resolve(request, index // w, index % w, exact,
                                              cache=cache, cancel=cancel, progress=progress)
    # pool buffers, not new device arrays: freeing one waits for the whole GPU, which made a
    # poster's next band wait for this one's every few bands
    idx = _upload(pool, "settle-index", index, s)
    new_d = _upload(pool, "settle-values", np.ascontiguousarray(new), s)
    settled = np.ascontiguousarray(index[~marked])
    with timer.phase("kernel", gpu=True):
        launch(put_values, -(-n // THREADS), THREADS)(values, idx, new_d)
        if layers is not None and len(settled):     # the overlay's 2 only where still marked
            launch(unmark, -(-len(settled) // THREADS), THREADS)(
                layers, _upload(pool, "settle-settled", settled, s))
    return got


def _upload(pool, name: str, host: np.ndarray, stream):
    """`host` copied into the pool's device buffer `name` (queued on `stream`)."""
    dev = pool.device(name, host.shape, host.dtype, stream=stream)
    dev.copy_to_device(host, stream=stream)
    return dev
