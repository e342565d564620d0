"""What the deep loops' compiled code takes, by name, and the one place it becomes positional.

Every loop's code (targets.LoopCode) takes the frame's pixel grid and then its own arrays:
    cpu_rows(values, stats, row0, nrows, stride, *grid, *loop)
    gpu_first(values, counters, slot, p0, p1, dynamic, *grid, *loop, stats, redo, nredo)
    gpu_redo(values, counters, slot, *grid, *loop, stats, redo, nredo)
with `grid` a PixelGrid's fields and `loop` those of the loop's record (PerturbationArgs or
ExtendedArgs, then LayerArgs for a loop's overlay twin), in their declaration order
(`positional`). The arrays are wherever the code reads them: host arrays for the CPU, device
arrays for the GPU.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class PixelGrid:
    """δc of pixel (row, col) is (d0 + (col + 0.5 - half_w) * step - i (row + 0.5 - half_h) * step)
    * 2**cexp: the frame centre's offset from the reference and the pixel spacing, as mantissas.

    half_w < 0 marks a log-polar grid (an exponential-map keyframe, kernels/mandelbrot/keyframes/expmap.py):
    δc = (d0 + step·2^((col + 0.5)/W)·e^(iθ)) * 2**cexp with W = -half_w columns per octave and
    θ = (row + 0.5 - half_h)·ln2/W (as fine around as along the radius; -half_h: the first row,
    as a band's), so `step` is the inner radius."""
    d0r: float
    d0i: float
    step: float
    cexp: int
    half_w: float
    half_h: float



@dataclass(frozen=True)
class PerturbationArgs:
    """The perturbation loop's arrays (perturbation_loop.flat_tables: the orbit with the single
    steps' radii, the table's entries as doubles; the table's levels) and settings."""
    zo: object
    bt: object
    levels: object
    eps: float          # ε of the table's radii (the error bound adds it per BLA step)
    max_iter: int


@dataclass(frozen=True)
class ExtendedArgs:
    """The extended loop's arrays (the reference orbit and its exponents, the BLA table, its
    exponents and levels) and settings; perturbation_loop.KMIN_CODE takes the same."""
    orbit: object
    oexp: object
    tab: object
    tabe: object
    levels: object
    kmin: int           # the table's shortest level: steps of 2^kmin iterations
    eps: float
    max_iter: int


@dataclass(frozen=True)
class LayerArgs:
    """The deep overlays' layers (5, H, W) int32 (overlays.py: iteration, perturbation steps, BLA
    steps, rebases, redone: 1, or 2 where the pixel was handed back for an exact redo), the last
    argument before the stats of a loop's `layers` twin."""
    layers: object


def with_layers(code, records: tuple, layers):
    """(code, records) of a frame's loop with overlays: `code.layers` (targets.LoopCode; the same
    walks, so the same values and stats, each pixel's counts also stored) and the records with
    `layers` appended. ValueError for a loop without that twin (perturbation_loop.KMIN_CODE)."""
    if code.layers is None:
        raise ValueError("overlays need the perturbation or extended loop (a BLA table with its "
                         "single steps, kmin = 0)")
    return code.layers, tuple(records) + (LayerArgs(layers),)


def positional(*records) -> tuple:
    """The fields of `records` (PixelGrid, then the loop's record) in order, as the code takes
    them; ints and floats as the compiled signatures expect."""
    out = []
    for rec in records:
        for f in dataclasses.fields(rec):
            v = getattr(rec, f.name)
            out.append(int(v) if f.type == "int" else float(v) if f.type == "float" else v)
    return tuple(out)
