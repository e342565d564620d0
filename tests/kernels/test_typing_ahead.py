"""numba's CUDA typing registries refreshed ahead of the first kernel load, on a thread of their
own, under numba's compiler lock (kernels/spread/typing_ahead.py)."""
from __future__ import annotations

import threading

import pytest

from kernels.backend import Backend
from kernels.spread import typing_ahead


def test_refresh_runs_on_its_own_thread_under_the_compiler_lock(monkeypatch, numba_cuda):
    descriptor = pytest.importorskip("numba.cuda.descriptor")
    from numba.core.compiler_lock import global_compiler_lock
    seen = []
    typing_context = descriptor.cuda_target.typing_context

    def refresh():
        seen.append((threading.current_thread().name, global_compiler_lock.is_locked()))
    monkeypatch.setattr(typing_context, "refresh", refresh)
    t = typing_ahead.start(Backend("cuda", device="test"))
    assert t is not None
    t.join(10.0)
    assert seen and set(seen) == {("numba-typing", True)}


def test_nothing_for_the_cpu_or_the_simulator():
    assert typing_ahead.start(Backend("cpu")) is None
    assert typing_ahead.start(Backend("cuda", simulated=True, device="test")) is None


def test_the_real_refresh_runs_without_a_gpu(numba_cuda):
    pytest.importorskip("numba.cuda.descriptor")
    assert typing_ahead.refresh_typing() is True
