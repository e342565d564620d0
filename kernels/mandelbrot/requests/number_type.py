"""The one rule for a Mandelbrot frame's number type, float32 or float64: of the arithmetic of
float64-format frames (`choose`) and of the deltas of deep frames (`choose_deep`).

float32 keeps 24 bits of mantissa: a pixel's coordinates round to float32's spacing at the centre
(2^-23 x the centre's size, an "ulp"), and the iteration's own round-off moves the orbit about as
much. At k ulps per pixel, the float32 picture is the exact one with each pixel displaced by up to
about 0.5/k of a pixel, the rule float64 follows with its 53 bits (request.precision_state). Pixels
where a displacement that small changes the escape count sit on band edges that the frame cannot
resolve anyway (float64 moved by a thousandth of a pixel changes more of them: the tests). So float32 is "exact
enough" at FLOAT32_OK ulps per pixel and more, the same margin float64 keeps before it warns.

`choose` picks float32 where it is exact enough and the device runs float64 slowly (at most
1/SLOW_FLOAT64 of its float32 rate: GeForce and RTX cards run it at 1/64, the H100 and H200 at
1/2, a CPU's scalar code at 1/1), else float64; the user may force either. The device's rates come
from `device_rates`: the roofs measured on this device before (kernels/roofs: the roofline panel,
the bench), or `RATES_SOURCE` when set (a callable returning (float32 rate, float64 rate) or
None), else the nominal ratio of its kind. No numba, no Qt here:
the window, the command line and the bench all ask this module.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from .formulas import LABELS, MANDELBROT
from .request import PRECISION_LIMIT

NUMBER_TYPES = ("auto", "float32", "float64")

FLOAT32_ULP = 2.0 ** -23
FLOAT32_OK = 450 * FLOAT32_ULP      # ulps per pixel at which float32 draws what float64 draws
FLOAT32_LIMIT = 9 * FLOAT32_ULP     # ... and below which float32 frames turn blocky and noisy
# float32 only where float64 runs at most this many times slower: at 1/2 (an H100) the exact type
# costs too little to give up
SLOW_FLOAT64 = 4.0
# every boundary point of the set has |c| >= 1/4, and the orbit's round-off is relative to |z|,
# not to a centre near 0
_SCALE_FLOOR = 0.25

# nominal float64 : float32 rate by device (NVIDIA's specifications): data-centre parts at 1/2,
# other GPUs (GeForce, RTX, Quadro of the last generations) at 1/64 or 1/32: counted as 1/64
_HALF_RATE_GPUS = ("H100", "H200", "H800", "GH200", "A100", "A800", "A30", "V100", "P100",
                   "B100", "B200", "GB200", "TITAN V")

# deep frames: float32 deltas (loops/perturbation_loop.CODE32) hold perturbation-format frames down
# to this pixel spacing (δc, and the squares the loop compares, must stay normal float32 numbers)
DELTAS_MIN_SPACING_LOG2 = -100

# instead of the kept roofs: a callable (backend) -> (float32 rate, float64 rate) or None
RATES_SOURCE: Callable | None = None


@dataclass(frozen=True)
class Rates:
    """A device's float32 and float64 arithmetic rates (any one unit) and where they come from."""
    f32: float
    f64: float
    source: str

    @property
    def f64_fraction(self) -> float:
        """float64's rate as a fraction of float32's."""
        return self.f64 / self.f32 if self.f32 > 0 else 1.0

    def describe(self) -> str:
        f = self.f64_fraction
        if f >= 0.999:
            return f"float64 as fast as float32 ({self.source})"
        return f"float64 at 1/{1.0 / f:.0f} of float32's rate ({self.source})"


@dataclass(frozen=True)
class Choice:
    """The number type a frame runs (`number_type`: "float32" | "float64"), why in one line
    (`reason`), whether the user forced it, and float32's state at this zoom."""
    number_type: str
    reason: str
    forced: bool
    float32_state: str


def nominal_rates(backend) -> Rates:
    """The nominal rates of `backend`'s device: the CPU (and the CUDA simulator, which runs on it)
    1:1, a data-centre GPU 2:1, any other GPU 64:1."""
    if backend is None or not backend.is_gpu or backend.simulated:
        return Rates(1.0, 1.0, "nominal, CPU")
    name = str(backend.device).upper()
    if any(part in name for part in _HALF_RATE_GPUS):
        return Rates(2.0, 1.0, f"nominal, {backend.device}")
    return Rates(64.0, 1.0, f"nominal, {backend.device}")


def device_rates(backend) -> Rates:
    """`backend`'s float32 and float64 rates: RATES_SOURCE's measurement when it has one, else
    the nominal ones."""
    source = RATES_SOURCE if RATES_SOURCE is not None else _kept_roofs
    if source is not None:
        try:
            got = source(backend)
        except Exception:   # a roof that could not be measured: the nominal ratio still holds
            got = None
        if got is not None and got[0] > 0 and got[1] > 0:
            return Rates(float(got[0]), float(got[1]), "measured")
    return nominal_rates(backend)


def _kept_roofs(backend):
    """The roofs measured on this GPU before (kernels/roofs), when there are any. Not for a CPU:
    its measured peaks are its SIMD units', which the scalar escape loops do not use."""
    if backend is None or not backend.is_gpu or backend.simulated:
        return None
    from ...roofs import kept_rates
    return kept_rates(backend)


def _scale(center_re, center_im) -> float:
    return max(abs(float(center_re)), abs(float(center_im)), _SCALE_FLOOR)


def ulps_per_pixel(center_re, center_im, width, pixels: int) -> float:
    """The pixel spacing in float32 ulps at this centre."""
    return float(width) / max(1, int(pixels)) / (FLOAT32_ULP * _scale(center_re, center_im))


def float32_state(center_re, center_im, width, pixels: int) -> tuple[str, str]:
    """("ok" | "warn" | "limit", message) for float32 at this place `pixels` across: "ok" where it
    draws what float64 draws, "warn" where it departs on some pixels, "limit" where it is blocky."""
    k = ulps_per_pixel(center_re, center_im, width, pixels)
    if k < FLOAT32_LIMIT / FLOAT32_ULP:
        return "limit", "float32 has run out of digits here: its picture is blocky and noisy"
    if k < FLOAT32_OK / FLOAT32_ULP:
        return "warn", (f"float32 departs from the exact picture here (pixels {k:.0f} float32 "
                        f"steps apart; it draws exactly from {FLOAT32_OK / FLOAT32_ULP:.0f})")
    return "ok", ""


def run_out_widths(center_re, center_im, pixels: int) -> tuple[float, float]:
    """(float32's, float64's) narrowest view width at this centre, `pixels` across: below the
    first float32 departs from the exact picture, below the second float64 does (and frames go
    to perturbation)."""
    n = max(1, int(pixels))
    w32 = FLOAT32_OK * _scale(center_re, center_im) * n
    w64 = PRECISION_LIMIT * max(abs(float(center_re)), abs(float(center_im)), 1e-300) * n
    return w32, w64


def choose(center_re, center_im, width, pixels: int, rates: Rates, wanted: str = "auto",
           formula: str = MANDELBROT) -> Choice:
    """The number type of a frame of this place `pixels` across on a device of `rates`:
    `wanted` "float32" or "float64" forces it, "auto" picks float32 where it is exact enough and
    float64 runs at most 1/SLOW_FLOAT64 of its rate, else float64. A `formula` other than
    Mandelbrot's is float64 always: the float32 kernels iterate z^2 + c only."""
    if wanted not in NUMBER_TYPES:
        raise ValueError(f"number type must be one of {', '.join(NUMBER_TYPES)}, got {wanted!r}")
    state, message = float32_state(center_re, center_im, width, pixels)
    if formula != MANDELBROT:
        why = f"float64: the float32 kernels draw the Mandelbrot set only, not {LABELS[formula]}"
        return Choice("float64", why + (" (float32 asked)" if wanted == "float32" else ""),
                      wanted != "auto", state)
    if wanted != "auto":
        why = f"{wanted}, as asked"
        if wanted == "float32" and state != "ok":
            why += f": {message}"
        return Choice(wanted, why, True, state)
    slow = rates.f64_fraction <= 1.0 / SLOW_FLOAT64
    if state != "ok":
        w32, _ = run_out_widths(center_re, center_im, pixels)
        return Choice("float64", f"float64: float32 runs out below a width of {w32:.3g} here",
                      False, state)
    if slow:
        return Choice("float32", f"float32: exact enough at this zoom, and this device runs "
                                 f"{rates.describe()}", False, state)
    return Choice("float64", f"float64: this device runs {rates.describe()}, so the exact type "
                             f"costs little", False, state)


def float32_deltas_reach(number_format: str, spacing_log2: float) -> bool:
    """Whether float32 deltas hold a deep frame of this format and pixel spacing 2^spacing_log2."""
    return number_format == "perturbation" and spacing_log2 >= DELTAS_MIN_SPACING_LOG2


def choose_deep(number_format: str, spacing_log2: float, rates: Rates,
                wanted: str = "auto") -> Choice:
    """The deltas' type of a deep frame: float32 deltas keep 24 bits relative to their own size,
    so they draw what float64 deltas draw at any depth their range reaches (perturbation format,
    pixel spacing down to 2^DELTAS_MIN_SPACING_LOG2); there `choose`'s rule applies, elsewhere
    float64."""
    if wanted not in NUMBER_TYPES:
        raise ValueError(f"number type must be one of {', '.join(NUMBER_TYPES)}, got {wanted!r}")
    if not float32_deltas_reach(number_format, spacing_log2):
        why = (f"float64 deltas: float32 deltas reach pixel spacings down to "
               f"2^{DELTAS_MIN_SPACING_LOG2} only")
        return Choice("float64", why + (f" ({wanted} asked)" if wanted == "float32" else ""),
                      wanted != "auto", "limit")
    if wanted != "auto":
        return Choice(wanted, f"{wanted} deltas, as asked", True, "ok")
    if rates.f64_fraction <= 1.0 / SLOW_FLOAT64:
        return Choice("float32", f"float32 deltas: exact enough at any depth they reach, and this "
                                 f"device runs {rates.describe()}", False, "ok")
    return Choice("float64", f"float64 deltas: this device runs {rates.describe()}, so the "
                             f"exact type costs little", False, "ok")


def resolve(request, backend, wanted: str = "auto"):
    """(request, Choice): a MandelbrotRequest with the number type `choose` picks for it on
    `backend` (`wanted` forces one), a DeepFrameRequest with `choose_deep`'s; any other request
    as it is, with None."""
    if not hasattr(request, "number_type"):
        return request, None
    w = int(request.size[0])
    if hasattr(request, "spacing_log2"):
        choice = choose_deep(request.format, request.spacing_log2, device_rates(backend), wanted)
    else:
        choice = choose(request.center_re, request.center_im, request.width, w,
                        device_rates(backend), wanted, getattr(request, "formula", MANDELBROT))
    if choice.number_type != request.number_type:
        request = replace(request, number_type=choice.number_type)
    return request, choice
