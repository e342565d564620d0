"""kernels/lent_arrays.py: arrays lent and given back are lent again; what it did not lend, or
lent and got back already, is left alone; a lent array dropped unreturned is forgotten."""
from __future__ import annotations

import gc

import numpy as np

from kernels.lent_arrays import Lender


def test_a_given_back_array_is_lent_again_with_the_copy_it_is_asked_for():
    lender = Lender()
    a = lender.copy_of(np.arange(6.0).reshape(2, 3))
    assert np.array_equal(a, np.arange(6.0).reshape(2, 3))
    lender.give(a)
    b = lender.copy_of(np.ones((2, 3)))
    assert b is a and np.array_equal(b, np.ones((2, 3))) and lender.reused == 1
    c = lender.take((2, 3), np.float32)           # another dtype: its own free list
    assert c is not a and c.dtype == np.float32


def test_what_it_did_not_lend_or_got_back_already_is_left_alone():
    lender = Lender()
    stranger = np.zeros(4)
    lender.give(stranger)
    lender.give("not an array")
    assert lender.take((4,), np.float64) is not stranger
    a = lender.take((3,), np.float64)
    lender.give(a)
    lender.give(a)                                 # twice: lent once more, not twice
    assert lender.take((3,), np.float64) is a
    assert lender.take((3,), np.float64) is not a


def test_a_dropped_loan_is_forgotten_and_free_lists_are_bounded():
    lender = Lender(keep=1)
    a = lender.take((5,), np.float64)
    del a
    gc.collect()
    assert len(lender._lent) == 0
    x, y = lender.take((5,), np.float64), lender.take((5,), np.float64)
    lender.give(x)
    lender.give(y)
    assert len(lender._free[((5,), np.dtype(np.float64).str, False)]) == 1
    lender.clear()
    assert lender.take((5,), np.float64) is not x


def test_pinned_arrays_are_kept_until_released_on_the_gpu_thread(monkeypatch):
    """Pinned arrays given back are always kept (numba frees page-locked memory on the thread
    that drops it, which may hold no CUDA context), survive clear(), and go with release_pinned()."""
    import kernels.lent_arrays as la
    made = []

    class FakeCuda:         # stands in for numba.cuda.pinned_array: no GPU needed to count
        @staticmethod
        def pinned_array(shape, dtype):
            made.append(shape)
            return np.empty(shape, dtype)
    import numba
    monkeypatch.setattr(numba, "cuda", FakeCuda, raising=False)
    monkeypatch.setitem(__import__("sys").modules, "numba.cuda", FakeCuda)
    lender = la.Lender(keep=0)
    a = lender.take((4,), np.uint8, pinned=True)
    b = lender.take((4,), np.uint8)
    assert made == [(4,)]
    lender.give(a)
    lender.give(b)              # keep=0: a pageable one is not kept
    lender.clear()
    assert lender.take((4,), np.uint8, pinned=True) is a
    lender.give(a)
    lender.release_pinned()
    assert lender.take((4,), np.uint8, pinned=True) is not a and made == [(4,), (4,)]


def test_pinned_loans_stay_within_their_byte_limit(monkeypatch):
    """take_pinned makes a new pinned array only within the limit (a free one is always lent
    again), and release_pinned gives the bytes back."""
    import kernels.lent_arrays as la

    class FakeCuda:
        @staticmethod
        def pinned_array(shape, dtype):
            return np.empty(shape, dtype)
    import numba
    monkeypatch.setattr(numba, "cuda", FakeCuda, raising=False)
    monkeypatch.setitem(__import__("sys").modules, "numba.cuda", FakeCuda)
    lender = la.Lender()
    a = lender.take_pinned((4,), np.float64, 64)
    b = lender.take_pinned((4,), np.float64, 64)
    assert a is not None and b is not None and lender.pinned_bytes == 64
    assert lender.take_pinned((4,), np.float64, 64) is None      # a third would pass 64 bytes
    lender.give(a)
    assert lender.take_pinned((4,), np.float64, 64) is a         # a free one: no new bytes
    lender.give(a)
    lender.give(b)
    lender.release_pinned()
    assert lender.pinned_bytes == 0 and lender.take_pinned((4,), np.float64, 32) is not None
