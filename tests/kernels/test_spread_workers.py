"""The in-process pool's start and end over several workers: `broadcast` runs a job once on every
worker (a movie's warm-up while its reference computes), and closing collects garbage once for
all workers instead of once per worker (each collection walks the whole heap holding the GIL)."""
import gc
import threading
import time

import pytest

from kernels.backend import Backend
from kernels.spread import LocalPool
from kernels.spread import local as local_mod


def _fake_gpus():
    # the simulated flag skips making contexts: no device is touched
    return Backend("cuda", simulated=True, device="test")


@pytest.mark.parametrize("devices", [(0,), (0, 1), (0, 1, 2, 3)])
def test_broadcast_runs_once_on_every_worker(devices):
    seen = []
    lock = threading.Lock()

    def job(worker):
        with lock:
            seen.append((worker.device, threading.current_thread().name))
        time.sleep(0.01 * (worker.device + 1))     # finishing out of order changes nothing
        return worker.device * 10

    with LocalPool(_fake_gpus(), devices=devices) as pool:
        assert pool.broadcast(job) == [d * 10 for d in devices]
        assert sorted(d for d, _ in seen) == list(devices)
        assert len({name for _, name in seen}) == len(devices)
        # the pool still runs ordinary jobs afterwards, on the same workers
        assert [v for _, v in pool.ordered([lambda w: 7] * 5)] == [7] * 5


def test_a_failing_broadcast_raises_its_error_and_frees_the_others():
    def job(worker):
        if worker.device == 1:
            raise ZeroDivisionError("worker 1 failed")
        return worker.device

    with LocalPool(_fake_gpus(), devices=(0, 1, 2)) as pool:
        t = time.monotonic()
        with pytest.raises(ZeroDivisionError, match="worker 1 failed"):
            pool.broadcast(job)
        assert time.monotonic() - t < 5.0, "the other workers waited for the failed one"
        assert [v for _, v in pool.ordered([lambda w: 1] * 3)] == [1, 1, 1]


def test_a_cancelled_broadcast_ends_at_once_and_leaves_the_pool_usable():
    """A movie stopped while its workers warm up: the copies that finished stop waiting at the
    barrier for the others, a copy that looks at worker.cancel stops, and the broadcast raises
    Cancelled instead of waiting for every copy (the barrier waits up to BROADCAST_MEET_S)."""
    from kernels.scheduler import Cancelled, CancelToken
    token = CancelToken()

    def job(worker):
        if worker.device == 1:          # a long warm-up that checks its cancel between steps
            deadline = time.monotonic() + 10.0
            while time.monotonic() < deadline:
                worker.cancel.check()
                time.sleep(0.01)
        return worker.device

    with LocalPool(_fake_gpus(), devices=(0, 1, 2)) as pool:
        threading.Timer(0.3, token.cancel).start()
        t = time.monotonic()
        with pytest.raises(Cancelled):
            pool.broadcast(job, cancel=token)
        assert time.monotonic() - t < 3.0, "the broadcast waited for its copies after the cancel"
        assert [v for _, v in pool.ordered([lambda w: 2] * 4)] == [2] * 4


def test_closing_collects_once_for_all_workers_after_every_one_dropped_its_renderers(monkeypatch):
    calls = []
    real = gc.collect
    pool = LocalPool(_fake_gpus(), devices=(0, 1, 2))
    kept = {}

    def keep(worker):
        # a renderer of each worker, which only the worker's dict holds
        kept[worker.device] = worker.renderer("r", lambda: Renderer())
        return None

    class Renderer:
        pass
    pool.broadcast(keep)
    refs = {d: __import__("weakref").ref(r) for d, r in kept.items()}
    kept.clear()

    def counting(*args, **kw):
        # by now every worker has dropped its renderers: none is alive before the collection
        calls.append([d for d, ref in refs.items() if ref() is not None])
        return real(*args, **kw)
    monkeypatch.setattr(gc, "collect", counting)
    pool.close()
    assert calls == [[]], calls
    assert not pool._threads
    pool.close()                        # a second close does nothing
    assert len(calls) == 1


def test_a_worker_that_fails_to_start_does_not_hold_up_the_close(monkeypatch, numba_cuda):
    # a real (non-simulated) backend whose second GPU cannot be opened: the pool's start fails
    # with one line, and the workers that did start end at once instead of waiting for it
    be = Backend("cuda", simulated=False, device="test")

    class FakeGpu:
        def __init__(self, i):
            self.i = i

        def __enter__(self):
            if self.i == 1:
                raise RuntimeError("CUDA_ERROR_INVALID_DEVICE")
            return self

        def __exit__(self, *exc):
            return False

    class FakeGpus:
        def __getitem__(self, i):
            return FakeGpu(i)

    class FakeContext:
        class deallocations:
            @staticmethod
            def clear():
                pass

    cuda = numba_cuda
    monkeypatch.setattr(cuda, "gpus", FakeGpus(), raising=False)
    monkeypatch.setattr(cuda, "current_context", lambda: FakeContext, raising=False)
    monkeypatch.setattr(local_mod, "_quiet_exit", lambda: None)
    monkeypatch.setattr(local_mod, "CLOSE_MEET_S", 20.0)
    t = time.monotonic()
    with pytest.raises(RuntimeError, match="a GPU could not be opened: CUDA_ERROR_INVALID_DEVICE"):
        LocalPool(be, devices=(0, 1, 2))
    assert time.monotonic() - t < 10.0


def test_close_for_exit_stops_the_workers_without_freeing_or_collecting(monkeypatch):
    from kernels.spread import worker as worker_mod
    closed, collected = [], []
    monkeypatch.setattr(worker_mod.Worker, "close", lambda self, collect=True: closed.append(self))
    monkeypatch.setattr(gc, "collect", lambda *a: collected.append(1) or 0)
    pool = LocalPool(_fake_gpus(), devices=(0, 1))
    threads = list(pool._threads)
    assert sorted(pool.broadcast(lambda w: w.device)) == [0, 1]
    t0 = time.perf_counter()
    pool.close_for_exit()
    assert time.perf_counter() - t0 < 2.0
    assert not any(t.is_alive() for t in threads)
    assert closed == [] and collected == []       # left to the process's end
    pool.close()                                   # and a later close has nothing left to do
    assert closed == [] and collected == []
    with LocalPool(_fake_gpus(), devices=(0, 1)):
        pass
    assert len(closed) == 2 and len(collected) == 1     # an ordinary close frees, collects once
