"""The GPU launch variants' settings that the renderer takes as defaults, apart from the kernels
(escape_variants.py), which imports numba.cuda: a CPU frame never does.
"""

# Persistent launch: pixels a thread takes at a time (fewer atomics on the shared counter against
# a finer share-out at the frame's end); iterations between a thread's checks for a finished pixel
# (a pixel that escapes early in a chunk idles its lane for the rest of it; a short chunk pays the
# warp's bookkeeping more often). Chosen by `--bench --only mandelbrot-divergence`: see
# docs/notes/performance-history.md.
GRAB = 1
CHUNK = 32
# the sorted launch's sample stride, probe length and reach (Renderer's defaults), chosen by
# `--bench --only mandelbrot-divergence`: see docs/notes/performance-history.md
SAMPLE = 4
PROBE = 256
REACH = 2
