"""Pixels float64 deltas cannot place, iterated again: MPFR, double-double, exact yardstick."""
