"""What a distance frame is asked for, and the geometry around it (no numba): the frozen request,
units and strategies, the haversine on the host, ring polylines and the colour scale's top."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .. import palettes
from ..backend import Backend

EARTH_RADIUS_KM = 6371.0088          # IUGG mean Earth radius
UNITS = ("km", "nm", "mi")
UNIT_KM = {"km": 1.0, "nm": 1.852, "mi": 1.609344}
UNIT_NAMES = {"km": "kilometres", "nm": "nautical miles", "mi": "statute miles"}
STRATEGIES = ("host-mesh", "broadcast", "device-mesh")
DEFAULT_STRATEGY = "device-mesh"
STRATEGY_HELP = {
    "host-mesh": "Builds latitude, longitude and the reference point as four full-size arrays on "
                 "the host and copies all four to the GPU every frame (32 bytes per pixel in).",
    "broadcast": "A GPU ufunc (@vectorize target='cuda') gets the reference point as scalars; the "
                 "latitude and longitude arrays are still built on the host and copied in "
                 "(16 bytes per pixel in).",
    "device-mesh": "Each GPU thread computes its own pixel's coordinates, the distance and the "
                   "colour in one kernel: nothing is copied in, only the RGBA frame comes back.",
}
DEFAULT_PALETTE = "viridis"
WORLD = (-90.0, 90.0, -180.0, 180.0)
LONDON = (51.5074, -0.1278)
# the seed's 1000×1000 mesh and point (the bench frame)
SEED_BOUNDS = (29.0, 31.0, 99.0, 101.0)
SEED_REF = (30.0, 101.0)
HALF_CIRCUMFERENCE_KM = math.pi * EARTH_RADIUS_KM
MAX_PIXELS = 2**28                    # 1 GiB of RGBA: beyond this a picture makes no sense here
LUT_SIZE = 1024
_DEG = math.pi / 180.0


class StrategyUnavailable(ValueError):
    """The chosen strategy cannot run on this backend; str(exc) says why and what to pick."""


def _finite(x) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class DistanceRequest:
    bounds: tuple = WORLD                 # (lat0, lat1, lon0, lon1) degrees, lat0 < lat1, lon0 < lon1
    ref: tuple = LONDON                   # (lat, lon) degrees
    size: tuple = (1024, 512)             # (W, H) pixels
    unit: str = "km"
    strategy: str = DEFAULT_STRATEGY
    palette: str = DEFAULT_PALETTE
    want_values: bool = False
    # where it runs: the scheduler reads it; a Renderer, made for one backend, ignores it
    backend: Backend | None = None

    def validate(self) -> "DistanceRequest":
        """Raise ValueError in plain words when the request cannot be rendered."""
        if len(self.bounds) != 4:
            raise ValueError("bounds need four numbers: LAT0,LAT1,LON0,LON1")
        lat0, lat1, lon0, lon1 = self.bounds
        if not all(_finite(v) for v in self.bounds):
            raise ValueError(f"bounds must be finite numbers, got {self.bounds}")
        for name, v in (("lat0", lat0), ("lat1", lat1)):
            if not -90.0 <= v <= 90.0:
                raise ValueError(f"bounds {name} = {v} is outside the valid latitudes [-90, 90]")
        if not lat0 < lat1:
            raise ValueError(f"bounds need lat0 < lat1 (got {lat0} and {lat1}): the southern edge "
                             "comes first and the box cannot have zero height")
        if not lon0 < lon1:
            raise ValueError(f"bounds need lon0 < lon1 (got {lon0} and {lon1}): the box cannot have "
                             "zero width; to cross the antimeridian let lon1 exceed 180")
        if len(self.ref) != 2 or not all(_finite(v) for v in self.ref):
            raise ValueError(f"the reference point must be two finite numbers LAT,LON, got {self.ref}")
        if not -90.0 <= self.ref[0] <= 90.0:
            raise ValueError(f"reference latitude {self.ref[0]} is outside the valid latitudes [-90, 90]")
        if len(self.size) != 2 or not all(isinstance(v, (int, np.integer)) for v in self.size):
            raise ValueError(f"size must be two whole numbers W,H, got {self.size}")
        w, h = self.size
        if w < 1 or h < 1 or w * h < 2:
            raise ValueError(f"a {w}×{h} grid has fewer than 2 points; use at least 2 pixels")
        if w * h > MAX_PIXELS:
            raise ValueError(f"a {w}×{h} grid is too large (over {MAX_PIXELS:,} pixels)")
        if self.unit not in UNITS:
            raise ValueError(f"unknown unit {self.unit!r}; choose one of: {', '.join(UNITS)}")
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {self.strategy!r}; choose one of: {', '.join(STRATEGIES)}")
        palettes.lut(self.palette, LUT_SIZE)  # raises ValueError naming valid palettes
        return self

    @property
    def radius(self) -> float:
        """Earth's mean radius in the request's unit."""
        return EARTH_RADIUS_KM / UNIT_KM[self.unit]


# ---- plain NumPy / host maths (references for tests, readouts, rings) --------------------------
def distance_km(lat1, lon1, lat2, lon2):
    """Great-circle distance in km between points given in degrees (NumPy scalars or arrays)."""
    p1 = np.asarray(lat1, dtype=np.float64) * _DEG
    p2 = np.asarray(lat2, dtype=np.float64) * _DEG
    dl = np.asarray(lon2, dtype=np.float64) * _DEG - np.asarray(lon1, dtype=np.float64) * _DEG
    a = np.sin(0.5 * (p2 - p1)) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(0.5 * dl) ** 2
    a = np.clip(a, 0.0, 1.0)
    d = 2.0 * EARTH_RADIUS_KM * np.arctan2(np.sqrt(a), np.sqrt(1.0 - a))
    return float(d) if np.ndim(d) == 0 else d


def grid_axes(request: DistanceRequest) -> tuple[np.ndarray, np.ndarray]:
    """(lats per row, north first; lons per column) at pixel centres."""
    lat0, lat1, lon0, lon1 = request.bounds
    w, h = request.size
    lats = lat1 - (np.arange(h) + 0.5) * ((lat1 - lat0) / h)
    lons = lon0 + (np.arange(w) + 0.5) * ((lon1 - lon0) / w)
    return lats, lons


def reference_grid(request: DistanceRequest) -> np.ndarray:
    """The slow, obvious answer: (H, W) float64 distances in the request's unit."""
    lats, lons = grid_axes(request)
    lat_m, lon_m = np.meshgrid(lats, lons, indexing="ij")
    return distance_km(request.ref[0], request.ref[1], lat_m, lon_m) / UNIT_KM[request.unit]


def pixel_lat_lon(request: DistanceRequest, row: int, col: int) -> tuple[float, float]:
    lat0, lat1, lon0, lon1 = request.bounds
    w, h = request.size
    return (lat1 - (row + 0.5) * ((lat1 - lat0) / h), lon0 + (col + 0.5) * ((lon1 - lon0) / w))


def point_value(request: DistanceRequest, row: int, col: int) -> float:
    """One pixel's distance in the request's unit, computed on the host (no device read-back)."""
    lat, lon = pixel_lat_lon(request, row, col)
    return distance_km(request.ref[0], request.ref[1], lat, lon) / UNIT_KM[request.unit]


def ring_polyline(ref_lat: float, ref_lon: float, radius_km: float, n: int = 256):
    """(lats, lons) of n points at great-circle distance radius_km from the reference, closed
    (first point = last). Longitudes stay within ±180° of ref_lon, continuous except where the
    ring encloses a pole."""
    phi1 = ref_lat * _DEG
    delta = radius_km / EARTH_RADIUS_KM
    theta = np.linspace(0.0, 2.0 * np.pi, n)
    sin_phi2 = np.clip(np.sin(phi1) * np.cos(delta) + np.cos(phi1) * np.sin(delta) * np.cos(theta), -1, 1)
    phi2 = np.arcsin(sin_phi2)
    dlon = np.arctan2(np.sin(theta) * np.sin(delta) * np.cos(phi1),
                      np.cos(delta) - np.sin(phi1) * sin_phi2)
    return np.degrees(phi2), ref_lon + np.degrees(dlon)


def _edge_points(bounds, per_edge: int = 33):
    lat0, lat1, lon0, lon1 = bounds
    t = np.linspace(0.0, 1.0, per_edge)
    lats = np.concatenate([np.full(per_edge, lat0), np.full(per_edge, lat1),
                           lat0 + t * (lat1 - lat0), lat0 + t * (lat1 - lat0)])
    lons = np.concatenate([lon0 + t * (lon1 - lon0), lon0 + t * (lon1 - lon0),
                           np.full(per_edge, lon0), np.full(per_edge, lon1)])
    return lats, lons


def _holds_antipodes(bounds) -> bool:
    lat0, lat1, lon0, lon1 = bounds
    return lon1 - lon0 >= 180.0 and lat0 <= 0.0 <= lat1


@functools.lru_cache(maxsize=256)
def region_diameter_km(bounds: tuple) -> float:
    """Largest distance between two points of the box. The farthest pair lies on the boundary
    unless the box holds a point and its antipode, so sampling the edges finds it."""
    if _holds_antipodes(bounds):
        return HALF_CIRCUMFERENCE_KM
    lats, lons = _edge_points(bounds)
    return float(distance_km(lats[:, None], lons[:, None], lats[None, :], lons[None, :]).max())


@functools.lru_cache(maxsize=256)
def colour_max_km(bounds: tuple, ref: tuple) -> float:
    """Top of the colour scale: the largest distance any reference inside the box could see, so
    the colours stay put while the user moves the point; widened when the point is outside."""
    vmax = region_diameter_km(bounds)
    lat0, lat1, lon0, lon1 = bounds
    inside = lat0 <= ref[0] <= lat1 and (lon0 <= ref[1] <= lon1 or lon1 - lon0 >= 360.0)
    if not inside and vmax < HALF_CIRCUMFERENCE_KM:
        anti_lat, anti_lon = -ref[0], ref[1] + 180.0
        wrapped = lon0 + (anti_lon - lon0) % 360.0
        if lat0 <= anti_lat <= lat1 and wrapped <= lon1:
            return HALF_CIRCUMFERENCE_KM
        lats, lons = _edge_points(bounds)
        vmax = max(vmax, float(distance_km(ref[0], ref[1], lats, lons).max()))
    return max(vmax, 1e-9)


