"""The sorted launch (escape_variants.py): samples predict each pixel's cost, the list hands the
longest out first, and the frame stays exactly the grid launch's and the CPU twin's."""
import numpy as np
import pytest

from kernels.mandelbrot.benches import escape_variants as ev
from kernels.mandelbrot import renderer as m

pytestmark = pytest.mark.gpu

SEAHORSE = (-0.743643887037151, 0.131825904205330)
BULB3 = (-0.1225611668766536, 0.7448617666197442)


def _req(cx, cy, width, size, iters):
    return m.MandelbrotRequest(cx, cy, width, size, iters, want_values=True)


def _host_classes(est, sample, reach, rows, cols):
    """escape_variants._pixel_class on the host: -1 for finished samples, else the bit length of the
    largest estimate of the samples within `reach` around the pixel (capped)."""
    nsr, nsc = ev.sample_shape(rows, cols, sample)
    est = est[:nsr, :nsc]
    out = np.empty((rows, cols), np.int64)
    for r in range(rows):
        for c in range(cols):
            sr, sc = r // sample, c // sample
            if r % sample == 0 and c % sample == 0 and est[sr, sc] >= 0:
                out[r, c] = -1
                continue
            near = est[max(sr - reach + 1, 0):sr + reach + 1, max(sc - reach + 1, 0):sc + reach + 1]
            cost = int(np.abs(near).max())
            out[r, c] = min(cost.bit_length(), ev.NCLASSES - 1)
    return out


@pytest.mark.parametrize("sample, probe, reach", [(4, 16, 2), (3, 1000, 1), (1, 8, 3)])
def test_sorted_launch_gives_the_grid_launchs_frame(gpu_backend, cpu_backend, simulated, sample,
                                                    probe, reach):
    """Any sample stride (1: every pixel is a sample), probes shorter and longer than max_iter,
    frames not a multiple of the stride, wholly inside the set or the cardioid shortcut, and
    (under the simulator's small band bound) frames cut into bands of rows."""
    from kernels.mandelbrot.benches.escape_variants import variant  # numba.cuda: GPU tests only
    if simulated and sample == 1:
        pytest.skip("two settings under the simulator; all three on a real GPU")
    if simulated:
        cases = [_req(*SEAHORSE, 0.01, (37, 9), 45), _req(*BULB3, 0.02, (5, 4), 13),
                 _req(-0.2, 0.0, 0.05, (6, 2), 30)]
    else:
        cases = [_req(*SEAHORSE, 0.01, (129, 65), 2000), _req(*BULB3, 0.02, (127, 33), 501),
                 _req(-0.2, 0.0, 0.05, (64, 48), 300), _req(-0.5, 0.0, 3.0, (1000, 700), 997)]
    r = m.Renderer(gpu_backend, launch=variant("sorted", sample=sample, probe=probe, reach=reach))
    g = m.Renderer(gpu_backend, launch=variant("grid"))
    cpu = m.Renderer(cpu_backend)
    for req in cases:
        got = r.render(req)
        np.testing.assert_array_equal(m.iteration_counts(got.values, req.max_iter),
                                      m.iteration_counts(cpu.render(req).values, req.max_iter),
                                      err_msg=str(req.size))
        np.testing.assert_array_equal(got.values, g.render(req).values)


@pytest.mark.parametrize("reach", [1, 2])
def test_the_list_holds_every_unfinished_pixel_once_longest_first(gpu_backend, simulated, reach):
    """After a frame, the list is a permutation of the pixels the samples did not finish, in
    non-increasing class, and the histogram counts each class."""
    from kernels.mandelbrot.benches.escape_variants import variant  # numba.cuda: GPU tests only
    sample = 3
    size = (20, 11) if simulated else (333, 200)
    iters = 40 if simulated else 1500
    r = m.Renderer(gpu_backend, launch=variant("sorted", sample=sample,
                                               probe=30 if simulated else 200, reach=reach))
    req = _req(-0.6, 0.1, 3.0, size, iters)
    r.render(req)
    cols, rows = size
    est = r.pool.device("order-est", ev.sample_shape(rows, cols, sample), np.int32).copy_to_host()
    meta = r.pool.device("order-meta", (2 * ev.NCLASSES,), np.int32).copy_to_host()
    hist, cursor = meta[:ev.NCLASSES], meta[ev.NCLASSES:]
    order = r.pool.device("order", (rows * cols,), np.int32).copy_to_host()
    classes = _host_classes(est, sample, reach, rows, cols)
    todo = np.flatnonzero(classes.ravel() >= 0)
    total = int(hist.sum())
    assert total == todo.size and (cursor == hist).all()
    assert 0 < todo.size < rows * cols                   # some samples finished, not all pixels
    listed = order[:total]
    assert np.array_equal(np.sort(listed), todo)
    got = classes.ravel()[listed]
    assert (np.diff(got) <= 0).all()                     # longest first
    assert np.array_equal(np.bincount(got, minlength=ev.NCLASSES), hist)
    assert len(set(got.tolist())) >= 3                   # the frame spreads over several classes


def test_bad_sample_probe_or_reach_is_refused(gpu_backend):
    from kernels.mandelbrot.benches.escape_variants import variant  # numba.cuda: GPU tests only
    for bad in ({"sample": 0}, {"probe": 0}, {"reach": 0}):
        with pytest.raises(ValueError, match="sample, probe and reach"):
            variant("sorted", **bad)
    with pytest.raises(TypeError):          # the bench's knobs are no longer the renderer's
        m.Renderer(gpu_backend, sample=4)
