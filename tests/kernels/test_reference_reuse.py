"""Zooming in keeps the reference orbit: a new orbit gets the precision of a frame
2^PRECISION_HEADROOM narrower, so a zoom-in session around one point computes one reference
however the precision rule's 64-bit steps fall (before, "the frame's need + 32 bits" was lost at
the next multiple of 64 and the orbit was computed again)."""
from decimal import Decimal, localcontext

import pytest

from kernels.backend import resolve
from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP as LOC
from kernels.mandelbrot.deep.renderer import PRECISION_HEADROOM, DeepRenderer
from kernels.mandelbrot.requests.deep_request import DeepRequest

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")


def zoom_session(start: str, steps: int, size=(8, 6)):
    """References computed by a zoom ×2 per step at the centre, and the frames' requests."""
    r = DeepRenderer(resolve("cpu"))
    computed, reqs = 0, []
    with localcontext() as ctx:
        ctx.prec = 1200
        w = Decimal(start)
        for _ in range(steps):
            req = DeepRequest(LOC.center_re[:450], LOC.center_im[:450], str(w), size, 400)
            res = r.render_values(req)
            computed += not res.reused
            reqs.append((req, res.reference))
            w /= 2
    return computed, reqs


@pytest.mark.parametrize("start", ["1e-20", "3e-40", "1e-300"])
def test_thirty_zooms_in_compute_one_reference(start):
    computed, reqs = zoom_session(start, PRECISION_HEADROOM - 2)
    assert computed == 1
    first, orbit = reqs[0]
    # the headroom is the next zooms' need, not more: at most one 64-bit step above it
    assert orbit.precision >= reqs[-1][0].precision
    assert orbit.precision <= first.precision + PRECISION_HEADROOM + 64


def test_a_zoom_past_the_headroom_computes_a_deeper_reference():
    computed, reqs = zoom_session("1e-20", 2 * PRECISION_HEADROOM + 70)
    assert 2 <= computed <= 3
    assert reqs[-1][1].precision >= reqs[-1][0].precision > reqs[0][1].precision
