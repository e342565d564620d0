"""The warm-up readies both one-thread reference engines: a first frame past FIXED_UP_TO_BITS
(the deep bench's 1e-1000) compiled MPFR's loop inside its own time before."""
import pytest

pytest.importorskip("gmpy2")


def test_warm_engine_runs_the_fixed_point_and_the_mpfr_engine(monkeypatch):
    from kernels.mandelbrot.deep import mpfr_lib, reference
    if mpfr_lib.LIBRARY is None:
        pytest.skip(f"no compiled engines here: {mpfr_lib.WHY_NOT}")
    monkeypatch.delenv(reference.ENGINE_VARIABLE, raising=False)
    monkeypatch.setattr(reference, "_warm", False)
    made = []
    real = reference.make_engine

    def spy(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(reference, "make_engine", spy)
    reference.warm_engine()
    assert {type(e).__name__ for e in made} == {"FixedEngine", "MpfrEngine"}
    assert reference._warm
