"""A keyframe's sectors round robin on several deep renderers, each with its own stream (launch
"sectors", expmap_render.STREAMS, issue 37: one sector's tail and redo kernel overlap the next
sector's pixels): the values are the same bits as on one; the CPU twin draws on one whatever is
asked, and so does the one-launch keyframe (test_expmap_one_launch.py)."""
import numpy as np
import pytest

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.keyframes.expmap import expmap_of
from kernels.mandelbrot.keyframes.expmap_render import STREAMS, KeyframeRenderer, pinned_orbit
from kernels.mandelbrot.keyframes.zoom_path import zoom_in


def test_the_cpu_twin_draws_a_keyframe_on_one_renderer(cpu_backend):
    r = KeyframeRenderer(cpu_backend, streams=3, launch="sectors")
    assert len(r.deeps) == 1 and r.deep is r.deeps[0]
    assert len(KeyframeRenderer(cpu_backend).deeps) == 1
    assert len(KeyframeRenderer(cpu_backend, streams=3).deeps) == 1
    with pytest.raises(ValueError):
        KeyframeRenderer(cpu_backend, launch="tiles")
    with pytest.raises(ValueError):
        KeyframeRenderer(cpu_backend, streams=0)


@pytest.mark.gpu
def test_gpu_keyframes_are_the_same_bits_on_any_number_of_streams(gpu_backend, simulated):
    path = zoom_in("-0.7436438870371587", "0.1318259042053119", "1e-300", None, 30)
    em = expmap_of(path, (8, 6) if simulated else (192, 108))
    picks = (0, em.count // 2, em.count - 1)       # float64-deep, perturbation, extended depths
    assert STREAMS >= 1
    assert len(KeyframeRenderer(gpu_backend, launch="sectors").deeps) == STREAMS
    assert len(KeyframeRenderer(gpu_backend, streams=3).deeps) == 1      # one launch: one stream
    renderers = [KeyframeRenderer(gpu_backend, streams=n, launch="sectors") for n in (1, 2, 3)]
    assert [len(r.deeps) for r in renderers] == [1, 2, 3]
    with pinned_orbit(em):
        for k in picks:
            one, *more = [r.render(em, k) for r in renderers]
            for v in more:
                assert np.array_equal(one, v), k
    # every renderer drew its share of the sectors (8 sectors: round robin reaches all three)
    assert all(d.orbit is not None for r in renderers for d in r.deeps)
    assert all(r.pixels == len(picks) * em.samples for r in renderers)
