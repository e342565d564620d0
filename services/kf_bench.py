"""Kalles Fraktaler's six benchmark locations as bench workloads (deep-kf-1e14 … deep-kf-1e1086),
and `--bench --location FILE`: a deep workload of any location file.

The .kfr files ship in resources/ (kf-*.kfr, credits in kf-benchmarks.txt) and are read with the
same reader as --location and the window's Open .kfr (services.location_file), so the bench
renders exactly what KF's files say: the centre, the height 4/Zoom (square frames: the width too)
and KF's iteration count. KF's logged times (kf-2.12.11, its "fast" settings, a 2018 CPU whose
model was not recorded; wall seconds for a 1024x1024 frame) ride along as a metric, so a GPU run
prints its speed-up beside them.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from kernels.mandelbrot.benches.place_bench import place_workload

from .location_file import load_location_file
from .shipped_data import shipped_file


@dataclass(frozen=True)
class KfLocation:
    label: str            # the workload is deep-kf-<label>, the file kf-<label>.kfr
    credit: str
    kf_1024_s: float      # KF 2.12's logged "fast" time for a 1024x1024 frame

    @property
    def file(self) -> str:
        return f"kf-{self.label}.kfr"


# authors per KF's benchmarks/CREDITS.txt; times from KF's benchmark log
KF_LOCATIONS = (
    KfLocation("1e14", "uncredited in KF's benchmarks", 7.56),
    KfLocation("1e50", "uncredited in KF's benchmarks", 29.45),
    KfLocation("5e113", "uncredited in KF's benchmarks", 10.62),
    KfLocation("5e227", '"Evolution of Trees" by Dinkydau', 268.21),
    KfLocation("4e533", '"Ssssssssss" by Dinkydau', 22.38),
    KfLocation("1e1086", '"Deep Mandelbrot Set 023" by Olbaid-ST', 274.47),
)
PREFIX = "deep-kf-"
SIZES = "1024x1024 on the GPU, 256x256 on the CPU (named with --only there)"


def _workload(name: str, path: str, about: str, kf_seconds: float | None):
    loc = load_location_file(path).place((1, 1))     # square: the width is KF's height
    iters = loc.iterations
    if iters is None:
        from kernels.mandelbrot.requests.request import auto_iterations
        iters = auto_iterations(str(loc.width))
    formula = getattr(loc, "formula", "mandelbrot")
    what = "" if formula == "mandelbrot" else f"{formula} "
    desc = (f"deep {what}zoom {about}, {loc.width:.3e} wide, {iters:,} iterations; first frame "
            f"(reference + table + kernel) and re-render, {SIZES}")
    return place_workload(name, desc, str(loc.center_re), str(loc.center_im), str(loc.width),
                          iters, kf_seconds=kf_seconds, formula=formula)


def kf_workloads() -> list:
    """The six KF locations, from the shipped files; a file missing from a broken install is
    left out with a line saying so."""
    out = []
    for k in KF_LOCATIONS:
        path = shipped_file(k.file)
        try:
            out.append(_workload(PREFIX + k.label, path, f"at KF's benchmark {k.label} ({k.credit})",
                                 k.kf_1024_s))
        except ValueError as exc:
            print(f"# {PREFIX}{k.label}: skipped, {exc}")
    return out


def location_workload(path):
    """The deep workload of the place in the location file at `path` (ValueError in one line
    when the file cannot be read or holds no place)."""
    name = "location-" + os.path.splitext(os.path.basename(os.fspath(path)))[0]
    return _workload(name, path, f"at {os.fspath(path)}", None)
