"""The reference orbit's engines, its period stop and its snapshots (kernels/mandelbrot/deep/
reference.py and the modules beside it). Frames held to brute force with a period-stopped
orbit are in test_deep_period.py."""
import dataclasses

import numpy as np
import pytest

gmpy2 = pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.deep import locations as loc
from kernels.mandelbrot.deep.orbit_snapshot import OrbitSnapshot
from kernels.mandelbrot.deep.reference import ReferenceOrbit



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
