"""The vector-op workload: BabelStream-style ops (copy, scale, add, triad, …) in every way of running
them — numba @vectorize and @cuda.jit, CUDA C++ through NVRTC, PyCUDA, numba on the CPU, NumPy.

- `ops`: the ops, the implementation registry and NumPy references.
- `cuda_jit`, `nvrtc`, `pycuda_impl`: the GPU implementations (one module per toolchain).
- `sweep`: timed points over N and modes (kernel only, pinned, pageable), typed sweep results.
- `bench`: the `--bench` workloads.

May import: numpy, numba, numba.cuda, cuda.core, pycuda (optional) and the shared modules of
`kernels`. Never Qt, never another workload package.
"""
