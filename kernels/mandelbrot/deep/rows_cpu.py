"""The deep loops' row body on the CPU, written once (issue 36): a loop gives its pixel function
and the tuple of its own arguments; `counting` (a constant where the row is inlined) adds the
deep overlays' layers (loop_args.with_layers). The parallel loops around it, which claim rows
and time themselves (cpu_chunks), are the loops' own (perturbation_loop.py, extended_loop.py).

A pixel function: pixel(r, c, d0r, d0i, step, cexp, half_w, half_h, loop) -> (value,
perturbation steps, BLA steps, BLA iterations, rebases, redone), the row's stats being their sums.
"""
from __future__ import annotations

from numba import njit

from ..formula_twins import named
from .layout import iteration_of as _iteration_of

# the deep overlays' iteration layer (one definition: layout.iteration_of, the GPU's too)
iteration_of = njit(inline="always")(_iteration_of)


def make_row(pixel, suffix=""):
    """Row r of a frame with `pixel`: values[r] and stats[r] (counts summed over the row); with
    `counting` each pixel's counts into layers[:, r, c] too, redone = 2 where the pixel was
    handed back for an exact redo (exact_redo.py). `suffix`: targets.named's, for a formula's."""
    @named(njit(inline="always"), suffix)
    def row(values, stats, r, d0r, d0i, step, cexp, half_w, half_h, loop, max_iter, layers,
            counting):
        s0 = 0
        s1 = 0
        s2 = 0
        s3 = 0
        s4 = 0
        for c in range(values.shape[1]):
            v, a, b, sk, rb, rd = pixel(r, c, d0r, d0i, step, cexp, half_w, half_h, loop)
            values[r, c] = v
            if counting:
                if v < 0:
                    rd = 2
                layers[0, r, c] = iteration_of(v, max_iter)
                layers[1, r, c] = a
                layers[2, r, c] = b
                layers[3, r, c] = rb
                layers[4, r, c] = rd
            s0 += a
            s1 += b
            s2 += sk
            s3 += rb
            s4 += rd
        stats[r, 0] = s0
        stats[r, 1] = s1
        stats[r, 2] = s2
        stats[r, 3] = s3
        stats[r, 4] = s4
    return row
