"""The distance heatmap's compute kernels: three CUDA variants and their CPU twin.

All of them evaluate the same haversine from the same per-pixel coordinates, so pictures and values
agree to rounding. The shared scalar maths is written once as plain Python and compiled twice
(CUDA device function and numba njit), which keeps the twins from drifting apart.

Pixel (row, col) of a W×H grid sits at its centre: lon = lon0 + (col + 0.5)·dlon and
lat = lat1 − (row + 0.5)·dlat, row 0 being the northern edge. Colour is a linear map of distance
over [0, vmax] into a palette LUT viewed as one uint32 per RGBA pixel (one store per pixel).

Kernels are defined without signatures so that importing this module never needs a GPU; the
renderer compiles them explicitly on first use so JIT time lands in its own phase.
"""
from __future__ import annotations

import math

import numba
from numba import njit, prange

from ..backend import numba_cuda

# numba.cuda, or where it does not import (no CUDA runtime) a stand-in: the CPU twins still run
cuda = numba_cuda()

DEG = math.pi / 180.0
THREADS_PER_BLOCK = 256


# ---- scalar maths shared by every variant -------------------------------------------------------
def _central_angle(a):
    # clamping keeps sqrt(1 - a) real when rounding pushes a past 1 at antipodes
    if a < 0.0:
        a = 0.0
    elif a > 1.0:
        a = 1.0
    return 2.0 * math.atan2(math.sqrt(a), math.sqrt(1.0 - a))


def _haversine_terms(lat_r, ref_lat_r, cos_ref, cos_lat, half_sin_dlon_sq):
    s = math.sin(0.5 * (lat_r - ref_lat_r))
    return s * s + cos_ref * cos_lat * half_sin_dlon_sq


def _palette_index(d, cscale, top):
    x = d * cscale + 0.5
    if x >= top:
        return int(top)
    if x < 0.0:
        return 0
    return int(x)


_central_angle_dev = cuda.jit(device=True, inline="always")(_central_angle)
_haversine_terms_dev = cuda.jit(device=True, inline="always")(_haversine_terms)
_palette_index_dev = cuda.jit(device=True, inline="always")(_palette_index)

_central_angle_cpu = njit(inline="always", cache=True)(_central_angle)
_palette_index_cpu = njit(inline="always", cache=True)(_palette_index)


def _distance_deg_dev_impl(lat, lon, ref_lat, ref_lon, radius):
    # every input in degrees: what the host-mesh and broadcast variants receive
    lat_r = lat * DEG
    ref_r = ref_lat * DEG
    s = math.sin(0.5 * (lon * DEG - ref_lon * DEG))
    a = _haversine_terms_dev(lat_r, ref_r, math.cos(ref_r), math.cos(lat_r), s * s)
    return radius * _central_angle_dev(a)


_distance_deg_dev = cuda.jit(device=True, inline="always")(_distance_deg_dev_impl)


# ---- CUDA kernels ---------------------------------------------------------------------------------
@cuda.jit(cache=True)
def device_mesh_kernel(rgba, values, write_values, width, n, lat1, dlat, lon0, dlon,
                       ref_lat_r, ref_lon_r, cos_ref, radius, cscale, top, lut):
    """Version C of the seed, fused: coordinates, distance and colour per thread; nothing read
    from host-built arrays. `values` is written only when `write_values` (else a 1-element dummy)."""
    i = cuda.grid(1)
    if i >= n:
        return
    row = i // width
    col = i - row * width
    lat_r = (lat1 - (row + 0.5) * dlat) * DEG
    lon_r = (lon0 + (col + 0.5) * dlon) * DEG
    s = math.sin(0.5 * (lon_r - ref_lon_r))
    a = _haversine_terms_dev(lat_r, ref_lat_r, cos_ref, math.cos(lat_r), s * s)
    d = radius * _central_angle_dev(a)
    rgba[i] = lut[_palette_index_dev(d, cscale, top)]
    if write_values:
        values[i] = d


@cuda.jit(cache=True)
def host_mesh_kernel(dist, lat, lon, ref_lat, ref_lon, radius):
    """Version A of the seed: four host-built arrays in (the reference point repeated per pixel)."""
    i = cuda.grid(1)
    if i < dist.shape[0]:
        dist[i] = _distance_deg_dev(lat[i], lon[i], ref_lat[i], ref_lon[i], radius)


@cuda.jit(cache=True)
def colour_kernel(rgba, dist, cscale, top, lut):
    i = cuda.grid(1)
    if i < dist.shape[0]:
        rgba[i] = lut[_palette_index_dev(dist[i], cscale, top)]


def _ufunc_distance(lat, lon, ref_lat, ref_lon, radius):
    # the broadcast variant's element function; compiled by numba.vectorize(target="cuda")
    return _distance_deg_dev(lat, lon, ref_lat, ref_lon, radius)


_broadcast_ufunc = None


def broadcast_ufunc():
    """Version B of the seed: a GPU ufunc taking the reference point as scalars. Built on first
    use because numba compiles a vectorize with signatures at once (and the simulator cannot)."""
    global _broadcast_ufunc
    if _broadcast_ufunc is None:
        from numba import vectorize
        sig = "float64(float64, float64, float64, float64, float64)"
        _broadcast_ufunc = vectorize([sig], target="cuda")(_ufunc_distance)
    return _broadcast_ufunc


def blocks_for(n: int) -> int:
    return (n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK


# ---- the CPU twin --------------------------------------------------------------------------------
@njit(parallel=True, cache=True)
def cpu_render(rgba, values, write_values, lon_terms, lat1, dlat, lon0, dlon,
               ref_lat_r, ref_lon_r, cos_ref, radius, cscale, top, lut):
    """The device-mesh kernel on CPU cores. rgba is (H, W) uint32; lon_terms is a (W,) scratch
    row: sin²(Δlon/2) depends on the column only, cos(lat) on the row only, so both are hoisted
    out of the inner loop."""
    h, w = rgba.shape
    for col in range(w):
        lon_r = (lon0 + (col + 0.5) * dlon) * DEG
        s = math.sin(0.5 * (lon_r - ref_lon_r))
        lon_terms[col] = s * s
    for row in prange(h):
        lat_r = (lat1 - (row + 0.5) * dlat) * DEG
        sl = math.sin(0.5 * (lat_r - ref_lat_r))
        sl2 = sl * sl
        cc = cos_ref * math.cos(lat_r)
        for col in range(w):
            d = radius * _central_angle_cpu(sl2 + cc * lon_terms[col])
            rgba[row, col] = lut[_palette_index_cpu(d, cscale, top)]
            if write_values:
                values[row, col] = d


def compiled(dispatcher, args) -> bool:
    """True when `dispatcher` already holds a version for these argument types."""
    overloads = getattr(dispatcher, "overloads", None)
    if overloads is None or not hasattr(dispatcher, "compile"):
        return True  # the CUDA simulator interprets Python: nothing to compile
    return _arg_types(dispatcher, args) in overloads


def _arg_types(dispatcher, args) -> tuple:
    # the dispatcher's own typing, so the key matches what a launch looks up
    typeof = getattr(dispatcher, "typeof_pyval", numba.typeof)
    return tuple(typeof(a) for a in args)


def compile_for(dispatcher, args) -> None:
    """Compile (or load from numba's cache) the version for these arguments' types."""
    if not compiled(dispatcher, args):
        dispatcher.compile(_arg_types(dispatcher, args))
