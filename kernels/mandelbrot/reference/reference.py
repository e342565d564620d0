"""The reference orbit Z_0 = 0, Z_{n+1} = Z_n^2 + C of one centre C, iterated in arbitrary precision
(MPFR) and kept in two low-precision forms the kernels read:

* `orbit[n] = (Re Z_n, Im Z_n, Re M_n, Im M_n)` float64 and `orbit_exp[n] = e_n` int32, where
  Z_n = (M_n) * 2**e_n with max(|Re M_n|, |Im M_n|) in [0.5, 1) (the floatexp form, exact even
  where Z_n is far below float64's range; the plain pair then reads 0).

The orbit stops at max_iter, at the first Z_K with |Z_K|^2 > BAILOUT2 (kept: a pixel that lands
on it escapes there too), or, given the frame's radius, at its period (period_stop.py): the
kernels rebase a pixel that reaches the last point to Z_0, so a periodic orbit serves any
iteration count. One orbit serves every frame whose pixels it can perturb: `serves()` says when,
`extend()` carries it on without starting again, `snapshot()` / `from_snapshot()` save and
restore it (orbit_snapshot.py).

The iterations run in an engine: compiled code calling MPFR's C API from gmpy2's libraries
(mpfr_engine.py), or a Python loop over gmpy2 where those cannot be loaded (reference_gmpy2.py);
`engine_name` says which ran. gmpy2 is optional for the app as a whole: importing this module
without it works, computing an orbit raises a RuntimeError that says how to install it. Another
formula's orbit (formulas.py: the Burning Ship's) runs in its own gmpy2 loop (reference_gmpy2.py).
"""
from __future__ import annotations

import math
import os
import time

import numpy as np

from ...extras import install_hint
from . import period_stop
from .orbit_floatexp import fill_orbit
from ..numbers.orbit_format import EZERO
from .orbit_snapshot import OrbitSnapshot
from ..requests import formulas
from .reference_gmpy2 import ENGINES as FORMULA_ENGINES
from .reference_gmpy2 import Gmpy2Engine

ENGINES = ("auto", "gmpy2", "fixed", "mpfr", "threads", "threads2")
# picks the engine where the caller does not (tests and benches force one)
ENGINE_VARIABLE = "GPU_EXPLORER_REFERENCE_ENGINE"

# a chunk of iterations between cancellation checks and progress reports takes about this long
CHUNK_SECONDS = 0.02
# parts of a chunk the engine runs at a time while the period test is on
PERIOD_PARTS = 8
# an extend's buffer is made for up to this many more points at once, not doubled as it fills
GROW_AHEAD = 1 << 22
# a reused orbit serves frames whose centre lies within this many frame widths of its own
REUSE_WIDTHS = 16
# an orbit stopped at its period serves frames whose radius is up to 2^this below the radius
# passing the period test there (as the table's slack, renderer.TABLE_SLACK_BITS): a few zoom
# steps in keep both; deeper, the period's ball may miss the frame's nucleus and the orbit goes on
PERIOD_SLACK_BITS = 4


def gmpy2_module():
    """gmpy2, or a RuntimeError that says how to get it."""
    try:
        import gmpy2
    except ImportError as exc:
        raise RuntimeError(f"deep zoom needs gmpy2 (arbitrary precision), part of the app's "
                           f"install: {install_hint()}") from exc
    return gmpy2


def to_mpc(re, im, precision: int):
    """mpc centre from decimal strings (or Decimals / numbers), rounded to `precision` bits."""
    gmpy2 = gmpy2_module()
    with gmpy2.context(precision=precision):
        return gmpy2.mpc(gmpy2.mpfr(str(re)), gmpy2.mpfr(str(im)))


def chunk_iterations(precision: int) -> int:
    """Iterations in a chunk of about CHUNK_SECONDS at `precision` bits (an iteration costs
    roughly a constant plus a term growing a little faster than linearly with the limbs)."""
    limbs = max(1, precision / 64)
    per_iter = 4e-7 + 3.5e-9 * limbs ** 1.6
    return int(min(65536, max(256, CHUNK_SECONDS / per_iter)))


def make_engine(kind: str | None, centre, precision: int, formula: str = formulas.MANDELBROT):
    """The engine iterating `centre` (an mpc) at `precision` bits. kind "auto" (or None: the
    ENGINE_VARIABLE's choice, else auto): a compiled engine where MPFR's library loads (MPFR
    with its squares on threads where they pay, else fixed point on GMP up to FIXED_UP_TO_BITS,
    MPFR above), else gmpy2's loop. "fixed", "mpfr" (one thread), "threads" / "threads2" (the
    squares on 3 / 2 threads) ask for one; without the library they fall back to gmpy2's loop,
    whose name then says why."""
    kind = (kind or os.environ.get(ENGINE_VARIABLE) or "auto").strip().lower()
    if kind not in ENGINES:
        raise ValueError(f"unknown reference engine {kind!r}; choose one of: {', '.join(ENGINES)}")
    if formula != formulas.MANDELBROT:      # the compiled engines iterate z^2 + c only
        return FORMULA_ENGINES[formulas.check(formula)](gmpy2_module(), centre, precision)
    if kind != "gmpy2":
        from ..numbers import mpfr_lib
        if mpfr_lib.LIBRARY is not None:
            from .fixed_engine import FIXED_UP_TO_BITS, FixedEngine
            from .mpfr_engine import MpfrEngine
            from .mpfr_threads import ThreadedMpfrEngine, threads_for
            hexes = (format(centre.real, "a"), format(centre.imag, "a"), precision)
            threads = {"mpfr": 1, "threads": 3, "threads2": 2}.get(kind) or threads_for(precision)
            if kind == "fixed" or kind == "auto" and threads == 1 and precision <= FIXED_UP_TO_BITS:
                return FixedEngine(*hexes)
            if threads > 1:
                return ThreadedMpfrEngine(*hexes, threads=threads)
            return MpfrEngine(*hexes)
        eng = Gmpy2Engine(gmpy2_module(), centre, precision)
        eng.name = f"{eng.name}: {mpfr_lib.WHY_NOT}"
        return eng
    return Gmpy2Engine(gmpy2_module(), centre, precision)


_warm = {"fixed": False, "mpfr": False}


def warm_engine(mpfr: bool = False) -> None:
    """Load (or compile) the fixed-point engine's, the period test's and the float arrays'
    compiled code with a tiny orbit, once per process, so that no frame waits for it; with `mpfr`
    also the MPFR engine's (orbits past FIXED_UP_TO_BITS: extended-format frames only, so a first
    start at shallower depths does not compile it). Nothing without gmpy2."""
    try:
        if not _warm["fixed"]:
            ReferenceOrbit("-0.75", "0.1", 128).extend(40, radius_log2=-60.0).arrays()
            _warm["fixed"] = True
        if mpfr and not _warm["mpfr"]:
            from .fixed_engine import FIXED_UP_TO_BITS
            ReferenceOrbit("-0.75", "0.1", FIXED_UP_TO_BITS + 64).extend(40, radius_log2=-60.0)
            _warm["mpfr"] = True
    except RuntimeError:
        return


class ReferenceOrbit:
    """The orbit of `centre` (decimal strings re, im) at `precision` bits; compute with extend().

    Attributes: centre (gmpy2 mpc), centre_re / centre_im (the strings given), precision (bits),
    length (points stored, Z_0 .. Z_{length-1}), iterations (how far it was asked to go),
    escaped (True when it left |Z|^2 <= BAILOUT2: it is then complete for any max_iter),
    period (the n it stopped at by the period test, None otherwise), orbit, orbit_exp (numpy
    arrays, see the module docstring), version (bumped on every extend, so copies on the device
    know when they are stale), engine_name, compute_ms, formula (formulas.py's name: what Z
    iterates)."""

    def __init__(self, centre_re, centre_im, precision: int, engine: str | None = None,
                 formula: str = formulas.MANDELBROT):
        gmpy2 = gmpy2_module()
        self.formula = formulas.check(formula)
        self.centre_re = str(centre_re).strip()
        self.centre_im = str(centre_im).strip()
        self.precision = int(precision)
        self.centre = to_mpc(self.centre_re, self.centre_im, self.precision)
        self._gmpy2 = gmpy2
        self._engine = make_engine(engine, self.centre, self.precision, self.formula)
        self.engine_name = self._engine.name
        self._buf = np.zeros(1, dtype=np.complex128)   # Z_n as float64 pairs, grows by doubling
        # the exact floatexp of the points below float64's range: n ascending, mantissas, exponent
        self._tiny_n = np.zeros(0, np.int64)
        self._tiny_m = np.zeros((0, 2), np.float64)
        self._tiny_e = np.zeros(0, np.int64)
        self._deriv = period_stop.start_derivative()    # dZ/dc at the last point
        self.length = 1                                 # Z_0 = 0
        self.iterations = 0
        self.escaped = False
        self.period: int | None = None
        self.version = 0
        self.compute_ms = 0.0
        self._orbit = None
        self._orbit_exp = None

    # ---- computing ----------------------------------------------------------------------------
    def complete_for(self, max_iter: int, radius_log2: float | None = None) -> bool:
        """Whether the orbit already serves frames of max_iter iterations and radius 2^radius_log2
        (log2 of the frame's half-diagonal seen from the orbit's centre; None: no period stop).
        An escaped orbit serves any frame. One stopped at its period serves any iteration count
        for frames whose radius, 2^PERIOD_SLACK_BITS larger, still passes the period test at the
        period; a smaller frame (or one without a radius) has the orbit go on past it."""
        if self.escaped:
            return True
        if self.period is not None:
            return radius_log2 is not None and self._period_holds(radius_log2 + PERIOD_SLACK_BITS)
        return int(max_iter) <= self.iterations

    def _period_holds(self, radius_log2: float) -> bool:
        z = self._floatexp_at(self.length - 1)
        return period_stop.holds_at(z, tuple(self._deriv), radius_log2)

    def extend(self, max_iter: int, cancel=None, progress=None,
               radius_log2: float | None = None, ahead=None) -> ReferenceOrbit:
        """Iterate on until max_iter iterations, escape, or (radius_log2 given: log2 of the
        frame's half-diagonal) the period test holds. `cancel.check()` (raising to stop) and
        `progress(fraction)` are called between chunks; a cancelled extend leaves the orbit as
        it was. ahead: a table_ahead.TableAhead told of the points as they become final."""
        max_iter = int(max_iter)
        if self.complete_for(max_iter, radius_log2):
            return self
        test_log2 = -math.inf if radius_log2 is None else float(radius_log2)
        t0 = time.perf_counter()
        eng = self._engine
        saved = eng.save()
        start = self.length - 1
        n = start
        buf = self._buf
        tiny: list[tuple] = []
        deriv = self._deriv.copy()
        prev = np.array(self._floatexp_at(start), dtype=np.float64)    # floatexp of Z_n
        escaped = False
        period = None
        goal = max(max_iter, start + 1)
        total = max(1, goal - start)
        # at least ~16 reports on a long extend, however fast the chunks
        step = min(chunk_iterations(self.precision), max(256, total // 16))
        # with the period test on, the engine runs in parts of a chunk: the part the test stops
        # in is computed twice (to its end, then again to the period), so a short one wastes less
        part = step if radius_log2 is None else max(256, step // PERIOD_PARTS)
        report_at = n + step
        tk, tm, te = np.empty(part, np.int64), np.empty((part, 2)), np.empty(part, np.int64)
        if ahead is not None:
            ahead.advance(self._buf, self.length, (self._tiny_n, self._tiny_m, self._tiny_e))
        try:
            while n < goal and not escaped and period is None:
                count = min(part, goal - n)
                if buf is self._buf or buf.shape[0] <= n + count:
                    # room for the whole extend at once (zeros: pages it never reaches cost nothing)
                    room = max(n + count + 1, min(goal + 1, n + GROW_AHEAD))
                    buf = _grown(buf, room, self.length if buf is self._buf else n + 1)
                before = eng.save()
                made, nt, escaped = eng.step(count, buf[n + 1:n + 1 + count], tk, tm, te)
                hit = period_stop.scan_chunk(buf[n:n + made + 1], made, prev, tk, tm, te, nt,
                                             deriv, test_log2)
                if hit > 0 and not (escaped and hit == made):
                    # the period is inside this chunk: go back and stop the exact Z there
                    eng.restore(before)
                    eng.step(hit, np.empty(hit, np.complex128), np.empty(hit, np.int64),
                             np.empty((hit, 2)), np.empty(hit, np.int64))
                    made, escaped, period = hit, False, n + hit
                keep = tk[:nt] < made
                if keep.any():
                    tiny.append((tk[:nt][keep] + n + 1, tm[:nt][keep].copy(), te[:nt][keep].copy()))
                n += made
                if ahead is not None:
                    ahead.advance(buf, n + 1, tiny[-1] if keep.any() else None)
                if n < report_at and n < goal and not escaped and period is None:
                    continue
                report_at = n + step
                if cancel is not None:
                    cancel.check()
                if progress is not None:
                    progress((n - start) / total)
        except BaseException:
            eng.restore(saved)
            raise
        self._buf = buf
        self._add_tiny(tiny)
        self._deriv = deriv
        self.length = n + 1
        self.iterations = max(self.iterations, max_iter)
        self.escaped = escaped
        self.period = period
        self.version += 1
        self._orbit = self._orbit_exp = None
        self.compute_ms += (time.perf_counter() - t0) * 1e3
        if progress is not None:
            progress(1.0)
        return self

    def _add_tiny(self, parts: list[tuple]) -> None:
        """Append the exact floatexp of new tiny points (all after the old ones)."""
        if parts:
            self._tiny_n = np.concatenate([self._tiny_n] + [p[0] for p in parts])
            self._tiny_m = np.concatenate([self._tiny_m] + [p[1] for p in parts])
            self._tiny_e = np.concatenate([self._tiny_e] + [p[2] for p in parts])

    # ---- what the kernels read ------------------------------------------------------------------
    @property
    def z(self) -> np.ndarray:
        """Z_0 .. Z_{length-1} as complex128 (0 where |Z_n| is below float64's range)."""
        return self._buf[:self.length]

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(orbit (length, 4) float64, orbit_exp (length,) int32), built once per version."""
        if self._orbit is None:
            orbit = np.empty((self.length, 4), dtype=np.float64)
            oexp = np.empty(self.length, dtype=np.int32)
            fill_orbit(self.z, self._tiny_n, self._tiny_m, self._tiny_e, orbit, oexp)
            self._orbit, self._orbit_exp = orbit, oexp
        return self._orbit, self._orbit_exp

    def adopt_arrays(self, orbit: np.ndarray, orbit_exp: np.ndarray) -> None:
        """Take `arrays()` of this version as written while the orbit was computed
        (table_ahead.TableAhead: fill_orbit's numbers, row by row)."""
        if orbit.shape != (self.length, 4) or orbit_exp.shape != (self.length,):
            raise ValueError(f"arrays of {orbit.shape[0]:,} points for an orbit of "
                             f"{self.length:,}")
        self._orbit, self._orbit_exp = orbit, orbit_exp

    def _floatexp_at(self, n: int) -> tuple[float, float, int]:
        i = int(np.searchsorted(self._tiny_n, n))
        if i < self._tiny_n.shape[0] and self._tiny_n[i] == n:
            return float(self._tiny_m[i, 0]), float(self._tiny_m[i, 1]), int(self._tiny_e[i])
        mre, mim, e = _floatexp_columns(self._buf[n:n + 1])
        return float(mre[0]), float(mim[0]), int(e[0])

    # ---- saving and restoring -------------------------------------------------------------------
    def snapshot(self) -> OrbitSnapshot:
        """The orbit as plain data (orbit_snapshot.py); arrays are copies."""
        re_hex, im_hex = self._engine.last_hex()
        return OrbitSnapshot(
            centre_re=self.centre_re, centre_im=self.centre_im, precision=self.precision,
            iterations=self.iterations, escaped=self.escaped, period=self.period,
            length=self.length, z=self.z.copy(),
            tiny_n=self._tiny_n.copy(), tiny_m=self._tiny_m.copy(),
            tiny_e=self._tiny_e.astype(np.int32),
            last_re=re_hex, last_im=im_hex,
            deriv=(float(self._deriv[0]), float(self._deriv[1]), int(self._deriv[2])))

    @classmethod
    def from_snapshot(cls, s: OrbitSnapshot, engine: str | None = None) -> ReferenceOrbit:
        """The orbit a snapshot holds, ready to be read or extended (ValueError if damaged)."""
        s.check()
        orbit = cls(s.centre_re, s.centre_im, s.precision, engine=engine)
        orbit._engine.load(s.last_re, s.last_im)
        orbit._buf = np.array(s.z, dtype=np.complex128, copy=True)
        orbit._tiny_n = np.array(s.tiny_n, dtype=np.int64)
        orbit._tiny_m = np.array(s.tiny_m, dtype=np.float64).reshape(-1, 2)
        orbit._tiny_e = np.array(s.tiny_e, dtype=np.int64)
        orbit._deriv = np.array([s.deriv[0], s.deriv[1], float(s.deriv[2])])
        orbit.length, orbit.iterations = int(s.length), int(s.iterations)
        orbit.escaped, orbit.period = bool(s.escaped), s.period
        orbit.version = 1
        return orbit

    # ---- reuse --------------------------------------------------------------------------------
    def offset(self, centre) -> tuple:
        """centre - self.centre as an mpc at this orbit's precision."""
        with self._gmpy2.context(precision=self.precision):
            return centre - self.centre

    def serves(self, centre_re, centre_im, width_log2: float, precision: int) -> bool:
        """Whether this orbit can be the reference of a frame centred at (centre_re, centre_im)
        2**width_log2 wide that needs `precision` bits: precise enough, and near enough that the
        frame's offsets from it stay small (rebasing makes any reference correct; a far one only
        makes pixels leave it early and the approximation table less useful). A periodic orbit
        that serves may still need extending for a smaller frame: extend() decides."""
        if precision > self.precision:
            return False
        gmpy2 = self._gmpy2
        with gmpy2.context(precision=self.precision):
            c = to_mpc(centre_re, centre_im, self.precision)
            d = c - self.centre
            far = max(abs(d.real), abs(d.imag))
            if far == 0:
                return True
            return float(gmpy2.log2(far)) <= width_log2 + math.log2(REUSE_WIDTHS)

    def centred_at(self, centre_re, centre_im) -> bool:
        """Whether this is the orbit of that very centre (a cut picture's reference: not one an
        earlier frame left nearby, so its values do not depend on what its worker drew before)."""
        with self._gmpy2.context(precision=self.precision):
            return to_mpc(centre_re, centre_im, self.precision) == self.centre

    def nbytes(self) -> int:
        return self.length * (4 * 8 + 4)

    def __repr__(self) -> str:
        state = ("escaped" if self.escaped else
                 f"period {self.period:,}" if self.period is not None else "bounded")
        return (f"ReferenceOrbit({self.centre_re[:24]}…, {self.centre_im[:24]}…, "
                f"{self.precision} bits, {self.length:,} points, {state})")


def _grown(buf: np.ndarray, need: int, keep: int) -> np.ndarray:
    """A buffer of at least `need` points (doubling) holding buf[:keep]; a new array even when
    buf is big enough the first time, so a cancelled extend leaves the orbit's own buffer as it was."""
    out = np.zeros(max(need, 2 * buf.shape[0], 1024), dtype=np.complex128)
    out[:keep] = buf[:keep]
    return out


def _floatexp_columns(z: np.ndarray):
    """(mre, mim, e int64) of float64 pairs: max(|mre|, |mim|) in [0.5, 1), EZERO for 0."""
    re, im = z.real, z.imag
    big = np.maximum(np.abs(re), np.abs(im))
    _, e = np.frexp(big)
    e = e.astype(np.int64)
    mre, mim = np.ldexp(re, -e), np.ldexp(im, -e)
    e[big == 0] = EZERO
    return mre, mim, e

