"""The distance-heatmap workload: great-circle distance over a lat/lon grid, coloured on the device.

- `request`: DistanceRequest (frozen), units, strategies, the haversine on the host, ring geometry.
- `haversine`: the kernels (host-mesh, broadcast ufunc, fused device-mesh) and the CPU twin.
- `renderer`: Renderer(backend) — one frame per request, buffers reused, the one copy to the host.
- `jobs`: how the scheduler runs distance requests (one renderer per backend).
- `bench`: the `--bench` workloads.

May import: numpy, numba, numba.cuda and the shared modules of `kernels`. Never Qt, never another
workload package.
"""
