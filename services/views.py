"""The app's views, in tab order: (view id, title). The one definition: `--view` takes these ids
and the window (explorer/views) builds its tabs from them."""
from __future__ import annotations

VIEWS = (
    ("mandelbrot", "Mandelbrot zoom"),
    ("distance", "Distance heatmap"),
    ("throughput", "Vector-op throughput"),
    ("random", "Random numbers & reductions"),
)
VIEW_IDS = tuple(view_id for view_id, _ in VIEWS)
