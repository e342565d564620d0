"""The BLA table built on all the CPU's threads is the one-thread table bit for bit: orbits of
lengths around the parallel build's block boundaries, orbits below float64's range (floatexp
entries, exact zeros) and escaping ones; built from worker threads, two at once."""
import threading

import pytest

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.deep import bla
from kernels.mandelbrot.deep import locations as loc
from kernels.mandelbrot.deep.reference import ReferenceOrbit


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
