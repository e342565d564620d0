"""Jobs in two halves (kernels/spread/local.py): a job with start(worker) is started, and the
callable it returns is called only after the worker has started its next job, so a GPU has the
next band queued while the host finishes the last one (a deep poster's bands, tiles.BandInto).
Results still come in job order, a worker holds at most one job started and unfinished beside
the one it starts, errors from either half end the run, and a cancel ends it."""
import threading
import time

import numpy as np
import pytest

from kernels.backend import Backend
from kernels.scheduler import Cancelled, CancelToken
from kernels.spread import LocalPool, Ready
from kernels.timing import JobTimer
from kernels import timing


class Halves:
    """A job whose start and finish note themselves in `log` as (half, index, thread)."""

    def __init__(self, index, log, start_s=0.005, fail_in=None):
        self.index, self.log, self.start_s, self.fail_in = index, log, start_s, fail_in

    def __call__(self, worker):         # what a pool without halves would call
        raise AssertionError("a LocalPool starts a job that has start()")

    def start(self, worker):
        time.sleep(self.start_s)
        if self.fail_in == "start":
            raise ZeroDivisionError(f"start of {self.index} failed")
        self.log.append(("start", self.index, threading.current_thread().name))

        def finish():
            if self.fail_in == "finish":
                raise ZeroDivisionError(f"finish of {self.index} failed")
            self.log.append(("finish", self.index, threading.current_thread().name))
            return self.index * 10
        return finish


def outstanding(log):
    """The most jobs any one thread held started and unfinished at once."""
    held, most = {}, 0
    for half, index, thread in log:
        mine = held.setdefault(thread, set())
        (mine.add if half == "start" else mine.discard)(index)
        most = max(most, len(mine))
    return most


def test_a_worker_starts_the_next_job_before_finishing_the_last(cpu_backend):
    log = []
    with LocalPool(cpu_backend) as pool:
        got = list(pool.ordered([Halves(i, log) for i in range(24)]))
    assert got == [(i, i * 10) for i in range(24)]
    for i in range(24):         # each half once, finish after start
        assert [h for h, k, _ in log if k == i] == ["start", "finish"]
    order = [(h, k) for h, k, _ in log]
    overlapped = [i for i in range(23) if order.index(("start", i + 1)) < order.index(("finish", i))]
    assert len(overlapped) >= 12, order      # the queue was fed ahead: most jobs overlap
    assert outstanding(log) == 2            # never a third: frames' host buffers are a ring of 3
    assert order[-1] == ("finish", 23)


def test_two_workers_hold_their_own_and_deliver_in_order():
    be = Backend("cuda", simulated=True, device="test")     # no device touched (as test_spread)
    log = []
    with LocalPool(be, devices=(0, 1)) as pool:
        got = [v for _, v in pool.ordered([Halves(i, log, start_s=0.01) for i in range(30)])]
    assert got == [i * 10 for i in range(30)]
    assert {t for _, _, t in log} == {"pool-gpu0", "pool-gpu1"}
    for i in range(30):     # a job's halves run on the worker that started it
        threads = {t for _, k, t in log if k == i}
        assert len(threads) == 1
    assert outstanding(log) == 2


def test_jobs_without_halves_still_run_whole(cpu_backend):
    log = []

    def whole(i):
        def job(worker):
            log.append(i)
            return -i
        return job
    with LocalPool(cpu_backend) as pool:
        jobs = [whole(0), Halves(1, []), whole(2), Halves(3, [])]
        assert [v for _, v in pool.ordered(jobs)] == [0, 10, -2, 30]
    assert log == [0, 2]


def test_a_job_done_in_its_start_is_delivered_at_once(cpu_backend):
    # a band whose renderer cannot queue it (float64) is rendered in start: its result must not
    # wait for the worker's next job
    log = []

    class Done(Ready):
        def __call__(self):
            log.append(("finish", self.result))
            return self.result

    class Whole:
        def __init__(self, i):
            self.i = i

        def start(self, worker):
            time.sleep(0.005)
            log.append(("start", self.i))
            return Done(self.i)
    with LocalPool(cpu_backend) as pool:
        assert [v for _, v in pool.ordered([Whole(i) for i in range(16)])] == list(range(16))
    assert log == [(half, i) for i in range(16) for half in ("start", "finish")]


@pytest.mark.parametrize("half", ["start", "finish"])
def test_a_failing_half_ends_the_run_with_its_error(cpu_backend, half):
    log = []
    jobs = [Halves(i, log, fail_in=half if i == 3 else None) for i in range(8)]
    with LocalPool(cpu_backend) as pool:
        got = []
        with pytest.raises(ZeroDivisionError, match=f"{half} of 3 failed"):
            for _, v in pool.ordered(jobs):
                got.append(v)
        assert got == [0, 10, 20]
        # every job started was finished (nothing left queued on a GPU), the pool still works
        started = {k for h, k, _ in log if h == "start"}
        finished = {k for h, k, _ in log if h == "finish"}
        assert started - finished <= ({3} if half == "finish" else set())
        assert [v for _, v in pool.ordered([Halves(9, [])])] == [90]


def test_a_cancel_ends_a_run_of_halves_and_finishes_what_was_started(cpu_backend):
    log = []
    token = CancelToken()
    jobs = [Halves(i, log, start_s=0.05) for i in range(200)]
    with LocalPool(cpu_backend) as pool:
        threading.Timer(0.3, token.cancel).start()
        t = time.monotonic()
        with pytest.raises(Cancelled):
            list(pool.ordered(jobs, cancel=token))
        assert time.monotonic() - t < 2.0
        time.sleep(0.2)
    started = {k for h, k, _ in log if h == "start"}
    assert started and started == {k for h, k, _ in log if h == "finish"}
    assert len(started) < 100


# ---- JobTimer.queued: finish() waits for the job's own end, not for the whole stream ----------

class FakeEvent:
    def __init__(self, calls):
        self.calls = calls

    def record(self, stream=None):
        self.calls.append(("record", self))

    def synchronize(self):
        self.calls.append(("wait event", self))

    def elapsed_time(self, other):
        return 1.5


class FakeStream:
    def __init__(self, calls):
        self.calls = calls

    def synchronize(self):
        self.calls.append(("wait stream", None))


def test_a_queued_job_waits_for_its_own_end_event(monkeypatch):
    calls = []
    monkeypatch.setattr(timing, "_take_event", lambda: FakeEvent(calls))
    monkeypatch.setattr(timing, "_method", "events")   # no gate or CUPTI on a fake GPU
    be = Backend("cuda", simulated=False, device="test")
    timer = JobTimer(be, FakeStream(calls), "band")
    with timer.phase("kernel", gpu=True):
        pass
    timer.queued()
    end = calls[-1][1]
    # later work on the same stream would come here; finish waits for this job's end alone
    t = timer.finish()
    assert ("wait stream", None) not in calls
    assert calls[-1] == ("wait event", end)
    assert t.phases_ms["kernel"] == 1.5

    plain = JobTimer(be, FakeStream(calls), "frame")
    calls.clear()
    plain.finish()          # never queued(): the stream, as before
    assert calls == [("wait stream", None)]


def test_queued_is_nothing_on_the_cpu(cpu_backend):
    timer = JobTimer(cpu_backend, None, "cpu")
    timer.queued()
    assert timer.finish().phases_ms["total"] >= 0.0
    assert np.isfinite(timer.timings.phases_ms["total"])


# ---- bands in two halves: the same pixels as one by one -------------------------------------

def deep_picture(simulated):
    pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")
    from decimal import Decimal

    from kernels.mandelbrot.requests.deep_request import add_decimal
    from kernels.mandelbrot.deep_frames import DeepFrameRenderer
    from kernels.mandelbrot.requests.request import DeepFrameRequest
    w = Decimal("1e-40")
    size = (8, 6) if simulated else (512, 384)
    req = DeepFrameRequest(str(w * Decimal("0.1234567")), add_decimal(1, w * Decimal("-0.0765432")),
                           "1e-40", size, 400 if simulated else 3000)
    return DeepFrameRenderer, req, 3 if simulated else 32


def float64_picture(simulated):
    from kernels.mandelbrot.renderer import Renderer
    from kernels.mandelbrot.requests.request import MandelbrotRequest
    size = (9, 6) if simulated else (1000, 700)
    req = MandelbrotRequest(-0.75, 0.1, 0.05, size, 120 if simulated else 2000)
    return Renderer, req, 3 if simulated else 64


def pictures(backend, make, req, rows, values=False):
    """(the picture one band at a time, with each band started before the last is finished,
    from a pool of every GPU running BandInto's halves), for each of `values` (False: colours,
    True: smooth counts). One renderer draws the first two, the pool's workers the third."""
    from kernels.mandelbrot.tiles import BandInto, BandJob, bands
    from kernels.spread import open_pool
    w, h = req.size
    cut = bands(h, rows)
    kinds = values if isinstance(values, tuple) else (values,)
    one = make(backend)
    got = []
    with open_pool(backend, gpus="all" if backend.is_gpu else None) as pool:
        for v in kinds:
            shape, dtype = ((h, w), np.float64) if v else ((h, w, 4), np.uint8)
            single = np.concatenate([one.band(req, r0, n, v).copy() for r0, n in cut])
            ahead = np.zeros(shape, dtype)
            held = None
            for r0, n in cut:
                finish = one.band_start(req, r0, n, v, into=ahead[r0:r0 + n])
                if held is not None:
                    held()
                held = finish
            held()
            pooled = np.zeros(shape, dtype)
            jobs = [BandInto(BandJob(req, r0, n, v), pooled) for r0, n in cut]
            # the rows land in `pooled`; a band hands back only its exact counts (tiles.exact_counts)
            assert all(isinstance(r, dict) for _, r in pool.ordered(jobs))
            got.append((single, ahead, pooled))
    return got if isinstance(values, tuple) else got[0]


@pytest.mark.parametrize("kind", ["deep", "float64"])
def test_bands_started_ahead_are_the_same_pixels_on_the_cpu(cpu_backend, kind):
    make, req, rows = (deep_picture if kind == "deep" else float64_picture)(False)
    single, ahead, pooled = pictures(cpu_backend, make, req, rows)
    assert single.any()
    assert np.array_equal(ahead, single) and np.array_equal(pooled, single)


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["deep", "float64"])
def test_bands_started_ahead_are_the_same_pixels_on_the_gpu(gpu_backend, simulated, kind):
    make, req, rows = (deep_picture if kind == "deep" else float64_picture)(simulated)
    values = (False,) if kind == "deep" else (False, True)      # float64: colours and counts
    for v, (single, ahead, pooled) in zip(values, pictures(gpu_backend, make, req, rows, values)):
        distinct = np.unique(single.reshape(-1, 4), axis=0) if not v else np.unique(single)
        assert len(distinct) > (3 if simulated else 8)     # a picture, not one colour
        assert np.array_equal(ahead, single) and np.array_equal(pooled, single)
