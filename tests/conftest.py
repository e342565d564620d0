"""Shared test set-up: offscreen Qt before anything loads it, a GPU marker, and a guard that fails
any test leaving a render thread running."""
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import pytest  # noqa: E402

from kernels import backend as _backend  # noqa: E402

SIMULATED = _backend.simulator_enabled()


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: runs a CUDA code path (real GPU, or numba's simulator "
                                       "with tiny sizes under NUMBA_ENABLE_CUDASIM=1)")


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
def simulated():
    """True under the CUDA simulator: tests shrink their sizes."""
    return SIMULATED


@pytest.fixture(autouse=True)
def _no_dangling_render_threads(request):
    yield
    if "explorer.worker" not in sys.modules:
        return
    from explorer.worker import RenderWorker

    def alive_and_running(w):
        try:
            return w.isRunning()
        except RuntimeError:  # its C++ side was deleted with its window: not running
            return False
    running = [w for w in list(RenderWorker.instances) if alive_and_running(w)]
    for w in running:
        w.shutdown(5000)
    assert not running, f"test left {len(running)} render thread(s) running"


@pytest.fixture(autouse=True)
def _pg_no_rate_limit():
    if "pyqtgraph" in sys.modules:
        sys.modules["pyqtgraph"].setConfigOption("mouseRateLimit", -1)
    yield


@pytest.fixture
def worker(qtbot):
    from explorer.worker import RenderWorker
    w = RenderWorker()
    yield w
    assert w.shutdown(10000)
