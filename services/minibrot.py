"""Zoom to a minibrot: from a region of the plane (a box the user drew, or the view around its
centre), the lowest period of a nucleus it holds (kernels/mandelbrot/reference/region_period.py), that
nucleus by Newton's method (kernels/mandelbrot/reference/newton.py), and the view that shows the
minibrot: centred on its nucleus, about twice its extent wide, with iterations enough to see it.
Both front ends use it: the window as a scheduler job (`HANDLERS`, a generator whose steps let
frames render in between; a cancel stops it between steps) and the command line's `--newton`
(`find_minibrot`, the same steps run to the end).
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Context, Decimal, localcontext

from kernels.mandelbrot.reference.newton import NewtonFailed, Nucleus, nucleus_steps
from kernels.mandelbrot.reference.orbit_scan import run
from kernels.mandelbrot.reference.region_period import period_steps
from kernels.mandelbrot.requests.deep_request import add_decimal
from kernels.mandelbrot.requests.request import MAX_ITER_LIMIT, auto_iterations

from .requests import check_location, location_number

# the view's width in minibrot sizes: the minibrot spans ~2.25 sizes from its nucleus at most
# (the whole set, from −2 to 0.25), so it fills about half of a view this wide around the nucleus
WIDTH_IN_SIZES = 5
# iterations per period that show a minibrot and its surroundings (the deep tests' minibrots,
# kernels/mandelbrot/benches/locations.py, use 14 to 22)
ITERATIONS_PER_PERIOD = 20


class MinibrotNotFound(ValueError):
    """No minibrot here: the message says why in plain words."""


@dataclass(frozen=True)
class MinibrotSearch:
    """Find the minibrot of the disc of `radius` around (center_re, center_im) (decimal strings),
    looking at periods up to `max_period`; `pixel`: the size of the current view's pixels."""
    center_re: str
    center_im: str
    radius: str
    pixel: str
    max_period: int


@dataclass(frozen=True)
class MinibrotProgress:
    """stage "period" (fraction of the iteration limit scanned) or "newton" (`fraction` of Newton
    step `step`); `text` says it for a status bar."""
    stage: str
    fraction: float
    text: str
    period: int | None = None
    step: int = 0


@dataclass(frozen=True)
class MinibrotFound:
    """The nucleus and the view that shows its minibrot: centre, width (Decimal), iterations."""
    nucleus: Nucleus
    center_re: str
    center_im: str
    width: Decimal
    iterations: int

    @property
    def period(self) -> int:
        return self.nucleus.period

    def summary(self) -> str:
        n = self.nucleus
        size = +(Decimal(repr(n.size[0])) * Decimal(2) ** n.size[1])
        return f"period {n.period:,}, minibrot size {size:.2e}, {n.steps} Newton steps"


def view_search(center_re, center_im, width, size: tuple[int, int],
                max_period: int) -> MinibrotSearch:
    """The search of a view: the disc inscribed in it (radius half its shorter side)."""
    w, h = max(int(size[0]), 1), max(int(size[1]), 1)
    wd = location_number(width, "the width")
    return MinibrotSearch(str(location_number(center_re, "the centre's real part")),
                          str(location_number(center_im, "the centre's imaginary part")),
                          str(wd * min(w, h) / (2 * w)), str(wd / w), int(max_period))


def box_search(corner0, corner1, pixel, max_period: int) -> MinibrotSearch:
    """The search of a box between two corners (re, im) Decimals: its centre, radius half its
    longer side."""
    (a_re, a_im), (b_re, b_im) = (tuple(Decimal(v) for v in c) for c in (corner0, corner1))
    # exact sums (a deep box's corners have hundreds of digits), then halves: one digit more
    sums = [Decimal(add_decimal(a_re, b_re)), Decimal(add_decimal(a_im, b_im)),
            Decimal(add_decimal(b_re, a_re.copy_negate())),
            Decimal(add_decimal(b_im, a_im.copy_negate()))]
    digits = max(len(v.as_tuple().digits) for v in sums) + 2
    with localcontext(Context(prec=digits, Emin=-10 ** 6, Emax=10 ** 6)):
        re_, im_ = sums[0] / 2, sums[1] / 2
        radius = max(abs(sums[2]), abs(sums[3])) / 2
    if not radius > 0:
        raise MinibrotNotFound("the box has no area")
    return MinibrotSearch(str(re_), str(im_), str(radius), str(pixel), int(max_period))


def minibrot_view(nucleus: Nucleus) -> tuple[Decimal, int]:
    """(width, iterations) of the view that shows the nucleus's minibrot."""
    m, e = nucleus.size
    width = +(Decimal(repr(m)) * Decimal(2) ** e * WIDTH_IN_SIZES)
    width = Decimal(f"{width:.3e}")
    iters = max(auto_iterations(width), ITERATIONS_PER_PERIOD * nucleus.period)
    return width, int(min(iters, MAX_ITER_LIMIT))


def interior_component(center_re, center_im) -> str | None:
    """"the main cardioid" or "the period-2 bulb" when the point lies inside one (the escape
    kernels' own shortcut test), else None."""
    x, y = float(center_re), float(center_im)
    xq = x - 0.25
    q = xq * xq + y * y
    if q * (q + xq) <= 0.25 * y * y:
        return "the main cardioid"
    if (x + 1.0) ** 2 + y * y <= 0.0625:
        return "the period-2 bulb"
    return None


def search_steps(search: MinibrotSearch):
    """A generator of MinibrotProgress; returns MinibrotFound or raises MinibrotNotFound."""
    limit = int(search.max_period)
    try:
        gen = period_steps(search.center_re, search.center_im, search.radius, limit)
        while True:
            try:
                f = next(gen)
            except StopIteration as stop:
                found = stop.value
                break
            yield MinibrotProgress("period", f, f"Zoom to minibrot: looking for a period, "
                                                f"{f:.0%} of {limit:,} iterations   (Esc cancels)")
    except ValueError as exc:
        raise MinibrotNotFound(str(exc)) from None
    if found.period is None:
        if found.escaped:
            n = int(found.iterations)
            when = ("at its first iteration (the centre lies far outside the set)" if n <= 1
                    else f"after {n:,} iterations")
            raise MinibrotNotFound(
                f"no minibrot found: the centre's orbit escapes {when}, before any nucleus period "
                "showed; centre the view nearer a minibrot or draw a box around one")
        inside = interior_component(search.center_re, search.center_im)
        if inside:      # more iterations would find nothing: say where the view is instead
            raise MinibrotNotFound(
                f"no minibrot here: the centre lies inside {inside}, where every point stays "
                "bounded and no minibrot is at any period; centre the view on the set's edge "
                "or draw a box there")
        raise MinibrotNotFound(f"no minibrot period up to {limit:,} (the iteration limit) in "
                               "this region; raise the iterations or choose a smaller region")
    p = found.period
    yield MinibrotProgress("newton", 0.0, f"Zoom to minibrot: period {p:,} found; Newton's method…",
                           p)
    try:
        gen = nucleus_steps(search.center_re, search.center_im, p, search.radius, search.pixel)
        while True:
            try:
                step, f = next(gen)
            except StopIteration as stop:
                nucleus = stop.value
                break
            yield MinibrotProgress("newton", f, f"Zoom to minibrot: period {p:,}, Newton step "
                                                f"{step} ({f:.0%})   (Esc cancels)", p, step)
    except (NewtonFailed, ValueError) as exc:
        raise MinibrotNotFound(f"period {p:,} found, but no nucleus: {exc}") from None
    width, iters = minibrot_view(nucleus)
    try:
        check_location(nucleus.center_re, nucleus.center_im, width, iters)
    except ValueError as exc:
        raise MinibrotNotFound(f"the minibrot of period {p:,} cannot be shown: {exc}") from None
    return MinibrotFound(nucleus, nucleus.center_re, nucleus.center_im, width, iters)


def find_minibrot(search: MinibrotSearch, cancel=None, progress=None) -> MinibrotFound:
    """search_steps run to the end (the command line): cancel.check() and
    progress(MinibrotProgress) between steps."""
    return run(search_steps(search), cancel, progress)


def _search_job(ctx, search: MinibrotSearch):
    return (yield from search_steps(search))


HANDLERS = {MinibrotSearch: _search_job}
