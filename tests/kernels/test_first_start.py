"""A first start's compile kept out of the way, Qt-free: the NumPy preview gives the CPU kernel's
counts, the disk-cache check, the estimates in words, and background warm-ups that step only while
nothing else waits. Nothing here compiles from an empty cache."""
import importlib.util
import sys

import numpy as np
import pytest

import main
from kernels.mandelbrot.frames import warm
from kernels.mandelbrot.frames.preview import PreviewRequest, grid, escape_values, render_preview
from kernels.mandelbrot.renderer import Renderer, iteration_counts
from kernels.mandelbrot.requests.request import MandelbrotRequest
from kernels.scheduler import Delivered, Progress, Scheduler, Warmup


@pytest.mark.parametrize("place", [
    dict(center_re=-0.75, center_im=0.0, width=3.2, max_iter=200),            # cardioid, bulbs
    dict(center_re=-0.7453, center_im=0.1127, width=6.5e-3, max_iter=1500),   # seahorse valley
    dict(center_re=-1.25, center_im=0.0, width=0.02, max_iter=400, mapping="histogram"),
])
def test_the_preview_counts_what_the_cpu_kernel_counts(cpu_backend, place):
    req = MandelbrotRequest(size=(96, 64), **place)
    preview = PreviewRequest(req)
    small = preview.small
    assert small.size == (24, 16)
    kernel = Renderer(cpu_backend).render(MandelbrotRequest(**{**small.__dict__,
                                                              "want_values": True}))
    values = escape_values(*grid(small), small.max_iter)
    assert np.array_equal(iteration_counts(values, small.max_iter),
                          iteration_counts(kernel.values, small.max_iter))
    # only the logarithms of the smooth fraction are NumPy's: the last bit at most
    assert np.allclose(values, kernel.values, rtol=1e-12, atol=1e-12)
    frame = render_preview(preview)
    assert frame.meta["preview"] and frame.rgba.shape == (16, 24, 4)
    # the same colours but where a last-bit difference of a logarithm picks the next entry
    assert (frame.rgba != kernel.rgba).any(axis=2).mean() < 0.01


def test_a_cancelled_preview_stops():
    from kernels.scheduler import CancelToken, Cancelled
    token = CancelToken()
    token.cancel()
    req = MandelbrotRequest(-0.75, 0.0, 3.2, (400, 300), 5000)
    with pytest.raises(Cancelled):
        render_preview(PreviewRequest(req), cancel=token)


def test_the_disk_cache_check_finds_what_numba_wrote(tmp_path):
    src = tmp_path / "cached_probe.py"
    src.write_text("from numba import njit\n\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n")

    def fresh():        # the module as a new process would import it: no compiled version yet
        spec = importlib.util.spec_from_file_location("cached_probe", src)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod.twice

    first = fresh()
    assert not warm.on_disk(first)
    assert first(21) == 42                  # compiles and writes the cache
    assert warm.on_disk(first)
    assert warm.on_disk(fresh())            # nothing compiled in it: the index says so
    src.write_text(src.read_text() + "\n# changed\n")
    assert not warm.on_disk(fresh())        # a changed source is not what the cache holds


def test_missing_parts_and_the_words_for_the_wait(monkeypatch):
    monkeypatch.setattr(warm, "on_disk", lambda d: d.__name__ != "deep_rows_ext_cpu")
    assert warm.missing(warm.parts_of("extended", "log")) == ("extended",)
    assert warm.missing(warm.parts_of("float64", "sqrt")) == ()
    words = warm.waiting_words(("table", "perturbation", "log"))
    # no number: under load a compile takes two to three times the idle estimate
    assert words == "compiling the deep-zoom kernels, first time only"
    assert warm.waiting_words(("float64", "sqrt")).startswith("compiling the kernels, first time")


def test_render_says_what_it_compiles_first_and_nothing_when_cached(tmp_path, capsys, monkeypatch):
    args = ["--render", "mandelbrot", "--backend", "cpu", "--size", "8x8", "--iters", "5",
            "--out", str(tmp_path / "a.png")]
    monkeypatch.setattr(warm, "missing", lambda parts: tuple(parts))
    assert main.main(args) == 0
    out = capsys.readouterr().out
    assert "Compiling the kernels, first time only…" in out
    monkeypatch.setattr(warm, "missing", lambda parts: ())
    assert main.main(args) == 0
    assert "first time only" not in capsys.readouterr().out


def test_a_background_warmup_steps_only_while_no_other_job_waits(cpu_backend):
    order = []

    def warmup(ctx, req):
        def steps():
            for part in ("table", "perturbation", "extended"):
                order.append(part)
                yield part
            return "warm"
        return steps()

    def frame(ctx, req):
        order.append(f"{req} coarse")
        yield "coarse"
        order.append(f"{req} full")
        return req

    events = []
    s = Scheduler(events.append, synchronous=True, autodrain=False,
                  handlers={Warmup: warmup, str: frame})
    s.submit("deep-warmup", Warmup("mandelbrot", cpu_backend, ("deep",), background=True))
    s.drain(max_steps=2)                # the job starts, its first part compiles
    assert order == ["table"]
    s.submit("view", "pan")             # a frame arrives while the warm-up is under way
    s.drain()
    # the frame's coarse and full passes both run before the warm-up's next part
    assert order == ["table", "pan coarse", "pan full", "perturbation", "extended"]
    delivered = [e.result for e in events if isinstance(e, Delivered)]
    assert delivered == ["pan", "warm"]
    assert [e.item for e in events if isinstance(e, Progress) and e.key == "deep-warmup"] == \
        ["table", "perturbation", "extended"]


def test_the_deep_renderer_compiles_only_the_format_a_frame_needs(cpu_backend, monkeypatch):
    from kernels.mandelbrot.deep.renderer import DeepRenderer
    from kernels.mandelbrot.requests.deep_request import DeepRequest
    r = DeepRenderer(cpu_backend)
    stages = []
    r.render_values(DeepRequest("-0.75", "0.1", "1e-20", (8, 6), 60),
                    progress=lambda f, stage: stages.append(stage))
    assert stages[0] == "compile"
    assert r.compiled("perturbation") and not r.compiled("extended")
    stages.clear()
    r.render_values(DeepRequest("-0.75", "0.1", "1e-21", (8, 6), 60),
                    progress=lambda f, stage: stages.append(stage))
    assert "compile" not in stages
    assert list(r.warmup_steps(("perturbation", "extended"))) == ["extended"]
    assert r.compiled("extended") and r.warmup(("extended",)) == 0.0


@pytest.fixture(autouse=True)
def _no_leftover_probe():
    yield
    sys.modules.pop("cached_probe", None)
