"""The BLA table built on all the CPU's threads is the one-thread table bit for bit: orbits of
lengths around the parallel build's block boundaries, orbits below float64's range (floatexp
entries, exact zeros) and escaping ones; built from worker threads, two at once. The perturbation
loop's layout of it (flat_build.py, all threads) is NumPy's column-by-column layout bit for bit."""
import threading

import numpy as np
import pytest

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.tables import bla
from kernels.mandelbrot.benches import locations as loc
from kernels.mandelbrot.reference.reference import ReferenceOrbit


def _orbit(location, precision, iters):
    return ReferenceOrbit(location.center_re, location.center_im, precision).extend(iters).arrays()


@pytest.fixture(scope="module")
def orbits():
    return {
        "spiral": _orbit(loc.MISIUREWICZ_I, 256, 6000),
        "minibrot-424": _orbit(loc.MINIBROT_424, 1200, 5000),     # Z_n far below float64's range
        "escaping": _orbit(loc.Location("out", "-0.7436438870371587", "0.1318259042053119", ""),
                           128, 50000),
    }


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tobytes() == y.tobytes()


def test_orbits_cover_the_cases(orbits):
    _, e = orbits["minibrot-424"]
    assert (e < -1000).any()             # floatexp-only points exist
    arr, _ = orbits["escaping"]
    assert 3000 < arr.shape[0] < 50000   # escaped before its limit


BLOCK = 1 << bla.CHUNK_LEVELS


@pytest.mark.parametrize("name", ["spiral", "minibrot-424", "escaping"])
@pytest.mark.parametrize("length", [3, 4, 5, 40, BLOCK + 1, BLOCK + 2, BLOCK + 3,
                                    2 * BLOCK + 2, 3 * BLOCK + 7, None])
def test_parallel_table_is_bit_identical(orbits, name, length):
    arr, e = orbits[name]
    n = arr.shape[0] if length is None else min(length, arr.shape[0])
    for c_max in ((0.5, -60), (0.7, -3000)):
        serial = bla.build_table(arr[:n], e[:n], c_max, parallel=False)
        par = bla.build_table(arr[:n], e[:n], c_max, parallel=True)
        _same(serial, par)
        assert par[0].shape[0] == sum(bla.level_counts(n))


def test_parallel_with_kmin(orbits):
    arr, e = orbits["spiral"]
    _same(bla.build_table(arr, e, (0.5, -60), kmin=2, parallel=False),
          bla.build_table(arr, e, (0.5, -60), kmin=2, parallel=True))


def test_threadsafe_layer_is_known():
    import numba
    safe = bla.threadsafe_layer()
    assert safe == (numba.threading_layer() in ("omp", "tbb"))


def test_built_from_two_worker_threads_at_once(orbits):
    arr, e = orbits["spiral"]
    want = bla.build_table(arr, e, (0.5, -60), parallel=False)
    got, errors = [None, None], []

    def work(i):
        try:
            got[i] = bla.build_table(arr, e, (0.5, -60))
        except Exception as exc:    # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    _same(want, got[0])
    _same(want, got[1])


def _loop_tables_numpy(orbit, tab, tabe, levels):
    """The perturbation loop's layout column by column in NumPy: the slow, obvious reference."""
    from kernels.mandelbrot.tables import flat_build as pl      # the flat tables' layout
    from kernels.mandelbrot.tables.layout import E_B, T_AD, T_ADI, T_ADR, T_BI, T_BR, T_RD
    zo = np.zeros((orbit.shape[0], pl.ZW))
    zo[:, pl.Z_RE], zo[:, pl.Z_IM] = orbit[:, 0], orbit[:, 1]
    if levels.shape[0]:
        off, count = int(levels[0, 0]), int(levels[0, 1])
        zo[1:1 + count, pl.Z_R0] = tab[off:off + count, T_RD]
    bt = np.zeros((tab.shape[0], pl.BW))
    bt[:, pl.B_AR], bt[:, pl.B_AI] = tab[:, T_ADR], tab[:, T_ADI]
    e = np.clip(tabe[:, E_B], -pl._CLAMP, pl._CLAMP)
    with np.errstate(over="ignore"):
        bt[:, pl.B_BR], bt[:, pl.B_BI] = np.ldexp(tab[:, T_BR], e), np.ldexp(tab[:, T_BI], e)
    bt[:, pl.B_R], bt[:, pl.B_AA] = tab[:, T_RD], tab[:, T_AD]
    return zo, bt


@pytest.fixture(scope="module")
def very_deep():
    return _orbit(loc.KORMANYOS_VERY_DEEP, 3500, 20000)


@pytest.mark.parametrize("name", ["spiral", "minibrot-424", "escaping", "very-deep"])
def test_loop_layout_is_the_numpy_layout(orbits, very_deep, name):
    from kernels.mandelbrot.tables.layout import empty_table
    from kernels.mandelbrot.tables.flat_build import flat_tables, loop_tables
    arr, e = very_deep if name == "very-deep" else orbits[name]
    tables = [bla.build_table(arr, e, (0.5, -3330)), empty_table()]
    for tab, tabe, levels in tables:
        _same(_loop_tables_numpy(arr, tab, tabe, levels), loop_tables(arr, tab, tabe, levels))
        zo, bt = flat_tables(arr, tab, tabe, levels)
        assert zo.shape == (arr.shape[0] * 4,) and bt.shape == (tab.shape[0] * 6,)
    # B past float64's range (deep tables have |B| up to ~1e1000), and exponents past the clamp:
    # inf in both, as it always was
    tab, tabe, levels = tables[0]
    tabe = tabe.copy()
    tabe[::7, 1] = 1500
    tabe[3::11, 1] = 9000
    tabe[5::13, 1] = -9000
    got = loop_tables(arr, tab, tabe, levels)
    _same(_loop_tables_numpy(arr, tab, tabe, levels), got)
    assert np.isinf(got[1]).any()
    from kernels.mandelbrot.tables import flat_build as pl      # the flat tables' layout
    from kernels.mandelbrot.tables.flat_build import loop_layout
    one_thread = loop_layout(arr, tab, tabe, levels, (pl.Z_RE, pl.Z_IM, pl.Z_R0),
                             (pl.B_AR, pl.B_AI, pl.B_BR, pl.B_BI, pl.B_R, pl.B_AA), pl.ZW, pl.BW,
                             pl._CLAMP, parallel=False)
    _same(got, one_thread)
