"""The renderer's GPU side: device buffers, the escape pass cut for cancellation, the copy home.

`GpuTarget` has the methods of cpu_target.CpuTarget, so the renderer's pipeline never asks which
backend it runs on. A frame's escape pass is one launch when its work fits one (the usual frame),
else bands of rows with a cancellation check between them, else, when even one band worth a
launch is too long, iteration slices (escape.escape_slice_kernel). A plain launch is a `launch`
object's: `WarpLaunch` here is the app's; escape_variants.py holds those only benches select.
"""
from __future__ import annotations

import numpy as np

from ...buffers import ensure_device_fits
from ...launch import PreparedKernel, resident_blocks
from ..requests.formulas import LABELS, MANDELBROT
from ..requests.formulas import check as check_formula

# Warp launch: a warp iterates until THRESH of its 32 lanes have finished their pixels, then
# refills them together; WARPS_PER_SM resident warps per SM (at most as many as the registers
# allow). Fewer warps finish a frame's last pixels sooner, as long as enough remain to hide the
# FP64 latency. Chosen by `tools/mandelbrot_divergence_sweep.py`: see
# docs/notes/performance-history.md.
THRESH = 8
WARPS_PER_SM = 16
WARP_THREADS = 32               # one warp per block: resident warps per SM in steps of one
SIM_WARP = (2, 32)              # (blocks, threads): the simulator's warp functions want one warp
# Threads per block (x = columns, y = rows) of the one-thread-per-pixel kernels (the sliced one,
# and the grid variant); block shapes measure within noise of each other (`--bench --only
# mandelbrot-launch`, docs/notes/performance-history.md), 16x8 is kept.
BLOCK = (16, 8)
# the simulator runs one Python thread per CUDA thread: small blocks waste fewer of them
SIM_BLOCK = (8, 8)
FINISH_BLOCK = (32, 8)          # finish_kernel's (and the sorted passes') threads per block
# One slice never asks a pixel for more iterations than this (tens of ms of one GPU thread's
# latency), however few pixels are still running.
GPU_SLICE_MAX_ITER = 2 ** 20


def _gpu():
    """escape_gpu, imported at the first GPU use: numba.cuda is no part of a CPU frame's import."""
    from ..loops import escape_gpu
    return escape_gpu


class GpuTarget:
    """Frames computed in device memory on one stream, reusing prepared launches frame after frame.

    `cuts()` gives the renderer's current Cuts (how much work one launch may do); `launch` runs a
    plain escape launch over a band (WarpLaunch, or a variant)."""

    # the sliced kernel and the type of z it keeps between slices (float32: targets_f32.py); its
    # arguments are the escape arguments' all but max_iter
    slice_dtype = np.float64

    def slice_kernel(self, formula: str = MANDELBROT):
        return _gpu().slice_kernel(formula)

    def __init__(self, backend, pool, launch, block, cuts):
        if _gpu().cuda is None:
            raise RuntimeError(f"numba-cuda failed to import: {_gpu().GPU_IMPORT_ERROR}")
        self.backend, self.pool, self.launch, self.cuts = backend, pool, launch, cuts
        self.simulated = bool(backend.simulated)
        self.block = tuple(block) if block else (SIM_BLOCK if self.simulated else BLOCK)
        self._stream = None
        self._launchers: dict = {}      # (kernel, grid, block) -> PreparedKernel
        self._formula_launches: dict = {}   # formula -> the twin of `launch` that runs it
        self._lanes_launch = None           # the warp launch's counting twin, made once

    @property
    def stream(self):
        if self._stream is None:
            self._stream = _gpu().cuda.stream()
        return self._stream

    @property
    def sms(self) -> int:
        return int(_gpu().cuda.get_current_device().MULTIPROCESSOR_COUNT)

    # ---- buffers and copies ------------------------------------------------------------------
    def values(self, pool, name, h, w):
        return pool.device(name, (h, w), np.float64, stream=self.stream)

    def counts(self, pool, name, h, w):
        """The escape iteration per pixel, for launches that store |z|^2 and n (None otherwise)."""
        if self.launch.counted:
            return pool.device(name, (h, w), np.int32, stream=self.stream)
        return None

    def rgba(self, pool, name, h, w, ring=3):
        return pool.device(name, (h, w), np.uint32, stream=self.stream)

    def lanes(self, pool, h, w, max_iter):
        """Where a frame's escape pass counts the lane-iterations its warps issue (LaneCount),
        or None where none are counted: a launch other than the warp launch, or a frame that
        runs in iteration slices (one thread per pixel)."""
        if not self.counts_lanes(h, w, max_iter):
            return None
        return LaneCount(pool.device("overlay-slots", (h, w), np.int32, stream=self.stream),
                         pool.device("overlay-lanes", (1,), np.int64, stream=self.stream),
                         pool.host("overlay-lanes", (1,), np.int64))

    def counts_lanes(self, h, w, max_iter) -> bool:
        """Whether a frame of h × w pixels can count its lanes: the warp launch, in launches that
        each run their pixels to the end."""
        return type(self.launch) is WarpLaunch and not self._sliced(h, w, int(max_iter))

    def host(self, pool, name, shape, dtype, ring=1):
        """A pinned host array that a result is copied into."""
        return pool.host(name, shape, dtype, ring=ring)

    def download(self, src, out, timer):
        with timer.phase("d2h", gpu=True, nbytes=out.nbytes):
            src.copy_to_host(out, stream=self.stream)
        return out

    def sync(self):
        self.stream.synchronize()

    def read(self, values, row, col) -> float:
        """One value, one element copied (8 bytes)."""
        one = self.pool.host("probe", (1,), np.float64)
        values[row, col:col + 1].copy_to_host(one, stream=self.stream)
        self.stream.synchronize()
        return float(one[0])

    def check_fits(self, rows, w, values, max_iter, what):
        """Refuse at once a strip whose buffers the device cannot hold."""
        per_pixel = 12 if values else 16   # float64 value, int32 count (+ uint32 colour)
        if self._sliced(rows, w, int(max_iter)):
            per_pixel += 16                # z of every pixel kept between slices
        ensure_device_fits(rows * w * per_pixel, what=what)

    def kernel(self, dispatcher, grid, block):
        """`dispatcher[grid, block, stream]` that converts reused buffers' parameters once: numba's
        own launch converts every argument on the host at each call (kernels/launch.py), which on
        a frame of a fraction of a millisecond leaves the GPU waiting for the host."""
        key = (dispatcher, grid, block)
        got = self._launchers.get(key)
        if got is None:
            got = self._launchers[key] = PreparedKernel(dispatcher, grid, block, self.stream)
        return got

    # ---- the escape pass ---------------------------------------------------------------------
    def kernel_args(self, values, args, timer, formula: str = MANDELBROT) -> tuple:
        """The escape kernels' arguments for `values`' rows from the grid arguments `args`:
        those themselves here; a subclass's kernels may want them in another form (float32:
        targets_f32.py), and may refuse `formula`."""
        return args

    def warm(self, values, counts, args, timer, formula: str = MANDELBROT):
        """Compile what a frame of `formula` may use: the plain launch and the sliced kernel."""
        args = self.kernel_args(values, args, timer, formula)
        self._escape(values, args, timer, None, counts, False, formula, None)
        self._escape_sliced(values, 0, values.shape[0], args, 12, timer, None, formula)

    def _bounds(self):
        """(work per launch, fewest pixels worth a launch, most pixels per launch or None)."""
        c = self.cuts()
        if self.simulated:
            return min(c.gpu_work, c.sim_work), 1, c.sim_pixels
        return c.gpu_work, c.gpu_min_pixels, None

    def _sliced(self, rows: int, cols: int, max_iter: int) -> bool:
        """Whether an escape pass over rows × cols pixels slices the iteration count: when even
        the smallest band worth a launch would do more than one launch's work."""
        work, min_pixels, _ = self._bounds()
        plain_rows = work // max(1, cols * max_iter)
        return plain_rows < rows and plain_rows < max(1, -(-min_pixels // cols))

    def escape(self, values, args, timer, cancel, counts, whole=False,
               formula: str = MANDELBROT, lanes=None):
        """Escape values for the buffer's rows (args: escape kernels' grid arguments). `whole`:
        one launch even where the worst case's work would cut the rows into bands, each ending in
        a synchronisation and a cancel check (a poster's next band, once its last was quick).
        `formula`: what the pass iterates (formulas.py's names; the target's launch's twin for
        another formula than Mandelbrot's). `lanes` (a LaneCount of lanes()): the pass runs
        the warp launch's counting twin, which also counts the lane-iterations it issues."""
        self._escape(values, self.kernel_args(values, args, timer, formula), timer, cancel,
                     counts, whole, formula, lanes)

    def _escape(self, values, args, timer, cancel, counts, whole, formula, lanes):
        """escape() with the kernels' own arguments (kernel_args)."""
        if lanes is None:
            self._bands(self._launch_of(formula), values, args, timer, cancel, counts, whole,
                        formula)
            return
        if formula != MANDELBROT:           # the counting twin counts Mandelbrot's loop only
            raise ValueError(f"lane efficiency is counted for the Mandelbrot set only, not "
                             f"{LABELS.get(formula, formula)}")
        launch = self._lanes_launch
        if launch is None:
            launch = self._lanes_launch = OverlayWarpLaunch(self.launch, None, None)
        launch.slots, launch.lanes = lanes.slots, lanes.total
        self.kernel(_gpu().zero_kernel, 1, 32)(lanes.total)
        self._bands(launch, values, args, timer, cancel, counts, whole, formula)
        with timer.phase("d2h", gpu=True, nbytes=lanes.home.nbytes):
            lanes.total.copy_to_host(lanes.home, stream=self.stream)

    def _bands(self, launch, values, args, timer, cancel, counts, whole, formula):
        """escape()'s pass with `launch`: one launch, bands of rows, or iteration slices."""
        rows, cols = values.shape
        max_iter = args[-1]
        work, _, max_pixels = self._bounds()
        band = rows if max_pixels is None else max(1, min(rows, max_pixels // cols))
        plain_rows = work // max(1, cols * max_iter)      # rows whose whole count fits one launch
        if whole and not self._sliced(rows, cols, max_iter):
            plain_rows = rows
        if plain_rows >= rows and band >= rows:           # the usual frame: one launch
            launch.run(self, values, counts, 0, rows, args, timer)
            return
        if not self._sliced(rows, cols, max_iter):        # bands of rows, each launch whole
            step = min(plain_rows, band)
            for b0 in range(0, rows, step):
                launch.run(self, values, counts, b0, min(step, rows - b0), args, timer)
                if cancel is not None:
                    self.stream.synchronize()
                    cancel.check()
            return
        for b0 in range(0, rows, band):                   # bands of rows, iterations sliced
            self._escape_sliced(values, b0, min(band, rows - b0), args, work, timer, cancel,
                                formula)

    def _launch_of(self, formula: str):
        """The target's launch for `formula`: its own for Mandelbrot's, else its twin (made once;
        ValueError from a launch that has none)."""
        if formula == MANDELBROT:
            return self.launch
        got = self._formula_launches.get(formula)
        if got is None:
            twin = getattr(self.launch, "for_formula", None)
            if twin is None:
                raise ValueError(f"the {type(self.launch).__name__} draws the Mandelbrot set "
                                 f"only, not {LABELS.get(formula, formula)}")
            got = self._formula_launches[formula] = twin(formula)
        return got

    def _escape_sliced(self, values, b0, n, args, work, timer, cancel, formula=MANDELBROT):
        """Iterate the band's pixels in slices of at most `work` iterations in all (and
        GPU_SLICE_MAX_ITER per pixel), reading back after each how many pixels still run: the
        next slice is as long as those allow, and the band ends when none is left."""
        rows, cols = values.shape
        max_iter = args[-1]
        bx, by = self.block
        blocks = ((cols + bx - 1) // bx, (n + by - 1) // by)
        stream = self.stream
        zx = self.pool.device("slice-zx", (rows, cols), self.slice_dtype, stream=stream)
        zy = self.pool.device("slice-zy", (rows, cols), self.slice_dtype, stream=stream)
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
                self.slice_kernel(formula)[blocks, (bx, by), stream](
                    values, zx, zy, alive_dev, b0, n, *args[:-1], n0, n1, max_iter)
                alive_dev.copy_to_host(alive_host, stream=stream)
                timer.timings.bytes["d2h"] += alive_host.nbytes
                timer.wait()
                total = int(alive_host[0])
                running, counted, n0 = total - counted, total, n1
                if cancel is not None and running > 0:
                    cancel.check()


class LaneCount:
    """The lane-efficiency overlay's counters on the device: `slots` (H, W) int32 the
    lane-iterations per pixel, `total` (1,) int64 the frame's; `home` its pinned host copy, valid
    once the stream has synchronised after the escape pass."""

    def __init__(self, slots, total, home):
        self.slots, self.total, self.home = slots, total, home

    def issued(self) -> int:
        return int(self.home[0])


class CountedLaunch:
    """A plain launch whose escape kernel stores |z|^2 and n (the counts buffer) for finish_kernel:
    a counter zeroed, the escape kernel on a grid of resident blocks, then finish_kernel.
    Subclasses give the kernel (`escape`), its threads per block and the grid's bounds."""

    counted = True
    # the warp kernel takes segments with an atomic increment, which wants an unsigned counter
    counter_dtype = np.uint32
    threads = WARP_THREADS
    sim_grid = SIM_WARP
    cap = True                  # at most per_sm blocks per SM, whatever the registers allow

    def __init__(self, per_sm: int):
        self.per_sm = int(per_sm)
        self._blocks = None

    def dispatcher(self):
        raise NotImplementedError

    def escape(self, gpu, values, counts, counter, b0, n, args, grid, finish):
        raise NotImplementedError

    def run(self, gpu, values, counts, b0, n, args, timer):
        cols = values.shape[1]
        counter = gpu.pool.device("counter", (1,), self.counter_dtype, stream=gpu.stream)
        grid = self.grid(gpu)
        fx, fy = SIM_BLOCK if gpu.simulated else FINISH_BLOCK
        fblocks = ((cols + fx - 1) // fx, (n + fy - 1) // fy)
        with timer.phase("kernel", gpu=True):
            gpu.kernel(_gpu().zero_kernel, 1, 32)(counter)
            self.escape(gpu, values, counts, counter, b0, n, args, grid, (fblocks, (fx, fy)))
            gpu.kernel(_gpu().finish_kernel, fblocks, (fx, fy))(values, counts, b0, n)

    def grid(self, gpu) -> tuple[int, int]:
        """(blocks, threads): as many blocks as stay resident at once."""
        if gpu.simulated:
            return self.sim_grid
        if self._blocks is None:
            kernel = self.dispatcher()
            self._blocks = resident_blocks(kernel, self.threads) if kernel.overloads else None
            if self._blocks is None:      # not compiled yet: ask again next launch
                return gpu.sms * self.per_sm, self.threads
            if self.cap:
                self._blocks = min(self._blocks, gpu.sms * self.per_sm)
        return self._blocks, self.threads


class WarpLaunch(CountedLaunch):
    """escape_warp.escape_warp_kernel (the app's launch): warps refill their idle lanes together
    once `thresh` of them are idle; `warps_per_sm` resident warps per SM; `formula` the one its
    kernel iterates (escape_warp.warp_kernel)."""

    def __init__(self, thresh: int = THRESH, warps_per_sm: int = WARPS_PER_SM,
                 formula: str = MANDELBROT):
        super().__init__(warps_per_sm)
        self.thresh = int(thresh)
        self.formula = check_formula(formula)
        self._empty = None

    def dispatcher(self):
        from ..loops.escape_warp import warp_kernel   # numba.cuda: no part of a CPU frame's import
        return warp_kernel(self.formula)

    def for_formula(self, formula: str) -> WarpLaunch:
        """This launch running `formula`'s kernel (its own grid: the kernels' registers may
        differ). Only the plain warp launch has twins: a subclass adds to its kernel."""
        if type(self) is not WarpLaunch:
            raise ValueError(f"the {type(self).__name__} draws the Mandelbrot set only, not "
                             f"{LABELS.get(formula, formula)}")
        return WarpLaunch(self.thresh, self.per_sm, formula)

    def escape(self, gpu, values, counts, counter, b0, n, args, grid, finish):
        order, hist = self.order(gpu, values, counts, b0, n, args, finish)
        gpu.kernel(self.dispatcher(), *grid)(
            values, counts, counter, order, hist, self.thresh, b0, n, *args)

    def order(self, gpu, values, counts, b0, n, args, finish):
        """The warp kernel's list arguments when it takes the picture in row order: empty."""
        if self._empty is None:
            self._empty = (gpu.pool.device("no-order", (1,), np.int32, stream=gpu.stream),
                           gpu.pool.device("no-hist", (0,), np.int32, stream=gpu.stream))
        return self._empty


class OverlayWarpLaunch(WarpLaunch):
    """The warp launch (same thresh and warps per SM) running its lane-efficiency twin, the
    loop with its counting compiled in (escape_warp._make_warp_loop says what it counts), into
    `slots` (H, W) int32 and `lanes` (1,) int64 on the device: values and counts are the plain
    kernel's bit for bit (tests/kernels/test_overlays.py)."""

    def __init__(self, plain: WarpLaunch, slots, lanes):
        super().__init__(plain.thresh, plain.per_sm)
        self._empty = plain._empty
        self.slots, self.lanes = slots, lanes

    def dispatcher(self):
        from ..loops.escape_warp import warp_kernel   # numba.cuda: no part of a CPU frame's import
        return warp_kernel(MANDELBROT, counting=True)

    def escape(self, gpu, values, counts, counter, b0, n, args, grid, finish):
        order, hist = self.order(gpu, values, counts, b0, n, args, finish)
        gpu.kernel(self.dispatcher(), *grid)(
            values, counts, counter, order, hist, self.thresh, b0, n, *args, self.slots,
            self.lanes)
