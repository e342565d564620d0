"""The in-process pool: one worker thread per GPU, each with that GPU's context current and its
own renderers (so its own streams and buffers), or one CPU thread.

Jobs are handed out one at a time from a shared queue, so a fast GPU takes more of them and a band
that costs more than others delays nobody; results are put back in job order. Contexts are made
when the pool starts, before any job, so a measurement of the jobs does not include them.

A job with start(worker) runs in two halves: start queues its work (a deep band's launches, its
colouring, its copy back) and returns a callable that waits for it; a worker calls that only after
starting its next job, so its GPU has the next band queued while the host finishes this one and
the other workers hold the GIL.
"""
from __future__ import annotations

import queue
import threading
from typing import Any, Iterator, Sequence

from ..backend import Backend
from ..scheduler import Cancelled, CancelToken
from . import handover
from .base import Job, Pool, Ready
from .worker import Worker

_STOP = object()
WINDOW_PER_WORKER = 4        # jobs fed ahead per worker: enough for _ahead() to find
CLOSE_MEET_S = 30.0         # how long close() and the workers wait for each other
BROADCAST_MEET_S = 600.0    # how long a broadcast job waits for the other workers' copies
_exit_hook = []             # [True] once _quiet_exit is registered


def _quiet_exit() -> None:
    """Keep numba from unloading kernels at interpreter exit once a process has used several GPUs.

    Seen on two H200s (numba-cuda 0.30.4, driver 580.159.04): any process that had run a pool
    on both GPUs died at exit, after its work was done, with "double free or corruption" or a
    segmentation fault inside cuLibraryUnload, called from the module finalizers that
    weakref.finalize runs at exit. Pending deallocations are held back instead (the driver frees
    everything when the process ends). atexit runs its hooks last-registered first, so this one,
    registered when the first multi-GPU pool opens, runs before those finalizers."""
    def hold():
        try:
            from numba import cuda
            for dev in cuda.gpus.lst:
                ctx = getattr(dev, "primary_context", None)
                if ctx is not None:
                    ctx.deallocations._disable_count += 1   # what deallocations.disable() does
        except Exception:   # a numba-cuda without these internals: exit as numba would
            pass

    if not _exit_hook:
        import atexit
        atexit.register(hold)
        _exit_hook.append(True)


class _Run:
    """One call of ordered(): its jobs, their results as they come, and how it ends."""

    def __init__(self, jobs: Sequence[Job], token: CancelToken):
        self.jobs = jobs
        self.token = token
        self.results: dict[int, Any] = {}
        self.error: BaseException | None = None
        self.error_index = -1          # the first job that failed: later ones need not run
        self.cond = threading.Condition()
        self.running = 0


class LocalPool(Pool):
    def __init__(self, backend: Backend, devices: tuple[int, ...] | None = None):
        self.backend = backend
        self.devices = tuple(devices) if backend.is_gpu and devices else ((0,) if backend.is_gpu else ())
        self.workers = max(1, len(self.devices))
        self._tasks: queue.Queue = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._started = threading.Barrier(self.workers + 1)
        # closing: every worker drops its renderers, one collection frees those in cycles (a
        # collection walks the whole heap, and the workers' would each hold the GIL in turn),
        # then each worker frees its context's pending memory with the context still current
        self._dropped = threading.Barrier(self.workers + 1)
        self._collected = threading.Barrier(self.workers + 1)
        self._start_errors: list[BaseException] = []
        self._release = True
        self._short_switch = False
        self._start()

    def describe(self) -> str:
        if not self.backend.is_gpu:
            return "the CPU"
        if self.backend.simulated:
            return "the CUDA simulator"
        from .devices import gpu_list
        names = {g.index: g.name for g in gpu_list()}
        gpus = ", ".join(f"{d} {names.get(d, '?')}" for d in self.devices)
        return f"{len(self.devices)} GPU{'s' if len(self.devices) > 1 else ''} ({gpus})"

    # ---- workers -----------------------------------------------------------------------------
    def _start(self):
        if len(self.devices) > 1 and not self.backend.simulated:
            _quiet_exit()
        if len(self.devices) > 1:
            handover.shorten()          # the workers hand the GIL to each other sooner
            self._short_switch = True
        slots = self.devices if self.backend.is_gpu else (None,)
        for device in slots:
            t = threading.Thread(target=self._serve, args=(device,), daemon=True,
                                 name=f"pool-{'cpu' if device is None else f'gpu{device}'}")
            t.start()
            self._threads.append(t)
        self._started.wait()          # every context exists before the first job is timed
        if self._start_errors:
            self.close()
            from ..backend import first_line
            raise RuntimeError(f"a GPU could not be opened: {first_line(self._start_errors[0])}")

    def _serve(self, device):
        worker = Worker(self.backend, device)
        ctx = None
        try:
            if device is not None and not self.backend.simulated:
                from numba import cuda
                ctx = cuda.gpus[device]
                ctx.__enter__()         # this thread's current context from now on
        except BaseException as exc:    # reported by _start, in the caller's thread
            self._start_errors.append(exc)
            self._started.wait()
            _meet(self._dropped)        # _start closes the pool: its other workers wait here
            _meet(self._collected)
            return
        self._started.wait()
        held = None             # a job started, not yet finished: (run, index, finish)
        try:
            while True:
                task = None
                if held is not None:
                    task = self._ahead()
                    if task is None:
                        self._settle(*held)
                        held = None
                if task is None:
                    task = self._tasks.get()
                if task is _STOP:
                    if held is not None:
                        self._settle(*held)
                    return
                run, index = task
                began = self._begin(worker, run, index)
                if held is not None:    # its GPU has the next job queued behind it now
                    self._settle(*held)
                held = began
        finally:
            # the renderers' device and pinned buffers are freed while their context is still
            # this thread's: freed after it was popped, they would be released at interpreter
            # exit against a context already torn down
            if not self._release:       # the process ends now: nothing worth freeing
                return
            worker.close(collect=False)
            _meet(self._dropped)        # close() collects once all have dropped theirs
            _meet(self._collected)
            if ctx is not None:
                try:
                    from numba import cuda
                    cuda.current_context().deallocations.clear()
                finally:
                    ctx.__exit__(None, None, None)

    def _ahead(self):
        """The next task for a worker that holds a started job, or None (the worker finishes
        that job first): taken only while every other worker would still find one too, so the
        last jobs go to idle workers rather than queue behind a busy one's."""
        if self._tasks.qsize() < self.workers:
            return None
        try:
            return self._tasks.get_nowait()
        except queue.Empty:
            return None

    def _begin(self, worker: Worker, run: _Run, index: int):
        """Run job `index` of `run`, or with a job that has start(worker) (a deep poster band:
        tiles.BandInto) only start it: then (run, index, finish) for _settle, after the worker
        has started its next job. None when done (or not run: cancelled, an earlier job failed)."""
        with run.cond:
            if run.token.cancelled or (run.error is not None and index > run.error_index):
                return None
            run.running += 1
        job = run.jobs[index]
        start = getattr(job, "start", None)
        worker.cancel = run.token
        try:
            if start is None:
                return self._settle(run, index, lambda: job(worker))
            try:
                finish = start(worker)
            except BaseException as exc:
                failed = exc
                return self._settle(run, index, lambda: _raise(failed))
            if isinstance(finish, Ready):
                return self._settle(run, index, finish)
            return run, index, finish
        finally:
            worker.cancel = None

    @staticmethod
    def _settle(run: _Run, index: int, work) -> None:
        """Job `index`'s result (work()) or error into `run`; it no longer runs."""
        try:
            result = work()
            with run.cond:
                run.results[index] = result
        except BaseException as exc:
            with run.cond:
                # the jobs before a failed one still deliver; it raises when its turn comes
                if not isinstance(exc, Cancelled) and (run.error is None or index < run.error_index):
                    run.error, run.error_index = exc, index
        finally:
            with run.cond:
                run.running -= 1
                run.cond.notify_all()

    # ---- the caller's side -------------------------------------------------------------------
    def ordered(self, jobs: Sequence[Job], cancel: CancelToken | None = None,
                window: int | None = None) -> Iterator[tuple[int, Any]]:
        jobs = list(jobs)
        # the run's own token: a failing job cancels its siblings without cancelling the caller's
        token = CancelToken()
        forget = cancel.on_cancel(token.cancel) if cancel is not None else (lambda: None)
        run = _Run(jobs, token)
        window = max(1, int(window or WINDOW_PER_WORKER * self.workers))
        fed = done = 0
        try:
            while done < len(jobs):
                while fed < len(jobs) and fed < done + window:
                    self._tasks.put((run, fed))
                    fed += 1
                with run.cond:
                    while done not in run.results and not token.cancelled and \
                            not (run.error is not None and done >= run.error_index):
                        run.cond.wait(0.1)
                    if run.error is not None and done >= run.error_index:
                        raise run.error
                    if token.cancelled and done not in run.results:
                        raise Cancelled()
                    result = run.results.pop(done)
                yield done, result
                done += 1
        finally:
            forget()
            if done < len(jobs):        # stopped early: nothing more starts, running jobs end
                token.cancel()
                with run.cond:
                    while run.running:
                        run.cond.wait(0.1)

    def broadcast(self, job: Job, cancel: CancelToken | None = None) -> list:
        """Run `job(worker)` once on every worker (a warm-up), in parallel; their results in
        worker order. Call while no ordered() run is under way: each worker takes one copy and
        waits at a barrier until every other worker has taken its own. A cancel (Cancelled
        raised once the running copies end; a copy may look at worker.cancel) releases the
        barrier, whose other parties would otherwise wait for copies that never start."""
        meet = threading.Barrier(self.workers)
        forget = cancel.on_cancel(meet.abort) if cancel is not None else (lambda: None)
        try:
            return self._broadcast(job, meet, cancel)
        finally:
            forget()

    def _broadcast(self, job: Job, meet: threading.Barrier, cancel: CancelToken | None) -> list:

        def once(worker):
            try:
                out = job(worker)
            except BaseException:
                meet.abort()            # the others stop waiting; this error is the one raised
                raise
            try:
                meet.wait(timeout=BROADCAST_MEET_S)
            except threading.BrokenBarrierError:
                pass
            return worker.device, out
        got = dict(r for _, r in self.ordered([once] * self.workers, cancel=cancel,
                                              window=self.workers))
        return [got.get(d) for d in (self.devices or (None,))]

    def close_for_exit(self) -> None:
        """close() for a process that ends right after without its shutdown."""
        self.close(release=False)

    def close(self, release: bool = True) -> None:
        """Stop the workers. release=False (a process about to end without its interpreter's
        shutdown: cli/quick_exit.py) leaves their renderers, device memory and contexts to the
        process's end instead of freeing them one by one."""
        if self._short_switch:
            self._short_switch = False
            handover.restore()
        if not self._threads:
            return
        self._release = release
        for _ in self._threads:
            self._tasks.put(_STOP)
        if not release:
            for t in self._threads:
                t.join(timeout=5.0)
            self._threads = []
            return
        _meet(self._dropped)
        import gc
        gc.collect()
        _meet(self._collected)
        for t in self._threads:
            t.join(timeout=5.0)
        self._threads = []


def _raise(exc: BaseException):
    raise exc


def _meet(barrier: threading.Barrier) -> None:
    """Wait at one of close()'s barriers; a side that never comes (a worker that failed to
    start) leaves the others after CLOSE_MEET_S instead of hanging the close."""
    try:
        barrier.wait(timeout=CLOSE_MEET_S)
    except threading.BrokenBarrierError:
        pass
