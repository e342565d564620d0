"""The views, in tab order: (view id, tab title, module, class). A view whose module is absent
shows a placeholder, so each view can land on its own."""
VIEWS = (
    ("mandelbrot", "Mandelbrot zoom", "explorer.views.mandelbrot", "MandelbrotView"),
    ("distance", "Distance heatmap", "explorer.views.distance", "DistanceView"),
    ("throughput", "Vector-op throughput", "explorer.views.throughput", "ThroughputView"),
)
VIEW_IDS = tuple(v[0] for v in VIEWS)
