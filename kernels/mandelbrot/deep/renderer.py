"""DeepRenderer: deep-zoom frames on the GPU or the CPU, the same method and the same counts.

Per frame: the reference orbit (reused while it serves the frame, extended when the frame asks for
more iterations), the BLA table (reused while the frame's largest |δc| stays under the bound it was
built for), both copied to the device once, then one kernel over the pixels and one copy of the
values back. The host phase ("host") holds the reference and the table (detail "reference",
"table"); "h2d" the orbit and table uploads; "kernel" the pixels; "d2h" the values.
Perturbation-format frames run perturb_cpu's loop over its own layout of the orbit and table
(`cpu_tables`; on the GPU through perturb_gpu's kernels), extended ones perturb.py's shared loop.
"""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from numba import parallel_chunksize

from ...buffers import BufferPool, ensure_device_fits
from ...timing import JobTimer, Timings
from ..escape import row_stride
from ..renderer import resident_blocks
from . import perturb as pk
from . import perturb_gpu as pg
from .bla import EPS_BITS, build_table
from .perturb_cpu import ZW, deep_rows_pert_cpu, flat_tables
from .reference import ReferenceOrbit, gmpy2_module
from .request import DeepRequest

# bits beyond the frame's own need, so the orbit still serves after zooming ~2^32 deeper
PRECISION_HEADROOM = 32
# smallest BLA level kept: single steps (level 0) are no faster than perturbation steps, but
# keeping them lets a pixel at an odd position reach an aligned one; measured both ways in bench
KMIN = 0
# persistent GPU threads: threads per block, and blocks per SM when the kernel's register count
# cannot be asked (otherwise as many blocks as fit at once: the first-pass kernels are capped at
# perturb.MAX_REGISTERS = 64 registers, i.e. 8 blocks of 128 threads per SM, the redo kernels get
# ~86 from ptxas, 5 blocks; blocks beyond those would only start once the resident ones have taken
# every pixel)
THREADS = 128
BLOCKS_PER_SM = 4
SIM_BLOCKS, SIM_THREADS = 2, 4
# a table built for |δc| <= 2^b serves frames with bounds down to 2^(b - TABLE_SLACK_BITS)
TABLE_SLACK_BITS = 4
# a cancellable GPU frame runs in bands of this many pixels, with a check between bands
GPU_BAND_PIXELS = 2 ** 19
# CPU bands: rows per band at least this many pixels, for a cancellation check between bands
CPU_BAND_PIXELS = 2 ** 16
# rows a CPU thread takes at a time within a band
CPU_CHUNK_ROWS = 1


@dataclass
class DeepResult:
    """values: (H, W) float64 smooth counts on the host (a ring buffer of 3: copy to keep longer);
    timings: the job's Timings; format: "perturbation" | "extended"; stats: counts the kernels
    made (perturbation steps, BLA steps, iterations the BLA skipped, rebases, all passes counted;
    pixels done again because their count was doubtful, see perturb.py); reference: the
    ReferenceOrbit used; reused: whether it came from an earlier frame."""
    values: np.ndarray
    timings: Timings
    format: str
    stats: dict = field(default_factory=dict)
    reference: object = None
    reused: bool = False
    table_reused: bool = False


@dataclass(frozen=True)
class FrameGeometry:
    """Where the frame's pixels sit relative to the reference: δc of pixel (row, col) is
    (d0 + (col + 0.5 - half_w) * step - i (row + 0.5 - half_h) * step) * 2**cexp."""
    d0r: float
    d0i: float
    step: float
    cexp: int
    half_w: float
    half_h: float
    c_bound_exp: int  # |δc| <= 2**c_bound_exp over the whole frame

    @staticmethod
    def of(request: DeepRequest, orbit: ReferenceOrbit) -> FrameGeometry:
        gmpy2 = gmpy2_module()
        w, h = int(request.size[0]), int(request.size[1])
        with gmpy2.context(precision=orbit.precision):
            step = gmpy2.mpfr(str(request.width_decimal)) / w
            cexp, mant = gmpy2.frexp(step)
            centre = gmpy2.mpc(gmpy2.mpfr(str(request.center_re).strip()),
                               gmpy2.mpfr(str(request.center_im).strip()))
            d = centre - orbit.centre
            d0r = float(gmpy2.mul_2exp(d.real, -cexp))
            d0i = float(gmpy2.mul_2exp(d.imag, -cexp))
        step_m = float(mant)
        cmax = math.hypot(d0r, d0i) + math.hypot(w / 2.0, h / 2.0) * step_m
        return FrameGeometry(d0r, d0i, step_m, int(cexp), w / 2.0, h / 2.0,
                             int(cexp) + math.ceil(math.log2(cmax)))


class DeepRenderer:
    """Renders DeepRequests on one backend ("cpu" or "cuda"), keeping the last reference orbit and
    its table (and their device copies) for the next frame. Use from one thread."""

    LAUNCHES = ("persistent", "grid")

    def __init__(self, backend, eps_bits: int = EPS_BITS, kmin: int = KMIN, launch: str = "persistent"):
        """launch (GPU): "persistent" = a few blocks per SM whose threads take pixels from an atomic
        counter until none are left; "grid" = one thread per pixel."""
        if launch not in self.LAUNCHES:
            raise ValueError(f"unknown launch {launch!r}; choose one of: {', '.join(self.LAUNCHES)}")
        self.launch = launch
        self.backend = backend
        self.eps_bits = int(eps_bits)
        self.kmin = int(kmin)
        self.pool = BufferPool(backend)
        self.orbit: ReferenceOrbit | None = None
        self._table = None          # (key, tab, tabe, levels)
        self._dev_orbit = None      # (key, orbit, oexp) on the device
        self._dev_table = None      # (key, tab, tabe, levels) on the device
        self._cpu_tables = None     # (orbit, tab, zo, bt): perturb_cpu's layout of those arrays
        self._dev_flat = None       # (zo, bt) on the device, for the same orbit and table
        self._dev_levels = None     # (key, levels) on the device, for frames of that loop
        self._stream = None
        self._compiled = False
        if backend.is_gpu and pk.cuda is None:
            raise RuntimeError(f"numba-cuda failed to import: {pk.GPU_IMPORT_ERROR}")

    # ---- public API ------------------------------------------------------------------------
    def warmup(self) -> float:
        """Compile the kernels (a tiny frame around a float64 orbit; no gmpy2 needed); return the
        milliseconds spent, 0 when already compiled."""
        if self._compiled:
            return 0.0
        t = time.perf_counter()
        c = complex(-0.75, 0.1)
        z = [0j]
        for _ in range(40):
            z.append(z[-1] * z[-1] + c)
        zz = np.array(z)
        orbit = np.zeros((len(z), 4))
        orbit[:, 0], orbit[:, 1] = zz.real, zz.imag
        big = np.maximum(np.abs(zz.real), np.abs(zz.imag))
        _, e = np.frexp(big)
        orbit[:, 2], orbit[:, 3] = np.ldexp(zz.real, -e), np.ldexp(zz.imag, -e)
        oexp = e.astype(np.int32)
        oexp[0] = -(1 << 29)
        tab, tabe, levels = build_table(orbit, oexp, (0.5, -20), self.eps_bits, self.kmin)
        geo = FrameGeometry(0.0, 0.0, 0.5, -30, 2.0, 1.5, -28)
        pool = BufferPool(self.backend)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"Grid size \d+ will likely result in GPU")
            dev = self._to_device(orbit, oexp, tab, tabe, levels)
            flat = None
            if self._flat_wanted():
                flat = flat_tables(orbit, tab, tabe, levels)
                if self.backend.is_gpu:
                    flat = tuple(pk.cuda.to_device(a, stream=self._get_stream()) for a in flat)
            for extended in (False, True):
                timer = JobTimer(self.backend, self._get_stream(), "warm-up")
                self._run(pool, (3, 4), geo, dev, 30, extended, timer, None, None,
                          None if extended else flat)
                timer.finish()
        self._compiled = True
        return (time.perf_counter() - t) * 1e3

    def render_values(self, request: DeepRequest, cancel=None, progress=None,
                      to_host: bool = True) -> DeepResult:
        """Smooth counts of `request` on the host, with the job's timings.

        cancel: an object whose check() raises to stop (checked inside the reference orbit every
        few thousand iterations and between bands of pixels). progress(fraction, stage): stage
        "reference" while the orbit is computed, "pixels" as bands of pixels finish.
        to_host=False (GPU): DeepResult.values is the device array (H, W) float64, valid until the
        next call, so a colouring kernel can read it where it is; only the counts are copied."""
        request.validate()
        w, h = int(request.size[0]), int(request.size[1])
        compile_ms = self.warmup() if not self._compiled else None
        fmt = request.format
        timer = JobTimer(self.backend, self._get_stream(),
                         f"deep mandelbrot {w}×{h}, {request.max_iter:,} iterations, {fmt}")
        if compile_ms is not None:
            timer.add_host_ms("compile", compile_ms)

        with timer.phase("host", detail="reference"):
            orbit, reused = self._reference(request, cancel, progress)
            geo = FrameGeometry.of(request, orbit)
        with timer.phase("host", detail="table"):
            table, table_reused = self._table_for(orbit, geo, request.bla)
        flat_frame = fmt != "extended" and self._flat_wanted()
        dev = self._upload(orbit, table, timer, shared=not flat_frame)
        flat = self._flat_tables(orbit, table, timer) if flat_frame else None
        stats = self._run(self.pool, (h, w), geo, dev, request.max_iter, fmt == "extended",
                          timer, cancel, progress, flat)
        values, stats = self._fetch(stats, (h, w), timer, to_host)
        timings = timer.finish()
        st = self._stats_dict(stats)
        return DeepResult(values=values, timings=timings, format=fmt, stats=st, reference=orbit,
                          reused=reused, table_reused=table_reused)

    # ---- reference and table --------------------------------------------------------------------
    def _reference(self, request: DeepRequest, cancel, progress):
        need = request.precision
        width_log2 = request.width_log10 * math.log2(10.0)
        orbit = self.orbit
        reused = (orbit is not None and
                  orbit.serves(request.center_re, request.center_im, width_log2, need))
        if not reused:
            orbit = ReferenceOrbit(request.center_re, request.center_im, need + PRECISION_HEADROOM)
        report = None if progress is None else (lambda f: progress(f, "reference"))
        orbit.extend(request.max_iter, cancel=cancel, progress=report)
        self.orbit = orbit
        return orbit, reused

    def _table_for(self, orbit: ReferenceOrbit, geo: FrameGeometry, use_bla: bool):
        """The table for this orbit and frame. A table built for a larger bound on |δc| is valid
        for a smaller one (its radii are only smaller than they could be), so it serves frames whose
        bound is up to 2^TABLE_SLACK_BITS below its own: zooming in 2x per step rebuilds it every
        few steps, panning rarely."""
        key = (id(orbit), orbit.version, use_bla, self.eps_bits, self.kmin)
        t = self._table
        if t is not None and t[0][:5] == key and (
                not use_bla or geo.c_bound_exp <= t[0][5] <= geo.c_bound_exp + TABLE_SLACK_BITS):
            return t, True
        orb, oexp = orbit.arrays()
        # build for a bound a little above this frame's, so small pans and zoom-outs keep it
        bound = geo.c_bound_exp + 1
        if use_bla:
            tab, tabe, levels = build_table(orb, oexp, (0.5, bound + 1), self.eps_bits, self.kmin)
        else:
            tab, tabe, levels = pk.empty_table()
        self._table = (key + (bound,), tab, tabe, levels)
        return self._table, False

    # ---- device -----------------------------------------------------------------------------
    def _get_stream(self):
        if self.backend.is_gpu and self._stream is None:
            self._stream = pk.cuda.stream()
        return self._stream

    def _to_device(self, orbit, oexp, tab, tabe, levels):
        if not self.backend.is_gpu:
            return orbit, oexp, tab, tabe, levels
        s = self._get_stream()
        return tuple(pk.cuda.to_device(np.ascontiguousarray(a), stream=s)
                     for a in (orbit, oexp, tab, tabe, levels))

    def _upload(self, orbit: ReferenceOrbit, table, timer, shared: bool = True):
        """The orbit and the table where the kernel reads them (copied once per version).
        shared=False (a frame of perturb_cpu's loop, which reads its own copy of them,
        `_flat_tables`): on the GPU only the table's levels, the rest None."""
        orb, oexp = orbit.arrays()
        key_t, tab, tabe, levels = table
        if not self.backend.is_gpu:
            return orb, oexp, tab, tabe, levels
        s = self._get_stream()
        if not shared:
            if self._dev_levels is None or self._dev_levels[0] != key_t:
                with timer.phase("h2d", gpu=True, nbytes=levels.nbytes):
                    self._dev_levels = (key_t, pk.cuda.to_device(levels, stream=s))
            return None, None, None, None, self._dev_levels[1]
        okey = (id(orbit), orbit.version)
        if self._dev_orbit is None or self._dev_orbit[0] != okey:
            self._dev_orbit = None
            nbytes = orb.nbytes + oexp.nbytes
            ensure_device_fits(nbytes, what=f"a reference orbit of {orb.shape[0]:,} points")
            with timer.phase("h2d", gpu=True, nbytes=nbytes):
                self._dev_orbit = (okey, pk.cuda.to_device(orb, stream=s),
                                   pk.cuda.to_device(oexp, stream=s))
        if self._dev_table is None or self._dev_table[0] != key_t:
            self._dev_table = None
            nbytes = tab.nbytes + tabe.nbytes + levels.nbytes
            ensure_device_fits(nbytes, what=f"an approximation table of {tab.shape[0]:,} entries")
            with timer.phase("h2d", gpu=True, nbytes=nbytes):
                self._dev_table = (key_t,) + tuple(pk.cuda.to_device(a, stream=s)
                                                   for a in (tab, tabe, levels))
        return (self._dev_orbit[1], self._dev_orbit[2]) + self._dev_table[1:]

    def _run(self, pool, shape, geo: FrameGeometry, dev, max_iter, extended, timer, cancel, progress,
             flat=None):
        """The pixels of a frame of `shape` (H, W) into pool buffers; returns the stats buffer.
        flat: (zo, bt) of perturb_cpu's layout where the frame takes that loop, else None."""
        h, w = shape
        orb, oexp, tab, tabe, levels = dev
        # ε of the table's radii: the kernels' error bound adds it per BLA step
        eps = math.ldexp(1.0, -self.eps_bits)
        args = (geo.d0r, geo.d0i, geo.step, int(geo.cexp), geo.half_w, geo.half_h,
                orb, oexp, tab, tabe, levels, int(self.kmin), eps, int(max_iter), bool(extended))
        if not self.backend.is_gpu:
            values = pool.host("values", (h, w), np.float64, pinned=False, ring=3)
            stats = pool.host("stats", (h, pk.N_STATS), np.int64, pinned=False)
            band = max(1, min(h, -(-CPU_BAND_PIXELS // w)))
            own = flat is not None
            if own:
                args = args[:6] + tuple(flat) + (levels, eps, int(max_iter))
            for r0 in range(0, h, band):
                n = min(band, h - r0)
                # rows handed out one at a time (numba's dynamic scheduling): on a machine shared
                # with other work a thread that loses its core leaves its rows to the other one
                # instead of the band waiting for its fixed half
                with timer.phase("kernel"), parallel_chunksize(CPU_CHUNK_ROWS):
                    if own:
                        deep_rows_pert_cpu(values, stats, r0, n, row_stride(n), *args)
                    else:
                        pk.deep_rows_cpu(values, stats, r0, n, row_stride(n), *args)
                if cancel is not None:
                    cancel.check()
                if progress is not None:
                    progress((r0 + n) / h, "pixels")
            return values, stats
        s = self._get_stream()
        values = pool.device("values", (h, w), np.float64, stream=s)
        stats = pool.device("stats", (pk.N_STATS,), np.int64, stream=s)
        total = h * w
        band = total if cancel is None and progress is None else GPU_BAND_PIXELS
        nbands = -(-total // band)
        # one counter per band, one for the redo kernel; the list of pixels to redo and its length
        counters = pool.device("counters", (nbands + 1,), np.int64, stream=s)
        redo = pool.device("redo", (max(total, 1),), np.int64, stream=s)
        nredo = pool.device("nredo", (1,), np.int64, stream=s)
        threads = SIM_THREADS if self.backend.simulated else THREADS
        dynamic = self.launch == "persistent"
        if not dynamic:
            resident = None
        elif self.backend.simulated:
            resident = SIM_BLOCKS
        if flat is not None:
            kernel, redo_kernel = pg.deep_kernel_flat, pg.deep_redo_flat
            args = args[:6] + tuple(flat) + (levels, eps, int(max_iter), False)
        elif extended:
            kernel, redo_kernel = pk.deep_kernel_ext, pk.deep_redo_ext
        else:
            kernel, redo_kernel = pk.deep_kernel_pert, pk.deep_redo_pert
        if dynamic and not self.backend.simulated:
            resident = resident_blocks(kernel, threads, BLOCKS_PER_SM)
        gargs = args[:-1]   # the kernels take no `extended` flag: one kernel per format
        with timer.phase("kernel", gpu=True):
            pk.zero_kernel[1, 32, s](stats)
            pk.zero_kernel[-(-counters.shape[0] // 32), 32, s](counters)
            pk.zero_kernel[1, 32, s](nredo)
        for b in range(nbands):
            p0, p1 = b * band, min(total, (b + 1) * band)
            need = -(-(p1 - p0) // threads)
            nblocks = need if resident is None else max(1, min(resident, need))
            with timer.phase("kernel", gpu=True):
                kernel[nblocks, threads, s](values, counters, b, p0, p1, dynamic, *gargs, stats,
                                            redo, nredo)
            if nbands > 1 and (cancel is not None or progress is not None):
                s.synchronize()
                if cancel is not None:
                    cancel.check()
                if progress is not None:
                    progress(p1 / total, "pixels")
        # the doubtful pixels (a few per thousand at most where measured): persistent threads take
        # them from the last counter until nredo[0], which only the device knows
        if self.backend.simulated:
            rblocks = SIM_BLOCKS
        else:
            rblocks = resident_blocks(redo_kernel, threads, BLOCKS_PER_SM)
        with timer.phase("kernel", gpu=True):
            redo_kernel[rblocks, threads, s](values, counters, nbands, *gargs, stats, redo, nredo)
        return values, stats

    def _flat_wanted(self) -> bool:
        """Whether perturbation-format frames take perturb_cpu's loop (with the table's level 0
        kept: that loop reads it)."""
        return self.kmin == 0

    def _flat_tables(self, orbit: ReferenceOrbit, table, timer):
        """perturb_cpu's flattened arrays (zo, bt) for this orbit and table, where the kernels read
        them; kept while both are the same objects (holding them keeps their ids from being
        reused)."""
        orb, _ = orbit.arrays()
        _, tab, tabe, levels = table
        t = self._cpu_tables
        if t is None or t[0] is not orb or t[1] is not tab:
            self._dev_flat = None
            with timer.phase("host", detail="table"):
                self._cpu_tables = (orb, tab) + flat_tables(orb, tab, tabe, levels)
        zo, bt = self._cpu_tables[2:]
        if not self.backend.is_gpu:
            return zo, bt
        if self._dev_flat is None:
            s = self._get_stream()
            nbytes = zo.nbytes + bt.nbytes
            ensure_device_fits(nbytes, what=f"the orbit and table of {zo.shape[0] // ZW:,} points")
            with timer.phase("h2d", gpu=True, nbytes=nbytes):
                self._dev_flat = (pk.cuda.to_device(zo, stream=s), pk.cuda.to_device(bt, stream=s))
        return self._dev_flat

    def _fetch(self, run_out, shape, timer, to_host=True):
        values, stats = run_out
        if not self.backend.is_gpu:
            return values, stats.sum(axis=0)
        h, w = shape
        s = self._get_stream()
        host = self.pool.host("values-host", (h, w), np.float64, ring=3) if to_host else None
        host_stats = self.pool.host("stats-host", (pk.N_STATS,), np.int64)
        nbytes = host_stats.nbytes + (host.nbytes if to_host else 0)
        with timer.phase("d2h", gpu=True, nbytes=nbytes):
            if to_host:
                values.copy_to_host(host, stream=s)
            stats.copy_to_host(host_stats, stream=s)
        s.synchronize()
        return (host if to_host else values), host_stats

    @staticmethod
    def _stats_dict(stats) -> dict:
        st = [int(x) for x in np.asarray(stats).reshape(-1)[:pk.N_STATS]]
        return {"perturbation_steps": st[pk.STAT_STEPS], "bla_steps": st[pk.STAT_BLA],
                "bla_iterations": st[pk.STAT_BLA_ITERS], "rebases": st[pk.STAT_REBASES],
                "redone_pixels": st[pk.STAT_REDONE]}
