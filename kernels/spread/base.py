"""The one interface every pool offers (local.py, cluster.py)."""
from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

from ..backend import Backend

# job(worker) -> result; picklable for a cluster. A job may also have start(worker) -> finish, with
# finish() -> result: LocalPool then starts the worker's next job before calling finish (local.py),
# unless finish is a Ready (the work was done in start)
Job = Callable[[Any], Any]


class Ready:
    """What a job's start(worker) returns when it has done the work already (a renderer that
    cannot queue it): its result, delivered at once rather than after the worker's next job."""

    def __init__(self, result: Any = None):
        self.result = result

    def __call__(self) -> Any:
        return self.result


class Pool:
    """Runs jobs on its workers and hands the results back in job order.

    `ordered(jobs, cancel)` yields (index, result) for every job, index 0 first, while later jobs
    are already running: at most `window` results wait for their turn (so memory stays bounded
    when one job is slow). A job that raises ends the run with its exception (the others are
    cancelled); `cancel.cancel()` ends it with kernels.scheduler.Cancelled within a fraction of a
    second. Use as a context manager, or call close()."""

    backend: Backend
    workers: int = 1
    # where the result ordered() yielded last came from (a cluster worker's address), if known
    last_origin: str | None = None
    # whether the workers run on this machine in processes of their own (a local cluster), so a
    # job may write into a file here instead of sending its result back
    shares_files: bool = False

    def describe(self) -> str:
        raise NotImplementedError

    def ordered(self, jobs: Sequence[Job], cancel=None, window: int | None = None
                ) -> Iterator[tuple[int, Any]]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
