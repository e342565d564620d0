"""DeepRenderer: deep-zoom frames on the GPU or the CPU, the same method and the same counts.

Per frame: the reference orbit (reused while it serves the frame, extended when the frame asks for
more iterations), the BLA table (reused while the frame's largest |δc| stays under the bound it was
built for), both copied to the device once, then one kernel over the pixels and one copy of the
values back. The host phase ("host") holds the reference and the table (detail "reference",
"table"); "h2d" the orbit and table uploads; "kernel" the pixels; "d2h" the values.
Perturbation-format frames run perturbation_loop.py's loop over its own layout of the orbit and
table, extended ones extended_loop.py's (a table without single steps, kmin > 0:
perturbation_loop.KMIN_CODE).
The backend's part (where the arrays live, how the pixels run) is CpuPixels' or GpuPixels'.
"""
from __future__ import annotations

import math
import time
import warnings

import numpy as np

from ...buffers import BufferPool
from ...roofs.work import record
from ...timing import JobTimer
from .deep_work import frame_work
from ..requests.formulas import BURNING_SHIP, LABELS, MANDELBROT
from ..requests.number_type import float32_deltas_reach
from ..loops import extended_loop, perturbation_loop
from ..tables.bla import EPS_BITS, build_table
from ..tables.bla_ship import ext_ship_tables, flat_ship_tables
from .cpu_pixels import CpuPixels
from ..redo.exact_redo import ExactCache, mode_of
from ..tables.layout import empty_table, stats_dict
from ..loops.loop_args import ExtendedArgs, PerturbationArgs, positional, with_layers
from ..tables.flat_build import flat_tables
from ..reference.period_stop import radius_log2
from ..reference.reference import ReferenceOrbit, warm_engine
from .frame_geometry import TABLE_SLACK_BITS, FrameGeometry, table_bound
from ..requests.deep_request import DeepRequest
from .result import DeepResult, PendingValues
from .table_ahead import MAX_RESERVED_BYTES, TableAhead, reserved_bytes, second_core, table_nbytes
from .table_ahead import cached as ahead_cached
from .table_ahead import ready as ahead_ready
from .table_ahead import warm as warm_ahead

# a new orbit gets the precision of a frame 2^this narrower, so zooming in keeps it at least that
# far (the rule rounds to 64 bits: "the frame's need + 32" was lost at the next multiple)
PRECISION_HEADROOM = 32
# smallest BLA level kept: single steps (level 0) are no faster than perturbation steps, but
# keeping them lets a pixel at an odd position reach an aligned one; measured both ways in bench
KMIN = 0
FORMATS = ("perturbation", "extended")
def _warm_key(fmt: str, formula: str) -> str:
    """What DeepRenderer._warm holds for a format's loop of `formula` (the format alone for the
    Mandelbrot's, as callers ask for it)."""
    return fmt if formula == MANDELBROT else f"{fmt} {formula}"


class DeepRenderer:
    """Renders DeepRequests on one backend ("cpu" or "cuda"), keeping the last reference orbit and
    its table (and their device copies) for the next frame. Use from one thread."""

    LAUNCHES = ("persistent", "grid")

    def __init__(self, backend, eps_bits: int = EPS_BITS, kmin: int = KMIN, launch: str = "persistent"):
        """launch (GPU): "persistent" = a few blocks per SM whose threads take pixels from an atomic
        counter until none are left; "grid" = one thread per pixel. kmin > 0 drops the table's
        shortest levels (an experiment: perturbation frames then run perturbation_loop's
        KMIN_CODE)."""
        if launch not in self.LAUNCHES:
            raise ValueError(f"unknown launch {launch!r}; choose one of: {', '.join(self.LAUNCHES)}")
        self.launch = launch
        # "float32": perturbation-format frames with float32 deltas where their range holds the
        # frame (perturbation_loop.CODE32); _f32: whether the frame under way runs them
        self.number_type = "float64"
        self._f32 = False
        self.backend = backend
        self.eps_bits = int(eps_bits)
        self.kmin = int(kmin)
        # doublings of headroom a new orbit gets; 0 where no zoom follows (one headless frame)
        self.precision_headroom = PRECISION_HEADROOM
        self.pool = BufferPool(backend)
        self.orbit: ReferenceOrbit | None = None
        self.period_stop = True     # stop the reference at the frame's period (off: compare)
        # pixels float64 cannot place: True iterates them in double-double, then MPFR; PROVED in
        # double-double only (the rest marked); False (unless asked: at 5e227 even double-double
        # costs several frames' time) keeps the loop's value and marks them
        self.exact_redo = False
        self.last_exact: dict = {}  # the last frame's counts of them (exact_redo.resolve's)
        self.exact = ExactCache()   # their values, kept for a re-render of the same picture
        self.table_ahead = True     # build the table while the orbit is computed (off: compare)
        self.table_slack_bits = TABLE_SLACK_BITS    # table_bound's rounding (keyframes: coarser)
        # where to look for an orbit before computing one (reference_store.ReferenceStore)
        self.references = None
        self.reference_source = None    # "pinned" | "disk": where this frame's orbit was taken from
        self._own_pinned = False        # the orbit kept is a copy of a pinned one (a movie's)
        self._table = None          # (key, tab, tabe, levels)
        self._ahead = None          # (key, table_ahead.TableAhead) of the orbit just extended
        self._flat = None           # (orbit, tab, serial, zo, bt): perturbation_loop's layout
        self._flat_serial = 0
        self._compiled = False      # the table builder
        self._warm: set = set()     # formats whose loop is compiled
        if backend.is_gpu:          # numba.cuda is imported here, for a GPU's renderer only
            from ..loops import targets
            if targets.cuda is None:
                raise RuntimeError(f"numba-cuda failed to import: {targets.GPU_IMPORT_ERROR}")
            from .gpu_pixels import GpuPixels
            self.pixels = GpuPixels(backend, launch)
        else:
            self.pixels = CpuPixels(backend)

    # ---- public API ------------------------------------------------------------------------
    def warmup(self, formats=(), formula: str = MANDELBROT) -> float:
        """Compile the table builder and the loops of `formats` ("perturbation", "extended"; a
        tiny frame around a float64 orbit, no gmpy2 needed); return the milliseconds spent, 0 when
        all were compiled. A format's loop otherwise compiles before its first frame: a first
        start that never goes below 1e-290 never waits for the extended loop. `formula`
        (formulas.py): whose loops."""
        todo = [f for f in FORMATS if f in formats and _warm_key(f, formula) not in self._warm]
        if self._compiled and not todo:
            return 0.0
        t = time.perf_counter()
        for _ in self.warmup_steps(todo, formula):
            pass
        return (time.perf_counter() - t) * 1e3

    def warmup_steps(self, formats=FORMATS, formula: str = MANDELBROT):
        """warmup() as a generator: yields the name of each part once compiled ("table", then
        the formats), so that a background job can let other work in between."""
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
        first = not self._compiled
        tab, tabe, levels = build_table(orbit, oexp, (0.5, -20), self.eps_bits, self.kmin)
        ship = formula == BURNING_SHIP
        if ship:    # the ship's loops read their own tables' columns
            tab, tabe, levels = ext_ship_tables(orbit, oexp, (0.5, -20), self.eps_bits)
        full = "extended" in formats     # the whole deep warm-up (window's background, benches)
        if (not self.backend.is_gpu and self.table_ahead and second_core()
                and (full or ahead_cached())):
            warm_ahead()    # the table built while the orbit is computed (CPU frames)
        warm_engine(mpfr=full)      # the reference engines' compiled loops
        self._compiled = True
        if first:
            yield "table"
        geo = FrameGeometry(0.0, 0.0, 0.5, -30, 2.0, 1.5, -28)
        self._f32 = False               # the float64 loops (the float32 one compiles when used)
        pool = BufferPool(self.backend)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"Grid size \d+ will likely result in GPU")
            dev = self.pixels.to_device((orbit, oexp, tab, tabe, levels))
            flat = None
            if self.kmin == 0:
                flat = self.pixels.to_device(
                    flat_ship_tables(orbit, oexp, (0.5, -20), self.eps_bits)[:2] if ship
                    else flat_tables(orbit, tab, tabe, levels))
            for fmt in FORMATS:
                if fmt not in formats or _warm_key(fmt, formula) in self._warm:
                    continue
                timer = JobTimer(self.backend, self.stream, "warm-up")
                code, args = self._loop(fmt, dev, flat, 30, formula)
                self.pixels.run(pool, (3, 4), code, positional(geo.grid(), args), timer, None,
                                None)
                timer.finish()
                self._warm.add(_warm_key(fmt, formula))
                yield fmt

    def compiled(self, fmt: str, formula: str = MANDELBROT) -> bool:
        """Whether frames of `fmt` and `formula` start without compiling."""
        return self._compiled and _warm_key(fmt, formula) in self._warm

    def render_values(self, request: DeepRequest, cancel=None, progress=None,
                      to_host: bool = True, layers=None) -> DeepResult:
        """Smooth counts of `request` on the host, with the job's timings: start_values'
        frame waited for at once.

        cancel: an object whose check() raises to stop (checked inside the reference orbit every
        few thousand iterations and between bands of pixels). progress(fraction, stage): stage
        "reference" while the orbit is computed, "table" around the table's build (0 then 1, when
        it is built), "pixels" as bands of pixels finish.
        to_host=False (GPU): DeepResult.values is the device array (H, W) float64, valid until the
        next call, so a colouring kernel can read it where it is; only the counts are copied.
        layers: (5, H, W) int32 where the loop runs (device or host) for each pixel's counts
        (loop_args.with_layers), or None for the loop without them."""
        return self.start_values(request, cancel, progress, to_host, layers).result()

    def start_values(self, request: DeepRequest, cancel=None, progress=None,
                     to_host: bool = True, layers=None) -> PendingValues:
        """render_values' frame queued on the GPU without waiting for it (on the CPU: done):
        its result() waits for this frame's work alone, so the host part of a next frame may
        be queued behind it meanwhile (a poster's bands). Values on the device are this
        frame's until the next frame's kernels run (work queued before them reads them first);
        the counts and host values (rings of 3) until the second frame after this one."""
        request.validate()
        w, h = int(request.size[0]), int(request.size[1])
        fmt, formula = request.format, request.formula
        plain = formula == MANDELBROT
        if not plain and (layers is not None or self.kmin != 0):
            raise ValueError(f"overlays and tables without single steps are the Mandelbrot's; "
                             f"not drawn for the {LABELS[formula]}")
        compile_ms = None
        if not self.compiled(fmt, formula):
            if progress is not None:        # seconds on a first start: say what is happening
                progress(0.0, "compile")
            compile_ms = self.warmup((fmt,), formula)
        timer = JobTimer(self.backend, self.stream,
                         f"deep {request.formula} {w}×{h}, {request.max_iter:,} iterations, {fmt}")
        if compile_ms is not None:
            timer.add_host_ms("compile", compile_ms)

        try:
            with timer.phase("host", detail="reference"):
                orbit, reused = self._reference(request, cancel, progress)
                geo = FrameGeometry.of(request, orbit)
            self._f32 = (plain and self.number_type == "float32" and fmt == "perturbation"
                         and float32_deltas_reach(fmt, request.spacing_log2))
            with timer.phase("host", detail="table"):
                # the float64 perturbation loop reads only its layout; others the table's entries
                entries = self._f32 or not self._takes_perturbation_loop(fmt)
                if plain:
                    table, table_reused = self._table_for(orbit, geo, request.bla, progress,
                                                          entries)
                else:
                    table, table_reused = self._ship_table(orbit, geo, request.bla,
                                                           fmt == "extended")
        except BaseException:       # a table being built ahead must not wait for a next frame
            if self._ahead is not None:
                self._ahead[1].abandon()
                self._ahead = None
            raise
        dev, flat = self._place(fmt, orbit, table, timer)
        code, args = self._loop(fmt, dev, flat, request.max_iter, formula)
        if progress is not None:
            progress(0.0, "pixels")     # the first band's report comes when it is done
        records = (geo.grid(), args)
        if layers is not None:          # the overlays' twin of the loop (loop_args.with_layers)
            code, records = with_layers(code, records, layers)
        run_out = self.pixels.run(self.pool, (h, w), code, positional(*records), timer,
                                  cancel, progress)
        mode = False if request.polar else mode_of(request, self.exact_redo)   # rectangles only
        exact = self.pixels.exact(self.pool, run_out, request, mode, timer, self.exact, cancel,
                                  layers, progress)
        values, stats = self.pixels.fetch(self.pool, run_out, (h, w), timer, to_host)
        timer.queued()
        started, f32 = self.pixels.started, self._f32

        def settle() -> DeepResult:
            timings = timer.finish()
            self.pixels.settled(started)
            # which engine made the orbit (the Python fallback says why it runs)
            timings.detail["reference engine"] = orbit.engine_name
            st = {**stats_dict(stats), **exact()}     # exact: dd_, exact_ and marked_pixels
            self.last_exact = {k: st[k] for k in ("dd_pixels", "exact_pixels", "marked_pixels")}
            record(timings, frame_work(st, w * h, sum(a.nbytes for a in orbit.arrays())
                                       + table_nbytes(*table[1:])))
            return DeepResult(values=values, timings=timings, format=fmt, stats=st,
                              reference=orbit, reused=reused, table_reused=table_reused,
                              number_type="float32" if f32 else "float64")
        return PendingValues(values, settle)

    # ---- reference and table --------------------------------------------------------------------
    def _reference(self, request: DeepRequest, cancel, progress):
        # a band's reference is its whole picture's: the same orbit whichever band a worker
        # draws first, so that one piece and any cut of it give the same values
        # (its centre, at its own precision: an orbit's last bits move with its precision), or
        # a movie's pinned one; not one an earlier frame left nearby
        place = request.picture()
        need = place.precision
        width_log2 = place.width_log10 * math.log2(10.0)
        plain = request.formula == MANDELBROT
        orbit = self.orbit
        if getattr(orbit, "formula", MANDELBROT) != request.formula:
            orbit = None

        def canonical(o, source):
            return (request.within is None or source == "pinned"
                    or (o.precision == need and o.centred_at(place.center_re, place.center_im)))
        reused = own = (orbit is not None and
                        orbit.serves(place.center_re, place.center_im, width_log2, need)
                        and canonical(orbit, "pinned" if self._own_pinned else None))
        found = None
        # a movie's pinned orbit, the disk (they keep the Mandelbrot's orbits alone)
        if not reused and self.references is not None and plain:
            found = self.references.find(place, need)
            found = found if found is not None and canonical(*found) else None
            reused = found is not None
            orbit = found[0] if reused else orbit
        if not reused:
            orbit = ReferenceOrbit(place.center_re, place.center_im, place.precision_deeper(
                0 if request.within is not None else self.precision_headroom),
                formula=request.formula)
        report = None if progress is None else (lambda f: progress(f, "reference"))
        # the period stop's ball: every pixel of the whole picture, seen from the orbit's centre
        geo = FrameGeometry.of(place, orbit)
        # (the period test follows dZ/dc of z^2 + c: the Mandelbrot's alone)
        radius = radius_log2(geo) if self.period_stop and plain else None
        ahead = None
        if self._ahead is not None:     # a frame that stopped between its orbit and its table
            self._ahead[1].abandon()
            self._ahead = None
        if not orbit.complete_for(request.max_iter, radius):
            if report is not None:
                report(0.0)     # the stage starts: its first report comes thousands of steps in
            ahead = self._ahead_for(request, orbit, geo)
        t0, version = time.perf_counter(), orbit.version
        try:
            orbit.extend(request.max_iter, cancel=cancel, progress=report, radius_log2=radius,
                         ahead=None if ahead is None else ahead[1])
        except BaseException:
            if ahead is not None:
                ahead[1].abandon()
            raise
        if ahead is not None:
            self._ahead = ahead
        if self.references is not None and orbit.version != version and plain:
            self.references.keep(orbit, (time.perf_counter() - t0) * 1e3)
        self.orbit = orbit
        self.reference_source = found[1] if found is not None else None
        self._own_pinned = (found is not None and found[1] == "pinned") or (own and self._own_pinned)
        return orbit, reused

    def _ahead_for(self, request: DeepRequest, orbit: ReferenceOrbit, geo: FrameGeometry):
        """(table key, TableAhead) to build this frame's table while its orbit is computed, or
        None. Only for the float64 perturbation loop (which reads the table's layout alone) on a
        CPU of two cores or more (a GPU frame uploads a packed table; on one core the build after
        the orbit is as fast), within MAX_RESERVED_BYTES for the largest orbit the frame allows,
        and once the warm-up loaded its code (table_ahead.ready: a first start builds after)."""
        fmt = request.format
        if (not self.table_ahead or self.backend.is_gpu or not request.bla
                or request.formula != MANDELBROT
                or not ahead_ready()
                or not self._takes_perturbation_loop(fmt) or not second_core()
                or (self.number_type == "float32"
                    and float32_deltas_reach(fmt, request.spacing_log2))):
            return None
        capacity = max(int(request.max_iter), orbit.length) + 1
        if reserved_bytes(capacity) > MAX_RESERVED_BYTES:
            return None
        bound = table_bound(geo.c_bound_exp, self.table_slack_bits)
        key = (id(orbit), orbit.version + 1, True, self.eps_bits, self.kmin, bound)
        try:
            return key, TableAhead(capacity, (0.5, bound + 1), self.eps_bits)
        except MemoryError:     # the reserve refused (strict overcommit, ulimit -v): build after
            return None

    def _table_for(self, orbit: ReferenceOrbit, geo: FrameGeometry, use_bla: bool, progress=None,
                   entries: bool = True):
        """The table for this orbit and frame. A table built for a larger bound on |δc| is valid
        for a smaller one (its radii are only smaller than they could be), so one serves every
        frame whose bound rounds up to its own (table_bound): zooming in 2x per step rebuilds it
        every TABLE_SLACK_BITS steps, panning rarely, and a frame's table never depends on the
        frames before it. entries: the frame reads the table's entries (tab, tabe), which a table
        built ahead does not keep (its tab is None: only its layout, self._flat)."""
        key = (id(orbit), orbit.version, use_bla, self.eps_bits, self.kmin)
        bound = table_bound(geo.c_bound_exp, self.table_slack_bits) if use_bla else 0
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0] != key + (bound,):
            ahead[1].abandon()
            ahead = None
        t = self._table
        if ahead is None and t is not None and t[0] == key + (bound,) and (
                t[1] is not None or not entries):
            return t, True
        try:
            if progress is not None:
                progress(0.0, "table")
            try:
                built = None if ahead is None else ahead[1].finish(orbit.length)
            except Exception:       # the second thread failed: the table is built here instead
                built = None
        except BaseException:       # cancelled from the progress report: no thread left waiting
            if ahead is not None:
                ahead[1].abandon()
            raise
        if built is not None:           # built while the orbit was computed (table_ahead.py)
            orb, oexp, tab, tabe, levels, flat = built
            orbit.adopt_arrays(orb, oexp)
            self._flat_serial += 1
            self._flat = (orb, tab, self._flat_serial) + flat
        elif use_bla:
            orb, oexp = orbit.arrays()
            tab, tabe, levels = build_table(orb, oexp, (0.5, bound + 1), self.eps_bits, self.kmin)
        else:
            tab, tabe, levels = empty_table()
        self._table = (key + (bound,), tab, tabe, levels)
        if progress is not None:
            progress(1.0, "table")
        return self._table, False

    def _ship_table(self, orbit: ReferenceOrbit, geo: FrameGeometry, use_bla: bool,
                    extended: bool):
        """_table_for's (table, reused) for a Burning Ship frame: the extended loop's entries
        (bla_ship.ext_ship_tables), or the perturbation loop's layout (self._flat) that
        bla_ship.py writes at once; the key says it is the ship's, and for which loop."""
        bound = table_bound(geo.c_bound_exp, self.table_slack_bits) if use_bla else 0
        key = ("ship", extended, id(orbit), orbit.version, use_bla, self.eps_bits, self.kmin,
               bound)
        if self._table is not None and self._table[0] == key:
            return self._table, True
        orb, oexp = orbit.arrays()
        if extended:
            self._table = (key,) + ext_ship_tables(orb, oexp, (0.5, bound + 1), self.eps_bits,
                                                   use_bla)
            return self._table, False
        zo, bt, levels = flat_ship_tables(orb, oexp, (0.5, bound + 1), self.eps_bits, use_bla)
        self._flat_serial += 1
        self._flat = (orb, None, self._flat_serial, zo, bt)
        self._table = (key, None, None, levels)
        return self._table, False

    # ---- the frame's loop -------------------------------------------------------------------
    def _takes_perturbation_loop(self, fmt: str) -> bool:
        """perturbation_loop.py's loop reads the table's level 0, kept while kmin = 0."""
        return fmt != "extended" and self.kmin == 0

    def _loop(self, fmt: str, dev, flat, max_iter, formula: str = MANDELBROT):
        """(code, args) of the loop a frame of `fmt` and `formula` runs. dev: (orbit, oexp, tab,
        tabe, levels) where the code reads them (orbit, oexp, tab, tabe may be None for the
        perturbation loop); flat: perturbation_loop's (zo, bt) there, or None."""
        ship = formula == BURNING_SHIP
        orb, oexp, tab, tabe, levels = dev
        # ε of the table's radii: the kernels' error bound adds it per BLA step
        eps = math.ldexp(1.0, -self.eps_bits)
        if self._takes_perturbation_loop(fmt):
            zo, bt = flat
            code = (perturbation_loop.SHIP_CODE if ship else
                    perturbation_loop.CODE32 if self._f32 else perturbation_loop.CODE)
            return code, PerturbationArgs(zo, bt, levels, eps, max_iter)
        code = (perturbation_loop.KMIN_CODE if fmt != "extended" else
                extended_loop.SHIP_CODE if ship else extended_loop.CODE)
        return code, ExtendedArgs(orb, oexp, tab, tabe, levels, self.kmin, eps, max_iter)

    def _place(self, fmt: str, orbit: ReferenceOrbit, table, timer):
        """The arrays the frame's loop reads, where it reads them (uploaded once per version):
        (dev, flat) as `_loop` takes them. Frames of the perturbation loop need only the table's
        levels besides their own flattened orbit and table."""
        orb, oexp = orbit.arrays()
        key_t, tab, tabe, levels = table
        if self._takes_perturbation_loop(fmt):
            (levels_d,) = self.pixels.place("levels", key_t, (levels,), timer)
            serial, zo, bt = self._flat_tables(orb, table, timer)
            flat = self.pixels.place("flat", serial, (zo, bt), timer,
                                     what=f"the orbit and table of {orb.shape[0]:,} points")
            return (None, None, None, None, levels_d), flat
        dev_o = self.pixels.place("orbit", (id(orbit), orbit.version), (orb, oexp), timer,
                                  what=f"a reference orbit of {orb.shape[0]:,} points")
        dev_t = self.pixels.place("table", key_t, (tab, tabe, levels), timer,
                                  what=f"an approximation table of {tab.shape[0]:,} entries")
        return dev_o + dev_t, None

    def _flat_tables(self, orb, table, timer):
        """(serial, zo, bt): perturbation_loop's flattened arrays for this orbit and table, kept
        while both are the same objects (holding them keeps their ids from being reused); the
        serial changes whenever they are rebuilt."""
        _, tab, tabe, levels = table
        f = self._flat
        f32 = self._f32
        if f is None or f[0] is not orb or f[1] is not tab or (f[3].dtype != np.float64) != f32:
            if tab is None:     # _table_for keeps a table built ahead with its layout
                raise RuntimeError("a table built ahead lost its layout")
            with timer.phase("host", detail="table"):
                self._flat_serial += 1
                make = perturbation_loop.flat_tables32 if f32 else flat_tables
                self._flat = (orb, tab, self._flat_serial) + make(orb, tab, tabe, levels)
        return self._flat[2:]

    # ---- device -----------------------------------------------------------------------------
    @property
    def stream(self):
        """The stream this renderer's frames run on (a GPU's; None on the CPU)."""
        return self.pixels.stream()
