"""The one rule for the arithmetic a Mandelbrot frame needs: "float64" while float64 still draws
the place at that many pixels across, else the deep renderer's "perturbation", or "extended" below
EXTENDED_BELOW. The window, the command line, movies and posters all ask `number_format`; the deep
renderer, which perturbs even where float64 would do, asks `deep_format`. No numba here."""
from __future__ import annotations

from .deep_request import deep_format, parse_decimal, parse_width
from .request import precision_state


def float64_draws(center_re, center_im, width, pixels: int) -> bool:
    """Whether float64 draws this place at `pixels` across: the width is not below EXTENDED_BELOW
    (past it pixel offsets head for float64's smallest numbers) and the pixel spacing is within
    float64's digits at that centre (precision_state). Values: decimal strings, Decimals or
    numbers; the width also as (mantissa, exponent)."""
    w = parse_width(width)
    if deep_format(w) == "extended":
        return False
    re_ = parse_decimal(center_re, "the centre's real part")
    im_ = parse_decimal(center_im, "the centre's imaginary part")
    return precision_state(float(re_), float(im_), float(w), max(1, int(pixels)))[0] != "limit"


def number_format(center_re, center_im, width, pixels: int) -> str:
    """"float64" | "perturbation" | "extended": the format frames of this place use at `pixels`
    across."""
    if float64_draws(center_re, center_im, width, pixels):
        return "float64"
    return deep_format(parse_width(width))
