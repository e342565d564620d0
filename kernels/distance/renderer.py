"""Great-circle distance from a reference point to every pixel of a lat/lon grid, coloured on the
device: the distance heatmap's renderer (its request and geometry are in .request).

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

import numpy as np

from .. import palettes
from ..buffers import BufferPool, copy_frame_to_host, ensure_device_fits
from ..launch import PreparedKernel
from ..frame import Frame
from ..roofs.work import record
from ..timing import JobTimer
from .request import (_DEG, LUT_SIZE, STRATEGY_HELP, UNIT_KM, UNIT_NAMES, DistanceRequest,
                      StrategyUnavailable, colour_max_km, point_value)
from .work import frame_work


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
        self._ready: set = set()    # kernels known compiled: 16 arguments are not typed again per frame

    def _ensure_compiled(self, timer, dispatcher, args):
        # each kernel is only ever called with one set of argument types
        if dispatcher in self._ready:
            return
        from . import haversine as dk
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
        record(timings, frame_work(meta["strategy"], p["n"], bool(req.want_values)))
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
        from . import haversine as dk
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
            with timer.phase("h2d", gpu=True, nbytes=host.nbytes, gate=False):   # allocates
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
        from . import haversine as dk
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
