"""Where a deep frame's pixels sit relative to its reference orbit (FrameGeometry: the pixel grid
and a bound on |δc|), and the bound its approximation table is built for (table_bound)."""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

from ..loops.loop_args import PixelGrid
from ..reference.reference import ReferenceOrbit, gmpy2_module
from ..requests.deep_request import DeepRequest

# a table built for |δc| <= 2^b serves frames with bounds down to 2^(b - TABLE_SLACK_BITS)
TABLE_SLACK_BITS = 4


def table_bound(c_bound_exp: int, slack: int = TABLE_SLACK_BITS) -> int:
    """The bound a frame's table is built for: the next multiple of `slack` above the frame's
    own, so a frame's table depends on its orbit, its bound and the slack only, not on the frames
    drawn before it (a table's radii change the counts in their last bits)."""
    return slack * (int(c_bound_exp) // slack + 1)


@dataclass(frozen=True)
class FrameGeometry(PixelGrid):
    """Where the frame's pixels sit relative to the reference (PixelGrid), and a bound on |δc|."""
    c_bound_exp: int  # |δc| <= 2**c_bound_exp over the whole frame
    reach: float = 0.0  # ... and its mantissa (units of 2**cexp): a log-polar grid's period ball

    def grid(self) -> PixelGrid:
        """The pixel grid alone, as the loops take it."""
        return PixelGrid(**{f.name: getattr(self, f.name) for f in fields(PixelGrid)})

    @staticmethod
    def of(request: DeepRequest, orbit: ReferenceOrbit) -> FrameGeometry:
        """The grid of `request`'s pixels as places in its whole picture (DeepRequest.picture): a
        band's δc are its picture's, the same doubles by the same operations (half_h moves the
        band's rows to the picture's), and its bound on |δc| is the picture's, so one table
        serves every band, whichever worker draws which."""
        gmpy2 = gmpy2_module()
        whole = request.picture()
        w, h = int(whole.size[0]), int(whole.size[1])
        polar = int(whole.polar)    # a log-polar grid's `step` is its inner radius (PixelGrid)
        with gmpy2.context(precision=orbit.precision):
            step = gmpy2.mpfr(str(whole.width_decimal)) / (1 if polar else w)
            cexp, mant = gmpy2.frexp(step)
            centre = gmpy2.mpc(gmpy2.mpfr(str(whole.center_re).strip()),
                               gmpy2.mpfr(str(whole.center_im).strip()))
            d = centre - orbit.centre
            d0r = float(gmpy2.mul_2exp(d.real, -cexp))
            d0i = float(gmpy2.mul_2exp(d.imag, -cexp))
        step_m = float(mant)
        # the largest |δc|: a log-polar grid's outer radius (half_w < 0 marks it), else a corner
        cmax = math.hypot(d0r, d0i) + (step_m * 2.0 ** (w / polar) if polar else
                                       math.hypot(w / 2.0, h / 2.0) * step_m)
        row0 = whole.polar_row0 + h / 2.0 if polar else int((request.within or (0, 0))[1])
        return FrameGeometry(d0r, d0i, step_m, int(cexp), -float(polar) if polar else w / 2.0,
                             h / 2.0 - row0, int(cexp) + math.ceil(math.log2(cmax)), cmax)
