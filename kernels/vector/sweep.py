"""Measure vector-op throughput over sizes, implementations and modes, one point at a time: the
plan of a sweep (which (op, implementation, mode) it measures), the references it is compared to
(this machine's copy bandwidths, and the fastest copy as the device's ceiling) and the loop.

`sweep()` is a generator so it runs as a generator job: each yielded item is a progress report
(kernels/vector/results.py), other views are served between items, and cancelling takes effect
before the next point (or the next repeat). Modes: see kernels/vector/runner.py.

Bandwidth: kernel mode counts the op's bytes read + written per element; the end-to-end modes
count the bytes crossing the bus (inputs in, result out) over h2d + kernel + d2h.

The names the views, the command line and the tests import from here stay here: the results'
types, the memory checks (kernels/vector/memory.py) and PointRunner (kernels/vector/runner.py).
"""
from __future__ import annotations

from contextlib import nullcontext
from dataclasses import replace

from ..backend import first_line
from .memory import (MIN_EXP, MIN_REF_BYTES, REF_BYTES, fit_problem, free_device_bytes,
                     host_free_bytes, max_fitting_exponent, reference_bytes, sizes_up_to)
from .ops import OPS, Impl, ImplUnavailable, get_op
from .registry import implementations
from .results import (ImplUnavailableNotice, SweepError, SweepItem, SweepNotice, SweepPoint,
                      SweepReferences, SweepSummary, crossover, measured_point)
from .cpu_process import point_runner
from .runner import PointRunner, cancelled
from .size_data import DeviceSizeData

MODES = ("kernel", "pinned", "pageable")
SIM_REF_BYTES = 2**12
REF_REPEATS = 3        # with the warm-up, 4 runs of each reference probe


def _stop(cancel):
    """Leave the sweep: raise the worker's Cancelled when the token can, else return quietly."""
    check = getattr(cancel, "check", None)
    if check is not None:
        check()


def _resolve_impls(backend, impls) -> list[Impl]:
    known = {i.name: i for i in implementations(backend)}
    out = []
    for item in impls if impls is not None else known.values():
        if isinstance(item, Impl):
            out.append(item)
        elif item in known:
            out.append(known[item])
        else:
            raise ValueError(f"unknown implementation {item!r}; choose from: {', '.join(known)}")
    return out


def add_copy_ceiling(refs: dict, backend, n: int, runner: PointRunner) -> str | None:
    """Raise refs["d2d-copy"] to the fastest copy any GPU implementation made at n elements.

    The probe in kernels/transfer.py times the driver's copy and simple copy kernels; an
    implementation's own copy can beat them all (docs/notes/performance-history.md, the d2d copy
    ceiling). The
    ceiling is what this machine can copy, by whatever means, so the other ops are compared to that.
    Returns the name of what set it ("probe" or an implementation), None when nothing was measured.
    """
    if not getattr(backend, "is_gpu", False) or getattr(backend, "simulated", False):
        return None
    best, who = refs.get("d2d-copy") or 0.0, "probe"
    for impl in implementations(backend):
        if impl.device != "gpu" or not impl.available or "kernel" not in impl.modes:
            continue
        try:
            point = runner.measure("copy", impl, "kernel", n)
        except Exception:
            continue  # an implementation that cannot copy here sets no ceiling
        gbs = point.gbs if not point.skipped else None
        if gbs and gbs > best:
            best, who = gbs, impl.name
    refs["d2d-copy"] = best or None
    return who if best else None


def plan(backend, ops, impls, modes) -> list[tuple]:
    """The (op, impl, mode) combinations a sweep measures: CPU implementations in kernel mode only,
    and each op only in the implementations that have it (dot: see ops.OPS)."""
    gpu = bool(getattr(backend, "is_gpu", False))
    combos = []
    for op in ops:
        defined = get_op(op)
        for impl in impls:
            if not defined.implemented_by(impl.name):
                continue
            for mode in modes:
                if mode not in MODES:
                    raise ValueError(f"unknown mode {mode!r}; choose from: {', '.join(MODES)}")
                if mode not in impl.modes or (impl.device == "gpu" and not gpu):
                    continue
                combos.append((op, impl, mode))
    return combos


def sweep(backend, ops, impls=None, modes=MODES, sizes=None, cancel=None, *, repeats: int = 5,
          ref_bytes: int = REF_BYTES, budget_s: float = 0.5, settle=None):
    """Yield one SweepPoint per (size, op, impl, mode), with the references after the first size's
    points; return a SweepSummary.

    Items (see SweepItem): SweepReferences after the first size; a SweepPoint per step (with
    `skipped` saying why when it could not run); ImplUnavailableNotice when an implementation
    turns out unusable (its later points are skipped with that reason); SweepNotice for what did
    not stop the sweep; SweepError when the GPU failed, after which the sweep stops.

    `settle()`, when given, is a context each CPU point is measured in: the window's GUI thread
    steps aside there for a short point, so its repaints do not share the cores with it.
    """
    from ..transfer import measure  # imports numba.cuda: only when a sweep runs
    ops = list(ops)
    impl_list = _resolve_impls(backend, impls)
    sizes = list(sizes) if sizes is not None else sizes_up_to(20)
    combos = plan(backend, ops, impl_list, modes)
    total = len(combos) * len(sizes)

    if cancelled(cancel):
        _stop(cancel)
        return SweepSummary(0, total, cancelled=True)
    gpu = bool(getattr(backend, "is_gpu", False))
    if getattr(backend, "simulated", False):
        # the simulator runs a Python thread per CUDA thread: 1024 elements are plenty there
        ref_bytes = min(ref_bytes, SIM_REF_BYTES)
    else:
        ref_bytes = reference_bytes(gpu, ref_bytes)
    # CPU points in a helper process: no thread of this one (the window's) can enter their time
    runner = point_runner(backend, repeats=repeats, budget_s=budget_s)
    if any(impl.in_helper for _, impl, _ in combos):
        runner.start_helper()           # it boots beside the first points, not before them

    def references():
        """The copy bandwidths, measured after the first size's points: a sweep's first point
        shows without waiting seconds for the chart's ceilings."""
        try:
            refs = measure(backend, ref_bytes, repeats=REF_REPEATS)
            if gpu:   # the probe's buffers are garbage now: free them before the next fit check
                DeviceSizeData.release_garbage()
        except Exception as exc:
            refs = {}
            yield SweepNotice(f"the reference bandwidths could not be measured: {first_line(exc)}")
        ceiling_by = None
        if refs and gpu:
            try:
                ceiling_by = add_copy_ceiling(refs, backend, ref_bytes // 4, runner)
                runner.release()
            except Exception as exc:
                yield SweepNotice(f"the copy ceiling could not be measured: {first_line(exc)}")
        yield SweepReferences(refs, ref_bytes, ceiling_by)

    for op in ops:
        lacking = [i.name for i in impl_list if not get_op(op).implemented_by(i.name)]
        if lacking:
            yield SweepNotice(f"{op} is not implemented by {', '.join(lacking)}: left out")

    dead: dict[str, str] = {i.name: i.reason or "not available here"
                            for i in impl_list if not i.available}
    for name, reason in dead.items():
        yield ImplUnavailableNotice(name, reason)
    index = 0
    noted = False
    try:
        for k, n in enumerate(sizes):
            if k == 1:
                yield from references()
            for op, impl, mode in combos:
                if cancelled(cancel):
                    _stop(cancel)
                    return SweepSummary(index, total, cancelled=True)
                index += 1
                if impl.name in dead:
                    point = SweepPoint(op, impl.name, mode, int(n), skipped=dead[impl.name])
                else:
                    try:
                        with (settle() if settle is not None and impl.in_helper
                              else nullcontext()):
                            point = runner.measure(op, impl, mode, n, cancel)
                    except ImplUnavailable as exc:
                        dead[impl.name] = str(exc)
                        yield ImplUnavailableNotice(impl.name, str(exc))
                        point = SweepPoint(op, impl.name, mode, int(n), skipped=str(exc))
                    except Exception as exc:  # a CUDA error leaves the context unusable: stop
                        msg = (f"{impl.name} failed on {op} ({mode}, N = {n:,}): "
                               f"{first_line(exc)}; the sweep stopped")
                        yield SweepError(msg)
                        return SweepSummary(index - 1, total, error=msg)
                if runner.note is not None and not noted:   # the helper could not start
                    noted = True
                    yield SweepNotice(runner.note)
                yield replace(point, index=index, total=total)
        if len(sizes) < 2:
            yield from references()
    finally:
        runner.release()
    return SweepSummary(index, total)


__all__ = ["MODES", "MIN_EXP", "REF_BYTES", "MIN_REF_BYTES", "SIM_REF_BYTES", "REF_REPEATS", "OPS",
           "sweep", "plan", "add_copy_ceiling", "crossover", "PointRunner", "measured_point",
           "fit_problem", "max_fitting_exponent", "reference_bytes", "sizes_up_to",
           "host_free_bytes", "free_device_bytes", "SweepReferences", "SweepPoint",
           "ImplUnavailableNotice", "SweepNotice", "SweepError", "SweepSummary", "SweepItem"]
