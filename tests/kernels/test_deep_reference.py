"""The reference orbit's engines, its period stop and its snapshots (kernels/mandelbrot/deep/
reference.py and the modules beside it). Frames held to brute force with a period-stopped
orbit are in test_deep_period.py."""
import dataclasses

import numpy as np
import pytest

gmpy2 = pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.benches import locations as loc
from kernels.mandelbrot.reference.orbit_snapshot import OrbitSnapshot
from kernels.mandelbrot.reference.reference import ReferenceOrbit



def nucleus(guess: str, period: int, bits: int = 400):
    """The nucleus of `period` near `guess` by Newton's method, at `bits` bits."""
    with gmpy2.context(precision=bits):
        c = gmpy2.mpc(guess)
        for _ in range(60):
            z, d = gmpy2.mpc(0), gmpy2.mpc(0)
            for _ in range(period):
                z, d = z * z + c, 2 * z * d + 1
            c -= z / d
        return c


def off(c, dx: str, bits: int = 400):
    """Decimal strings of c + dx (real offset)."""
    with gmpy2.context(precision=bits):
        return str(c.real + gmpy2.mpfr(dx)), str(c.imag)


def test_snapshot_round_trip_reads_and_extends_as_the_original():
    a = ReferenceOrbit(loc.MISIUREWICZ_I.center_re, loc.MISIUREWICZ_I.center_im, 256).extend(1000)
    s = a.snapshot()
    assert isinstance(s, OrbitSnapshot) and s.length == 1001 and s.period is None
    b = ReferenceOrbit.from_snapshot(s)
    np.testing.assert_array_equal(b.arrays()[0], a.arrays()[0])
    np.testing.assert_array_equal(b.arrays()[1], a.arrays()[1])
    a.extend(3000)
    b.extend(3000)
    assert b.length == a.length == 3001
    np.testing.assert_array_equal(b.z, a.z)                 # the exact last point carried on
    assert b.snapshot().last_re == a.snapshot().last_re


def test_snapshot_keeps_tiny_points_exactly():
    a = ReferenceOrbit("1e-400", "-3e-401", 1500).extend(50)    # Z_n ~ C: far below float64
    s = a.snapshot()
    assert s.tiny_n.shape[0] == 50 and s.tiny_e.dtype == np.int32
    b = ReferenceOrbit.from_snapshot(s)
    np.testing.assert_array_equal(b.arrays()[0], a.arrays()[0])
    np.testing.assert_array_equal(b.arrays()[1], a.arrays()[1])
    a.extend(80)
    b.extend(80)
    np.testing.assert_array_equal(b.arrays()[0], a.arrays()[0])


def test_a_damaged_snapshot_is_refused_in_plain_words():
    s = ReferenceOrbit("-0.5", "0.5", 128).extend(100).snapshot()
    with pytest.raises(ValueError, match="shape"):
        ReferenceOrbit.from_snapshot(dataclasses.replace(s, z=s.z[:-1]))
    with pytest.raises(ValueError, match="period"):
        ReferenceOrbit.from_snapshot(dataclasses.replace(s, period=7))


def test_period_stop_finds_the_nucleus_period_and_snapshots_keep_it():
    # a centre 1e-40 off the period-3 nucleus, a frame of radius 1e-35 around it
    orbit = ReferenceOrbit(*off(nucleus("-1.75", 3), "1e-40"), 256)
    orbit.extend(10_000, radius_log2=np.log2(1e-35))
    assert orbit.period == 3 and orbit.length == 4 and not orbit.escaped
    assert orbit.complete_for(10**7, np.log2(1e-35))      # any iteration count
    restored = ReferenceOrbit.from_snapshot(orbit.snapshot())
    assert restored.period == 3 and restored.complete_for(10**7, np.log2(1e-35))
    # a frame much smaller than the offset: the period-3 ball no longer holds it, the orbit goes on
    assert not orbit.complete_for(10_000, np.log2(1e-60))
    orbit.extend(10_000, radius_log2=np.log2(1e-60))
    assert orbit.period is None or orbit.period > 3
    assert orbit.length > 4


def test_compiled_and_python_engines_agree_to_the_last_bits():
    from kernels.mandelbrot.numbers import mpfr_lib
    if mpfr_lib.LIBRARY is None:
        pytest.skip(f"no MPFR library for the compiled engine: {mpfr_lib.WHY_NOT}")
    # c = i: every point exact in binary, so both engines give the same orbit bit for bit
    a = ReferenceOrbit("0", "1", 512, engine="mpfr").extend(5000)
    b = ReferenceOrbit("0", "1", 512, engine="gmpy2").extend(5000)
    assert a.engine_name != b.engine_name
    np.testing.assert_array_equal(a.arrays()[0], b.arrays()[0])
    np.testing.assert_array_equal(a.arrays()[1], b.arrays()[1])
    # a published deep point: rounding differs in the last of 1,300 bits, far below float64's
    k = loc.KORMANYOS_VERY_DEEP
    a = ReferenceOrbit(k.center_re, k.center_im, 1300, engine="mpfr").extend(600)
    b = ReferenceOrbit(k.center_re, k.center_im, 1300, engine="gmpy2").extend(600)
    np.testing.assert_allclose(a.z, b.z, rtol=1e-14, atol=1e-300)
    assert abs(gmpy2.mpfr(a.snapshot().last_re, 1300, 16)
               - gmpy2.mpfr(b.snapshot().last_re, 1300, 16)) < gmpy2.mpfr(2) ** -1200
    # the tiny points' exact floatexp alike
    tiny_a = ReferenceOrbit("1e-400", "-3e-401", 1500, engine="mpfr").extend(40)
    tiny_b = ReferenceOrbit("1e-400", "-3e-401", 1500, engine="gmpy2").extend(40)
    np.testing.assert_allclose(tiny_a.arrays()[0][:, 2:], tiny_b.arrays()[0][:, 2:], rtol=1e-15)
    np.testing.assert_array_equal(tiny_a.arrays()[1], tiny_b.arrays()[1])


def test_unknown_engine_is_refused_and_the_variable_picks_one(monkeypatch):
    with pytest.raises(ValueError, match="unknown reference engine"):
        ReferenceOrbit("-0.5", "0.5", 128, engine="abacus")
    monkeypatch.setenv("GPU_EXPLORER_REFERENCE_ENGINE", "gmpy2")
    assert ReferenceOrbit("-0.5", "0.5", 128).engine_name.startswith("gmpy2")


def test_threaded_engine_gives_the_single_thread_orbit_bit_for_bit():
    from kernels.mandelbrot.numbers import mpfr_lib
    if mpfr_lib.LIBRARY is None:
        pytest.skip(f"no MPFR library for the compiled engine: {mpfr_lib.WHY_NOT}")
    k = loc.KORMANYOS_VERY_DEEP
    one = ReferenceOrbit(k.center_re, k.center_im, 2200, engine="mpfr").extend(400)
    for kind in ("threads", "threads2"):
        o = ReferenceOrbit(k.center_re, k.center_im, 2200, engine=kind).extend(400)
        assert "threads" in o.engine_name
        np.testing.assert_array_equal(o.arrays()[0], one.arrays()[0])
        assert o.snapshot().last_re == one.snapshot().last_re
    # an escaping orbit stops every thread at its escape
    esc = ReferenceOrbit("0.3", "0.6", 2200, engine="threads").extend(5000)
    ref = ReferenceOrbit("0.3", "0.6", 2200, engine="mpfr").extend(5000)
    assert esc.escaped and esc.length == ref.length
    np.testing.assert_array_equal(esc.z, ref.z)
    assert "3 threads" in esc.engine_name


def test_threads_only_where_they_pay():
    from kernels.mandelbrot.reference.mpfr_threads import THREADS_FROM_BITS, threads_for
    assert threads_for(THREADS_FROM_BITS - 64, cores=16) == 1
    assert threads_for(THREADS_FROM_BITS, cores=16) == 3
    assert threads_for(100_000, cores=2) == 1


def test_a_snapshot_carries_on_in_the_other_engine():
    from kernels.mandelbrot.numbers import mpfr_lib
    if mpfr_lib.LIBRARY is None:
        pytest.skip(f"no MPFR library for the compiled engine: {mpfr_lib.WHY_NOT}")
    whole = ReferenceOrbit("0", "1", 256, engine="mpfr").extend(300)      # c = i: exact points
    for first, then in (("mpfr", "gmpy2"), ("gmpy2", "mpfr")):
        part = ReferenceOrbit("0", "1", 256, engine=first).extend(100)
        moved = ReferenceOrbit.from_snapshot(part.snapshot(), engine=then).extend(300)
        np.testing.assert_array_equal(moved.z, whole.z)
    with pytest.raises(ValueError):
        ReferenceOrbit.from_snapshot(dataclasses.replace(part.snapshot(), last_re="0xzz"))
    # a point with all its bits in use: the restored last point keeps every one of them
    k = loc.KORMANYOS_VERY_DEEP
    for engine in ("gmpy2", "mpfr", "fixed"):
        whole = ReferenceOrbit(k.center_re, k.center_im, 1200, engine=engine).extend(400)
        part = ReferenceOrbit(k.center_re, k.center_im, 1200, engine=engine).extend(150)
        moved = ReferenceOrbit.from_snapshot(part.snapshot(), engine=engine).extend(400)
        np.testing.assert_array_equal(moved.z, whole.z, err_msg=engine)


def test_fixed_point_engine_follows_the_exact_orbit():
    from kernels.mandelbrot.numbers import mpfr_lib
    if mpfr_lib.LIBRARY is None:
        pytest.skip(f"no MPFR library for the compiled engines: {mpfr_lib.WHY_NOT}")
    k = loc.KORMANYOS_VERY_DEEP
    truth = ReferenceOrbit(k.center_re, k.center_im, 3000, engine="mpfr").extend(3000)
    fixed = ReferenceOrbit(k.center_re, k.center_im, 1088, engine="fixed").extend(3000)
    assert fixed.engine_name.startswith("GMP fixed point")
    np.testing.assert_allclose(fixed.z, truth.z, rtol=0, atol=1e-13)
    # signs, exact zeros, escape and points far below float64's range, as the MPFR engine
    for cre, cim, bits, n in (("-1", "0", 128, 10), ("0.3", "-0.6", 512, 500),
                              ("1e-400", "-3e-401", 1500, 40)):
        a = ReferenceOrbit(cre, cim, bits, engine="fixed").extend(n)
        b = ReferenceOrbit(cre, cim, bits, engine="mpfr").extend(n)
        assert (a.length, a.escaped) == (b.length, b.escaped)
        np.testing.assert_allclose(a.arrays()[0], b.arrays()[0], rtol=1e-14, atol=0)
        np.testing.assert_array_equal(a.arrays()[1], b.arrays()[1])
