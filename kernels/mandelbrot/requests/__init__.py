"""What a frame is asked for: formulas, the frozen requests, number format and type; no numba."""
