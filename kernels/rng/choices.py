"""What can run where: `available(backend)` lists every generator and strategy with the reason it
cannot run on that backend ("" when it can), `default_strategy` and `resolve` turn "auto" or a
name into the strategy a job runs (StrategyUnavailable, naming the usable ones, when it cannot)."""
from __future__ import annotations

from . import philox as P
from .request import (AUTO, CPU_HISTOGRAM_STRATEGIES, CPU_REDUCE_STRATEGIES, GENERATORS,
                      GPU_HISTOGRAM_STRATEGIES, GPU_REDUCE_STRATEGIES, HISTOGRAM_STRATEGIES,
                      REDUCE_STRATEGIES, StrategyUnavailable)

KINDS = ("generate", "reduce", "histogram", "monte-carlo")
MONTE_CARLO_METHODS = ("fused-xoroshiro128p",)
DEFAULTS = {"reduce": {"gpu": "two-pass", "cpu": "cpu-numba"},
            "histogram": {"gpu": "shared", "cpu": "cpu-numba"}}
SIMULATOR_RACE_NOTE = ("numba's simulator runs threads one at a time, so the race may not lose "
                       "anything here; on a real GPU it does")


def _side(backend) -> str:
    return "gpu" if backend.is_gpu else "cpu"


def generator_problem(name: str, backend) -> str:
    if name == "philox4_32_10":
        return P.problem(backend)
    return ""


def _strategy_problem(name: str, backend, gpu_names, cpu_names) -> str:
    if name in gpu_names and _side(backend) != "gpu":
        return f"{name} runs on the GPU; pick the cuda backend"
    if name in cpu_names and _side(backend) != "cpu":
        return f"{name} runs on the CPU; pick the cpu backend"
    return ""


def available(backend, kind: str | None = None) -> dict[str, str]:
    """{name: reason it cannot run on `backend`, or ""} for one kind of job ("generate",
    "reduce", "histogram", "monte-carlo"), or for all of them as {"kind/name": reason}."""
    if kind is None:
        out = {}
        for k in KINDS:
            out.update({f"{k}/{name}": why for name, why in available(backend, k).items()})
        return out
    if kind == "generate":
        return {g: generator_problem(g, backend) for g in GENERATORS}
    if kind == "reduce":
        return {s: _strategy_problem(s, backend, GPU_REDUCE_STRATEGIES, CPU_REDUCE_STRATEGIES)
                for s in REDUCE_STRATEGIES}
    if kind == "histogram":
        return {s: _strategy_problem(s, backend, GPU_HISTOGRAM_STRATEGIES, CPU_HISTOGRAM_STRATEGIES)
                for s in HISTOGRAM_STRATEGIES}
    if kind == "monte-carlo":
        return {m: "" for m in MONTE_CARLO_METHODS}
    raise ValueError(f"unknown kind {kind!r}; choose one of: {', '.join(KINDS)}")


def default_strategy(kind: str, backend) -> str:
    if kind not in DEFAULTS:
        raise ValueError(f"no strategies for {kind!r}")
    return DEFAULTS[kind][_side(backend)]


def _unavailable(why: str, backend, kind: str) -> StrategyUnavailable:
    usable = [n for n, w in available(backend, kind).items() if not w]
    return StrategyUnavailable(f"{why}; on the {backend.name} backend choose one of: "
                               f"{', '.join(usable)}")


def resolve(kind: str, name: str, backend) -> str:
    """The strategy `name` ("auto": the backend's default) of a reduction or a histogram."""
    if name == AUTO:
        return default_strategy(kind, backend)
    why = available(backend, kind)[name]
    if why:
        raise _unavailable(why, backend, kind)
    return name


def check_generator(name: str, backend) -> None:
    why = generator_problem(name, backend)
    if why:
        raise _unavailable(why, backend, "generate")


def race_note(strategy: str, backend) -> str:
    """What the note of a racy strategy adds under the simulator ("" elsewhere)."""
    if strategy == "racy" and getattr(backend, "simulated", False):
        return " " + SIMULATOR_RACE_NOTE + "."
    return ""
