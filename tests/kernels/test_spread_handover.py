"""A pool of several GPU workers shortens the interpreter's switch interval while it is open (its
workers hand the GIL to each other sooner) and gives the old one back when the last such pool
closes; one worker, or an interval already short, is left as it was."""
import sys

import pytest

from kernels.backend import Backend
from kernels.spread import LocalPool, handover


@pytest.fixture
def backend():
    return Backend("cuda", simulated=True, device="test")   # no device is touched


@pytest.fixture(autouse=True)
def default_interval():
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    yield
    sys.setswitchinterval(before)


def test_a_pool_of_two_gpus_shortens_the_interval_until_it_closes(backend):
    pool = LocalPool(backend, devices=(0, 1))
    try:
        assert sys.getswitchinterval() == pytest.approx(handover.POOL_SWITCH_S)
        assert {d for _, d in pool.ordered([lambda w: w.device] * 8)} <= {0, 1}
    finally:
        pool.close()
    assert sys.getswitchinterval() == pytest.approx(0.005)
    pool.close()                        # a second close gives nothing back twice
    assert sys.getswitchinterval() == pytest.approx(0.005)


def test_one_gpu_leaves_the_interval_alone(backend):
    pool = LocalPool(backend, devices=(0,))
    try:
        assert sys.getswitchinterval() == pytest.approx(0.005)
    finally:
        pool.close()


def test_the_interval_comes_back_when_the_last_of_two_pools_closes(backend):
    a = LocalPool(backend, devices=(0, 1))
    b = LocalPool(backend, devices=(0, 1))
    a.close()
    assert sys.getswitchinterval() == pytest.approx(handover.POOL_SWITCH_S)
    b.close_for_exit()
    assert sys.getswitchinterval() == pytest.approx(0.005)


def test_an_interval_already_short_is_kept(backend):
    sys.setswitchinterval(0.0001)
    pool = LocalPool(backend, devices=(0, 1))
    pool.close()
    assert sys.getswitchinterval() == pytest.approx(0.0001)


def test_the_window_workers_thread_shortens_the_interval_while_it_lives():
    """numba's workqueue layer takes the GIL back at the end of each parallel region: beside a
    busy GUI thread a 0.2 ms kernel waited up to the 5 ms interval
    (docs/notes/performance-history.md, "Honest GPU times")."""
    import threading

    from kernels.scheduler import Scheduler
    seen, done = [], threading.Event()

    def job(ctx, req):
        seen.append(sys.getswitchinterval())
        done.set()
        return req

    s = Scheduler(lambda ev: None, handlers={int: job})
    s.submit("k", 1)
    assert done.wait(10)
    assert seen == [pytest.approx(handover.POOL_SWITCH_S)]
    assert s.shutdown(5)
    assert sys.getswitchinterval() == pytest.approx(0.005)
