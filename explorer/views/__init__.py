"""The views' classes, in the tab order of the one list of view ids and titles (the services
layer's views module, shared with the command line)."""
from cli.views import VIEW_IDS
from cli.views import VIEWS as _IDS_AND_TITLES

from .distance import DistanceView
from .mandelbrot import MandelbrotView
from .random import RandomView
from .throughput import ThroughputView

_CLASSES = {"mandelbrot": MandelbrotView, "distance": DistanceView, "throughput": ThroughputView,
            "random": RandomView}
# (view id, tab title, class)
VIEWS = tuple((view_id, title, _CLASSES[view_id]) for view_id, title in _IDS_AND_TITLES)

__all__ = ["VIEWS", "VIEW_IDS"]
