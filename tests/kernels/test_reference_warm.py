"""The warm-up readies what a frame needs and no more: the fixed-point engine always, the MPFR
engine (orbits past FIXED_UP_TO_BITS: the deep bench's 1e-1000 compiled it inside its first frame
before) and the table built ahead of the orbit with the whole deep warm-up, so that a first start
at 1e-50 does not wait for code it will not run."""
import pytest

pytest.importorskip("gmpy2")


@pytest.fixture
def engines_made(monkeypatch):
    from kernels.mandelbrot.numbers import mpfr_lib
    from kernels.mandelbrot.reference import reference
    if mpfr_lib.LIBRARY is None:
        pytest.skip(f"no compiled engines here: {mpfr_lib.WHY_NOT}")
    monkeypatch.delenv(reference.ENGINE_VARIABLE, raising=False)
    monkeypatch.setattr(reference, "_warm", {"fixed": False, "mpfr": False})
    made = []
    real = reference.make_engine

    def spy(*args, **kwargs):
        made.append(type(real(*args, **kwargs)).__name__)
        return real(*args, **kwargs)

    monkeypatch.setattr(reference, "make_engine", spy)
    return made


def test_warm_engine_runs_mpfr_only_when_asked(engines_made):
    from kernels.mandelbrot.reference import reference
    reference.warm_engine()
    assert engines_made == ["FixedEngine"]
    reference.warm_engine(mpfr=True)
    assert engines_made == ["FixedEngine", "MpfrEngine"]
    reference.warm_engine(mpfr=True)            # once a process
    assert len(engines_made) == 2


def test_a_perturbation_warm_up_leaves_the_table_ahead_for_the_whole_one(engines_made, monkeypatch):
    from kernels.backend import resolve
    from kernels.mandelbrot.deep import renderer as dr
    from kernels.mandelbrot.deep import table_ahead
    monkeypatch.setattr(table_ahead, "_ready", [False])
    monkeypatch.setattr(dr, "ahead_cached", lambda: False)     # an empty numba cache
    monkeypatch.setattr(dr, "second_core", lambda: True)
    r = dr.DeepRenderer(resolve("cpu"))
    r.warmup(("perturbation",))
    assert not table_ahead.ready() and "MpfrEngine" not in engines_made
    r.warmup(dr.FORMATS)                        # the window's background warm-up, the benches
    assert table_ahead.ready() and "MpfrEngine" in engines_made
