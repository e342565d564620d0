"""The vector-op workload: BabelStream-style ops (copy, scale, add, triad, …) in every way of running
them — numba @vectorize and @cuda.jit, CUDA C++ through NVRTC, PyCUDA, numba on the CPU, NumPy.

- `ops`: what each op computes, shared constants, the Impl record and ImplUnavailable, the NumPy
  reference. Imports no other module of the package.
- `cpu`: the CPU implementations (numba parallel loops, NumPy ufuncs).
- `cuda_jit`, `nvrtc`, `pycuda_impl`: the GPU implementations (one module per toolchain).
- `registry`: `implementations(backend)`, every implementation with whether it can run and why not.
- `sweep`: timed points over N and modes (kernel only, pinned, pageable), typed sweep results.
- `bench`: the `--bench` workloads.

Imports run one way: ops <- cpu, cuda_jit, nvrtc <- pycuda_impl <- registry <- sweep <- bench.

May import: numpy, numba, numba.cuda, cuda.core, pycuda (optional) and the shared modules of
`kernels`. Never Qt, never another workload package.
"""
