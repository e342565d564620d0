"""Runs the random-number jobs on one backend: `Renderer(backend)` with `generate`, `reduce`,
`histogram`, `monte_carlo` and `warmup`. `available` and `default_strategy` (kernels/rng/choices.py)
are importable from here too.

One Renderer per backend, reused and used from one thread (the worker). Its jobs share one
workspace (kernels/rng/workspace.py: buffers, stream, the data kept between strategies); the
backend is told apart once, here, by picking the GPU or the CPU side of the workspace and of each
job. `cancel`, when given, is an object whose .check() raises; it is called before the work
starts and between chunks of long work.
"""
from __future__ import annotations

from .choices import available, default_strategy
from .generate_job import CpuGeneration, GpuGeneration
from .histogram_job import CpuHistograms, GpuHistograms
from .monte_carlo_job import CpuMonteCarlo, GpuMonteCarlo
from .reduce_job import CpuReduction, GpuReduction
from .request import GenerateRequest, HistogramRequest, MonteCarloRequest, ReduceRequest
from .results import GenerateResult, HistogramResult, MonteCarloResult, ReduceResult
from .work import add_work
from .workspace import CpuWorkspace, GpuWorkspace

# the workspace and the four jobs of each side: (workspace, generate, reduce, histogram, monte carlo)
SIDES = {"gpu": (GpuWorkspace, GpuGeneration, GpuReduction, GpuHistograms, GpuMonteCarlo),
         "cpu": (CpuWorkspace, CpuGeneration, CpuReduction, CpuHistograms, CpuMonteCarlo)}


class Renderer:
    """Runs rng requests on one backend, reusing its buffers. Use from one thread only."""

    def __init__(self, backend):
        self.backend = backend
        workspace, generation, reduction, histograms, monte_carlo = \
            SIDES["gpu" if backend.is_gpu else "cpu"]
        self.workspace = workspace(backend)
        self._generate = generation(self.workspace)
        self._reduce = reduction(self.workspace)
        self._histogram = histograms(self.workspace)
        self._monte_carlo = monte_carlo(self.workspace)

    @property
    def pool(self):
        return self.workspace.pool

    def generate(self, request: GenerateRequest, cancel=None) -> GenerateResult:
        return add_work(self._generate(request, cancel))

    def reduce(self, request: ReduceRequest, cancel=None) -> ReduceResult:
        return add_work(self._reduce(request, cancel))

    def histogram(self, request: HistogramRequest, cancel=None) -> HistogramResult:
        return add_work(self._histogram(request, cancel))

    def monte_carlo(self, request: MonteCarloRequest, cancel=None) -> MonteCarloResult:
        return add_work(self._monte_carlo(request, cancel))

    def warmup(self, cancel=None, parts=()) -> float:
        """Compile (or load from numba's cache) the kernels of the default requests named in
        `parts` ("generate", "reduce", "histogram", "monte-carlo"; empty: the generation alone, a
        run's first result: the others report their compile apart when they first run) with tiny
        runs; returns the compile milliseconds."""
        jobs = {"generate": lambda: self.generate(GenerateRequest(n=64), cancel),
                "reduce": lambda: self.reduce(ReduceRequest(n=64), cancel),
                "histogram": lambda: self.histogram(HistogramRequest(n=64), cancel),
                "monte-carlo": lambda: self.monte_carlo(MonteCarloRequest(n=64), cancel)}
        unknown = set(parts) - set(jobs)
        if unknown:
            raise ValueError(f"unknown warm-up part(s): {', '.join(sorted(unknown))}")
        ms = 0.0
        for part in parts or ("generate",):
            ms += jobs[part]().timings.phases_ms.get("compile") or 0.0
        return ms


__all__ = ["Renderer", "available", "default_strategy"]
