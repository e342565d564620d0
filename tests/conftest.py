"""Shared test set-up: offscreen Qt before anything loads it, a GPU marker, and a guard that fails
any test leaving a scheduler thread running."""
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# no test reads or writes the user's cache of reference orbits (its own tests make their own)
os.environ.setdefault("GPU_EXPLORER_CACHE_DIR", "off")
# no test's `main.py --render` goes to a render server the developer left running (the server's
# own tests start theirs, cli/serve.py)
os.environ["GPU_EXPLORER_SERVER"] = "0"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import gc  # noqa: E402

import pytest  # noqa: E402

from kernels import backend as _backend  # noqa: E402

SIMULATED = _backend.simulator_enabled()


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: runs a CUDA code path (real GPU, or numba's simulator "
                                       "with tiny sizes under NUMBA_ENABLE_CUDASIM=1)")
    config.addinivalue_line("markers", "toolkit: needs numba.cuda to import (it compiles PTX or stands "
                                       "in for numba's parts) but no GPU; given to every test that "
                                       "takes the numba_cuda fixture")
    if SIMULATED:       # ~40 % off the simulator leg; why it is safe: tests/simulator_threads.py
        from simulator_threads import pace
        pace()


def pytest_collection_modifyitems(config, items):
    # CI's main leg runs with no CUDA runtime, where these skip: its toolkit leg runs them (-m toolkit)
    for item in items:
        if "numba_cuda" in getattr(item, "fixturenames", ()):
            item.add_marker("toolkit")


@pytest.fixture
def cpu_backend():
    return _backend.resolve("cpu")


@pytest.fixture
def gpu_backend():
    """The CUDA backend (real or simulated), or a skip that says why there is none."""
    try:
        return _backend.resolve("cuda")
    except _backend.BackendUnavailable as exc:
        pytest.skip(f"no CUDA backend here: {exc}")


@pytest.fixture
def numba_cuda():
    """numba.cuda itself, for tests that compile GPU code or stand in for its parts without a GPU;
    a skip that says why where it does not import (no CUDA runtime library on the machine)."""
    cuda = _backend.numba_cuda()
    if not _backend.cuda_imported():
        pytest.skip(f"numba.cuda does not import here: {_backend.import_failure(cuda.error)}")
    return cuda


@pytest.fixture
def simulated():
    """True under the CUDA simulator: tests shrink their sizes."""
    return SIMULATED


@pytest.fixture
def stop_poster(monkeypatch):
    """stop_poster(n): the next poster stops as Ctrl+C would, right after its n-th band is handed
    over to be listed done (the interrupted render lists it before it ends); returns the list of
    the bands handed over. stop_poster.release(): posters run whole again."""
    from services import poster_marks
    real = poster_marks.BandMarks.add
    marked: list = []

    def after(n: int) -> list:
        marked.clear()

        def mark_then_stop(self, index, counts=None):
            real(self, index, counts)
            marked.append(index)
            if len(marked) == n:
                raise KeyboardInterrupt
        monkeypatch.setattr(poster_marks.BandMarks, "add", mark_then_stop)
        return marked
    after.release = lambda: monkeypatch.setattr(poster_marks.BandMarks, "add", real)
    return after


def pytest_sessionstart(session):
    # tqdm's monitor thread wakes every 10 s: a garbage collection that ran there could free a
    # window's Qt objects off the GUI thread, and Qt then crashed in a later test's teardown
    try:
        import tqdm
        tqdm.tqdm.monitor_interval = 0
    except ImportError:
        pass


@pytest.fixture(autouse=True)
def _no_dangling_render_threads(request):
    yield
    if "qtbot" in request.fixturenames:
        gc.collect()        # a test's windows go on the GUI thread, not in whatever thread is next
    if "explorer.scheduler_qt" not in sys.modules:
        return
    from explorer.scheduler_qt import QtScheduler
    running = [s for s in list(QtScheduler.instances) if s.running]
    for s in running:
        s.shutdown(0.1)
        s.core.join(30)     # an abandoned compile must end before the next test's threads start
    assert not running, f"test left {len(running)} scheduler thread(s) running"


@pytest.fixture(autouse=True)
def _pg_no_rate_limit():
    if "pyqtgraph" in sys.modules:
        sys.modules["pyqtgraph"].setConfigOption("mouseRateLimit", -1)
    yield


@pytest.fixture
def scheduler(qtbot):
    """The Qt scheduler in synchronous mode: jobs run on the GUI thread from the event loop, so a
    test waits for signals as usual but never races a thread or a compile."""
    from explorer.scheduler_qt import QtScheduler
    s = QtScheduler(synchronous=True)
    yield s
    assert s.shutdown(0.1)


@pytest.fixture
def threaded_scheduler(qtbot):
    """The Qt scheduler with its worker thread, for tests where the thread is the point."""
    from explorer.scheduler_qt import QtScheduler
    s = QtScheduler()
    yield s
    s.shutdown(0.1)
    assert s.core.join(30)
