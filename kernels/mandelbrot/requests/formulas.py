"""The escape-time formulas the Mandelbrot workload iterates, by name: what a request's `formula`
may say, the words the window and the command line show, and Kalles Fraktaler's number for each
(a .kfr file's `FractalType`). No numba here: requests, the view and the CLI import it freely.

- "mandelbrot":    z <- z^2 + c
- "burning-ship":  z <- (|Re z| + i |Im z|)^2 + c   (x' = x^2 - y^2 + cx, y' = 2|x y| + cy)

Pictures keep the mathematical orientation (imaginary axis up) for every formula.
"""
from __future__ import annotations

MANDELBROT = "mandelbrot"
BURNING_SHIP = "burning-ship"
FORMULAS = (MANDELBROT, BURNING_SHIP)
DEFAULT = MANDELBROT

LABELS = {MANDELBROT: "Mandelbrot", BURNING_SHIP: "Burning Ship"}
EQUATIONS = {MANDELBROT: "z ← z² + c", BURNING_SHIP: "z ← (|Re z| + i·|Im z|)² + c"}

# Kalles Fraktaler's FractalType numbers (its power-2 formulas)
KF_TYPES = {MANDELBROT: 0, BURNING_SHIP: 1}

# each formula's whole set in view, (centre re, centre im, width across) as decimal strings: the
# window's Home, and the far end of another formula's zoom movie than Mandelbrot's (whose movies
# keep kernels/mandelbrot/zoom_path.WHOLE_SET). Burning Ship's set spans about -1.8..1.0 across
# and -1.7..0.45 up (the ship hangs below the real axis in this orientation).
WHOLE_SETS = {MANDELBROT: ("-0.75", "0", "3.5"), BURNING_SHIP: ("-0.4", "-0.6", "3.5")}


def check(name: object) -> str:
    """`name` when it is a formula; ValueError in plain words otherwise."""
    if name not in FORMULAS:
        raise ValueError(f"unknown formula {name!r}; choose one of: {', '.join(FORMULAS)}")
    return name


def from_kf_type(number: int) -> str:
    """The formula of KF's FractalType `number`; ValueError naming those this app draws."""
    for name, kf in KF_TYPES.items():
        if kf == number:
            return name
    known = ", ".join(f"{kf} ({LABELS[n]})" for n, kf in KF_TYPES.items())
    raise ValueError(f"KF's fractal type {number} is not one this app draws; it draws {known}")
