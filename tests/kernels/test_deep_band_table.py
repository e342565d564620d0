"""The bands of a deep picture (a poster's over GPUs, an export's strips) are drawn with one
approximation table: each band's table is built for the whole picture's bound on |δc|, not for the
band's own. With the band's own bound, bands far from the reference rounded up to the next table
bound, so a worker going down the picture built the table again (two GPUs sharing a 16384² poster
at 1e-100 each rebuilt it twice a poster)."""
from __future__ import annotations

import dataclasses
import types
from decimal import Decimal

import pytest

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.reference.reference_store import ReferenceStore  # noqa: E402
from kernels.mandelbrot.deep.renderer import FrameGeometry, table_bound  # noqa: E402
from kernels.mandelbrot.deep_frames import DeepFrameRenderer, band_request  # noqa: E402
from kernels.mandelbrot.requests.request import DeepFrameRequest  # noqa: E402

CRE, CIM = "-0.743643887037158704752191506114774", "0.131825904205311970493132056385139"
W, H, ROWS, ITERS = 48, 96, 8, 4000


def _own_bounds(request, centre_re, centre_im):
    """Each band's table bound from the band alone (no `within`), for an orbit at that centre."""
    import gmpy2
    with gmpy2.context(precision=400):
        c = gmpy2.mpc(gmpy2.mpfr(str(centre_re)), gmpy2.mpfr(str(centre_im)))
    orbit = types.SimpleNamespace(precision=400, centre=c)
    out = []
    for r0 in range(0, H, ROWS):
        band = dataclasses.replace(band_request(request, r0, ROWS, False), within=None)
        out.append(table_bound(FrameGeometry.of(band.validate(), orbit).c_bound_exp))
    return out


def _crossing_picture():
    """A picture whose bands' own bounds, for an orbit at the picture's centre (every band's
    reference, renderer._reference), do not all round to one table bound."""
    for k in range(20, 40):
        req = DeepFrameRequest(CRE, CIM, f"1e-{k}", (W, H), ITERS)
        if len(set(_own_bounds(req, req.center_re, req.center_im))) > 1:
            return req
    raise AssertionError("no width in 1e-20 .. 1e-39 makes the bands' own bounds differ")


def _own_centre(req, bits):
    import gmpy2
    with gmpy2.context(precision=bits):
        return gmpy2.mpc(gmpy2.mpfr(str(req.center_re)), gmpy2.mpfr(str(req.center_im)))


def test_every_band_of_a_picture_is_drawn_with_one_table(cpu_backend):
    req = _crossing_picture()
    r = DeepFrameRenderer(cpu_backend)
    r.deep.references = ReferenceStore(cache=None)
    reused = []
    for r0 in range(0, H, ROWS):
        frame = r.render(band_request(req, r0, ROWS, False))
        reused.append(frame.meta["table_reused"])
        if r0 == 0:
            orbit = r.deep.orbit
            # the band's reference is the picture's, whose bands' own bounds differ
            assert orbit.centre == _own_centre(req, orbit.precision)
    assert reused[0] is False and all(reused[1:]), reused


def test_a_band_of_a_band_is_the_band_of_the_picture():
    req = DeepFrameRequest(CRE, CIM, "1e-30", (W, H), ITERS)
    outer = band_request(req, 16, 32, False)
    inner = band_request(outer, 8, ROWS, False)
    direct = band_request(req, 24, ROWS, False)
    assert inner.within == direct.within == (H, 24)
    # the same centre to the last digit, and the picture's centre back from either exactly
    assert Decimal(str(inner.center_im)) == Decimal(str(direct.center_im))
    assert Decimal(str(inner.picture().center_im)) == Decimal(CIM)


@pytest.mark.parametrize("within", [(H, H - 4), (4, 0), (H, -1), ("96", 0), (H,)])
def test_a_band_outside_its_picture_is_refused(within):
    band = dataclasses.replace(band_request(DeepFrameRequest(CRE, CIM, "1e-30", (W, H), ITERS),
                                            0, ROWS, False), within=within)
    with pytest.raises(ValueError, match="must lie within its picture"):
        band.validate()
