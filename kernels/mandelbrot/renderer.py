"""Mandelbrot set: the renderer (GPU or CPU, same pictures), whole frames or strips of any size.

The arithmetic lives in escape.py (one description for both targets); this module
decides what runs where: buffers per frame size, palette tables on the device, bands of rows so a
slow frame can be cancelled, the one copy of the finished frame into a pinned host ring.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np

from ..buffers import BufferPool, ensure_device_fits
from ..frame import Frame
from ..launch import PreparedKernel
from ..timing import JobTimer
from . import escape as mk
from . import escape_order as eo
from .colour import Colourer
from .request import MandelbrotRequest, precision_state
from .strips import strip_rows

LAUNCHES = ("warp", "persistent", "grid", "sorted")
# launches whose escape kernel stores |z|^2 and n for finish_kernel (and need the counts buffer)
_COUNTED = ("sorted", "warp", "persistent")
# Persistent launch (escape.escape_persistent_kernel): threads per block; pixels a thread takes at
# a time (fewer atomics on the shared counter against a finer share-out at the frame's end); and
# iterations between a thread's checks for a finished pixel (a pixel that escapes early in a chunk
# idles its lane for the rest of it; a short chunk pays the warp's bookkeeping more often).
# `--bench --only mandelbrot-divergence` times the alternatives. Measured on an H100 (2026-11-22,
# seahorse frame, escape ms): grab 1 / chunk 32: 0.662; grab 4 / chunk 32: 1.372; grab 16: 2.323;
# chunk 16: 1.562; chunk 64: 1.282 (grab 4); the one-thread-per-pixel grid: 0.847. Grab 1 it is.
THREADS = 128
GRAB = 1
CHUNK = 32
# resident blocks per SM when the kernel's register count cannot be asked
BLOCKS_PER_SM = 8
SIM_PERSISTENT = (2, 4)         # (blocks, threads) under the simulator
# Warp launch (escape.escape_warp_kernel, the default): a warp iterates until THRESH of its 32 lanes
# have finished their pixels, then refills them together; WARPS_PER_SM resident warps per SM (at
# most as many as the registers allow). A 1080p frame gives each lane only a few thousand
# iterations, so every lane still iterating when the pixels run out holds up its whole warp:
# fewer warps finish sooner, as long as enough remain to hide the FP64 latency (one warp per SM
# partition runs an iteration every ~80 cycles). Measured (`tools/mandelbrot_divergence_sweep.py`,
# H200, 2026-11-22, seahorse escape ms / % of the same launch's ceiling): 16 warps/SM with thresh
# 4 or 8: 0.585 / 43 % and 0.584 / 45 %; 24: 0.582 / 39 % (thresh 4); 32: 0.598 / 38 %; 8: 0.771 /
# 54 % (the ceiling falls faster than the frame); the persistent launch: 0.594 / 36 %.
THRESH = 8
WARPS_PER_SM = 16
WARP_THREADS = 32               # one warp per block: resident warps per SM in steps of one
SIM_WARP = (2, 32)              # (blocks, threads): the simulator's warp functions want one warp
# Threads per block (x = columns, y = rows) for the one-thread-per-pixel ("grid") escape kernel.
# measured (`--bench --only mandelbrot-launch`, H100, three runs on 2026-11-22): every shape from 8×8
# to 256×1 lands within 0.81–0.94 ms on the seahorse frame, and the spread between two runs of one
# shape in one invocation (16×8: 0.82 and 0.88 ms) is as large as the gaps between shapes. 16×8 was
# fastest in the first run and is kept; see docs/PERFORMANCE.md.
BLOCK = (16, 8)
# the simulator runs one Python thread per CUDA thread: small blocks waste fewer of them
SIM_BLOCK = (8, 8)

# Upper bound on the iterations one GPU launch may do (pixels x max_iter) before the frame is split
# into bands of rows, with a cancellation check between bands: ~20 ms at ~450 G iterations/s.
GPU_BAND_WORK = 2 ** 33
# ... but a GPU band has at least this many pixels (~2 waves of threads on an H100/H200), since
# a launch of a few thousand threads would leave most of the GPU idle. When a band that large
# would still exceed GPU_BAND_WORK (more than 32,768 iterations), the iteration count is sliced
# instead: each launch takes every pixel still running a few thousand iterations further.
GPU_MIN_BAND_PIXELS = 2 ** 18
# One slice never asks a pixel for more iterations than this (~20 ms of one GPU thread's latency),
# however few pixels are still running.
GPU_SLICE_MAX_ITER = 2 ** 20
# Under the CUDA simulator (~0.5 M iterations/s, ~0.4 ms per thread) the same bounds, scaled down
# so that a cancel still lands within a fraction of a second.
SIM_BAND_WORK = 2 ** 15
SIM_BAND_PIXELS = 256
# The same for one CPU band (pixels x max_iter): ~0.2 s at ~0.8 G iterations/s on 2 cores. The
# CPU kernel also polls a stop flag before every pair of pixels, so a cancel never waits for a band.
CPU_BAND_WORK = 2 ** 27

# ------------------------------------------------------------------------------ rendering

@dataclass(frozen=True)
class _Grid:
    """The picture's pixel grid: pixel (row, col) sits at (cx + (col+0.5-half_w)*step,
    cy - (row+0.5-half_h)*step). Tiles and bands index into the same grid, so they agree bit for bit."""
    cx: float
    cy: float
    step: float
    half_w: float
    half_h: float

    @staticmethod
    def of(req: MandelbrotRequest) -> _Grid:
        w, h = int(req.size[0]), int(req.size[1])
        return _Grid(float(req.center_re), float(req.center_im), float(req.width) / w, w / 2.0, h / 2.0)


def resident_blocks(kernel, threads: int, fallback_per_sm: int = BLOCKS_PER_SM) -> int:
    """Blocks of `threads` that all SMs hold at once for this compiled kernel (by its register
    count); more would only start once the resident ones have taken every pixel."""
    dev = mk.cuda.get_current_device()
    per_sm = fallback_per_sm
    try:
        got = kernel.get_regs_per_thread() if kernel.overloads else 0
        regs = max(got.values(), default=0) if isinstance(got, dict) else int(got)
        if regs:
            warp_regs = -(-regs * 32 // 256) * 256          # registers are allocated per warp
            warps = int(dev.MAX_REGISTERS_PER_MULTIPROCESSOR) // warp_regs
            per_sm = max(1, min(warps // (threads // 32),
                                int(dev.MAX_THREADS_PER_MULTIPROCESSOR) // threads))
    except Exception:  # an older numba-cuda or a driver attribute missing: keep the fallback
        per_sm = fallback_per_sm
    return int(dev.MULTIPROCESSOR_COUNT) * per_sm


class Renderer:
    """Renders MandelbrotRequests on one backend, reusing its buffers frame after frame.

    Use from one thread (the render worker). When a request differs from the previous one only in
    colour (palette, density, offset, interior), the escape values still on the device (or in host
    memory on the CPU) are recoloured instead of recomputed (`Frame.meta["recoloured"]`).
    """

    VALUE_SLOTS = 3  # like the host ring: the values of the last 3 computed frames stay readable

    def __init__(self, backend, block: tuple[int, int] | None = None, reuse_values: bool = True,
                 launch: str = "warp", chunk: int = CHUNK, grab: int = GRAB,
                 thresh: int = THRESH, warps_per_sm: int = WARPS_PER_SM,
                 sample: int = eo.SAMPLE, probe: int = eo.PROBE, reach: int = eo.REACH):
        """GPU launch: "warp" (escape_warp_kernel in picture order, refills when `thresh` lanes
        of a warp are idle, `warps_per_sm` resident warps per SM), "sorted" (the warp launch with
        the pixels handed out longest first, as predicted by one sample per `sample` x `sample`
        pixels iterated `probe` iterations, a pixel's estimate the largest of the `reach` x 2
        samples around it each way; see escape_order.py), "persistent" (escape_persistent_kernel, `chunk`
        iterations between checks, `grab` pixels per fetch) or "grid" (one thread per pixel,
        blocks of `block`)."""
        if launch not in LAUNCHES:
            raise ValueError(f"unknown launch {launch!r}; choose one of: {', '.join(LAUNCHES)}")
        if int(chunk) < 1 or int(grab) < 1:
            raise ValueError(f"chunk and grab must be at least 1, got {chunk} and {grab}")
        if not 1 <= int(thresh) <= 32 or int(warps_per_sm) < 1:
            raise ValueError(f"thresh must be 1..32 and warps_per_sm at least 1, got {thresh} "
                             f"and {warps_per_sm}")
        if int(sample) < 1 or int(probe) < 1 or int(reach) < 1:
            raise ValueError(f"sample, probe and reach must be at least 1, got {sample}, {probe} "
                             f"and {reach}")
        self.thresh, self.warps_per_sm = int(thresh), int(warps_per_sm)
        self.sample, self.probe, self.reach = int(sample), int(probe), int(reach)
        self.backend = backend
        self.pool = BufferPool(backend)
        self.reuse_values = reuse_values
        self.block = tuple(block) if block else (SIM_BLOCK if backend.simulated else BLOCK)
        self.launch = launch
        self.chunk, self.grab = int(chunk), int(grab)
        self._persistent_blocks = None
        self._launchers: dict = {}      # (kernel, grid, block) -> PreparedKernel
        self._meta_views = None         # (meta, hist, cursor) of the sorted launch
        self._compiled = False
        self._stream = None
        self.colourer = Colourer(backend)
        self._slot = -1
        self._slot_key: list = [None] * self.VALUE_SLOTS   # geometry held by each slot
        self._slot_gen: list[int] = [0] * self.VALUE_SLOTS
        self._gen = 0
        if backend.is_gpu and mk.cuda is None:
            raise RuntimeError(f"numba-cuda failed to import: {mk.GPU_IMPORT_ERROR}")

    # ---- public API ------------------------------------------------------------------------
    def warmup(self) -> float:
        """Compile every kernel this backend uses (a tiny render); return the milliseconds spent
        (0 when already compiled). Loaded from numba's on-disk cache when possible."""
        if self._compiled:
            return 0.0
        t = time.perf_counter()
        req = MandelbrotRequest(-0.5, 0.0, 3.0, (4, 3), 8)
        pool = BufferPool(self.backend)
        grid = _Grid.of(req)
        values = self._values_buffer(pool, "warm-values", 3, 4)
        counts = self._counts_buffer(pool, "warm-counts", 3, 4)
        rgba = self._rgba_buffer(pool, "warm-rgba", 3, 4)
        timer = JobTimer(self.backend, self._get_stream(), "warm-up")
        with warnings.catch_warnings():
            # numba-cuda warns about grids under 128 blocks; this one is tiny on purpose
            warnings.filterwarnings("ignore", message=r"Grid size \d+ will likely result in GPU")
            self._escape(values, grid, 0, 0, req.max_iter, timer, None, counts)
            if self.backend.is_gpu:      # deep iteration counts use the sliced kernel
                args = (0, 0, grid.cx, grid.cy, grid.step, grid.half_w, grid.half_h, req.max_iter)
                self._escape_sliced(values, 0, 3, args, 12, timer, None)
            self.colourer.warm(timer, self._get_stream())
            self._colour(values, rgba, req, timer)
        timer.finish()
        self._compiled = True
        return (time.perf_counter() - t) * 1e3

    def render(self, request: MandelbrotRequest, cancel=None) -> Frame:
        """Render one frame. Frame.rgba comes from a ring of 3 host buffers (pinned on a GPU) and
        Frame.values (when asked for) from 3 value buffers: both stay valid until three newer frames
        of the same size have been rendered; copy them to keep them longer."""
        request.validate()
        w, h = int(request.size[0]), int(request.size[1])
        compile_ms = self.warmup() if not self._compiled else None
        stream = self._get_stream()
        timer = JobTimer(self.backend, stream, f"mandelbrot {w}×{h}, {request.max_iter:,} iterations")
        if compile_ms is not None:
            timer.add_host_ms("compile", compile_ms)

        key = (request.center_re, request.center_im, request.width, w, h, request.max_iter)
        recolour = (self.reuse_values and self._slot >= 0 and self._slot_key[self._slot] == key)
        if not recolour:
            self._slot = (self._slot + 1) % self.VALUE_SLOTS
            # invalid until the escape pass has finished (older frames' read-outs answer NaN)
            self._slot_key[self._slot] = None
            self._slot_gen[self._slot] = -1
        slot = self._slot
        # every slot is sized on the first frame of a size, so later frames never allocate
        slots = [self._values_buffer(self.pool, f"values{s}", h, w) for s in range(self.VALUE_SLOTS)]
        values = slots[slot]
        rgba = self._rgba_buffer(self.pool, "rgba", h, w)
        if not recolour:
            counts = self._counts_buffer(self.pool, "counts", h, w)
            self._escape(values, _Grid.of(request), 0, 0, request.max_iter, timer, cancel, counts)
            self._gen += 1
            self._slot_key[slot] = key
            self._slot_gen[slot] = self._gen
        self._colour(values, rgba, request, timer)

        host_values = None
        if self.backend.is_gpu:
            frame_rgba = self.pool.host("rgba", (h, w, 4), np.uint8, ring=3)
            with timer.phase("d2h", gpu=True, nbytes=frame_rgba.nbytes):
                rgba.copy_to_host(frame_rgba.view(np.uint32).reshape(h, w), stream=stream)
            if request.want_values:
                host_values = self.pool.host("values", (h, w), np.float64, ring=3)
                with timer.phase("d2h", gpu=True, nbytes=host_values.nbytes):
                    values.copy_to_host(host_values, stream=stream)
        else:
            frame_rgba = rgba.view(np.uint8).reshape(h, w, 4)
            if request.want_values:
                host_values = values
        timings = timer.finish()
        return Frame(rgba=frame_rgba, timings=timings, request=request, values=host_values,
                     fetch_value=self._fetcher(slot, self._slot_gen[slot], values, h, w),
                     meta={"recoloured": recolour, "max_iter": request.max_iter,
                           "precision": precision_state(request.center_re, request.center_im,
                                                        request.width, w)[0],
                           "backend": self.backend.label})

    def strips(self, request: MandelbrotRequest, values: bool, rows: int | None = None,
               cancel=None):
        """Render `request` at any size as strips of `rows` rows, top first, so device memory stays
        bounded: an iterator of (row0, host array), the array uint8 RGBA (n, w, 4) or, with
        `values`, float64 smooth counts (n, w). Each strip's array is reused for the next one: it
        is valid until the next strip is asked for (copy it to keep it). The request, the strip
        height and the device memory are checked at once; `cancel.check()` runs before each strip
        and between bands. Writing files from strips is the command line's job (cli/files.py)."""
        request.validate()
        w, h = int(request.size[0]), int(request.size[1])
        rows = min(strip_rows(w, rows), h)
        if self.backend.is_gpu:
            per_pixel = 12 if values else 16   # float64 value, int32 count (+ uint32 colour)
            if self._sliced(rows, w, int(request.max_iter)):
                per_pixel += 16                # z of every pixel kept between slices
            ensure_device_fits(rows * w * per_pixel, what=f"rendering {w}×{h} in strips of {rows} rows")
        return self._strips(request, bool(values), rows, cancel)

    def _strips(self, request: MandelbrotRequest, want_values: bool, rows: int, cancel):
        w, h = int(request.size[0]), int(request.size[1])
        self.warmup()
        pool = BufferPool(self.backend)   # strip buffers go when the strips are done
        grid = _Grid.of(request)
        stream = self._get_stream()
        gpu = self.backend.is_gpu
        # buffers for a whole strip; the last, shorter strip uses their first rows
        values = self._values_buffer(pool, "strip-values", rows, w)
        counts = self._counts_buffer(pool, "strip-counts", rows, w)
        if want_values:
            host = pool.host("strip-values-host", (rows, w), np.float64) if gpu else values
        else:
            rgba = pool.device("strip-rgba", (rows, w), np.uint32, stream=stream) if gpu \
                else pool.host("strip-rgba", (rows, w), np.uint32, pinned=False)
            host = pool.host("strip-rgba-host", (rows, w), np.uint32) if gpu else rgba
        for r0 in range(0, h, rows):
            if cancel is not None:
                cancel.check()
            n = min(rows, h - r0)
            timer = JobTimer(self.backend, stream, "strip")
            self._escape(values[:n], grid, r0, 0, request.max_iter, timer, cancel,
                         None if counts is None else counts[:n])
            if want_values:
                src = values
            else:
                self._colour(values[:n], rgba[:n], request, timer)
                src = rgba
            if gpu:
                with timer.phase("d2h", gpu=True, nbytes=host[:n].nbytes):
                    src[:n].copy_to_host(host[:n], stream=stream)
                stream.synchronize()
            timer.finish()
            yield r0, (host[:n] if want_values else host[:n].view(np.uint8).reshape(n, w, 4))

    def band(self, request: MandelbrotRequest, row0: int, rows: int, values: bool, cancel=None,
             into: np.ndarray | None = None) -> np.ndarray:
        """Rows row0 .. row0 + rows of `request`'s picture (a poster's band, tiles.py): uint8 RGBA
        (rows, w, 4), or with `values` float64 smooth counts (rows, w). The pixels index the whole
        picture's grid, so bands put together equal the picture rendered whole, bit for bit.
        Written into `into` when given (an array of that shape and type: straight from the device,
        no second host copy), else returned in a buffer that the next band of this renderer
        reuses. Device buffers are kept for the next band of the same shape."""
        request.validate()
        w, h = int(request.size[0]), int(request.size[1])
        row0, rows = int(row0), int(rows)
        if not (0 <= row0 and rows >= 1 and row0 + rows <= h):
            raise ValueError(f"band of rows {row0}..{row0 + rows} is outside the picture's {h} rows")
        self.warmup()
        stream = self._get_stream()
        gpu = self.backend.is_gpu
        vals = self._values_buffer(self.pool, "band-values", rows, w)
        counts = self._counts_buffer(self.pool, "band-counts", rows, w)
        timer = JobTimer(self.backend, stream, "band")
        self._escape(vals, _Grid.of(request), row0, 0, request.max_iter, timer, cancel, counts)
        if values:
            src, shape, dtype = vals, (rows, w), np.float64
        else:
            src = self._rgba_buffer(self.pool, "band-rgba", rows, w) if gpu else \
                self.pool.host("band-rgba", (rows, w), np.uint32, pinned=False)
            self._colour(vals, src, request, timer)
            shape, dtype = (rows, w, 4), np.uint8
        if into is not None and (into.shape != shape or into.dtype != dtype):
            raise ValueError(f"band output must be {dtype.__name__} {shape}, got {into.dtype} {into.shape}")
        if gpu:
            out = into if into is not None else self.pool.host(
                "band-host", shape, dtype, ring=1)
            flat = out if values else out.view(np.uint32).reshape(rows, w)
            with timer.phase("d2h", gpu=True, nbytes=out.nbytes):
                src.copy_to_host(flat, stream=stream)
            stream.synchronize()
        else:
            got = src if values else src.view(np.uint8).reshape(rows, w, 4)
            out = got if into is None else np.copyto(into, got) or into
        timer.finish()
        return out

    # ---- internals ---------------------------------------------------------------------------
    def _get_stream(self):
        if self.backend.is_gpu and self._stream is None:
            self._stream = mk.cuda.stream()
        return self._stream

    def _values_buffer(self, pool, name, h, w):
        if self.backend.is_gpu:
            return pool.device(name, (h, w), np.float64, stream=self._get_stream())
        return pool.host(name, (h, w), np.float64, pinned=False)

    def _counts_buffer(self, pool, name, h, w):
        """The persistent kernel's escape iteration per pixel (GPU only; None elsewhere)."""
        if self.backend.is_gpu and self.launch in _COUNTED:
            return pool.device(name, (h, w), np.int32, stream=self._get_stream())
        return None

    def _rgba_buffer(self, pool, name, h, w):
        if self.backend.is_gpu:
            return pool.device(name, (h, w), np.uint32, stream=self._get_stream())
        return pool.host(name, (h, w), np.uint32, pinned=False, ring=3)

    def _escape(self, values, grid: _Grid, grid_row0, grid_col0, max_iter, timer, cancel,
                counts=None):
        """Escape values for the buffer's rows, cut so that a cancel lands within a fraction of a
        second at any iteration count: bands of rows on the CPU (whose kernel also polls a stop
        flag), bands or iteration slices on the GPU. `counts`: the persistent kernel's scratch
        (int32, the buffer's shape)."""
        args = (int(grid_row0), int(grid_col0), grid.cx, grid.cy, grid.step, grid.half_w,
                grid.half_h, int(max_iter))
        if self.backend.is_gpu:
            self._escape_gpu(values, args, timer, cancel, counts)
        else:
            self._escape_cpu(values, args, timer, cancel)

    def _escape_cpu(self, values, args, timer, cancel):
        rows, cols = values.shape
        max_iter = args[-1]
        band = CPU_BAND_WORK // max(1, cols * max_iter)
        # never so few rows that a band leaves the CPU's threads half idle: the stop flag, not
        # the band, bounds how long a cancel waits
        band = max(1, min(rows, max(band, 4)))
        stop = np.zeros(1, dtype=np.int64)
        forget = cancel.on_cancel(lambda: stop.__setitem__(0, 1)) \
            if hasattr(cancel, "on_cancel") else None
        try:
            for b0 in range(0, rows, band):
                n = min(band, rows - b0)
                with timer.phase("kernel"):
                    mk.escape_rows_cpu(values, b0, n, mk.row_stride(n), *args, stop)
                if cancel is not None:
                    cancel.check()
                if stop[0]:       # stopped part-way: the token raises above, but never go on
                    raise RuntimeError("the escape kernel was stopped without a cancel")
        finally:
            if forget is not None:
                forget()

    def _gpu_bounds(self):
        """(work per launch, fewest pixels worth a launch, most pixels per launch or None)."""
        if self.backend.simulated:
            return min(GPU_BAND_WORK, SIM_BAND_WORK), 1, SIM_BAND_PIXELS
        return GPU_BAND_WORK, GPU_MIN_BAND_PIXELS, None

    def _sliced(self, rows: int, cols: int, max_iter: int) -> bool:
        """Whether a GPU escape pass over rows × cols pixels slices the iteration count: when even
        the smallest band worth a launch would do more than one launch's work."""
        work, min_pixels, _ = self._gpu_bounds()
        plain_rows = work // max(1, cols * max_iter)
        return plain_rows < rows and plain_rows < max(1, -(-min_pixels // cols))

    def _escape_gpu(self, values, args, timer, cancel, counts):
        rows, cols = values.shape
        max_iter = args[-1]
        work, _, max_pixels = self._gpu_bounds()
        band = rows if max_pixels is None else max(1, min(rows, max_pixels // cols))
        plain_rows = work // max(1, cols * max_iter)      # rows whose whole count fits one launch
        if plain_rows >= rows and band >= rows:           # the usual frame: one launch
            self._launch_plain(values, 0, rows, args, timer, counts)
            return
        if not self._sliced(rows, cols, max_iter):        # bands of rows, each launch whole
            step = min(plain_rows, band)
            for b0 in range(0, rows, step):
                self._launch_plain(values, b0, min(step, rows - b0), args, timer, counts)
                if cancel is not None:
                    self._stream.synchronize()
                    cancel.check()
            return
        for b0 in range(0, rows, band):                   # bands of rows, iterations sliced
            self._escape_sliced(values, b0, min(band, rows - b0), args, work, timer, cancel)

    def _launch_plain(self, values, b0, n, args, timer, counts=None):
        cols = values.shape[1]
        if self.launch == "grid" or counts is None:
            bx, by = self.block
            blocks = ((cols + bx - 1) // bx, (n + by - 1) // by)
            with timer.phase("kernel", gpu=True):
                self._kernel(mk.escape_kernel, blocks, (bx, by))(values, b0, n, *args)
            return
        s = self._stream
        warp = self.launch in ("warp", "sorted")
        # the warp kernel takes segments with an atomic increment, which wants an unsigned counter
        counter = self.pool.device("counter", (1,), np.uint32 if warp else np.int64, stream=s)
        nblocks, threads = self._persistent_grid()
        fx, fy = SIM_BLOCK if self.backend.simulated else (32, 8)
        fblocks = ((cols + fx - 1) // fx, (n + fy - 1) // fy)
        with timer.phase("kernel", gpu=True):
            self._kernel(mk.zero_kernel, 1, 32)(counter)
            if warp:
                order, hist = self._order(values, counts, b0, n, args, (fx, fy), fblocks) \
                    if self.launch == "sorted" else self._no_order()
                self._kernel(mk.escape_warp_kernel, nblocks, threads)(
                    values, counts, counter, order, hist, self.thresh, b0, n, *args)
            else:
                mk.escape_persistent_kernel[nblocks, threads, s](
                    values, counts, counter, self.grab, self.chunk, b0, n, *args)
            self._kernel(mk.finish_kernel, fblocks, (fx, fy))(values, counts, b0, n)

    def _order(self, values, counts, b0, n, args, block, blocks):
        """Queue the sorted launch's first passes (escape_order.py) for band rows b0 .. b0 + n:
        the samples' results go into values/counts; returns (order, hist) for the warp kernel."""
        s = self._stream
        rows, cols = values.shape
        nsr, nsc = eo.sample_shape(n, cols, self.sample)
        est = self.pool.device("order-est", eo.sample_shape(rows, cols, self.sample), np.int32,
                               stream=s)
        order = self.pool.device("order", (rows * cols,), np.int32, stream=s)
        meta = self.pool.device("order-meta", (2 * eo.NCLASSES,), np.int32, stream=s)
        if self._meta_views is None or self._meta_views[0] is not meta:
            # the same view objects every frame: prepared launches convert them once
            self._meta_views = (meta, meta[:eo.NCLASSES], meta[eo.NCLASSES:])
        _, hist, cursor = self._meta_views
        bx, by = block
        self._kernel(mk.zero_kernel, 1, 2 * eo.NCLASSES)(meta)
        self._kernel(eo.probe_kernel, ((nsc + bx - 1) // bx, (nsr + by - 1) // by), block)(
            values, counts, est, self.sample, self.probe, b0, n, *args)
        self._kernel(eo.count_kernel, blocks, block)(est, self.sample, self.reach, hist, n, cols)
        self._kernel(eo.scatter_kernel, blocks, block)(est, self.sample, self.reach, hist, cursor,
                                                        order, n, cols)
        return order, hist

    def _kernel(self, dispatcher, grid, block):
        """`dispatcher[grid, block, stream]` that converts reused buffers' parameters once: numba's
        own launch spends ~100 µs per kernel converting arguments (kernels/launch.py), which on a
        0.5 ms frame is a fifth of the escape phase, the GPU waiting for the host."""
        key = (dispatcher, grid, block)
        got = self._launchers.get(key)
        if got is None:
            got = self._launchers[key] = PreparedKernel(dispatcher, grid, block, self._stream)
        return got

    def _no_order(self):
        """The warp kernel's list arguments when it takes the picture in row order: empty."""
        got = getattr(self, "_empty_order", None)
        if got is None:
            got = self._empty_order = (self.pool.device("no-order", (1,), np.int32,
                                                        stream=self._stream),
                                       self.pool.device("no-hist", (0,), np.int32,
                                                        stream=self._stream))
        return got

    def _persistent_grid(self) -> tuple[int, int]:
        """(blocks, threads) of the persistent launch: as many blocks as stay resident at once."""
        warp = self.launch in ("warp", "sorted")
        if self.backend.simulated:
            return SIM_WARP if warp else SIM_PERSISTENT
        if self._persistent_blocks is None:
            kernel = mk.escape_warp_kernel if warp else mk.escape_persistent_kernel
            threads = WARP_THREADS if warp else THREADS
            self._persistent_blocks = resident_blocks(kernel, threads) if kernel.overloads else None
            if self._persistent_blocks is None:      # not compiled yet: ask again next launch
                sms = mk.cuda.get_current_device().MULTIPROCESSOR_COUNT
                return sms * (self.warps_per_sm if warp else BLOCKS_PER_SM), threads
            if warp:
                sms = mk.cuda.get_current_device().MULTIPROCESSOR_COUNT
                self._persistent_blocks = min(self._persistent_blocks, sms * self.warps_per_sm)
        return self._persistent_blocks, (WARP_THREADS if warp else THREADS)

    def _escape_sliced(self, values, b0, n, args, work, timer, cancel):
        """Iterate the band's pixels in slices of at most `work` iterations in all (and
        GPU_SLICE_MAX_ITER per pixel), reading back after each how many pixels still run: the
        next slice is as long as those allow, and the band ends when none is left."""
        rows, cols = values.shape
        max_iter = args[-1]
        bx, by = self.block
        blocks = ((cols + bx - 1) // bx, (n + by - 1) // by)
        stream = self._stream
        zx = self.pool.device("slice-zx", (rows, cols), np.float64, stream=stream)
        zy = self.pool.device("slice-zy", (rows, cols), np.float64, stream=stream)
        alive_dev = self.pool.device("slice-alive", (1,), np.int64, stream=stream)
        alive_host = self.pool.host("slice-alive", (1,), np.int64)
        alive_host[0] = 0
        alive_dev.copy_to_device(alive_host, stream=stream)   # a running total: never reset
        timer.timings.bytes["h2d"] += alive_host.nbytes
        counted, running, n0 = 0, n * cols, 0
        # one "kernel" phase for the whole band: the counter read-backs (8 bytes each, counted
        # below) sit between its launches
        with timer.phase("kernel", gpu=True):
            while n0 < max_iter and running > 0:
                k = max(1, min(work // running, GPU_SLICE_MAX_ITER))
                n1 = min(max_iter, n0 + k)
                mk.escape_slice_kernel[blocks, (bx, by), stream](
                    values, zx, zy, alive_dev, b0, n, *args[:7], n0, n1, max_iter)
                alive_dev.copy_to_host(alive_host, stream=stream)
                timer.timings.bytes["d2h"] += alive_host.nbytes
                stream.synchronize()
                total = int(alive_host[0])
                running, counted, n0 = total - counted, total, n1
                if cancel is not None and running > 0:
                    cancel.check()

    def _colour(self, values, rgba, req: MandelbrotRequest, timer):
        self.colourer.colour(values, rgba, req, req.max_iter, timer, self._stream)

    def _fetcher(self, slot, gen, values, h, w):
        """fetch_value(row, col) for one frame: one element copied (8 bytes on the GPU). Returns
        NaN once three newer frames have reused this frame's buffer."""
        def fetch_value(row: int, col: int) -> float:
            row, col = int(row), int(col)
            if not (0 <= row < h and 0 <= col < w):
                raise IndexError(f"pixel ({row}, {col}) is outside the {w}×{h} frame")
            if self._slot_gen[slot] != gen:
                return float("nan")
            if not self.backend.is_gpu:
                return float(values[row, col])
            one = self.pool.host("probe", (1,), np.float64)
            values[row, col:col + 1].copy_to_host(one, stream=self._stream)
            self._stream.synchronize()
            return float(one[0])
        return fetch_value


def iteration_counts(values: np.ndarray, max_iter: int) -> np.ndarray:
    """Iterations the plain algorithm performs per pixel: n for a point escaping at z_n, max_iter
    inside (int64). Exact: the kernels keep floor(value) == n - 1."""
    v = np.asarray(values)
    return np.where(v >= max_iter, max_iter, np.floor(v).astype(np.int64) + 1).astype(np.int64)


def executed_iterations(request: MandelbrotRequest, values: np.ndarray) -> int:
    """Iterations the kernels really perform for this frame: the plain count, minus the interior
    points that the cardioid/bulb test answers without iterating."""
    w, h = request.size
    g = _Grid.of(request)
    cols = g.cx + (np.arange(w) + 0.5 - g.half_w) * g.step
    rows = g.cy - (np.arange(h) + 0.5 - g.half_h) * g.step
    skipped = mk.shortcut_mask(cols[None, :], rows[:, None])
    counts = iteration_counts(values, request.max_iter)
    return int(counts[~skipped].sum())
