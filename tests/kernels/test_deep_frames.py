"""Deep-zoom frames for the app and the command line (kernels/mandelbrot/deep_frames.py and the
scheduler's handlers in kernels/mandelbrot/jobs.py): coloured Frames from DeepRenderer's values,
the reference orbit kept by the scheduler across pans and zooms, progress while the orbit is
computed, cancellation inside it, coarse-then-full frames, and strips for exports of any size."""
import dataclasses
from decimal import Decimal

import numpy as np
import pytest

from kernels.frame import Frame
from kernels.mandelbrot.requests.deep_request import add_decimal
from kernels.mandelbrot.requests.request import (
    DeepFrameRequest,
    DeepProgress,
    ProgressiveRequest,
)

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.jobs import default_handlers
from kernels.mandelbrot.tables.layout import N_STATS
from kernels.mandelbrot.deep.renderer import DeepRenderer
from kernels.mandelbrot.deep_frames import DeepFrameRenderer
from kernels.scheduler import Delivered, Progress, Scheduler, Stopped


def near_i(width):
    w = Decimal(width)
    return str(w * Decimal("0.1234567")), add_decimal(1, w * Decimal("-0.0765432"))


def deep(width="1e-40", size=(16, 12), iters=600, **kw):
    return DeepFrameRequest(*near_i(width), width, size, iters, **kw)


@pytest.fixture
def frames(cpu_backend):
    return DeepFrameRenderer(cpu_backend)


def test_frame_is_coloured_deep_values(frames, cpu_backend):
    req = deep(want_values=True, palette="viridis", mapping="log", backend=cpu_backend)
    f = frames.render(req)
    assert isinstance(f, Frame) and f.rgba.shape == (12, 16, 4) and f.rgba.dtype == np.uint8
    want = DeepRenderer(cpu_backend).render_values(req).values
    np.testing.assert_array_equal(f.values, want)
    assert f.meta["format"] == "perturbation" and f.meta["max_iter"] == 600
    assert f.meta["precision_bits"] >= 128 and f.meta["reference_points"] > 1
    assert f.timings.detail["colourise"] > 0 and f.timings.phases_ms["kernel"] > 0
    assert f.fetch_value(3, 5) == f.values[3, 5]
    assert len(np.unique(f.rgba.reshape(-1, 4), axis=0)) > 20


def test_extended_format_below_1e290(frames):
    f = frames.render(deep("1e-320", size=(8, 6), iters=2000))
    assert f.meta["format"] == "extended"


def test_reference_is_reused_across_pans_and_zooms(frames):
    first = frames.render(deep("1e-40"))
    panned = frames.render(dataclasses.replace(deep("1e-40"), center_re=add_decimal(
        near_i("1e-40")[0], Decimal("2e-41"))))
    zoomed = frames.render(deep("5e-41"))
    assert not first.meta["reused"] and panned.meta["reused"] and zoomed.meta["reused"]


def test_colour_only_changes_keep_the_values(frames):
    a = frames.render(deep(want_values=True, mapping="log"))
    va = a.values.copy()
    b = frames.render(deep(want_values=True, mapping="histogram", palette="magma"))
    np.testing.assert_array_equal(va, b.values)
    assert not np.array_equal(a.rgba, b.rgba)
    assert b.meta["recoloured"] and not a.meta["recoloured"]
    assert b.timings.detail.get("reference") is None          # no deep work at all
    c = frames.render(deep(want_values=True, iters=601))       # the place changed: computed
    assert not c.meta["recoloured"]


def test_strips_assemble_the_whole_frame(frames):
    req = deep(size=(12, 11), iters=500)
    whole = frames.render(dataclasses.replace(req, want_values=True)).values.copy()
    out = np.zeros((11, 12))
    starts = []
    for r0, strip in frames.strips(req, values=True, rows=4):
        starts.append(r0)
        out[r0:r0 + len(strip)] = strip
    assert starts == [0, 4, 8]
    # each strip is a deep frame of its own centre: the same pixels, to the last digit of
    # their coordinates, so the same escape counts
    np.testing.assert_array_equal(np.floor(out), np.floor(whole))
    rgba = list(frames.strips(req, values=False, rows=5))
    assert [r.shape for _, r in rgba] == [(5, 12, 4), (5, 12, 4), (1, 12, 4)]


def test_strips_refuse_bad_rows(frames):
    with pytest.raises(ValueError, match="at least 1 row"):
        frames.strips(deep(), values=False, rows=0)


def test_validation_names_the_colour_and_depth_limits():
    with pytest.raises(ValueError, match="colour mapping"):
        deep(mapping="gamma").validate()
    with pytest.raises(ValueError, match="between 1 and 10,000,000"):
        deep(iters=20_000_000).validate()
    with pytest.raises(ValueError, match="palette density"):
        deep(density=0).validate()


# ---------------------------------------------------------------- through the scheduler

def run_jobs(requests, on_event=None):
    events = []

    def deliver(ev):
        events.append(ev)
        if on_event is not None:
            on_event(ev, scheduler)
    scheduler = Scheduler(deliver, synchronous=True, handlers=default_handlers())
    for key, req in requests:
        scheduler.submit(key, req)
    return events


def test_scheduler_renders_deep_frames_with_reference_progress(cpu_backend):
    events = run_jobs([("view", deep(backend=cpu_backend))])
    done = [e for e in events if isinstance(e, Delivered)]
    assert len(done) == 1 and isinstance(done[0].result, Frame)
    progress = [e.item for e in events if isinstance(e, Progress)]
    assert all(isinstance(p, DeepProgress) for p in progress)
    assert {p.stage for p in progress} >= {"reference", "pixels"}
    assert [p.fraction for p in progress if p.stage == "pixels"][-1] == 1.0


def test_scheduler_keeps_the_deep_renderer_between_frames(cpu_backend):
    s_events = []
    s = Scheduler(s_events.append, synchronous=True, handlers=default_handlers())
    s.submit("view", deep(backend=cpu_backend))
    s.submit("view", deep("5e-41", backend=cpu_backend))
    frames = [e.result for e in s_events if isinstance(e, Delivered)]
    assert [f.meta["reused"] for f in frames] == [False, True]


def test_cancel_inside_the_reference_orbit(cpu_backend):
    """A cancel during the reference orbit stops the job at the orbit's next check."""
    def cancel_on_reference(ev, scheduler):
        if isinstance(ev, Progress) and ev.item.stage == "reference":
            scheduler.cancel("view")
    req = deep("1e-300", size=(8, 6), iters=200_000, backend=cpu_backend)
    events = run_jobs([("view", req)], cancel_on_reference)
    assert any(isinstance(e, Stopped) for e in events)
    assert not any(isinstance(e, Delivered) for e in events)


def test_progressive_deep_frame_coarse_first(cpu_backend):
    full = deep(size=(16, 12), backend=cpu_backend)
    coarse = dataclasses.replace(full, size=(4, 3))
    events = run_jobs([("view", ProgressiveRequest(full=full, coarse=coarse))])
    frames = [e.item for e in events if isinstance(e, Progress) and isinstance(e.item, Frame)]
    done = [e.result for e in events if isinstance(e, Delivered)]
    assert [f.rgba.shape for f in frames] == [(3, 4, 4)]
    assert done[0].rgba.shape == (12, 16, 4) and done[0].meta["reused"]


# ---------------------------------------------------------------- on the device

@pytest.mark.gpu
def test_gpu_deep_frame_matches_the_cpu(gpu_backend, cpu_backend, simulated):
    size = (8, 6) if simulated else (67, 45)
    for mapping in ("log", "histogram"):
        req = deep(size=size, iters=500, want_values=True, mapping=mapping)
        g = DeepFrameRenderer(gpu_backend).render(req)
        c = DeepFrameRenderer(cpu_backend).render(req)
        np.testing.assert_array_equal(np.floor(g.values), np.floor(c.values))
        same = np.all(g.rgba == c.rgba, axis=-1)
        assert same.mean() >= (1.0 if simulated else 0.999)
        w, h = size
        assert g.timings.bytes["d2h"] >= w * h * (4 + 8)        # the colours and the values
        assert g.fetch_value(2, 3) == g.values[2, 3]


@pytest.mark.gpu
def test_gpu_deep_frame_copies_only_the_colours(gpu_backend, simulated):
    size = (8, 6) if simulated else (64, 48)
    r = DeepFrameRenderer(gpu_backend)
    r.render(deep(size=size))
    panned = r.render(deep(size=size, mapping="histogram", iters=601))
    w, h = size
    assert panned.timings.bytes["h2d"] == 0           # orbit, table and palette already there
    # the frame, the counts and the count of pixels handed back for an exact redo
    assert panned.timings.bytes["d2h"] == w * h * 4 + N_STATS * 8 + 8
    recoloured = r.render(deep(size=size, mapping="log", iters=601, palette="viridis"))
    assert recoloured.meta["recoloured"]
    assert recoloured.timings.bytes["d2h"] == w * h * 4      # the frame alone
    assert recoloured.timings.bytes["h2d"] == 1024 * 4       # the new palette's table
