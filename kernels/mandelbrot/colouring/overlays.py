"""Per-pixel overlays of a Mandelbrot frame: what each one is, where it has a meaning, its colour
scale and its frame totals in words, and the NumPy twins that tests and the CPU use. No numba here:
the view and the command line import it freely.

The layers are raw integer counts (overlay_device.py colours them where they lie; the kept ones
come home as these arrays):

* float64 frames, (2, H, W) int32: F_ITER the iterations the kernel performed for the pixel (0
  where the cardioid/bulb test answered without iterating), derived from the frame's values;
  F_SLOTS the lane-iterations the pixel's warp spent on it, from the warp launch's counting twin
  (escape_warp._make_warp_loop says how they are counted). Lane efficiency of a pixel is
  F_ITER / F_SLOTS; of the frame, its useful iterations (the roofline's count, frame_work.py) over
  the lane-iterations of every warp (a warp's lanes that had no pixel left count too). These are
  the lane-iterations the app's warp launch issued, refills included; the roofline's "executed
  lane-iterations" (frame_work.py) are a static model instead, 32 × the slowest pixel of each
  32-pixel row segment (a warp per segment, no refills), so the two efficiencies of one frame
  differ.
* deep frames, from the deep loops' layer twins, (5, H, W) int32: D_ITER the escape iteration
  (max_iter inside), D_STEPS the perturbation steps, D_BLA the BLA steps, D_REBASES the
  rebases (every pass of a redone pixel counted, as the frame's stats are), D_REDONE 1 where the
  accuracy guard did the pixel again.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from ... import palettes
from ..requests.formulas import MANDELBROT

ITERATIONS, LANES, BLA, STEPS, REBASES, REDONE = (
    "iterations", "lane-efficiency", "bla-steps", "perturbation-steps", "rebases", "redone")
NAMES = (ITERATIONS, LANES, BLA, STEPS, REBASES, REDONE)
DEEP_ONLY = (BLA, STEPS, REBASES, REDONE)
LABELS = {ITERATIONS: "Iterations", LANES: "Lane efficiency", BLA: "BLA steps",
          STEPS: "Perturbation steps", REBASES: "Rebases", REDONE: "Redone pixels"}
UNITS = {ITERATIONS: "iterations per pixel",
         LANES: "% of the lane-iterations the warp launch issued that were useful",
         BLA: "BLA steps per pixel", STEPS: "perturbation steps per pixel",
         REBASES: "rebases per pixel",
         REDONE: "1 = done again by the accuracy guard, 2 = float64 could not place it and it "
                 "is left marked (not proved in double-double, nor iterated in MPFR)"}

F_ITER, F_SLOTS = range(2)
N_FLOAT64_LAYERS = 2
D_ITER, D_STEPS, D_BLA, D_REBASES, D_REDONE = range(5)
N_DEEP_LAYERS = 5
DEEP_LAYER = {ITERATIONS: D_ITER, STEPS: D_STEPS, BLA: D_BLA, REBASES: D_REBASES,
              REDONE: D_REDONE}

LUT_SIZE = 256
PALETTE = "viridis"
NO_VALUE_RGBA = (96, 96, 96, 255)       # pixels where the overlay has no value (no iterations)

WARPS_REASON = "no warps on the CPU: its threads each run their own pixels, nothing idles in step"
SLICED_REASON = ("this frame ran in iteration slices (one thread per pixel, too many iterations "
                 "for one launch); lane efficiency is counted for the warp launch")
DEEP_LANES_REASON = ("deep frames' threads take pixels one at a time from a counter, with steps "
                     "of unequal cost: lane efficiency is counted for float64 frames")
FLOAT64_REASON = "only deep frames (perturbation, BLA) take these steps; this is a float64 frame"
FLOAT32_REASON = ("the float32 kernels have no overlay twins: choose float64 in the Number type "
                  "box (--number-type float64) to see the overlays")
FORMULA_REASON = "overlays are drawn for the Mandelbrot set only: choose the Mandelbrot formula"


def unavailable(name: str, deep: bool, gpu: bool, float32: bool = False,
                formula: str = MANDELBROT) -> str | None:
    """Why overlay `name` has no meaning for a frame (deep or float64 format, on the GPU or the
    CPU, computed in float32 or not, of `formula`), or None when it has one. Unknown names are
    ValueError."""
    if name not in NAMES:
        raise ValueError(f"unknown overlay {name!r}; choose from: {', '.join(NAMES)}")
    if formula != MANDELBROT:         # the overlay kernels are twins of Mandelbrot's loops
        return FORMULA_REASON
    if float32:
        return FLOAT32_REASON
    if name == LANES:
        if not gpu:
            return WARPS_REASON
        if deep:
            return DEEP_LANES_REASON
    if name in DEEP_ONLY and not deep:
        return FLOAT64_REASON
    return None


def with_usable_overlay(request, name: str):
    """`request` (a MandelbrotRequest or DeepFrameRequest) drawing overlay `name` where it has a
    meaning for it, else none: the view keeps the user's choice across frames where it has none
    (a deep overlay while the view is float64)."""
    from ..requests.request import DeepFrameRequest
    gpu = bool(getattr(request.backend, "is_gpu", False))
    float32 = getattr(request, "number_type", "float64") == "float32"
    ok = (name in NAMES and
          unavailable(name, isinstance(request, DeepFrameRequest), gpu, float32,
                      getattr(request, "formula", MANDELBROT)) is None)
    shown = name if ok else ""
    return request if request.overlay == shown else dataclasses.replace(request, overlay=shown)


def parse_names(text: str) -> tuple[str, ...]:
    """'NAME[,NAME]' as a tuple of overlay names (duplicates dropped); ValueError in plain words."""
    names = []
    for part in str(text).split(","):
        p = part.strip().lower()
        if not p:
            continue
        if p not in NAMES:
            raise ValueError(f"unknown overlay {p!r}; choose from: {', '.join(NAMES)}")
        if p not in names:
            names.append(p)
    if not names:
        raise ValueError(f"no overlay named; choose from: {', '.join(NAMES)}")
    return tuple(names)


def check_names(names, deep: bool, gpu: bool, float32: bool = False,
                formula: str = MANDELBROT) -> None:
    """ValueError naming the first overlay of `names` without meaning for the frame, and why."""
    for n in names:
        why = unavailable(n, deep, gpu, float32, formula)
        if why is not None:
            where = ("a deep frame" if deep else "a float64 frame") + (" on the GPU" if gpu else
                                                                     " on the CPU")
            raise ValueError(f"overlay {n!r} has no meaning for {where}: {why}")


# ---------------------------------------------------------------- scales and colours

@dataclass(frozen=True)
class Scale:
    """How a layer's values become colours: t = (x - lo) / (hi - lo), or with `log`
    log(1 + x - lo) / log(1 + hi - lo), clamped to [0, 1], then LUT entry round(t * 255)."""
    lo: float
    hi: float
    log: bool
    unit: str


@dataclass(frozen=True)
class Drawn:
    """An overlay coloured in place of a float64 frame's picture: its `name` and `scale`, the
    frame's escape arguments `args` (its iterations come from its values and their places), and
    for lane efficiency `slots`, the lane-iterations per pixel where the frame lies."""
    name: str
    scale: Scale
    args: tuple
    slots: object = None


def scale_for(name: str, max_iter: int, layer_max: int = 0) -> Scale:
    """The colour scale of overlay `name`: iterations on a log scale up to max_iter, lane
    efficiency 0-100 %, deep step counts on a log scale up to the frame's largest."""
    if name == ITERATIONS:
        return Scale(0.0, float(max(1, max_iter)), True, UNITS[name])
    if name == LANES:
        return Scale(0.0, 100.0, False, UNITS[name])
    if name == REDONE:      # 2: the pixels float64 could not place, left marked (exact_redo.py)
        return Scale(0.0, 2.0, False, UNITS[name])
    return Scale(0.0, float(max(1, layer_max)), True, UNITS[name])


@dataclass(frozen=True)
class Counting:
    """What a frame counts beside its picture, decided once from its request: `name` the overlay
    drawn in place of the picture ("" none), `keep` the overlays whose layers come home, `why`
    the overlays without meaning for the frame (name -> reason, OverlayInfo.unavailable), and
    `scale` the drawn overlay's colour scale where it is known before the pass (float64 frames;
    a deep frame's rests on its largest count)."""
    name: str
    keep: tuple
    why: dict
    scale: Scale | None = None

    @property
    def names(self) -> tuple:
        return tuple(self.keep) + ((self.name,) if self.name else ())

    @property
    def lanes(self) -> bool:
        """Whether the frame's escape pass counts the lane-iterations its warps issue."""
        return LANES in self.names


def counting(request, keep, deep: bool, gpu: bool, float32: bool = False,
             lanes_counted: bool = True) -> Counting | None:
    """The Counting of a frame of `request` asked to keep the layers of `keep` too, None when it
    counts nothing; ValueError naming an overlay without meaning for the frame (`lanes_counted`:
    whether a GPU frame's launch can count its lanes, gpu_target.GpuTarget.counts_lanes)."""
    name = request.overlay
    names = tuple(keep) + ((name,) if name else ())
    if not names:
        return None
    check_names(names, deep, gpu, float32, getattr(request, "formula", MANDELBROT))
    why = {n: r for n in NAMES if (r := unavailable(n, deep, gpu)) is not None}
    if gpu and not deep and not lanes_counted:
        why[LANES] = SLICED_REASON
    for n in names:
        if n in why:
            raise ValueError(f"overlay {n!r} has no meaning for this frame: {why[n]}")
    scale = scale_for(name, int(request.max_iter)) if name and not deep else None
    return Counting(name, tuple(keep), why, scale)


def lut_words() -> np.ndarray:
    """The overlay palette as LUT_SIZE uint32 RGBA words (the colour kernels' pixel format)."""
    rgba = np.array(palettes.lut(PALETTE, LUT_SIZE), dtype=np.uint8, copy=True)
    return rgba.view(np.uint32).reshape(LUT_SIZE)


def no_value_word() -> int:
    return int(np.array(NO_VALUE_RGBA, dtype=np.uint8).view(np.uint32)[0])


def shown_values(name: str, layers: np.ndarray) -> np.ndarray:
    """The layer of overlay `name` as the overlay shows it, float64 (NaN where it has no value):
    lane efficiency in % (F_ITER / F_SLOTS), else the counts themselves. `layers` are a float64
    frame's (2, H, W) or a deep frame's (5, H, W)."""
    layers = np.asarray(layers)
    if name == LANES:
        it = layers[F_ITER].astype(np.float64)
        slots = layers[F_SLOTS].astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(slots > 0, 100.0 * it / np.where(slots > 0, slots, 1.0), np.nan)
    k = DEEP_LAYER[name] if layers.shape[0] == N_DEEP_LAYERS else F_ITER
    return layers[k].astype(np.float64)


def colour_host(values: np.ndarray, scale: Scale) -> np.ndarray:
    """uint32 RGBA words (H, W) of `values` (shown_values) on `scale`: the NumPy twin of
    overlay_device's colour kernel (same formula, same LUT)."""
    v = np.asarray(values, dtype=np.float64)
    lo, hi = scale.lo, scale.hi
    with np.errstate(invalid="ignore"):
        if scale.log:
            t = np.log(1.0 + np.maximum(v - lo, 0.0)) / math.log(1.0 + (hi - lo))
        else:
            t = (v - lo) / (hi - lo)
        t = np.clip(t, 0.0, 1.0)
        idx = (np.nan_to_num(t) * (LUT_SIZE - 1) + 0.5).astype(np.int64)
    out = lut_words()[idx]
    out[np.isnan(v)] = no_value_word()
    return out


# ---------------------------------------------------------------- what a frame carries

@dataclass
class OverlayInfo:
    """Frame.meta["overlay"] of a frame drawn with overlays: `name` the one drawn instead of the
    picture ("" none), its `scale`, the frame's `totals` (int counts by key) and why overlays have
    no meaning here (`unavailable`: name -> reason). `layers`: name -> host array (shown_values)
    when the caller asked for them (exports), else empty."""
    name: str
    scale: Scale | None
    totals: dict
    unavailable: dict = field(default_factory=dict)
    layers: dict = field(default_factory=dict)

    def text(self) -> str:
        return totals_text(self.name, self.totals)

    def label(self, label: str) -> str:
        """A frame's timing label with these totals after it (the timing panel's title)."""
        text = self.text()
        return f"{label} · {text}" if text else label


def _g(x: float) -> str:
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.3g} {unit}"
    return f"{x:.0f}"


def totals_text(name: str, t: dict) -> str:
    """The frame's totals for overlay `name` in one line (the timing panel's), '' without any."""
    px = max(1, int(t.get("pixels", 1)))
    if name == LANES and t.get("lane_iterations"):
        useful, lanes = t["useful"], t["lane_iterations"]
        return (f"lane efficiency {100.0 * useful / lanes:.0f} % ({_g(useful)} useful of "
                f"{_g(lanes)} lane-iterations issued)")
    if name == ITERATIONS and "useful" in t:
        return f"iterations {_g(t['useful'])} in all ({t['useful'] / px:.0f} per pixel)"
    if name == BLA and "bla_steps" in t:
        return (f"BLA steps {_g(t['bla_steps'])} ({t['bla_steps'] / px:.1f} per pixel), "
                f"skipping {_g(t.get('bla_iterations', 0))} iterations")
    if name == STEPS and "perturbation_steps" in t:
        return (f"perturbation steps {_g(t['perturbation_steps'])} "
                f"({t['perturbation_steps'] / px:.0f} per pixel)")
    if name == REBASES and "rebases" in t:
        return f"rebases {_g(t['rebases'])} ({t['rebases'] / px:.2f} per pixel)"
    if name == REDONE and "redone_pixels" in t:
        # of those, the ones float64 could not place: proved in double-double, iterated in MPFR,
        # or marked (issue 34)
        proved = f"{t['dd_pixels']:,} proved in double-double, " if t.get("dd_pixels") else ""
        exact = (f"; {proved}{t.get('exact_pixels', 0):,} exact in MPFR, "
                 f"{t.get('marked_pixels', 0):,} marked"
                 if t.get("exact_pixels") or t.get("marked_pixels") or proved else "")
        return (f"redone pixels {t['redone_pixels']:,} "
                f"({100.0 * t['redone_pixels'] / px:.3f} % of the frame){exact}")
    return ""

