"""A sweep point keeps the fastest and the slowest repeat beside the median."""
import pytest

from kernels.vector.sweep import SweepPoint, sweep


def test_points_carry_the_spread_of_their_repeats(cpu_backend):
    gen = sweep(cpu_backend, ["add"], ["numpy"], ["kernel"], [2**10, 2**11], ref_bytes=2**16, repeats=3)
    points = [item for item in gen if isinstance(item, SweepPoint)]
    assert len(points) == 2
    for p in points:
        assert p.min_ms <= p.kernel_ms <= p.max_ms
        lo, hi = p.rate_range("GB/s")
        assert lo <= p.gbs <= hi
        assert lo == pytest.approx(p.gbs * p.time_ms / p.max_ms)


def test_no_spread_without_times():
    assert SweepPoint("add", "numpy", "kernel", 1024, skipped="too big").rate_range("GB/s") is None
    assert SweepPoint("add", "x", "kernel", 1024, repeats=3, note="not timed").rate_range("GB/s") is None
