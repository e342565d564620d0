"""A deep frame's pixels depend on the frame alone, not on what its renderer drew before: a movie
over several GPUs hands each lane's frames to whichever worker is free, so a renderer sees a
different run of frames than on one GPU, and the frames must still equal the one-GPU movie's.

The approximation table is the part that remembered: it was built for the first frame that missed
and then served the next few, so its radii (and a pixel's last bits) depended on which frame came
first. Now every frame's table is built for its bound rounded up (renderer.table_bound)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.reference.reference_store import ReferenceStore, compute_pinned  # noqa: E402
from kernels.mandelbrot.deep.renderer import (  # noqa: E402
    PRECISION_HEADROOM,
    TABLE_SLACK_BITS,
    DeepRenderer,
    FrameGeometry,
    table_bound,
)
from kernels.mandelbrot.requests.deep_request import DeepRequest  # noqa: E402

CRE, CIM = "-0.743643887037158704752191506114774", "0.131825904205311970493132056385139"
SIZE, ITERS = (48, 28), 20000


@pytest.fixture(scope="module")
def store():
    """A movie's store: the deepest frame's orbit pinned, so every renderer takes a copy of the
    same orbit (only the table may differ between them)."""
    s = ReferenceStore(cache=None)
    compute_pinned(DeepRequest(CRE, CIM, "1e-33", SIZE, ITERS).validate(), PRECISION_HEADROOM,
                   store=s)
    return s


def _renderer(cpu_backend, store):
    r = DeepRenderer(cpu_backend)
    r.references = store
    return r


def _frame(width):
    return DeepRequest(CRE, CIM, width, SIZE, ITERS)


@pytest.mark.parametrize("width, before", [("1e-24", "1.5e-24"), ("1e-25", "2.5e-25"),
                                           ("1e-26", "8.5e-26")])
def test_a_frame_equals_a_fresh_renderers_after_a_shallower_frame(cpu_backend, store, width,
                                                                  before):
    fresh = _renderer(cpu_backend, store).render_values(_frame(width))
    seasoned = _renderer(cpu_backend, store)
    seasoned.render_values(_frame(before))
    after = seasoned.render_values(_frame(width))
    assert after.reused, "the frame should take the pinned orbit"
    np.testing.assert_array_equal(after.values, fresh.values)


def test_table_bound_rounds_up_to_the_slack_and_frames_of_one_bound_share_the_table(cpu_backend,
                                                                                    store):
    for c in range(-130, -90):
        b = table_bound(c)
        assert c + 1 <= b <= c + TABLE_SLACK_BITS and b % TABLE_SLACK_BITS == 0
    r = _renderer(cpu_backend, store)
    widths = [f"{m}e-{e}" for e in (25, 26, 27) for m in (8, 4, 2, 1)]      # zooming in
    seen = {}
    for w in widths:
        res = r.render_values(_frame(w))
        b = table_bound(FrameGeometry.of(_frame(w).validate(), res.reference).c_bound_exp)
        # reused exactly when the frame before had the same bound (the orbit never changes)
        assert res.table_reused == (seen.get("last") == b), w
        seen["last"] = b
