"""Random numbers made on the device, and reductions done right (issue #11).

- `request`: the frozen requests (GenerateRequest, ReduceRequest, HistogramRequest,
  MonteCarloRequest), the names of the generators and strategies and what each one does.
- `results`: the typed, frozen results, each with its Timings.
- `xoroshiro`: xoroshiro128+ on the GPU (numba.cuda.random's states, held in registers) and its
  CPU twin; `philox`: cuRAND's Philox4_32_10 through nvmath-python (optional).
- `reduce`, `histogram`, `montecarlo`: the kernels of each job and their CPU twins;
  `blocksum`: warp-shuffle block sums; `grid`: launch shapes that fill the GPU;
  `ceilings`: the write and read ceilings the bench compares to (16-byte stores and loads:
  kernels/wide_access.py).
- `choices`: what can run where (available, default_strategy, resolve).
- `workspace`: what the jobs of one backend share (buffers, stream, timer, the data kept between
  strategies, xoroshiro states), as a GpuWorkspace or a CpuWorkspace with the same methods.
- `generate_job`, `reduce_job`, `histogram_job`, `monte_carlo_job`: one job each, its shared
  front and its GPU and CPU part.
- `renderer`: Renderer(backend), the four jobs on one workspace, the side picked once;
  `jobs`: the scheduler's handlers and warmup.
- `bench`: the `--bench` workloads (`--only rng`).

May import: numpy, numba, numba.cuda, nvmath-python (optional) and the shared modules of
`kernels`. Never Qt, never another workload package.
"""
from .renderer import Renderer, available, default_strategy
from .request import (DISTRIBUTIONS, DTYPES, GENERATORS, HISTOGRAM_STRATEGIES, REDUCE_STRATEGIES,
                      GenerateRequest, HistogramRequest, MonteCarloRequest, ReduceRequest,
                      StrategyUnavailable)
from .results import GenerateResult, HistogramResult, MonteCarloResult, ReduceResult

__all__ = ["DISTRIBUTIONS", "DTYPES", "GENERATORS", "HISTOGRAM_STRATEGIES", "REDUCE_STRATEGIES",
           "GenerateRequest", "GenerateResult", "HistogramRequest", "HistogramResult",
           "MonteCarloRequest", "MonteCarloResult", "ReduceRequest", "ReduceResult", "Renderer",
           "StrategyUnavailable", "available", "default_strategy"]
