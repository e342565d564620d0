"""Fixtures of the fault-injection tests (helpers in faultkit.py)."""
import pytest
from faultkit import Child


@pytest.fixture
def child():
    """child(code, env=None, args=()) starts a Child; any still running is killed afterwards."""
    made = []

    def start(code, env=None, args=()):
        c = Child(code, env, args)
        made.append(c)
        return c
    yield start
    for c in made:
        if c.proc.poll() is None:
            c.proc.kill()
            c.proc.communicate()


@pytest.fixture
def small_mandelbrot_view(qtbot, scheduler, cpu_backend):
    """small_mandelbrot_view(w, h, settle=False): a shown Mandelbrot view of w×h pixels on the CPU
    (30 iterations, no coarse pass); with `settle`, once its first frame is on screen. Shut down
    afterwards, when nothing is in flight (its frames would land on deleted items)."""
    import pyqtgraph as pg
    from explorer.views.mandelbrot import MandelbrotView
    made = []

    def make(w: int, h: int, settle: bool = False):
        pg.setConfigOption("mouseRateLimit", -1)
        v = MandelbrotView(scheduler, cpu_backend)
        qtbot.addWidget(v)
        v.controls.hide()
        v.controls.set_iterations(30)
        v.progressive = False
        v.resize(w, h)
        v.show()
        made.append(v)
        if settle:
            qtbot.waitExposed(v)
            qtbot.waitUntil(lambda: v.last_frame is not None and not v.in_flight, timeout=60000)
        return v
    yield make
    for v in made:
        qtbot.waitUntil(lambda: not v.in_flight and not v.exporting, timeout=60000)
        v.shutdown()
