"""The vector-op workload: BabelStream-style ops (copy, scale, add, triad, …) in every way of running
them — numba @vectorize and @cuda.jit, CUDA C++ through NVRTC, PyCUDA, numba on the CPU, NumPy.

- `ops`: what each op computes, shared constants, the Impl record and ImplUnavailable, the NumPy
  reference. Imports no other module of the package.
- `cpu`: the CPU implementations (numba parallel loops, NumPy ufuncs).
- `cuda_jit`, `nvrtc`, `pycuda_impl`: the GPU implementations (one module per toolchain).
- `registry`: `implementations(backend)`, every implementation with whether it can run and why not.
- `results`: what a sweep yields (SweepReferences, SweepPoint, notices, SweepSummary), the point
  of timed runs, the crossover after a sweep.
- `memory`: which sizes fit in host and device memory, the size of the reference copies.
- `size_data`: the buffers of one size, HostSizeData or DeviceSizeData (same methods).
- `runner`: PointRunner, one timed point (kernel only, pinned, pageable).
- `sweep`: the plan, the references and copy ceiling, and the sweep generator; its names
  (results, memory checks, PointRunner) are importable from here too.
- `jobs`: the scheduler's handler; `bench`: the `--bench` workloads.

Imports run one way: ops <- cpu, cuda_jit, nvrtc <- pycuda_impl <- registry;
ops <- results; memory, results, size_data <- runner; registry, runner <- sweep <- jobs, bench.

May import: numpy, numba, numba.cuda, cuda.core, pycuda (optional) and the shared modules of
`kernels`. Never Qt, never another workload package.
"""
