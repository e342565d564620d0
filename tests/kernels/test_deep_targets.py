"""The deep loops' GPU code is made at its first use (issue 38): targets.gpu_getattr builds a
module's GPU names once, whichever thread asks first, and LoopCode looks its kernels up then."""
from __future__ import annotations

import sys
import threading
import time
import types

import pytest

from kernels.mandelbrot.loops.targets import LoopCode, gpu_getattr


def _module(monkeypatch, name: str, build_s: float = 0.0):
    mod = types.ModuleType(name)
    calls = []

    def build():
        calls.append(threading.get_ident())
        time.sleep(build_s)             # another thread asks meanwhile
        mod.__dict__["kernel"] = ("kernel of", name)
        mod.__dict__["redo"] = ("redo of", name)
    mod.__getattr__ = gpu_getattr(mod.__dict__, build, frozenset({"kernel", "redo", "never"}))
    monkeypatch.setitem(sys.modules, name, mod)
    return mod, calls


def test_the_gpu_names_are_built_once_at_their_first_use(monkeypatch):
    mod, calls = _module(monkeypatch, "_lazy_gpu_a", build_s=0.05)
    assert calls == []
    got = []
    threads = [threading.Thread(target=lambda: got.append(mod.kernel)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and got == [("kernel of", "_lazy_gpu_a")] * 4
    assert mod.redo == ("redo of", "_lazy_gpu_a") and len(calls) == 1


def test_a_name_the_build_does_not_make_is_an_attribute_error(monkeypatch):
    mod, calls = _module(monkeypatch, "_lazy_gpu_b")
    with pytest.raises(AttributeError):
        mod.never                       # one of the names, which this build leaves undefined
    with pytest.raises(AttributeError):
        mod.elsewhere                   # not one of them: no build
    assert len(calls) == 1


def test_loop_code_looks_its_kernels_up_when_asked(monkeypatch):
    mod, calls = _module(monkeypatch, "_lazy_gpu_c")
    code = LoopCode("rows", "kernel", "redo", module="_lazy_gpu_c")
    assert code.cpu_rows == "rows" and calls == []
    assert code.gpu_first == ("kernel of", "_lazy_gpu_c") and code.gpu_redo[0] == "redo of"
    assert len(calls) == 1
    direct = LoopCode("rows", "k", None)          # kernels given as themselves
    assert (direct.gpu_first, direct.gpu_redo) == ("k", None)


@pytest.mark.gpu
def test_targets_binds_each_gpu_name_once_to_its_final_value(monkeypatch, numba_cuda):
    """A second GPU's worker reads a name bound mid-build without waiting for the build (only an
    unbound one goes through the lock): no name may be bound first to a placeholder (a None
    zero_kernel crashed a two-GPU poster)."""
    from kernels.mandelbrot.loops import targets
    names = sorted(targets._GPU_NAMES)
    for n in names:
        monkeypatch.delitem(targets.__dict__, n, raising=False)
    seen: dict = {n: [] for n in names}

    def tracer(frame, event, arg):
        if frame.f_code is targets._build_gpu.__code__:
            for n in names:
                if n in targets.__dict__:
                    seen[n].append(targets.__dict__[n])
            return tracer
        return None
    sys.settrace(tracer)
    try:
        targets._build_gpu()
    finally:
        sys.settrace(None)
    for n in names:
        final = targets.__dict__[n]
        assert all(v is final for v in seen[n]), f"{n} was bound to {seen[n][0]!r} before {final!r}"
