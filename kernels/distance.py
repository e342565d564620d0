"""Great-circle distance from a reference point to every pixel of a lat/lon grid, coloured on the
device: the distance heatmap view's compute, its CLI entry points and its benchmarks.

It retells a Q&A in three steps (the `strategy`): `host-mesh` builds the coordinate arrays on the
host and copies four of them in every frame, `broadcast` passes the reference point as scalars to
a GPU ufunc (the two mesh arrays still copied), `device-mesh` computes each pixel's coordinates in
the kernel, so nothing is copied in and only the finished RGBA frame comes back. On the CPU the
three are one computation (the CPU twin), so the strategy only matters on the GPU.

Distances use the haversine in its atan2 form, 2·R·atan2(√a, √(1−a)) with a clamped to [0, 1],
which stays accurate at the poles, at antipodes and across the antimeridian.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from . import palettes
from .bench import Workload, result, time_runs
from .buffers import BufferPool, copy_frame_to_host, ensure_device_fits
from .launch import PreparedKernel
from .frame import Frame
from .timing import JobTimer

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
HALF_CIRCUMFERENCE_KM = math.pi * EARTH_RADIUS_KM
MAX_PIXELS = 2**28                    # 1 GiB of RGBA: beyond this a picture makes no sense here
LUT_SIZE = 1024
CLI_OPTIONS = ("bounds", "ref", "unit", "strategy", "palette")
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


# ---- the renderer ----------------------------------------------------------------------------------
class Renderer:
    """Renders DistanceRequests on one backend, reusing its buffers from frame to frame.
    Use from one thread only (the render worker)."""

    def __init__(self, backend):
        self.backend = backend
        self.pool = BufferPool(backend)
        self._stream = None
        self._device_luts: dict[str, object] = {}
        self._aranges: dict[int, np.ndarray] = {}
        self._fits_checked: set = set()
        self._dummy_values = np.empty((1, 1), dtype=np.float64)
        self._launchers: dict = {}  # (strategy, blocks) -> PreparedKernel
        self._ready: set = set()    # kernels known compiled: typing 16 arguments per frame costs ~0.1 ms

    def _ensure_compiled(self, timer, dispatcher, args):
        # each kernel is only ever called with one set of argument types
        if dispatcher in self._ready:
            return
        from . import distance_kernels as dk
        if not dk.compiled(dispatcher, args):
            with timer.phase("compile"):
                dk.compile_for(dispatcher, args)
        self._ready.add(dispatcher)

    # -- shared set-up --
    def _params(self, req: DistanceRequest):
        lat0, lat1, lon0, lon1 = (float(v) for v in req.bounds)
        w, h = req.size
        ref_lat_r = float(req.ref[0]) * _DEG
        vmax = colour_max_km(tuple(float(v) for v in req.bounds), tuple(float(v) for v in req.ref))
        vmax /= UNIT_KM[req.unit]
        top = float(LUT_SIZE - 1)
        return dict(w=int(w), h=int(h), n=int(w) * int(h), lat1=lat1, dlat=(lat1 - lat0) / h,
                    lon0=lon0, dlon=(lon1 - lon0) / w, ref_lat_r=ref_lat_r,
                    ref_lon_r=float(req.ref[1]) * _DEG, ref_lat=float(req.ref[0]),
                    ref_lon=float(req.ref[1]), cos_ref=math.cos(ref_lat_r),
                    radius=req.radius, vmax=vmax, top=top, cscale=top / vmax)

    def _frame(self, req, rgba, timings, values, p, strategy_note):
        meta = {"vmax": p["vmax"], "unit": req.unit, "unit_name": UNIT_NAMES[req.unit],
                "strategy": req.strategy if self.backend.is_gpu else "cpu-twin",
                "strategy_note": strategy_note, "bounds": req.bounds, "ref": req.ref}
        return Frame(rgba=rgba, timings=timings, request=req, values=values,
                     fetch_value=functools.partial(point_value, req), meta=meta)

    def render(self, request: DistanceRequest, cancel=None) -> Frame:
        request.validate()
        if cancel is not None:
            cancel.check()
        if self.backend.is_gpu:
            return self._render_gpu(request)
        return self._render_cpu(request)

    # -- CPU twin --
    def _render_cpu(self, req: DistanceRequest) -> Frame:
        from . import distance_kernels as dk
        p = self._params(req)
        w, h = p["w"], p["h"]
        timer = JobTimer(self.backend, None, f"distance {w}×{h} cpu")
        lut32 = palettes.lut(req.palette, LUT_SIZE).view(np.uint32).reshape(-1)
        rgba = self.pool.host("rgba", (h, w, 4), np.uint8, ring=3)
        values = (self.pool.host("values", (h, w), np.float64, ring=3) if req.want_values
                  else self._dummy_values)
        lon_terms = self.pool.host("lon_terms", (w,), np.float64, pinned=False)
        args = (rgba.view(np.uint32).reshape(h, w), values, bool(req.want_values), lon_terms,
                p["lat1"], p["dlat"], p["lon0"], p["dlon"], p["ref_lat_r"], p["ref_lon_r"],
                p["cos_ref"], p["radius"], p["cscale"], p["top"], lut32)
        self._ensure_compiled(timer, dk.cpu_render, args)
        with timer.phase("kernel"):
            dk.cpu_render(*args)
        note = "on the CPU the three strategies are one computation (nothing crosses a bus)"
        return self._frame(req, rgba, timer.finish(), values if req.want_values else None, p, note)

    # -- GPU --
    def _device_lut(self, name: str, timer, stream):
        d = self._device_luts.get(name)
        if d is None:
            from numba import cuda
            host = np.ascontiguousarray(palettes.lut(name, LUT_SIZE)).view(np.uint32).reshape(-1)
            with timer.phase("h2d", gpu=True, nbytes=host.nbytes):
                d = cuda.to_device(host, stream=stream)
            self._device_luts[name] = d
        return d

    def _arange(self, n: int) -> np.ndarray:
        a = self._aranges.get(n)
        if a is None:
            a = self._aranges[n] = np.arange(n, dtype=np.float64)
        return a

    def _check_fits(self, req: DistanceRequest, n: int):
        per_pixel = {"device-mesh": 4, "broadcast": 2 * 8 + 8 + 4, "host-mesh": 4 * 8 + 8 + 4}
        nbytes = n * (per_pixel[req.strategy] + (8 if req.want_values else 0))
        key = (req.strategy, n, req.want_values)
        if key not in self._fits_checked:
            w, h = req.size
            ensure_device_fits(nbytes, what=f"a {w}×{h} distance grid with the {req.strategy} strategy")
            self._fits_checked.add(key)

    def _host_mesh(self, p, with_ref: bool, timer):
        """Fill the pinned mesh arrays in place: what versions A and B of the seed pay for."""
        h, w, n = p["h"], p["w"], p["n"]
        with timer.phase("host"):
            lat_rows = self.pool.host("lat_rows", (h,), np.float64, pinned=False)
            lon_cols = self.pool.host("lon_cols", (w,), np.float64, pinned=False)
            np.add(self._arange(h), 0.5, out=lat_rows)
            lat_rows *= -p["dlat"]
            lat_rows += p["lat1"]
            np.add(self._arange(w), 0.5, out=lon_cols)
            lon_cols *= p["dlon"]
            lon_cols += p["lon0"]
            lat = self.pool.host("lat_mesh", (n,), np.float64)
            lon = self.pool.host("lon_mesh", (n,), np.float64)
            lat.reshape(h, w)[...] = lat_rows[:, None]
            lon.reshape(h, w)[...] = lon_cols[None, :]
            arrays = [lat, lon]
            if with_ref:
                rlat = self.pool.host("ref_lat_mesh", (n,), np.float64)
                rlon = self.pool.host("ref_lon_mesh", (n,), np.float64)
                rlat.fill(p["ref_lat"])
                rlon.fill(p["ref_lon"])
                arrays += [rlat, rlon]
        return arrays

    def _upload(self, names, host_arrays, timer, stream):
        out = []
        for name, host in zip(names, host_arrays):
            dev = self.pool.device(name, host.shape, host.dtype, stream=stream)
            with timer.phase("h2d", gpu=True, nbytes=host.nbytes):
                dev.copy_to_device(host, stream=stream)
            out.append(dev)
        return out

    def _render_gpu(self, req: DistanceRequest) -> Frame:
        from numba import cuda
        from . import distance_kernels as dk
        if req.strategy == "broadcast" and self.backend.simulated:
            raise StrategyUnavailable("the broadcast strategy needs a real GPU: numba's CUDA simulator "
                               "cannot build @vectorize(target='cuda') ufuncs; choose another strategy")
        p = self._params(req)
        w, h, n = p["w"], p["h"], p["n"]
        self._check_fits(req, n)
        if self._stream is None:
            self._stream = cuda.stream()
        stream = self._stream
        timer = JobTimer(self.backend, stream, f"distance {w}×{h} {req.strategy}")
        lut = self._device_lut(req.palette, timer, stream)
        rgba_d = self.pool.device("rgba", (n,), np.uint32, stream=stream)
        blocks, tpb = dk.blocks_for(n), dk.THREADS_PER_BLOCK
        values_d = None

        if req.strategy == "device-mesh":
            values_d = (self.pool.device("values", (n,), np.float64, stream=stream) if req.want_values
                        else self.pool.device("values_dummy", (1,), np.float64, stream=stream))
            args = (rgba_d, values_d, bool(req.want_values), w, n, p["lat1"], p["dlat"], p["lon0"],
                    p["dlon"], p["ref_lat_r"], p["ref_lon_r"], p["cos_ref"], p["radius"],
                    p["cscale"], p["top"], lut)
            self._ensure_compiled(timer, dk.device_mesh_kernel, args)
            launch = self._launchers.get(("device-mesh", blocks))
            if launch is None:
                launch = self._launchers[("device-mesh", blocks)] = PreparedKernel(
                    dk.device_mesh_kernel, blocks, tpb, stream)
            with timer.phase("kernel", gpu=True):
                launch(*args)
        else:
            dist_d = self.pool.device("dist", (n,), np.float64, stream=stream)
            if req.strategy == "host-mesh":
                hosts = self._host_mesh(p, True, timer)
                devs = self._upload(("lat", "lon", "ref_lat", "ref_lon"), hosts, timer, stream)
                args = (dist_d, *devs, p["radius"])
                self._ensure_compiled(timer, dk.host_mesh_kernel, args)
                with timer.phase("kernel", gpu=True):
                    dk.host_mesh_kernel[blocks, tpb, stream](*args)
            else:
                hosts = self._host_mesh(p, False, timer)
                lat_d, lon_d = self._upload(("lat", "lon"), hosts, timer, stream)
                if dk._broadcast_ufunc is None:
                    with timer.phase("compile"):
                        dk.broadcast_ufunc()
                ufunc = dk.broadcast_ufunc()
                with timer.phase("kernel", gpu=True):
                    ufunc(lat_d, lon_d, p["ref_lat"], p["ref_lon"], p["radius"], out=dist_d,
                          stream=stream)
                # numba's ufunc machinery turns each scalar into a 1-element array and copies it
                # in: 3 × 8 bytes that would otherwise go uncounted
                timer.timings.bytes["h2d"] += 3 * 8
            cargs = (rgba_d, dist_d, p["cscale"], p["top"], lut)
            self._ensure_compiled(timer, dk.colour_kernel, cargs)
            with timer.phase("kernel", gpu=True, detail="colourise"):
                dk.colour_kernel[blocks, tpb, stream](*cargs)
            if req.want_values:
                values_d = dist_d

        rgba = self.pool.host("rgba", (h, w, 4), np.uint8, ring=3)
        with timer.phase("d2h", gpu=True, nbytes=rgba.nbytes):
            copy_frame_to_host(rgba_d, rgba, stream)
        values = None
        if req.want_values:
            values = self.pool.host("values", (h, w), np.float64, ring=3)
            with timer.phase("d2h", gpu=True, nbytes=values.nbytes):
                values_d.copy_to_host(values.reshape(n), stream=stream)
        return self._frame(req, rgba, timer.finish(), values, p, STRATEGY_HELP[req.strategy])


# ---- CLI ------------------------------------------------------------------------------------------------
def _numbers(text, count: int, option: str, shape: str, default):
    if text is None or str(text).strip() == "":
        return tuple(default)
    parts = [t.strip() for t in str(text).split(",")]
    try:
        vals = tuple(float(t) for t in parts)
    except ValueError:
        vals = ()
    if len(vals) != count:
        raise ValueError(f"--{option} needs {count} comma-separated numbers {shape}, got {text!r}")
    return vals


def request_from_cli(opts: dict, width: int, height: int, want_values: bool) -> DistanceRequest:
    """Build and validate a request from `--bounds/--ref/--unit/--strategy/--palette` strings."""
    opts = opts or {}
    bounds = _numbers(opts.get("bounds"), 4, "bounds", "LAT0,LAT1,LON0,LON1 (e.g. -90,90,-180,180)", WORLD)
    ref = _numbers(opts.get("ref"), 2, "ref", "LAT,LON (e.g. 51.5074,-0.1278)", LONDON)
    unit = opts.get("unit") or "km"
    strategy = opts.get("strategy") or DEFAULT_STRATEGY
    palette = opts.get("palette") or DEFAULT_PALETTE
    req = DistanceRequest(bounds=bounds, ref=ref, size=(int(width), int(height)), unit=unit,
                          strategy=strategy, palette=palette, want_values=bool(want_values))
    return req.validate()


# ---- benchmarks ---------------------------------------------------------------------------------------
SEED_BOUNDS = (29.0, 31.0, 99.0, 101.0)
SEED_REF = (30.0, 101.0)


def _bench_one(workload: str, backend, req: DistanceRequest, repeats: int, variant: str) -> dict:
    renderer = Renderer(backend)
    # a GPU frame takes well under a millisecond, where host jitter is a large share: more runs
    # make the median stable between two identical invocations
    if backend.is_gpu:
        repeats = max(repeats, 100)
    runs, compile_ms = time_runs(lambda: renderer.render(req).timings, repeats=repeats, warmup=5)
    w, h = req.size
    out = result(workload, backend, variant, f"{w}x{h}", runs, compile_ms=compile_ms)
    total = out["phases_ms"]["total"]
    out["metrics"] = {"end-to-end ms": total,
                      "Mpixel/s": (w * h / (total * 1e-3) / 1e6) if total else None}
    return out


def _bench(workload: str, bounds, ref, size):
    def run(backend, repeats: int = 20) -> list[dict]:
        if not backend.is_gpu:
            req = DistanceRequest(bounds=bounds, ref=ref, size=size)
            return [_bench_one(workload, backend, req, repeats, "cpu-twin")]
        out = []
        for strategy in STRATEGIES:
            if strategy == "broadcast" and backend.simulated:
                continue  # the simulator cannot build CUDA ufuncs
            req = DistanceRequest(bounds=bounds, ref=ref, size=size, strategy=strategy)
            out.append(_bench_one(workload, backend, req, repeats, strategy))
        return out
    return run


def workloads() -> list[Workload]:
    return [
        Workload("distance-seed", "the seed's 1000×1000 mesh (lat 29–31, lon 99–101, point 30,101) "
                 "→ RGBA in pinned host memory, per strategy", _bench("distance-seed", SEED_BOUNDS,
                                                                      SEED_REF, (1000, 1000))),
        Workload("distance-world", "4096×2048 whole world from London → RGBA, per strategy",
                 _bench("distance-world", WORLD, LONDON, (4096, 2048))),
    ]
