"""Column layouts shared by the BLA table (bla.py), the per-pixel loops and the renderer: the
table's columns, the stats the kernels count, and the empty table of frames without BLA."""
from __future__ import annotations

import math

import numpy as np

# stats columns the kernels count: perturbation steps, BLA steps, iterations the BLA steps
# skipped, rebases (steps of every pass of a pixel done again included), pixels done again
STAT_STEPS, STAT_BLA, STAT_BLA_ITERS, STAT_REBASES, STAT_REDONE = range(5)
N_STATS = 5

# table columns (bla.py): A mantissa, B mantissa, R/sqrt2 mantissa, A as double, R/sqrt2 as double,
# |A| mantissa (exponent E_A), |A| as double
T_AR, T_AI, T_BR, T_BI, T_RM, T_ADR, T_ADI, T_RD, T_AM, T_AD = range(10)
N_TAB = 10
# exponent columns: A, B, R/sqrt2
E_A, E_B, E_R = range(3)


def empty_table():
    """A table with no levels (BLA off): the loops then take perturbation steps only."""
    return (np.zeros((1, N_TAB), dtype=np.float64), np.zeros((1, 3), dtype=np.int32),
            np.zeros((0, 2), dtype=np.int64))


def stats_dict(stats) -> dict:
    """The kernels' summed stats (N_STATS numbers) by name, as DeepResult.stats has them."""
    st = [int(x) for x in np.asarray(stats).reshape(-1)[:N_STATS]]
    return {"perturbation_steps": st[STAT_STEPS], "bla_steps": st[STAT_BLA],
            "bla_iterations": st[STAT_BLA_ITERS], "rebases": st[STAT_REBASES],
            "redone_pixels": st[STAT_REDONE]}


def iteration_of(v, max_iter):
    """The escape iteration of smooth value v (escape.py's convention), max_iter inside; a
    value the loop handed back for an exact redo (guard.untrusted) read as the loop's own: the
    deep overlays' iteration layer."""
    if v < 0:
        v = -1.0 - v
    if v >= max_iter:
        return max_iter
    return int(math.floor(v)) + 1
