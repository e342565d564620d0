"""The accuracy guard of both per-pixel loops: its constants, compiled into the loops.

A BLA step drops δ², up to ε of the step's linear part (bla.py), and the pixel's later steps carry
that error along like any other change of δ: for most pixels it stays far below |z|, but a pixel
whose count hangs on a tiny move of c (ill-conditioned: seahorse valley just past float64 has a
few per cent of them, where 1e-9 of a pixel moves the count by tens to hundreds of iterations)
ends on the wrong count. So each pixel also carries a bound e on the error of its z: a BLA step adds
2ε'·max(|Re δ|, |Im δ|) to it and multiplies what was there by |A|, a perturbation step multiplies it
by |2z| (the step's derivative, so the bound follows the pixel through its passes near 0; gathered
as a product of |2z|^2 and square-rooted once in a while, see G_HI). If at the end e > |z|, the
count is doubtful and the pixel is done again from the start with the radii tested against
|δ|·2^REDO_SHIFT (ε' = ε·2^-REDO_SHIFT), and if still doubtful, against |δ|·2^LAST_SHIFT (ε' = 2^-64
by default: the dropped δ² is then below the round-off of the step's linear part, so the pass is as
exact as plain perturbation, while it still skips the pixel's long linear stretch; a pass with no
BLA at all would, on the GPU, leave one thread iterating a deep pixel's 10^4-10^6 steps one by one
while the frame waits for it). docs/PERFORMANCE.md, "The accuracy guard" (the frames: docs/notes/
performance-history.md, "Deep zoom"): the guard catches every pixel that BLA got wrong in the
seahorse-valley frames.

The last pass's bound also stands for round-off, which the bound does not follow step by step: its
BLA steps add at least ROUND_INJ·max(|Re δ|, |Im δ|). A pixel still doubtful then is one float64
deltas cannot place at all (its count moves with the last bits of δ and δc: KF's 5e227 has ~2 % of
them, wrong by hundreds of iterations in plain perturbation too): the loops hand its value back as
-1 - value (`untrusted`), and the renderer marks it or, when asked, iterates it again (exact_redo.py:
double-double with a sound bound, then MPFR). The guard is not loose there: nearly all the pixels
it hands back at 5e227 are off MPFR's count by more than one, so no tighter criterion would spare
many (docs/PERFORMANCE.md, "Exact where doubles fail").

The loops import the constants and compile them in: tools/deep_guard_sweep.py, which tries other
settings, sets them in each loop module before the loops first compile.
"""
from __future__ import annotations

# a doubtful pixel is done again with radii tested against |δ|·2^REDO_SHIFT, then |δ|·2^LAST_SHIFT,
# whose result stands
REDO_SHIFT = 16
LAST_SHIFT = 2 * REDO_SHIFT
# doubtful = error bound e with e^2 > ERR_TOL2·|z|^2 at the end; the pixels BLA got wrong had e far
# above |z| (docs/PERFORMANCE.md, "The accuracy guard"), so 1 leaves a margin (a lower tolerance
# only redoes more pixels)
ERR_TOL2 = 1.0
# while δ is a double the bound's growth |2z|^2 is multiplied up in g2 and folded into e (one sqrt)
# only at BLA steps, at the end, or when g2 leaves [G_LO, G_HI]: a sqrt per step costs the GPU
# dearly (a factor is at most 4·BAILOUT2 = 2^18, so g2 cannot overflow between two checks)
G_HI = 2.0 ** 600
G_LO = 2.0 ** -600
# the last pass's BLA steps add at least this much of |δ| to the bound: a perturbation step's
# round-off is ~2^-53 of each of its operations, and ~10 of them run between two BLA steps. On KF's
# 5e227 at 16x16 the pixels float64 gets wrong end with bounds 2^4..2^13 times |z| at this setting,
# the right ones at most 2^-0.8 (tools/deep_audit.py; docs/PERFORMANCE.md, "Exact where doubles fail")
ROUND_INJ = 2.0 ** -51
# the Burning Ship's perturbation steps add this much of their terms' size to the bound, every
# step: its folds are not conformal, so round-off can outgrow δ there (a place in its chaotic sea
# needs more bits than the frame's spacing asks for), and a pixel whose count hangs on it must be
# marked, not drawn wrong. A step's terms, 2|Z||δ| and |δc|, each carry ~2^-53 per operation
ROUND_STEP = 2.0 ** -49


def untrusted(value: float) -> float:
    """How the loops hand back a pixel their last pass still doubts: -1 - value, below 0 where
    no count is (exact_redo.trusted undoes it)."""
    return -1.0 - value
