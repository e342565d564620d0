"""The per-pixel loops: float64/float32 escape and the deep perturbation and extended loops."""
