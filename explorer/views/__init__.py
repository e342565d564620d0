"""The views' classes, in the tab order of services.views (the one list of view ids and titles)."""
from services.views import VIEW_IDS
from services.views import VIEWS as _IDS_AND_TITLES

from .distance import DistanceView
from .mandelbrot import MandelbrotView
from .random import RandomView
from .throughput import ThroughputView

_CLASSES = {"mandelbrot": MandelbrotView, "distance": DistanceView, "throughput": ThroughputView,
            "random": RandomView}
# (view id, tab title, class)
VIEWS = tuple((view_id, title, _CLASSES[view_id]) for view_id, title in _IDS_AND_TITLES)

__all__ = ["VIEWS", "VIEW_IDS"]
