"""The roofline in the `--bench` report: each result's counted work with its achieved rates, the
roof that bounds it and the % of it, and the roofs themselves (measured in the same run).

Per result, "work" lists one entry per counted kernel (kernels/roofs/work.py): name, kind, ops,
bytes, seconds (the median over the runs), and once the roofs are known intensity, ops_per_s,
bytes_per_s, roof ("memory" or "compute"), roof_per_s and roof_percent.
"""
from __future__ import annotations

import statistics

from .model import Roofs
from .work import Work, place_one, work_seconds


def result_work(runs) -> list[dict]:
    """The counted work of a result's runs (Timings): the first run's counts, the median time."""
    if not runs or not getattr(runs[0], "work", None):
        return []
    out = []
    for i, w in enumerate(runs[0].work):
        secs = [work_seconds(t.phases_ms, t.detail, t.work[i]) for t in runs
                if len(t.work) > i]
        secs = [s for s in secs if s is not None]
        d = w.as_dict()
        d["seconds"] = statistics.median(secs) if secs else None
        out.append(d)
    return out


def annotate(report: dict, roofs: Roofs | None) -> dict:
    """Add the roofs and each work entry's rates and % of roof to a bench report (in place)."""
    report["roofs"] = roofs.as_dict() if roofs is not None else None
    for r in report.get("results", []):
        for entry in r.get("work", []):
            w = Work.from_dict({k: v for k, v in entry.items() if k in Work.__dataclass_fields__})
            p = place_one(w, entry.get("seconds"), roofs)
            entry.update({k: v for k, v in p.as_dict().items()
                          if k in ("intensity", "ops_per_s", "bytes_per_s", "roof", "roof_per_s",
                                   "roof_percent")})
    return report


def counted(report: dict) -> bool:
    return any(r.get("work") for r in report.get("results", []))


def roof_percent(result: dict) -> float | None:
    """The table's "% roof": the first counted kernel's (the useful work, where there are two)."""
    for entry in result.get("work", []):
        if entry.get("roof_percent") is not None:
            return entry["roof_percent"]
    return None
