"""The one number-format rule (kernels/mandelbrot/requests/number_format.py) and the one renderer choice
(kernels.mandelbrot.jobs.renderer_kind), as the services layer builds requests with them: float64
while float64 draws the place at that many pixels across (the centre matters: a double's digits sit
at the centre's magnitude), perturbation below that, extended below 1e-290."""
from __future__ import annotations

import pytest

from kernels.mandelbrot.requests.deep_request import EXTENDED_BELOW, DeepRequest
from kernels.mandelbrot.deep_frames import DeepFrameRenderer
from kernels.mandelbrot.jobs import (
    DEEP,
    FLOAT64,
    check_renderer,
    make_renderer,
    renderer_kind,
    renderer_of,
)
from kernels.mandelbrot.requests.number_format import float64_draws, number_format
from kernels.mandelbrot.renderer import Renderer
from kernels.mandelbrot.requests.request import DeepFrameRequest, MandelbrotRequest
from services.requests import mandelbrot_request, place_request


@pytest.mark.parametrize("centre, width, pixels, expected", [
    (("-0.5", "0"), "3", 1920, "float64"),
    (("-0.75", "0.1"), "1e-9", 1920, "float64"),
    (("-0.75", "0.1"), "1e-13", 1920, "perturbation"),     # 5e-17 a pixel at |c| 0.75
    # the same width and pixels: float64 holds near 0 (tiny numbers are exact) but not at 1.5
    (("0", "0"), "1e-12", 1000, "float64"),
    (("1.5", "0"), "1e-12", 1000, "perturbation"),
    # the same place: fewer pixels across, float64 holds again
    (("1", "0"), "1e-12", 100, "float64"),
    (("1", "0"), "1e-12", 1000, "perturbation"),
    # 1e-290: float64 offsets would head for its smallest numbers below it, whatever the centre
    (("0", "0"), "1.0001e-290", 1920, "float64"),
    (("0", "0"), "0.9999e-290", 1920, "extended"),
    (("-0.75", "0.1"), "1e-300", 1920, "extended"),
    (("-0.75", "0.1"), "1.0001e-290", 1920, "perturbation"),
])
def test_one_rule_for_the_number_format(centre, width, pixels, expected):
    assert number_format(*centre, width, pixels) == expected
    assert float64_draws(*centre, width, pixels) == (expected == "float64")


def test_the_rule_takes_strings_decimals_and_numbers_alike():
    from decimal import Decimal
    assert number_format(-0.75, 0.1, 1e-13, 1920) == "perturbation"
    assert number_format(Decimal("-0.75"), Decimal("0.1"), Decimal("1e-9"), 1920) == "float64"
    assert number_format("0", "0", (1, -300), 64) == "extended"


def test_a_deep_request_is_never_float64_and_keeps_its_override():
    assert DeepRequest("-0.75", "0.1", "1e-5", (8, 8), 100).format == "perturbation"
    assert DeepRequest("0", "0", str(EXTENDED_BELOW * 2), (8, 8), 100).format == "perturbation"
    assert DeepRequest("0", "0", "1e-300", (8, 8), 100).format == "extended"
    forced = DeepRequest("-0.75", "0.1", "1e-5", (8, 8), 100, number_format="extended")
    assert forced.format == "extended"


@pytest.mark.parametrize("centre, width, pixels, kind", [
    (("-0.75", "0.1"), "1e-9", 64, MandelbrotRequest),
    (("-0.75", "0.1"), "1e-13", 1920, DeepFrameRequest),
    (("0", "0"), "1e-12", 1000, MandelbrotRequest),
    (("1.5", "0"), "1e-12", 1000, DeepFrameRequest),
    (("0", "0"), "1e-300", 64, DeepFrameRequest),
])
def test_a_place_gets_the_request_of_its_format(centre, width, pixels, kind):
    req = place_request(*centre, width, (pixels, 10), 500, palette="viridis")
    assert type(req) is kind and req.size == (pixels, 10) and req.palette == "viridis"
    opts = {"center": ",".join(centre), "width": width, "iters": "500"}
    assert type(mandelbrot_request(opts, pixels, 10, False)) is kind


def test_a_deep_place_keeps_every_digit():
    centre = "-0.743643887037158704752191506114774"
    req = place_request(centre, "0.1318", "1e-30", (64, 48), 2000)
    assert isinstance(req, DeepFrameRequest) and req.center_re == centre and req.width == "1E-30"


class Owner:
    """What renderer_of asks of a JobContext or a pool Worker."""

    def __init__(self, backend):
        self.backend = backend
        self.kept = {}

    def renderer(self, key, factory):
        if key not in self.kept:
            self.kept[key] = factory()
        return self.kept[key]


def test_one_place_chooses_the_renderer(cpu_backend):
    flat = MandelbrotRequest(-0.75, 0.1, 1e-3, (16, 12), 100)
    deep = DeepFrameRequest("-0.75", "0.1", "1e-20", (16, 12), 100)
    assert renderer_kind(flat) == FLOAT64 and renderer_kind(deep) == DEEP
    assert type(make_renderer(flat, cpu_backend)) is Renderer
    assert type(make_renderer(deep, cpu_backend)) is DeepFrameRenderer
    check_renderer(flat)            # float64 needs nothing more
    owner = Owner(cpu_backend)
    assert renderer_of(owner, flat) is renderer_of(owner, flat)
    assert renderer_of(owner, flat, "export") is not renderer_of(owner, flat)
    # deep renderers are kept per series (a movie's lanes), float64 ones are shared
    assert renderer_of(owner, deep, "movie", series=0) is not renderer_of(owner, deep, "movie", 1)
    assert renderer_of(owner, flat, "movie", series=0) is renderer_of(owner, flat, "movie", 1)
    assert isinstance(renderer_of(owner, deep), DeepFrameRenderer)
