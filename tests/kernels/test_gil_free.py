"""The deep frame's host work runs without the GIL: the reference orbit's compiled engine and the
BLA table's build (after the orbit or beside it, table_ahead.py). A movie or a poster on several
GPUs renders its frames in worker threads of one process; host work that held the GIL stopped
every other worker meanwhile (seen on two GPUs)."""
import pytest

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.tables import bla


def test_the_deep_frames_host_loops_are_compiled_without_the_gil():
    """Every compiled loop of the reference engines and of the table's build releases the GIL
    (numba's nogil): a table built on one thread (numba's workqueue layer) held it for the whole
    build. Checked on the dispatchers, since a stall of tens of milliseconds is within the noise
    of a shared machine."""
    from numba.core.registry import CPUDispatcher

    from kernels.mandelbrot.tables import bla_blocks, flat_build
    from kernels.mandelbrot.reference import fixed_engine, mpfr_engine, orbit_floatexp, orbit_scan, period_stop
    seen = 0
    for module in (bla, flat_build, orbit_scan, mpfr_engine, fixed_engine, orbit_floatexp,
                   period_stop, bla_blocks):
        for name, fn in vars(module).items():
            if not isinstance(fn, CPUDispatcher) or fn.targetoptions.get("inline") == "always":
                continue
            if getattr(fn.py_func, "__module__", None) != module.__name__:
                continue
            seen += 1
            assert fn.targetoptions.get("nogil"), f"{module.__name__}.{name} holds the GIL"
    assert seen >= 10
