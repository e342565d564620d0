"""One kernel's PTX for sm_90 without a GPU, for the tests that read device code (the toolkit leg):
skipped in words under the simulator, which compiles none, and where NVVM or NVRTC is missing."""
from __future__ import annotations

import types

import pytest

from kernels.backend import simulator_enabled


def compile_ptx(monkeypatch, cuda, fn, sig) -> str:
    if simulator_enabled():
        pytest.skip("the simulator compiles no PTX")
    from numba.cuda import dispatcher
    # device functions ask the current device for its compute capability: none is needed here
    monkeypatch.setattr(dispatcher, "get_current_device",
                        lambda: types.SimpleNamespace(compute_capability=(9, 0)))
    try:
        return cuda.compile_ptx(fn, sig, cc=(9, 0))[0]
    except Exception as exc:   # no NVVM or NVRTC: a machine without the CUDA toolkit
        pytest.skip(f"cannot compile PTX here: {type(exc).__name__}")
